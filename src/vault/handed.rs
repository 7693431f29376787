//! Secrets for a thread on another host. The vault stays on the user's own machine: it
//! releases a remote thread's values to the link (`for_host`), with the approvals that hold on
//! that host for pinned ones, and audits it there with the host's name. The paddock on the
//! host decides for its own spawn with what it was handed (`release_handed`): the pin checked
//! against the program there, a brokered one given a placeholder for its own broker; it keeps
//! the values in memory only and writes no record of them.

use super::audit::{AuditLog, Event, Record};
use super::pin::{Approval, Approvals};
use super::release::{decide, fetch, ReleaseError, Released, Request, Source};
use super::{SecretBytes, SecretRef, Vault};

/// A program approved for a pinned secret on the host: its path there and SHA-256.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApprovedProgram {
    pub path: String,
    pub sha256: String,
    pub approved_at: String,
}

/// One secret's value, for one spawn on the host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HandedSecret {
    pub name: String,
    pub value: SecretBytes,
    /// For a pinned secret: the programs approved for it on that host.
    pub approved: Vec<ApprovedProgram>,
}

/// What a thread on another host is handed with its definition.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Handed {
    /// The host's name on the machine that handed them (for the words on approving again).
    pub host: String,
    pub secrets: Vec<HandedSecret>,
    /// Secrets the vault withheld there, and why (the pane says so).
    pub withheld: Vec<(String, String)>,
}

impl Handed {
    /// Whether `name` was decided on the handing side (given, or withheld with a reason).
    pub fn covers(&self, name: &str) -> bool {
        self.secrets.iter().any(|s| s.name == name) || self.withheld.iter().any(|(n, _)| n == name)
    }
}

/// What the vault releases to a thread on `host`, and the `released` records to write once the
/// host says whether its program started.
pub struct ForHost {
    pub handed: Handed,
    pub records: Vec<Record>,
}

/// Release `secrets` of `thread` (local pane `pane`, running `program` on `host`) to the link:
/// values fetched here, pinned ones only with an approval for a program on that host. Each
/// withholding is audited at once; a release that cannot be audited does not happen.
pub fn for_host(
    vault: &Vault,
    secrets: &[SecretRef],
    thread: &str,
    pane: u32,
    program: Option<&str>,
    host: &str,
) -> Result<ForHost, ReleaseError> {
    let audit = AuditLog::new(vault.state());
    let record = |secret: &str, event, reason: Option<String>| Record {
        time: super::audit::utc_now(),
        event,
        secret: secret.to_owned(),
        thread: Some(thread.to_owned()),
        pane,
        program: program.map(str::to_owned),
        reason,
        masked: None,
        request: None,
        host: Some(host.to_owned()),
    };
    let values = fetch(vault, secrets, &audit, &record)?;
    let approvals = Approvals::load(vault.state());
    let handed = Handed { host: host.to_owned(), ..Handed::default() };
    let mut out = ForHost { handed, records: vec![] };
    for (secret, value) in secrets.iter().zip(values) {
        let approved: Vec<ApprovedProgram> = approvals
            .approvals
            .iter()
            .filter(|a| a.secret == secret.name && a.host.as_deref() == Some(host))
            .map(|a| ApprovedProgram {
                path: a.program.display().to_string(),
                sha256: a.sha256.clone(),
                approved_at: a.approved_at.clone(),
            })
            .collect();
        if let Some(pin) = &secret.pin {
            let why = if approved.is_empty() {
                Some(format!(
                    "pinned to {pin}; no program on {host} is approved for it yet: `paddock \
                     vault approve {} PROGRAM --host {host}`",
                    secret.name
                ))
            } else if !could_be_pinned(pin, program, &approved) {
                let runs = program.unwrap_or("its shell");
                Some(format!("pinned to {pin}; this thread runs {runs} on {host}"))
            } else {
                None
            };
            // Withheld here, before the value leaves this machine: the host checks the file
            // itself, but a value it would refuse should never reach it.
            if let Some(why) = why {
                audit.append(&record(&secret.name, Event::Withheld, Some(why.clone())))?;
                out.handed.withheld.push((secret.name.clone(), why));
                continue;
            }
        }
        let how = format!("handed to {host}'s paddock over ssh for this pane, in its memory only");
        out.records.push(record(&secret.name, Event::Released, Some(how)));
        out.handed.secrets.push(HandedSecret { name: secret.name.clone(), value, approved });
    }
    if !out.records.is_empty() {
        audit.check()?;
    }
    Ok(out)
}

