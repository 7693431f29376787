//! The vault: secrets kept in the OS keychain and used by name. A thread's config names the
//! secrets it needs; at spawn their values go into that pane's program's environment only
//! (`release`), pinned ones only to the program the user approved (`pin`); what the program
//! prints of them is masked before the terminal sees it (`mask`); every release, withholding
//! and masking is written to an audit log (`audit`). Values never pass through argv, files or
//! logs, and live in memory that is wiped when dropped.
//!
//! paddock's state folder holds the names it knows and the approvals, never a value.

pub mod audit;
pub mod handed;
mod locked;
pub mod mask;
pub mod pin;
#[cfg(unix)]
pub mod pin_exec;
pub mod placeholder;
pub mod release;
pub mod standing;
pub mod store;

use std::path::{Path, PathBuf};

use thiserror::Error;

pub use store::{SecretBytes, SecretStore, StoreError};

/// The keychain service paddock's secrets are kept under (`PADDOCK_VAULT_SERVICE` overrides it).
pub const DEFAULT_SERVICE: &str = "paddock";
const NAMES_FILE: &str = "vault-names.json";

#[derive(Debug, Error)]
pub enum VaultError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(
        "\"{0}\" is not a secret name: use 1 to 64 letters, digits, `-`, `_` or `.`, starting \
         with a letter or digit"
    )]
    BadName(String),
    #[error("cannot use paddock's state folder {}: {error}", path.display())]
    State { path: PathBuf, error: String },
    #[error("paddock has no state folder here (no home folder?)")]
    NoStateFolder,
    #[error(
        "this value of \"{0}\" was revoked: set a new value (rotate the key where it was issued \
         first)"
    )]
    StillRevoked(String),
}

/// A secret from the vault, by name, handed to the thread as an environment variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SecretRef {
    /// Its name in the vault.
    pub name: String,
    /// The environment variable that carries it.
    pub env: String,
    /// The only program it may be handed to.
    pub pin: Option<String>,
    /// Brokered: the pane gets a placeholder, and the value goes only into these headers of
    /// requests to these hosts (`egress::broker`).
    pub broker: Option<BrokerSpec>,
}

/// Where a brokered secret's value may go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrokerSpec {
    /// Host names (lower case) and ports.
    pub hosts: Vec<(String, u16)>,
    /// Request header names (lower case).
    pub headers: Vec<String>,
}

/// paddock's state folder: its approvals, the names its vault knows, the audit log.
pub fn state_folder() -> Option<PathBuf> {
    dirs::state_dir().or_else(dirs::data_local_dir).map(|d| d.join("paddock"))
}

/// A process that holds released values (the instance, `vault set`): no other process of the
/// user may read its memory (/proc/PID/mem, a debugger) and a crash writes no core file.
/// Panes' programs are their own again after exec, which resets this. (macOS: no core file;
/// its debugger needs the user's approval or root.)
pub fn keep_memory_private() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl(2) with valid arguments.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
    #[cfg(unix)]
    // SAFETY: setrlimit(2) with a valid limit.
    unsafe {
        let none = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        libc::setrlimit(libc::RLIMIT_CORE, &none);
    }
}

