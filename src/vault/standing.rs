//! Whether the broker may use a secret now: revoked (until the user sets a new value),
//! suspended (for a time, or until resumed), or active; and each secret's generation, which
//! every `vault set` and `vault rm` moves on, so that a pane holding an older value stops
//! using it at once (a restart gives it the new one). Kept in paddock's state folder, which
//! no lock lets a pane write, so a revocation holds across restarts and every running
//! instance sees it at its next request (`Watched` looks at the file's change time each time).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::audit::utc_at;
use super::{write_private, VaultError};

const STANDING_FILE: &str = "secret-standing.json";

/// A secret's standing for the broker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Standing {
    Active,
    /// Until this time (none: until resumed).
    Suspended {
        until: Option<SystemTime>,
    },
    /// Since this time, until a new value is set.
    Revoked {
        since: String,
    },
    /// The vault has a newer value, or none: a pane holding this one restarts to get it.
    Replaced,
}

impl Standing {
    /// As `paddock ls` and the audit log say it.
    pub fn word(&self) -> &'static str {
        match self {
            Standing::Active => "active",
            Standing::Suspended { .. } => "suspended",
            Standing::Revoked { .. } => "revoked",
            Standing::Replaced => "replaced",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
enum Entry {
    Revoked {
        since: String,
    },
    Suspended {
        since: String,
        /// Seconds since 1970 (none: until resumed).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        until: Option<u64>,
    },
}

/// Every secret that is not active, by name, and every secret's generation.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Standings {
    #[serde(default)]
    entries: BTreeMap<String, Entry>,
    /// How often each secret's value was set or removed through paddock.
    #[serde(default)]
    generations: BTreeMap<String, u64>,
    /// The SHA-256 of each value ever revoked, by secret: none is set again. (A digest of a
    /// key of 128 random bits or more tells nothing that can be used.)
    #[serde(default)]
    revoked_values: BTreeMap<String, Vec<String>>,
}

/// A value's SHA-256, in hex, as `Standings` keeps a revoked one.
pub fn value_digest(value: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(value).iter().map(|b| format!("{b:02x}")).collect()
}

impl Standings {
    /// The standings in `state`; none when the file is missing or unreadable (a file that does
    /// not parse is reported by `load_checked`).
    pub fn load(state: &Path) -> Standings {
        Standings::load_checked(state).unwrap_or_default()
    }

    /// The standings in `state`, or why the file cannot be read.
    pub fn load_checked(state: &Path) -> Result<Standings, VaultError> {
        let path = state.join(STANDING_FILE);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Standings::default()),
            Err(e) => return Err(VaultError::State { path, error: e.to_string() }),
        };
        serde_json::from_slice(&bytes).map_err(|e| VaultError::State { path, error: e.to_string() })
    }

    pub fn save(&self, state: &Path) -> Result<(), VaultError> {
        let json = serde_json::to_vec_pretty(self).unwrap_or_default();
        write_private(&state.join(STANDING_FILE), &json)
    }

    /// `name`'s standing at `now`.
    pub fn of(&self, name: &str, now: SystemTime) -> Standing {
        match self.entries.get(name) {
            None => Standing::Active,
            Some(Entry::Revoked { since }) => Standing::Revoked { since: since.clone() },
            Some(Entry::Suspended { until: None, .. }) => Standing::Suspended { until: None },
            Some(Entry::Suspended { until: Some(until), .. }) => {
                let until = UNIX_EPOCH + Duration::from_secs(*until);
                match now < until {
                    true => Standing::Suspended { until: Some(until) },
                    false => Standing::Active,
                }
            }
        }
    }

    pub fn revoke(&mut self, name: &str, now: SystemTime) {
        self.entries.insert(name.to_owned(), Entry::Revoked { since: utc_at(now) });
    }

    /// Suspend `name` for `time` (none: until resumed). A revoked secret stays revoked: what
    /// was said.
    pub fn suspend(&mut self, name: &str, time: Option<Duration>, now: SystemTime) -> bool {
        if matches!(self.entries.get(name), Some(Entry::Revoked { .. })) {
            return false;
        }
        let until = time.map(|t| (now + t).duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()));
        self.entries.insert(name.to_owned(), Entry::Suspended { since: utc_at(now), until });
        true
    }

    /// End a suspension: whether `name` was suspended (a revocation ends only with a new
    /// value).
    pub fn resume(&mut self, name: &str) -> bool {
        match self.entries.get(name) {
            Some(Entry::Suspended { .. }) => self.entries.remove(name).is_some(),
            _ => false,
        }
    }

    /// A new value was set: whatever held the old one is over, and panes that hold the old
    /// one stop using it (its generation moves on).
    pub fn new_value(&mut self, name: &str) {
        self.entries.remove(name);
        self.next_generation(name);
    }

    /// Whether `name` is revoked now.
    pub fn is_revoked(&self, name: &str) -> bool {
        matches!(self.entries.get(name), Some(Entry::Revoked { .. }))
    }

    /// Remember that `name`'s value with this digest was revoked: it is never set again.
    pub fn remember_revoked(&mut self, name: &str, digest: String) {
        let list = self.revoked_values.entry(name.to_owned()).or_default();
        if !list.contains(&digest) {
            list.push(digest);
        }
    }

    /// Whether a value with this digest was revoked for `name`.
    pub fn was_revoked(&self, name: &str, digest: &str) -> bool {
        self.revoked_values.get(name).is_some_and(|list| list.iter().any(|d| d == digest))
    }

    /// `name`'s value changed or went: panes that hold the one before stop using it.
    pub fn next_generation(&mut self, name: &str) {
        *self.generations.entry(name.to_owned()).or_insert(0) += 1;
    }

    /// `name`'s generation: a pane's value of an older one is no longer the vault's.
    pub fn generation(&self, name: &str) -> u64 {
        self.generations.get(name).copied().unwrap_or(0)
    }
}

