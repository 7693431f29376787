//! A thread's secrets at spawn: released from the vault (opened the first time a thread needs
//! it), a notice for the ones withheld, and the audit's closing record when the pane goes.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

#[cfg(unix)]
use crate::app::remote_threads::HandedFor;
use crate::config::ThreadSpec;
use crate::mux::PaneId;
use crate::pty::MaskCounts;
use crate::vault::audit::{utc_now, AuditLog, Event, Record};
use crate::vault::handed::{release_handed, Handed};
pub use crate::vault::release::Changed;
use crate::vault::release::{release, Brokered, Released, Request};
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
    /// The secrets withheld, and why (what `notice` says).
    pub withheld: Vec<(String, String)>,
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

/// The vault, opened the first time a thread needs it.
pub fn opened(vault: &mut Option<Vault>) -> Result<&Vault, String> {
    if vault.is_none() {
        *vault = Some(Vault::open().map_err(|e| format!("the vault cannot be opened: {e}"))?);
    }
    vault.as_ref().ok_or_else(|| "the vault cannot be opened".into())
}

/// Release a remote thread's secrets (local pane `pane`) to the link to its host `host`:
/// what to hand over, and the records to write once the host answers (`remote_threads`).
#[cfg(unix)]
pub fn hand_to_host(
    vault: &mut Option<Vault>,
    thread: &ThreadSpec,
    PaneId(pane): PaneId,
    host: &str,
) -> Result<Option<HandedFor>, String> {
    if thread.secrets.is_empty() {
        return Ok(None);
    }
    let vault = opened(vault)?;
    let program = thread.command.first().map(String::as_str);
    let out =
        crate::vault::handed::for_host(vault, &thread.secrets, &thread.name, pane, program, host)
            .map_err(|e| e.to_string())?;
    let state = vault.state().to_owned();
    Ok(Some(HandedFor { handed: out.handed, records: out.records, state }))
}

/// Where a pane's values come from: this machine's vault, or what a link handed for a thread
/// a paddock on another host opened here (pins checked against the program here; nothing
/// recorded here).
pub enum Values<'a> {
    Vault(&'a mut Option<Vault>),
    Handed(&'a Handed),
}

/// Release `thread`'s secrets for a pane that runs `argv`; why not, when it must not start.
pub fn grant(
    values: Values<'_>,
    thread: &ThreadSpec,
    argv: &[String],
    cwd: Option<&Path>,
    PaneId(pane): PaneId,
) -> Result<Granted, String> {
    if thread.secrets.is_empty() {
        return Ok(Granted::default());
    }
    // The program is looked up on the PATH it will run with.
    let path_var = path_of(thread);
    let request =
        Request { secrets: &thread.secrets, argv, cwd, path_var, thread: Some(&thread.name), pane };
    let released = match values {
        Values::Vault(vault) => release(opened(vault)?, &request),
        Values::Handed(handed) => release_handed(handed, &request),
    };
    Ok(granted(released.map_err(|e| e.to_string())?))
}

/// The `PATH` a thread's program is looked up on.
fn path_of(thread: &ThreadSpec) -> Option<OsString> {
    thread
        .env
        .iter()
        .find(|(key, _)| key == "PATH")
        .map(|(_, value)| value.into())
        .or_else(|| std::env::var_os("PATH"))
}

fn granted(released: Released) -> Granted {
    let notice = (!released.withheld.is_empty()).then(|| {
        released
            .withheld
            .iter()
            .map(|(name, why)| format!("paddock: secret \"{name}\" withheld: {why}"))
            .collect::<Vec<_>>()
            .join("\n")
    });
    Granted {
        env: released.env,
        names: released.names,
        masked: released.masked,
        brokered: released.brokered,
        notice,
        records: released.records,
        pinned_sha256: released.pinned_sha256,
        changed: released.changed,
        withheld: released.withheld,
    }
}

/// The secrets a pane holds; when it goes, the audit log records how often each was masked.
pub struct PaneSecrets {
    pub names: Vec<String>,
    pub thread: Option<String>,
    pub pane: PaneId,
    pub program: Option<String>,
    pub counts: Option<MaskCounts>,
    /// The state folder whose audit log records its closing; none for secrets a link handed
    /// (the paddock that handed them records that).
    pub state: Option<PathBuf>,
    /// The host a remote thread's secrets were handed to.
    pub host: Option<String>,
}

impl Drop for PaneSecrets {
    fn drop(&mut self) {
        let Some(state) = &self.state else { return };
        let log = AuditLog::new(state);
        for (index, name) in self.names.iter().enumerate() {
            // A remote pane's masking is its host's: no count here.
            let masked =
                self.counts.as_ref().and_then(|c| c.get(index)).map(|c| c.load(Ordering::Relaxed));
            let masked = masked.or(self.host.is_none().then_some(0));
            let record = Record {
                time: utc_now(),
                event: Event::Closed,
                secret: name.clone(),
                thread: self.thread.clone(),
                pane: self.pane.0,
                program: self.program.clone(),
                reason: None,
                masked,
                request: None,
                host: self.host.clone(),
            };
            // Nowhere to report a failure from here: the release itself was recorded.
            let _ = log.append(&record);
        }
    }
}