/// Whether `name` can name a secret.
pub fn valid_name(name: &str) -> bool {
    let first = name.chars().next().is_some_and(|c| c.is_ascii_alphanumeric());
    first
        && name.len() <= 64
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Secrets by name in one keychain service.
pub struct Vault {
    store: Box<dyn SecretStore>,
    service: String,
    state: PathBuf,
}

impl Vault {
    pub fn new(store: Box<dyn SecretStore>, service: String, state: PathBuf) -> Vault {
        Vault { store, service, state }
    }

    /// The platform's keychain, the service from `PADDOCK_VAULT_SERVICE` (else `paddock`), and
    /// paddock's state folder.
    pub fn open() -> Result<Vault, VaultError> {
        let choice = std::env::var("PADDOCK_VAULT_STORE").ok().filter(|s| !s.is_empty());
        let store = store::keychain(choice.as_deref())?;
        let service = std::env::var("PADDOCK_VAULT_SERVICE")
            .ok()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| DEFAULT_SERVICE.into());
        let state = state_folder().ok_or(VaultError::NoStateFolder)?;
        Ok(Vault::new(Box::new(store), service, state))
    }

    pub fn service(&self) -> &str {
        &self.service
    }

    pub fn state(&self) -> &Path {
        &self.state
    }

    /// Which store, as `paddock vault check` says it.
    pub fn describe(&self) -> String {
        self.store.describe()
    }

    /// Why this store was chosen, when it is not the platform's first choice.
    pub fn note(&self) -> Option<String> {
        self.store.note()
    }

    pub fn get(&self, name: &str) -> Result<Option<SecretBytes>, VaultError> {
        check_name(name)?;
        Ok(self.store.get(&self.service, name)?)
    }

    pub fn set(&self, name: &str, value: &[u8]) -> Result<(), VaultError> {
        check_name(name)?;
        // A revoked value set again stays revoked: only a new one ends a revocation.
        let mut standings = standing::Standings::load_checked(&self.state)?;
        if standings.was_revoked(name, &standing::value_digest(value)) {
            return Err(VaultError::StillRevoked(name.to_owned()));
        }
        if standings.is_revoked(name) {
            if let Some(old) = self.store.get(&self.service, name)? {
                if old.as_slice() == value {
                    return Err(VaultError::StillRevoked(name.to_owned()));
                }
            }
        }
        self.store.set(&self.service, name, value)?;
        // A new value ends a revocation or suspension of the old one, and panes that hold the
        // old one stop using it.
        standings.new_value(name);
        standings.save(&self.state)?;
        let mut names = self.known_names();
        if !names.iter().any(|n| n == name) {
            names.push(name.to_owned());
            names.sort();
            self.write_names(&names)?;
        }
        Ok(())
    }

    /// Removes the secret (and its approvals); whether the keychain had it.
    pub fn remove(&self, name: &str) -> Result<bool, VaultError> {
        check_name(name)?;
        let existed = self.store.delete(&self.service, name)?;
        // Panes holding it stop using it.
        let mut standings = standing::Standings::load_checked(&self.state)?;
        standings.next_generation(name);
        standings.save(&self.state)?;
        let mut names = self.known_names();
        if names.iter().any(|n| n == name) {
            names.retain(|n| n != name);
            self.write_names(&names)?;
        }
        pin::Approvals::load(&self.state).forget(name).save(&self.state)?;
        Ok(existed)
    }

    /// The names set through paddock (whether or not the keychain still has them).
    pub fn known_names(&self) -> Vec<String> {
        std::fs::read(self.state.join(NAMES_FILE))
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    fn write_names(&self, names: &[String]) -> Result<(), VaultError> {
        let json = serde_json::to_vec_pretty(names).unwrap_or_default();
        write_private(&self.state.join(NAMES_FILE), &json)
    }
}

fn check_name(name: &str) -> Result<(), VaultError> {
    if valid_name(name) {
        Ok(())
    } else {
        Err(VaultError::BadName(name.to_owned()))
    }
}

/// Replace `path` with `bytes`, readable by the user only, creating its folder.
pub(crate) fn write_private(path: &Path, bytes: &[u8]) -> Result<(), VaultError> {
    let error =
        |e: std::io::Error| VaultError::State { path: path.to_owned(), error: e.to_string() };
    if let Some(folder) = path.parent() {
        create_private_folder(folder).map_err(error)?;
    }
    let temporary = path.with_extension("tmp");
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&temporary).map_err(error)?;
    std::io::Write::write_all(&mut file, bytes).map_err(error)?;
    file.sync_all().map_err(error)?;
    std::fs::rename(&temporary, path).map_err(error)
}

pub(crate) fn create_private_folder(folder: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(folder)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vault(name: &str) -> (Vault, PathBuf) {
        let state =
            std::env::temp_dir().join(format!("paddock-vault-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&state);
        (Vault::new(Box::<store::MemoryStore>::default(), "test".into(), state.clone()), state)
    }

    #[test]
    fn names_are_checked_and_remembered_values_are_not() {
        let (vault, state) = vault("names");
        assert!(matches!(vault.set("bad name", b"x"), Err(VaultError::BadName(_))));
        assert!(matches!(vault.get("../x"), Err(VaultError::BadName(_))));
        vault.set("openai", b"sk-1").expect("set");
        vault.set("anthropic-key", b"sk-2").expect("set");
        assert_eq!(vault.known_names(), ["anthropic-key", "openai"]);
        assert_eq!(
            vault.get("openai").expect("get").as_ref().map(SecretBytes::as_slice),
            Some(&b"sk-1"[..])
        );
        let on_disk = std::fs::read_to_string(state.join(NAMES_FILE)).expect("names file");
        assert!(!on_disk.contains("sk-"), "{on_disk}");
        assert!(vault.remove("openai").expect("remove"));
        assert!(!vault.remove("openai").expect("remove again"));
        assert_eq!(vault.known_names(), ["anthropic-key"]);
        let _ = std::fs::remove_dir_all(state);
    }

    #[test]
    fn secret_names_are_plain_words() {
        for good in ["a", "anthropic-key", "GH_TOKEN", "x.y", "9lives"] {
            assert!(valid_name(good), "{good}");
        }
        for bad in ["", "-x", "a b", "a/b", "..", "ключ", &"x".repeat(65)] {
            assert!(!valid_name(bad), "{bad}");
        }
    }
}
