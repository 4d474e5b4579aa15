//! `secret_store = "auto" | "keyring" | "file"` under `[mcp]`. `auto` decides once per server
//! run, at first need: if a probe of the keyring succeeds within 3 s the keyring is used,
//! otherwise the file, and calyx says why (the overlay, `calyx mcp list`, `calyx doctor`).
//! `keyring` never falls back: a failure is an error naming the reason. `file` never touches
//! D-Bus.

use std::sync::Arc;

use super::elsewhere::{keyring_index_path, CrossChecked, Other};
use super::{FileStore, KeyringStore, SecretError, SecretStore};
use crate::hosted::locked_file;

/// The `secret_store` setting.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SecretStoreSetting {
    #[default]
    Auto,
    Keyring,
    File,
}

impl std::str::FromStr for SecretStoreSetting {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(SecretStoreSetting::Auto),
            "keyring" => Ok(SecretStoreSetting::Keyring),
            "file" => Ok(SecretStoreSetting::File),
            other => Err(format!(
                "secret_store = \"{other}\" is not one of \"auto\", \"keyring\", \"file\""
            )),
        }
    }
}

/// The store in use and the line that says which and why.
#[derive(Clone)]
pub struct Chosen {
    pub store: Arc<dyn SecretStore>,
    /// `secrets: Secret Service`, `secrets: file (no usable Secret Service: <reason>)`, ...
    pub summary: String,
}

/// Picks the store for `setting` on this machine: the session bus's Secret Service and the
/// secrets file at its usual place. The server's `auto` and `calyx doctor` both come here, so
/// what doctor says is what the server does. May take up to 3 s per keyring call: call it
/// from a blocking thread.
pub fn choose_here(setting: SecretStoreSetting) -> Result<Chosen, SecretError> {
    choose(
        setting,
        KeyringStore::secret_service,
        FileStore::new(FileStore::default_path()),
    )
}

/// Picks the store for `setting`. `keyring` opens and probes the keyring (the OS's, or a test
/// store); `file` is the secrets file's path.
pub fn choose(
    setting: SecretStoreSetting,
    keyring: impl FnOnce() -> Result<KeyringStore, SecretError>,
    file: FileStore,
) -> Result<Chosen, SecretError> {
    let file_summary = |why: String| {
        format!(
            "secrets: file {} ({:04o}) ({why})",
            file.path().display(),
            locked_file::FILE_MODE
        )
    };
    let index = keyring_index_path(file.path());
    match setting {
        SecretStoreSetting::File => Ok(Chosen {
            summary: file_summary("secret_store = \"file\"".into()),
            store: Arc::new(CrossChecked::new(
                Arc::new(file),
                Other::Keyring {
                    index,
                    why: "not read with secret_store = \"file\"".into(),
                },
            )),
        }),
        SecretStoreSetting::Keyring => {
            let store = keyring()?;
            store.probe()?;
            Ok(Chosen {
                store: Arc::new(CrossChecked::new(Arc::new(store), Other::File(file))),
                summary: "secrets: Secret Service (secret_store = \"keyring\")".into(),
            })
        }
        SecretStoreSetting::Auto => match keyring().and_then(|store| store.probe().map(|()| store))
        {
            Ok(store) => Ok(Chosen {
                store: Arc::new(CrossChecked::new(Arc::new(store), Other::File(file))),
                summary: "secrets: Secret Service".into(),
            }),
            Err(error) => {
                let reason = reason_of(&error);
                Ok(Chosen {
                    summary: file_summary(format!("no usable Secret Service: {reason}")),
                    store: Arc::new(CrossChecked::new(
                        Arc::new(file),
                        Other::Keyring {
                            index,
                            why: format!("unavailable now ({reason})"),
                        },
                    )),
                })
            }
        },
    }
}

fn reason_of(error: &SecretError) -> String {
    match error {
        SecretError::KeyringUnavailable { reason } => reason.clone(),
        SecretError::KeyringTimeout => "it did not answer within 3 s".into(),
        other => other.to_string(),
    }
}