/// When a file changed, its length and which file it is (a save puts a new file in place).
type Stamp = (SystemTime, u64, u64);

#[cfg(unix)]
fn file_id(meta: &std::fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::ino(meta)
}

#[cfg(not(unix))]
fn file_id(_meta: &std::fs::Metadata) -> u64 {
    0
}

/// The standings file, read again whenever it changed: what the broker asks on every request.
pub struct Watched {
    path: PathBuf,
    state: PathBuf,
    seen: Mutex<(Option<Stamp>, Standings)>,
}

impl Watched {
    pub fn new(state: &Path) -> Watched {
        let path = state.join(STANDING_FILE);
        Watched { path, state: state.to_owned(), seen: Mutex::new((None, Standings::default())) }
    }

    /// `name`'s standing now, for a value of `generation`: one the vault has since replaced
    /// or removed counts as such. A file that cannot be read counts as every secret revoked:
    /// the broker must not go on using a secret the user may have revoked.
    pub fn of(&self, name: &str, generation: u64) -> Standing {
        let stamp = match std::fs::metadata(&self.path) {
            Ok(meta) => meta.modified().ok().map(|m| (m, meta.len(), file_id(&meta))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(_) => {
                return Standing::Revoked { since: "(the standings file is unreadable)".into() }
            }
        };
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        if seen.0 != stamp || stamp.is_none() {
            match Standings::load_checked(&self.state) {
                Ok(standings) => *seen = (stamp, standings),
                Err(e) => return Standing::Revoked { since: format!("({e})") },
            }
        }
        if seen.1.generation(name) != generation {
            return Standing::Replaced;
        }
        seen.1.of(name, SystemTime::now())
    }

    /// `name`'s generation now.
    pub fn generation(&self, name: &str) -> u64 {
        Standings::load(&self.state).generation(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revoked_holds_until_a_new_value_and_suspended_until_its_time() {
        let state = std::env::temp_dir().join(format!("paddock-standing-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&state);
        let now = SystemTime::now();
        let watched = Watched::new(&state);
        assert_eq!(watched.of("key", 0), Standing::Active);
        let mut standings = Standings::load(&state);
        standings.revoke("key", now);
        assert!(!standings.suspend("key", None, now), "a revoked secret stays revoked");
        assert!(!standings.resume("key"), "only a new value ends a revocation");
        assert!(standings.suspend("other", Some(Duration::from_secs(60)), now));
        standings.save(&state).expect("save");
        assert!(matches!(watched.of("key", 0), Standing::Revoked { .. }));
        let later = now + Duration::from_secs(61);
        let loaded = Standings::load(&state);
        assert!(matches!(loaded.of("other", now), Standing::Suspended { until: Some(_) }));
        assert_eq!(loaded.of("other", later), Standing::Active);
        let mut standings = loaded;
        standings.new_value("key");
        standings.save(&state).expect("save");
        // A pane released the old value: it is no longer the vault's. One released now is.
        assert_eq!(watched.of("key", 0), Standing::Replaced);
        assert_eq!(watched.generation("key"), 1);
        assert_eq!(watched.of("key", 1), Standing::Active);
        // A file that does not parse: nothing is used.
        std::fs::write(state.join(STANDING_FILE), b"{not json").expect("write");
        assert!(matches!(watched.of("third", 0), Standing::Revoked { .. }));
        let _ = std::fs::remove_dir_all(state);
    }
}
