//! A thread's secrets at spawn: released from the vault (opened the first time a thread needs
//! it), a notice for the ones withheld, and the audit's closing record when the pane goes.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use crate::config::ThreadSpec;
use crate::mux::PaneId;
use crate::pty::MaskCounts;
use crate::vault::audit::{utc_now, AuditLog, Event, Record};
pub use crate::vault::release::Changed;
use crate::vault::release::{release, Brokered, Request};
use crate::vault::{SecretBytes, Vault};

/// What a pane's program gets from the vault.
#[derive(Default)]
pub struct Granted {
    pub env: Vec<(String, SecretBytes)>,
    /// The names released, in order.
    pub names: Vec<String>,
    /// The values the pane's output is masked for, in `names`' order.
    pub masked: Vec<SecretBytes>,
    /// The brokered ones, for the pane's broker.
    pub brokered: Vec<Brokered>,
    /// What the pane shows before the program's output: the secrets withheld, and why.
    pub notice: Option<String>,
    /// The `released` records, for [`record_start`] once the program has started or not.
    pub records: Vec<Record>,
    /// A pinned secret was released: the approved program's SHA-256, for the exec step.
    pub pinned_sha256: Option<String>,
    /// Pinned secrets withheld because their program changed: for the window to offer
    /// approving it again.
    pub changed: Vec<Changed>,
}

/// Record how a pane that was given secrets started: `released` for each when it did, `failed`
/// with `why_not` when it did not. Nothing can be undone from here, so a failure to write the
/// log is only reported.
pub fn record_start(vault: Option<&Vault>, records: Vec<Record>, why_not: Option<&str>) {
    let Some(vault) = vault else { return };
    let log = AuditLog::new(vault.state());
    for mut record in records {
        record.time = utc_now();
        if let Some(why) = why_not {
            record.event = Event::Failed;
            record.reason = Some(why.to_owned());
        }
        if let Err(e) = log.append(&record) {
            eprintln!("paddock: cannot write the vault's audit log: {e}");
        }
    }
}

/// Release `thread`'s secrets for a pane that runs `argv`; why not, when it must not start.
pub fn grant(
    vault: &mut Option<Vault>,
    thread: &ThreadSpec,
    argv: &[String],
    cwd: Option<&Path>,
    PaneId(pane): PaneId,
) -> Result<Granted, String> {
    if thread.secrets.is_empty() {
        return Ok(Granted::default());
    }
    if vault.is_none() {
        *vault = Some(Vault::open().map_err(|e| format!("the vault cannot be opened: {e}"))?);
    }
    let Some(vault) = vault.as_ref() else {
        return Err("the vault cannot be opened".into());
    };
    // The program is looked up on the PATH it will run with.
    let path_var: Option<OsString> = thread
        .env
        .iter()
        .find(|(key, _)| key == "PATH")
        .map(|(_, value)| value.into())
        .or_else(|| std::env::var_os("PATH"));
    let request =
        Request { secrets: &thread.secrets, argv, cwd, path_var, thread: Some(&thread.name), pane };
    let released = release(vault, &request).map_err(|e| e.to_string())?;
    let notice = (!released.withheld.is_empty()).then(|| {
        released
            .withheld
            .iter()
            .map(|(name, why)| format!("paddock: secret \"{name}\" withheld: {why}"))
            .collect::<Vec<_>>()
            .join("\n")
    });
    Ok(Granted {
        env: released.env,
        names: released.names,
        masked: released.masked,
        brokered: released.brokered,
        notice,
        records: released.records,
        pinned_sha256: released.pinned_sha256,
        changed: released.changed,
    })
}

/// The secrets a pane holds; when it goes, the audit log records how often each was masked.
pub struct PaneSecrets {
    pub names: Vec<String>,
    pub thread: Option<String>,
    pub pane: PaneId,
    pub program: Option<String>,
    pub counts: Option<MaskCounts>,
    pub state: PathBuf,
}

impl Drop for PaneSecrets {
    fn drop(&mut self) {
        let log = AuditLog::new(&self.state);
        for (index, name) in self.names.iter().enumerate() {
            let masked =
                self.counts.as_ref().and_then(|c| c.get(index)).map(|c| c.load(Ordering::Relaxed));
            let record = Record {
                time: utc_now(),
                event: Event::Closed,
                secret: name.clone(),
                thread: self.thread.clone(),
                pane: self.pane.0,
                program: self.program.clone(),
                reason: None,
                masked: Some(masked.unwrap_or(0)),
                request: None,
            };
            // Nowhere to report a failure from here: the release itself was recorded.
            let _ = log.append(&record);
        }
    }
}
