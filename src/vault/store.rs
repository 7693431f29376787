//! Where secret values live: the OS keychain (through keyring-core and the store crate of each
//! platform), or memory for unit tests. A store is a handle the vault owns: nothing here sets
//! keyring-core's process-wide default store, so tests with stores of their own run in
//! parallel.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use keyring_core::{CredentialStore, Entry, Error as KeyringError};
use thiserror::Error;

pub use super::locked::SecretBytes;

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum StoreError {
    /// No keychain could be reached: what is missing and what to do.
    #[error("no keychain is reachable: {0}")]
    Unreachable(String),
    /// The keychain is there but will not give access (locked, or access refused).
    #[error("the keychain refused access: {0}")]
    NoAccess(String),
    #[error("the keychain failed: {0}")]
    Failed(String),
}

/// A place that keeps secret values by (service, name).
pub trait SecretStore: Send + Sync {
    /// Which store this is, as `paddock vault check` shows it.
    fn describe(&self) -> String;
    /// Why this store and not the platform's first choice, if so.
    fn note(&self) -> Option<String> {
        None
    }
    fn get(&self, service: &str, name: &str) -> Result<Option<SecretBytes>, StoreError>;
    fn set(&self, service: &str, name: &str, value: &[u8]) -> Result<(), StoreError>;
    /// Removes the value; whether there was one.
    fn delete(&self, service: &str, name: &str) -> Result<bool, StoreError>;
}

/// The OS keychain through a keyring-core credential store.
pub struct KeychainStore {
    store: Arc<CredentialStore>,
    description: String,
    note: Option<String>,
}

impl KeychainStore {
    pub fn new(store: Arc<CredentialStore>, description: String) -> KeychainStore {
        KeychainStore { store, description, note: None }
    }

    fn entry(&self, service: &str, name: &str) -> Result<Entry, StoreError> {
        Entry::new_in_store(&self.store, service, name).map_err(store_error)
    }
}

impl SecretStore for KeychainStore {
    fn describe(&self) -> String {
        self.description.clone()
    }

    fn note(&self) -> Option<String> {
        self.note.clone()
    }

    fn get(&self, service: &str, name: &str) -> Result<Option<SecretBytes>, StoreError> {
        match self.entry(service, name)?.get_secret() {
            Ok(value) => Ok(Some(SecretBytes::from_vec(value))),
            Err(KeyringError::NoEntry) => Ok(None),
            Err(e) => Err(store_error(e)),
        }
    }

    fn set(&self, service: &str, name: &str, value: &[u8]) -> Result<(), StoreError> {
        self.entry(service, name)?.set_secret(value).map_err(store_error)
    }

    fn delete(&self, service: &str, name: &str) -> Result<bool, StoreError> {
        match self.entry(service, name)?.delete_credential() {
            Ok(()) => Ok(true),
            Err(KeyringError::NoEntry) => Ok(false),
            Err(e) => Err(store_error(e)),
        }
    }
}

fn store_error(error: KeyringError) -> StoreError {
    match error {
        KeyringError::NoStorageAccess(e) => StoreError::NoAccess(e.to_string()),
        KeyringError::NoDefaultStore => StoreError::Unreachable(error.to_string()),
        // An ambiguous entry's message lists the entries; the names are not secret.
        other => StoreError::Failed(other.to_string()),
    }
}

/// Values in this process's memory only: for unit tests, never for a user.
#[derive(Default)]
pub struct MemoryStore {
    values: Mutex<HashMap<(String, String), SecretBytes>>,
}

