//! The OS keyring through keyring-core: the Secret Service over D-Bus on Linux. D-Bus calls can
//! hang (a locked collection waiting for a prompt nobody sees, a stuck daemon), so every call
//! runs on its own thread and is given up after 3 s: calyx reports the keyring as unusable
//! instead of freezing a sign-in or a server start. A thread that never returns is left behind
//! (it holds nothing calyx needs).

use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use keyring_core::{CredentialStore, Entry, Error};

use super::{Backend, SecretError, SecretStore, SERVICE};

/// How long one keyring call may take.
pub const KEYRING_TIMEOUT: Duration = Duration::from_secs(3);

/// The keyring backend over any keyring-core store.
#[derive(Clone)]
pub struct KeyringStore {
    store: Arc<CredentialStore>,
}

impl std::fmt::Debug for KeyringStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyringStore")
            .field("vendor", &self.store.vendor())
            .finish()
    }
}

/// Runs `call` on its own thread and waits at most [`KEYRING_TIMEOUT`].
pub(crate) fn with_timeout<T: Send + 'static>(
    call: impl FnOnce() -> Result<T, SecretError> + Send + 'static,
) -> Result<T, SecretError> {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("calyx-keyring".into())
        .spawn(move || {
            let _ = tx.send(call());
        })
        .map_err(|e| SecretError::KeyringUnavailable {
            reason: format!("cannot start a thread: {e}"),
        })?;
    rx.recv_timeout(KEYRING_TIMEOUT)
        .map_err(|_| SecretError::KeyringTimeout)?
}

fn unavailable(error: Error) -> SecretError {
    SecretError::KeyringUnavailable {
        reason: error.to_string(),
    }
}

impl KeyringStore {
    /// Over a given keyring-core store (tests use `keyring_core::mock`).
    pub fn over(store: Arc<CredentialStore>) -> Self {
        KeyringStore { store }
    }

    /// The Secret Service of the session bus (fails at once without a session bus).
    #[cfg(target_os = "linux")]
    pub fn secret_service() -> Result<Self, SecretError> {
        with_timeout(|| {
            let store: Arc<CredentialStore> =
                zbus_secret_service_keyring_store::Store::new().map_err(unavailable)?;
            Ok(KeyringStore { store })
        })
    }

    /// No keyring store is built for this OS yet: the secrets file is used.
    #[cfg(not(target_os = "linux"))]
    pub fn secret_service() -> Result<Self, SecretError> {
        Err(SecretError::KeyringUnavailable {
            reason: "this build of calyx has no keyring store for this OS".into(),
        })
    }

    fn entry(store: &Arc<CredentialStore>, account: &str) -> Result<Entry, SecretError> {
        Entry::new_in_store(store, SERVICE, account).map_err(unavailable)
    }

    /// A write, read back and delete of `calyx-mcp/probe`, all within one timeout: a keyring
    /// that reports itself fine but refuses writes (gnome-keyring never unlocked) fails here.
    pub fn probe(&self) -> Result<(), SecretError> {
        let store = self.store.clone();
        with_timeout(move || {
            let entry = Self::entry(&store, "probe")?;
            let value = format!("probe-{}", std::process::id());
            entry.set_password(&value).map_err(unavailable)?;
            let read = entry.get_password().map_err(unavailable)?;
            entry.delete_credential().map_err(unavailable)?;
            if read == value {
                Ok(())
            } else {
                Err(SecretError::KeyringUnavailable {
                    reason: "a value written to it read back differently".into(),
                })
            }
        })
    }
}

impl SecretStore for KeyringStore {
    fn get(&self, account: &str) -> Result<Option<String>, SecretError> {
        let store = self.store.clone();
        let account = account.to_string();
        with_timeout(
            move || match Self::entry(&store, &account)?.get_password() {
                Ok(value) => Ok(Some(value)),
                Err(Error::NoEntry) => Ok(None),
                Err(e) => Err(unavailable(e)),
            },
        )
    }

    fn set(&self, account: &str, value: &str) -> Result<(), SecretError> {
        let store = self.store.clone();
        let (account, value) = (account.to_string(), value.to_string());
        with_timeout(move || {
            Self::entry(&store, &account)?
                .set_password(&value)
                .map_err(unavailable)
        })
    }

    fn delete(&self, account: &str) -> Result<(), SecretError> {
        let store = self.store.clone();
        let account = account.to_string();
        with_timeout(
            move || match Self::entry(&store, &account)?.delete_credential() {
                Ok(()) | Err(Error::NoEntry) => Ok(()),
                Err(e) => Err(unavailable(e)),
            },
        )
    }

    fn backend(&self) -> Backend {
        Backend::Keyring
    }
}
