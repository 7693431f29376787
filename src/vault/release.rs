//! What a pane's program gets from the vault: the values of its thread's secrets, for its
//! environment only; a pinned secret only when the program is the pinned one, started directly
//! and approved as it is now. Every decision is audited before the program starts.

use std::ffi::OsString;
use std::path::Path;

use thiserror::Error;

use super::audit::{utc_now, AuditLog, Event, Record};
use super::pin::{self, Approvals, Verdict};
use super::standing::Standings;
use super::{BrokerSpec, SecretBytes, SecretRef, Vault, VaultError};

/// The pane asking.
pub struct Request<'a> {
    pub secrets: &'a [SecretRef],
    pub argv: &'a [String],
    pub cwd: Option<&'a Path>,
    /// The `PATH` its program is looked up on.
    pub path_var: Option<OsString>,
    pub thread: Option<&'a str>,
    pub pane: u32,
}

/// What the pane gets.
#[derive(Default)]
pub struct Released {
    /// Environment variable and value, for the program's environment only (a brokered
    /// secret's placeholder, in its case).
    pub env: Vec<(String, SecretBytes)>,
    /// The names released, in the config's order.
    pub names: Vec<String>,
    /// The values to mask in the pane's output, in `names`' order (a brokered secret's too:
    /// it should never reach the pane, and if it did it is not shown).
    pub masked: Vec<SecretBytes>,
    /// The brokered secrets among them, for the pane's broker.
    pub brokered: Vec<Brokered>,
    /// Secrets withheld, and why.
    pub withheld: Vec<(String, String)>,
    /// The `released` records, to append once the program has started (`Failed` otherwise).
    pub records: Vec<Record>,
    /// Pinned secrets withheld because their program changed since it was approved: what a
    /// person may approve again (the window offers it).
    pub changed: Vec<Changed>,
    /// When a pinned secret was released: the SHA-256 of the approved program, which the
    /// pane's exec step (`pin_exec`) checks again on the file it runs.
    pub pinned_sha256: Option<String>,
}

#[derive(Debug, Error)]
pub enum ReleaseError {
    /// Secrets the keychain does not have: the program does not start.
    #[error("{}", missing(.0))]
    Missing(Vec<String>),
    /// Secrets a thread on this host names that the paddock which opened it did not hand over.
    #[error("secrets {} were not handed over the link", .0.join(", "))]
    NotHanded(Vec<String>),
    #[error(transparent)]
    Vault(#[from] VaultError),
}

fn missing(names: &[String]) -> String {
    match names {
        [name] => format!(
            "secret \"{name}\" is not in the vault: set it with `paddock vault set {name}`, then \
             restart the thread"
        ),
        _ => format!(
            "secrets {} are not in the vault: set each with `paddock vault set NAME`, then \
             restart the thread",
            names.iter().map(|n| format!("\"{n}\"")).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// A brokered secret as released: the pane holds `placeholder`; the broker puts `value` in
/// its place where `spec` lets it.
pub struct Brokered {
    pub name: String,
    pub placeholder: String,
    pub value: SecretBytes,
    pub spec: BrokerSpec,
    /// The value's generation (`standing`): once the vault's moves on, the broker stops
    /// using this one.
    pub generation: u64,
}

/// A pinned program that changed since its approval, as the window shows it for approving
/// again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Changed {
    pub secret: String,
    pub path: std::path::PathBuf,
    pub approved_sha256: String,
    pub sha256: String,
    pub approved_at: String,
}

/// Fetch and decide; audit each decision (a release that cannot be audited does not happen).
pub fn release(vault: &Vault, request: &Request<'_>) -> Result<Released, ReleaseError> {
    let audit = AuditLog::new(vault.state());
    // Only a missing secret is recorded here; `decide` records the rest.
    let record = |name: &str, event, reason| Recorder::new(request).make(name, event, reason);
    let values = fetch(vault, request.secrets, &audit, &record)?;
    let standings = Standings::load(vault.state());
    let source = Source {
        values,
        approvals: Approvals::load(vault.state()).on_host(None),
        generation: &|name| standings.generation(name),
        audit: Some(&audit),
        approved_on: None,
    };
    Ok(decide(request, source)?)
}

/// Each secret's value from the vault, in order; when any is missing, none: each missing one
/// is audited (`withheld`, with `record`'s words) and the program does not start.
pub(super) fn fetch(
    vault: &Vault,
    secrets: &[SecretRef],
    audit: &AuditLog,
    record: &dyn Fn(&str, Event, Option<String>) -> Record,
) -> Result<Vec<SecretBytes>, ReleaseError> {
    let mut values = Vec::new();
    let mut missing = Vec::new();
    for secret in secrets {
        match vault.get(&secret.name)? {
            Some(value) => values.push(value),
            None => missing.push(secret.name.clone()),
        }
    }
    if missing.is_empty() {
        return Ok(values);
    }
    for name in &missing {
        audit.append(&record(name, Event::Withheld, Some("not in the vault".into())))?;
    }
    Err(ReleaseError::Missing(missing))
}

/// Where a pane's values come from, and what its decisions are written to.
pub(super) struct Source<'a> {
    /// One per secret the request names, in its order.
    pub values: Vec<SecretBytes>,
    /// The approvals that hold where the program runs.
    pub approvals: Approvals,
    /// A secret's generation (`standing`), for the broker.
    pub generation: &'a dyn Fn(&str) -> u64,
    /// The audit log: none where the values were handed over a link (the paddock that handed
    /// them writes its own).
    pub audit: Option<&'a AuditLog>,
    /// Approved on another machine, for this host (the name that machine knows it by): what
    /// the words on approving again say.
    pub approved_on: Option<&'a str>,
}

/// The records of one request's decisions.
pub(super) struct Recorder<'a> {
    request: &'a Request<'a>,
    argv0: &'a str,
    program: Option<std::path::PathBuf>,
}

impl<'a> Recorder<'a> {
    pub(super) fn new(request: &'a Request<'a>) -> Recorder<'a> {
        let argv0 = request.argv.first().map(String::as_str).unwrap_or_default();
        let program = pin::find_program(argv0, request.cwd, request.path_var.as_deref());
        Recorder { request, argv0, program }
    }

