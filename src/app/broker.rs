//! The instance's secret broker (`egress::broker`), started when a pane first gets a brokered
//! secret: its authority's certificate, with the roots paddock trusts, written to a bundle
//! file every brokered pane is shown and pointed at; and for each such pane the grants its
//! proxy serves, with a watcher that asks the vault's standings before each use, records
//! every use in the audit log, and turns the pane needs-you when its programs try to send a
//! placeholder where its value may not go.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::egress::broker::{
    Attempt, Broker, BrokerHost, Grant, Grants, PaneBroker, Place, SecretState, SecretValue, Use,
    Watcher,
};
use crate::pulse::Activity;
use crate::vault::audit::{utc_at, AuditLog, Event, Record, RequestLine};
use crate::vault::release::Brokered;
use crate::vault::standing::{Standing, Watched};
use crate::vault::SecretBytes;

/// The variables that name a brokered pane's bundle: OpenSSL and everything built on it (curl,
/// git, Python's ssl, Go, rustls-native-certs), Node (which adds it to its own roots), Python's
/// requests, curl and git by their own names.
pub const CA_VARIABLES: &[&str] = &[
    "SSL_CERT_FILE",
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "GIT_SSL_CAINFO",
];

/// The instance's broker, and the bundle its panes trust.
pub struct InstanceBroker {
    broker: Arc<Broker>,
    bundle: PathBuf,
    standings: Arc<Watched>,
    state: PathBuf,
}

impl Drop for InstanceBroker {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.bundle);
    }
}

impl InstanceBroker {
    /// A new authority, its bundle written in `folder` (one the locks may be shown: not the
    /// control folder, not the homes), the standings read from the vault's `state` folder.
    pub fn start(folder: &Path, state: &Path) -> Result<InstanceBroker, String> {
        let broker = Broker::new().map_err(|e| e.to_string())?;
        let bundle = folder.join(format!("ca-{}.pem", std::process::id()));
        let write = || -> std::io::Result<()> {
            std::fs::create_dir_all(folder)?;
            let temporary = bundle.with_extension("tmp");
            std::fs::write(&temporary, broker.bundle_pem())?;
            std::fs::rename(&temporary, &bundle)
        };
        write().map_err(|e| {
            format!("cannot write the broker's certificates in {}: {e}", folder.display())
        })?;
        Ok(InstanceBroker {
            broker: Arc::new(broker),
            bundle,
            standings: Arc::new(Watched::new(state)),
            state: state.to_owned(),
        })
    }

    /// The file a brokered pane's programs trust.
    pub fn bundle(&self) -> &Path {
        &self.bundle
    }

    /// The variables that point a brokered pane's programs at the bundle.
    pub fn env(&self) -> Vec<(String, String)> {
        let bundle = self.bundle.display().to_string();
        CA_VARIABLES.iter().map(|name| ((*name).to_owned(), bundle.clone())).collect()
    }

    /// The broker for one pane's `released` secrets.
    pub fn for_pane(
        &self,
        released: Vec<Brokered>,
        activity: Option<Arc<Activity>>,
        pane: u32,
        thread: Option<String>,
        program: Option<String>,
    ) -> Arc<PaneBroker> {
        let generations = released.iter().map(|b| (b.name.clone(), b.generation)).collect();
        let grants = released
            .into_iter()
            .map(|b| Grant {
                name: b.name,
                placeholder: b.placeholder,
                value: Arc::new(Value(b.value)),
                hosts: b
                    .spec
                    .hosts
                    .into_iter()
                    .map(|(name, port)| BrokerHost { name, port })
                    .collect(),
                headers: b.spec.headers,
            })
            .collect();
        let watcher = PaneWatcher {
            generations,
            standings: self.standings.clone(),
            audit: AuditLog::new(&self.state),
            activity,
            program,
        };
        Arc::new(PaneBroker::new(
            self.broker.clone(),
            Grants::new(grants),
            Arc::new(watcher),
            pane,
            thread,
        ))
    }

    /// A pane's value of a secret (of `generation`): its standing now, as `paddock ls` says it.
    pub fn standing(&self, name: &str, generation: u64) -> Standing {
        self.standings.of(name, generation)
    }
}

struct Value(SecretBytes);

impl SecretValue for Value {
    fn bytes(&self) -> &[u8] {
        self.0.as_slice()
    }
}

/// What a pane's broker asks and tells.
struct PaneWatcher {
    /// The generation of each value the pane was given.
    generations: std::collections::HashMap<String, u64>,
    standings: Arc<Watched>,
    audit: AuditLog,
    activity: Option<Arc<Activity>>,
    program: Option<String>,
}

impl Watcher for PaneWatcher {
    fn state(&self, secret: &str) -> SecretState {
        let Some(generation) = self.generations.get(secret) else { return SecretState::Revoked };
        match self.standings.of(secret, *generation) {
            Standing::Active => SecretState::Active,
            Standing::Suspended { .. } => SecretState::Suspended,
            Standing::Revoked { .. } => SecretState::Revoked,
            Standing::Replaced => SecretState::Replaced,
        }
    }

    fn used(&self, record: Use) {
        let (event, reason) = match record.state {
            SecretState::Active => (Event::Used, None),
            held => (Event::Held, Some(held.word().to_owned())),
        };
        let line = Record {
            time: utc_at(record.time),
            event,
            secret: record.secret,
            thread: record.thread,
            pane: record.pane,
            program: self.program.clone(),
            reason,
            masked: None,
            request: Some(RequestLine {
                host: crate::sandbox::visible(&record.host),
                port: record.port,
                method: crate::sandbox::visible(&record.method),
                path: crate::sandbox::visible(&record.path),
                status: record.status,
                error: record.error,
            }),
            host: None,
        };
        if let Err(e) = self.audit.append(&line) {
            eprintln!("paddock: cannot write the vault's audit log: {e}");
        }
    }

    fn blocked(&self, attempt: Attempt) {
        let host = crate::sandbox::visible(&attempt.host);
        if let Some(activity) = &self.activity {
            let (secret, place, port) = (&attempt.secret, &attempt.place, attempt.port);
            activity.notify(&match place {
                Place::Response => format!("secret \"{secret}\" {place} ({host}:{port})"),
                _ => format!("tried to send secret \"{secret}\" {place} ({host}:{port}); stopped"),
            });
        }
        let line = Record {
            time: utc_at(attempt.time),
            event: match attempt.place {
                Place::Response => Event::Returned,
                _ => Event::Blocked,
            },
            secret: attempt.secret,
            thread: attempt.thread,
            pane: attempt.pane,
            program: self.program.clone(),
            reason: Some(attempt.place.to_string()),
            masked: None,
            request: Some(RequestLine {
                host,
                port: attempt.port,
                method: String::new(),
                path: String::new(),
                status: None,
                error: None,
            }),
            host: None,
        };
        if let Err(e) = self.audit.append(&line) {
            eprintln!("paddock: cannot write the vault's audit log: {e}");
        }
    }
}