/// Whether a thread on a host that runs `program` (its command's first word, as written)
/// could be running the program `pin` names, as far as this machine can tell without the
/// host's files: its name is the pin's, or an approved program's, file name.
fn could_be_pinned(pin: &str, program: Option<&str>, approved: &[ApprovedProgram]) -> bool {
    let name = |path: &str| path.rsplit('/').next().unwrap_or(path).to_owned();
    let Some(program) = program.map(name).filter(|p| !p.is_empty()) else { return false };
    name(pin) == program || approved.iter().any(|a| name(&a.path) == program)
}

/// On the host: decide for a spawn with what was handed, as the vault would with its own
/// values (pins checked against the program here, brokered ones given placeholders). Nothing
/// is audited here: the handing side records what the host said.
pub fn release_handed(handed: &Handed, request: &Request<'_>) -> Result<Released, ReleaseError> {
    let mut given = Vec::new();
    let mut values = Vec::new();
    let mut withheld = Vec::new();
    let mut missing = Vec::new();
    for secret in request.secrets {
        if let Some((_, why)) = handed.withheld.iter().find(|(name, _)| *name == secret.name) {
            withheld.push((secret.name.clone(), why.clone()));
        } else if let Some(value) = handed.secrets.iter().find(|s| s.name == secret.name) {
            given.push(secret.clone());
            values.push(value.value.clone());
        } else {
            missing.push(secret.name.clone());
        }
    }
    if !missing.is_empty() {
        return Err(ReleaseError::NotHanded(missing));
    }
    let approvals = Approvals {
        approvals: handed
            .secrets
            .iter()
            .flat_map(|s| {
                s.approved.iter().map(|a| Approval {
                    secret: s.name.clone(),
                    program: a.path.clone().into(),
                    sha256: a.sha256.clone(),
                    approved_at: a.approved_at.clone(),
                    host: None,
                })
            })
            .collect(),
    };
    let given_request = Request {
        secrets: &given,
        argv: request.argv,
        cwd: request.cwd,
        path_var: request.path_var.clone(),
        thread: request.thread,
        pane: request.pane,
    };
    let source = Source {
        values,
        approvals,
        generation: &|_| 0,
        audit: None,
        approved_on: Some(&handed.host),
    };
    let mut released = decide(&given_request, source)?;
    released.withheld.extend(withheld);
    released.records.clear();
    Ok(released)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vault::pin::Fingerprint;
    use crate::vault::store::MemoryStore;

    /// A pinned value leaves this machine only for a thread whose command could be the pinned
    /// program, and only with an approval for a program on that host.
    #[test]
    fn a_pinned_value_is_sent_only_where_it_could_be_used() {
        let state = std::env::temp_dir().join(format!("paddock-handed-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&state);
        let vault = Vault::new(Box::<MemoryStore>::default(), "test".into(), state.clone());
        vault.set("p", b"pinned-value").expect("set");
        vault.set("o", b"open-value").expect("set");
        let secrets = [
            SecretRef {
                name: "p".into(),
                env: "P".into(),
                pin: Some("/opt/tool".into()),
                broker: None,
            },
            SecretRef { name: "o".into(), env: "O".into(), pin: None, broker: None },
        ];
        let hand = |program| for_host(&vault, &secrets, "far", 1, program, "box").expect("hand");
        let sent =
            |out: &ForHost| out.handed.secrets.iter().map(|s| s.name.clone()).collect::<Vec<_>>();
        // No approval for a program on that host: only the open one goes.
        let out = hand(Some("/opt/tool"));
        assert_eq!(sent(&out), ["o"]);
        assert!(out.handed.withheld[0].1.contains("--host box"), "{:?}", out.handed.withheld);
        let on_box = Fingerprint { path: "/opt/tool".into(), sha256: "ab".repeat(32) };
        let here = Fingerprint { path: "/opt/tool".into(), sha256: "cd".repeat(32) };
        let approvals = Approvals::default().approve_on(Some("box"), "p", &on_box, "t".into());
        approvals.approve("p", &here, "t".into()).save(&state).expect("save");
        // Approved there, but the thread runs a shell: withheld here, never sent.
        let out = hand(Some("bash"));
        assert_eq!(sent(&out), ["o"]);
        assert!(out.handed.withheld[0].1.contains("this thread runs bash on box"));
        assert_eq!(sent(&hand(None)), ["o"]);
        // The pinned program: sent, with the host's approval only (not this machine's).
        let out = hand(Some("tool"));
        assert_eq!(sent(&out), ["p", "o"]);
        let approved = &out.handed.secrets[0].approved;
        assert_eq!(approved.len(), 1);
        assert_eq!(
            (approved[0].path.as_str(), approved[0].sha256.as_str()),
            ("/opt/tool", &*"ab".repeat(32))
        );
        let _ = std::fs::remove_dir_all(state);
    }
}