    pub(super) fn make(&self, secret: &str, event: Event, reason: Option<String>) -> Record {
        let program_text = self.program.as_ref().map(|p| p.display().to_string());
        Record {
            time: utc_now(),
            event,
            secret: secret.to_owned(),
            thread: self.request.thread.map(str::to_owned),
            pane: self.request.pane,
            program: program_text.or_else(|| Some(self.argv0.to_owned())),
            reason,
            masked: None,
            request: None,
            host: None,
        }
    }
}

/// Decide for each secret of `request`, its value in hand: pins checked, brokered ones given
/// placeholders; each withholding audited at once, each release kept for the spawn to record.
pub(super) fn decide(request: &Request<'_>, source: Source<'_>) -> Result<Released, VaultError> {
    let recorder = Recorder::new(request);
    let (argv0, program) = (recorder.argv0, recorder.program.as_deref());
    let record = |secret: &str, event, reason| recorder.make(secret, event, reason);
    let audit = |record: &Record| source.audit.map_or(Ok(()), |log| log.append(record));
    let (approvals, values) = (&source.approvals, source.values);
    let mut released = Released::default();
    for (secret, value) in request.secrets.iter().zip(values) {
        let check = secret.pin.as_deref().map(|pin| {
            if !argv0.contains('/') {
                if let Some(entry) = request.path_var.as_deref().and_then(pin::relative_entry) {
                    return Err(format!(
                        "pinned to {pin}; PATH holds the relative entry \"{entry}\", so which \
                         file runs depends on the folder it starts in"
                    ));
                }
            }
            let on = source.approved_on;
            check_pinned(pin, &secret.name, argv0, program, approvals, on).map_err(
                |(why, changed)| {
                    released.changed.extend(changed.map(|c| *c));
                    why
                },
            )
        });
        let mut refusal = match check {
            Some(Ok(sha256)) => {
                released.pinned_sha256 = Some(sha256);
                None
            }
            Some(Err(why)) => Some(why),
            None => None,
        };
        let placeholder = match (&secret.broker, &refusal) {
            (Some(_), None) => match super::placeholder::placeholder_for(&value) {
                Ok(placeholder) => Some(placeholder),
                Err(why) => {
                    refusal = Some(why);
                    None
                }
            },
            _ => None,
        };
        match refusal {
            Some(why) => {
                audit(&record(&secret.name, Event::Withheld, Some(why.clone())))?;
                released.withheld.push((secret.name.clone(), why));
            }
            None => {
                // A pinned one goes through the pane's exec step, which runs the program only
                // while it is this file: said in the record, since a refusal there comes later.
                let pinned = secret.pin.as_ref().and(released.pinned_sha256.as_ref()).map(|sha| {
                    format!("to the exec step, which runs only a file with sha256 {sha}")
                });
                let brokered = secret.broker.as_ref().map(|spec| {
                    let hosts: Vec<String> =
                        spec.hosts.iter().map(|(host, port)| format!("{host}:{port}")).collect();
                    format!(
                        "brokered: the pane holds a placeholder; the value goes only in {} of \
                         requests to {}",
                        spec.headers.join(", "),
                        hosts.join(", ")
                    )
                });
                let how = match (pinned, brokered) {
                    (Some(pinned), Some(brokered)) => Some(format!("{brokered}; {pinned}")),
                    (pinned, brokered) => brokered.or(pinned),
                };
                released.records.push(record(&secret.name, Event::Released, how));
                released.names.push(secret.name.clone());
                match (placeholder, &secret.broker) {
                    (Some(placeholder), Some(spec)) => {
                        let held = SecretBytes::new(placeholder.as_bytes());
                        released.env.push((secret.env.clone(), held));
                        let generation = (source.generation)(&secret.name);
                        released.brokered.push(Brokered {
                            name: secret.name.clone(),
                            placeholder,
                            value: value.clone(),
                            spec: spec.clone(),
                            generation,
                        });
                    }
                    _ => released.env.push((secret.env.clone(), value.clone())),
                }
                released.masked.push(value);
            }
        }
    }
    // A release that cannot be audited does not happen.
    if let Some(log) = source.audit.filter(|_| !released.records.is_empty()) {
        log.check()?;
    }
    Ok(released)
}