impl MemoryStore {
    fn values(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), SecretBytes>> {
        self.values.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl SecretStore for MemoryStore {
    fn describe(&self) -> String {
        "memory (tests only)".into()
    }

    fn get(&self, service: &str, name: &str) -> Result<Option<SecretBytes>, StoreError> {
        Ok(self.values().get(&(service.to_owned(), name.to_owned())).cloned())
    }

    fn set(&self, service: &str, name: &str, value: &[u8]) -> Result<(), StoreError> {
        let key = (service.to_owned(), name.to_owned());
        self.values().insert(key, SecretBytes::new(value));
        Ok(())
    }

    fn delete(&self, service: &str, name: &str) -> Result<bool, StoreError> {
        Ok(self.values().remove(&(service.to_owned(), name.to_owned())).is_some())
    }
}

/// Which keychain to use: `PADDOCK_VAULT_STORE` (`secret-service` or `keyutils` on Linux) picks
/// one; otherwise the platform's own (Linux: the Secret Service, else the kernel's keyutils).
pub fn keychain(choice: Option<&str>) -> Result<KeychainStore, StoreError> {
    platform::keychain(choice)
}

#[cfg(target_os = "linux")]
mod platform {
    use super::*;

    pub fn keychain(choice: Option<&str>) -> Result<KeychainStore, StoreError> {
        match choice {
            Some("secret-service") => secret_service(),
            Some("keyutils") => keyutils(None),
            Some(other) => Err(StoreError::Unreachable(format!(
                "PADDOCK_VAULT_STORE is \"{other}\"; it can be \"secret-service\" or \"keyutils\""
            ))),
            None => secret_service().or_else(|e| keyutils(Some(e))),
        }
    }

    fn secret_service() -> Result<KeychainStore, StoreError> {
        match zbus_secret_service_keyring_store::Store::new() {
            Ok(store) => Ok(KeychainStore::new(store, "Secret Service (D-Bus)".into())),
            Err(e) => Err(StoreError::Unreachable(format!(
                "no Secret Service on the session bus ({e}); start one (gnome-keyring, KeePassXC) \
                 in a desktop session, or on a headless machine run paddock inside \
                 `dbus-run-session` with `gnome-keyring-daemon --unlock`"
            ))),
        }
    }

    fn keyutils(instead_of: Option<StoreError>) -> Result<KeychainStore, StoreError> {
        let store = linux_keyutils_keyring_store::Store::new()
            .map_err(|e| StoreError::Unreachable(format!("the kernel's keyutils: {e}")))?;
        let description = "the kernel's keyutils (kept in the kernel's memory: gone at reboot)";
        let mut keychain = KeychainStore::new(store, description.into());
        keychain.note = instead_of.map(|e| format!("used instead of the Secret Service: {e}"));
        Ok(keychain)
    }
}

#[cfg(target_os = "macos")]
mod platform {
    use super::*;

    pub fn keychain(_choice: Option<&str>) -> Result<KeychainStore, StoreError> {
        apple_native_keyring_store::keychain::Store::new()
            .map(|store| KeychainStore::new(store, "the macOS login keychain".into()))
            .map_err(|e| StoreError::Unreachable(format!("the macOS keychain: {e}")))
    }
}

#[cfg(windows)]
mod platform {
    use super::*;

    pub fn keychain(_choice: Option<&str>) -> Result<KeychainStore, StoreError> {
        windows_native_keyring_store::Store::new()
            .map(|store| KeychainStore::new(store, "the Windows Credential Manager".into()))
            .map_err(|e| StoreError::Unreachable(format!("the Windows Credential Manager: {e}")))
    }
}

#[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
mod platform {
    use super::*;

    pub fn keychain(_choice: Option<&str>) -> Result<KeychainStore, StoreError> {
        Err(StoreError::Unreachable("paddock knows no keychain on this platform".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_memory_store_keeps_values_by_service_and_name() {
        let store = MemoryStore::default();
        assert_eq!(store.get("s", "a"), Ok(None));
        store.set("s", "a", b"one").expect("set");
        store.set("t", "a", b"other service").expect("set");
        assert_eq!(
            store.get("s", "a").expect("get").as_ref().map(SecretBytes::as_slice),
            Some(&b"one"[..])
        );
        store.set("s", "a", b"two").expect("replace");
        assert_eq!(
            store.get("s", "a").expect("get").as_ref().map(SecretBytes::as_slice),
            Some(&b"two"[..])
        );
        assert_eq!(store.delete("s", "a"), Ok(true));
        assert_eq!(store.delete("s", "a"), Ok(false));
        assert_eq!(store.get("s", "a"), Ok(None));
        assert!(store.get("t", "a").expect("get").is_some());
    }
}