/// Whether a secret pinned to `pin` may go to this program: the approved file's SHA-256, or
/// why not (and, when the approved file changed, what could be approved again).
fn check_pinned(
    pin: &str,
    name: &str,
    argv0: &str,
    program: Option<&Path>,
    approvals: &Approvals,
    approved_on: Option<&str>,
) -> Result<String, (String, Option<Box<Changed>>)> {
    let approve = |path: &dyn std::fmt::Display| match approved_on {
        Some(host) => format!(
            "`paddock vault approve {name} {path} --host {host}` on the machine that opened \
             this thread"
        ),
        None => format!("`paddock vault approve {name} {path}`"),
    };
    let Some(program) = program.filter(|found| pin::pin_names(pin, argv0, found)) else {
        return Err((format!("pinned to {pin}; this pane runs {argv0}"), None));
    };
    let fingerprint = match pin::fingerprint(program) {
        Ok(fingerprint) => fingerprint,
        Err(e) => {
            return Err((format!("pinned to {pin}; cannot read {}: {e}", program.display()), None))
        }
    };
    let path = fingerprint.path.display();
    match approvals.verdict(name, &fingerprint) {
        Verdict::Approved => Ok(fingerprint.sha256.clone()),
        Verdict::NotApproved => Err((
            format!("pinned to {pin}; {path} is not approved for it yet: {}", approve(&path)),
            None,
        )),
        Verdict::Changed { approved_at, approved_sha256 } => Err((
            format!(
                "pinned to {pin}; {path} has changed since it was approved ({approved_at}): \
                 check it, then {}",
                approve(&path)
            ),
            Some(Box::new(Changed {
                secret: name.to_owned(),
                path: fingerprint.path.clone(),
                approved_sha256,
                sha256: fingerprint.sha256.clone(),
                approved_at,
            })),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vault::store::MemoryStore;

    fn setup(name: &str) -> (Vault, std::path::PathBuf) {
        let state =
            std::env::temp_dir().join(format!("paddock-release-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&state);
        let vault = Vault::new(Box::<MemoryStore>::default(), "test".into(), state.clone());
        vault.set("open", b"value-open").expect("set");
        vault.set("pinned", b"value-pinned").expect("set");
        (vault, state)
    }

    fn secrets(pin: &str) -> Vec<SecretRef> {
        vec![
            SecretRef { name: "open".into(), env: "OPEN".into(), pin: None, broker: None },
            SecretRef {
                name: "pinned".into(),
                env: "PINNED".into(),
                pin: Some(pin.into()),
                broker: None,
            },
        ]
    }

    fn request<'a>(secrets: &'a [SecretRef], argv: &'a [String]) -> Request<'a> {
        Request {
            secrets,
            argv,
            cwd: None,
            path_var: Some("/bin:/usr/bin".into()),
            thread: Some("t"),
            pane: 1,
        }
    }

    #[test]
    fn a_pinned_secret_goes_only_to_its_approved_program() {
        let (vault, state) = setup("pin");
        let secrets = secrets("cat");
        let cat = vec!["cat".to_owned()];
        let shell = vec!["sh".to_owned(), "-c".to_owned(), "cat".to_owned()];

        let out = release(&vault, &request(&secrets, &shell)).expect("release");
        assert_eq!(out.names, ["open"]);
        assert_eq!(out.env.len(), 1);
        assert_eq!((out.env[0].0.as_str(), out.env[0].1.as_slice()), ("OPEN", &b"value-open"[..]));
        assert_eq!(
            out.withheld,
            [("pinned".to_owned(), "pinned to cat; this pane runs sh".to_owned())]
        );

        let out = release(&vault, &request(&secrets, &cat)).expect("release");
        assert_eq!(out.names, ["open"]);
        assert!(out.withheld[0].1.contains("is not approved for it yet"), "{:?}", out.withheld);

        let found = pin::find_program("cat", None, Some("/bin:/usr/bin".as_ref())).expect("cat");
        let fingerprint = pin::fingerprint(&found).expect("fingerprint");
        Approvals::default().approve("pinned", &fingerprint, utc_now()).save(&state).expect("save");
        let out = release(&vault, &request(&secrets, &cat)).expect("release");
        assert_eq!(out.names, ["open", "pinned"]);
        assert!(out.withheld.is_empty());
        assert_eq!(out.pinned_sha256.as_deref(), Some(fingerprint.sha256.as_str()));
        // Releases are recorded by whoever starts the program, once it has started.
        let pending: Vec<(Event, &str)> =
            out.records.iter().map(|r| (r.event, r.secret.as_str())).collect();
        assert_eq!(pending, [(Event::Released, "open"), (Event::Released, "pinned")]);

        let log = AuditLog::new(&state).read().expect("audit");
        let events: Vec<(Event, String)> =
            log.iter().flatten().map(|r| (r.event, r.secret.clone())).collect();
        assert_eq!(
            events,
            [(Event::Withheld, "pinned".into()), (Event::Withheld, "pinned".into())]
        );

        // The approved file changes (an agent updated itself): withheld, with both fingerprints
        // for the window to offer approving it again.
        let tool = state.join("tool");
        std::fs::write(&tool, b"#!/bin/sh\necho one\n").expect("tool");
        let old = pin::fingerprint(&tool).expect("fingerprint");
        Approvals::load(&state).approve("pinned", &old, "t0".into()).save(&state).expect("save");
        let secrets_tool = self::secrets(tool.to_str().expect("path"));
        let argv = vec![tool.display().to_string()];
        std::fs::write(&tool, b"#!/bin/sh\necho two\n").expect("tool changes");
        let out = release(&vault, &request(&secrets_tool, &argv)).expect("release");
        assert_eq!(out.names, ["open"]);
        let new = pin::fingerprint(&tool).expect("fingerprint");
        assert_eq!(
            out.changed,
            [Changed {
                secret: "pinned".into(),
                path: new.path.clone(),
                approved_sha256: old.sha256.clone(),
                sha256: new.sha256.clone(),
                approved_at: "t0".into(),
            }]
        );

        // A PATH with a relative entry finds a different file from a different folder.
        let mut relative = request(&secrets, &cat);
        relative.path_var = Some("bin:/bin:/usr/bin".into());
        let out = release(&vault, &relative).expect("release");
        assert_eq!(out.names, ["open"]);
        assert!(out.withheld[0].1.contains("relative entry \"bin\""), "{:?}", out.withheld);
        assert_eq!(out.pinned_sha256, None);
        let text = std::fs::read_to_string(AuditLog::new(&state).path()).expect("log text");
        assert!(!text.contains("value-"), "{text}");
        let _ = std::fs::remove_dir_all(state);
    }

    #[test]
    fn a_missing_secret_stops_the_program_and_says_how_to_set_it() {
        let (vault, state) = setup("missing");
        let mut secrets = secrets("cat");
        secrets.push(SecretRef {
            name: "gone".into(),
            env: "GONE".into(),
            pin: None,
            broker: None,
        });
        let argv = vec!["cat".to_owned()];
        let error = release(&vault, &request(&secrets, &argv)).err().expect("refused");
        assert_eq!(
            error.to_string(),
            "secret \"gone\" is not in the vault: set it with `paddock vault set gone`, then restart the thread"
        );
        let _ = std::fs::remove_dir_all(state);
    }
}
