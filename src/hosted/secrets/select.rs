//! `secret_store = "auto" | "keyring" | "file"` under `[mcp]`. `auto` decides once per server
//! run, at first need: if a probe of the keyring succeeds within 3 s the keyring is used,
//! otherwise the file, and calyx says why (the overlay, `calyx mcp list`, `calyx doctor`).
//! `keyring` never falls back: a failure is an error naming the reason. `file` never touches
//! D-Bus.

use std::sync::Arc;

use super::{FileStore, KeyringStore, SecretError, SecretStore};

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

/// Picks the store for `setting`. `keyring` opens and probes the keyring (the OS's, or a test
/// store); `file` is the secrets file's path.
pub fn choose(
    setting: SecretStoreSetting,
    keyring: impl FnOnce() -> Result<KeyringStore, SecretError>,
    file: FileStore,
) -> Result<Chosen, SecretError> {
    let file_summary = |why: String| format!("secrets: file {} ({why})", file.path().display());
    match setting {
        SecretStoreSetting::File => Ok(Chosen {
            summary: file_summary("secret_store = \"file\"".into()),
            store: Arc::new(file),
        }),
        SecretStoreSetting::Keyring => {
            let store = keyring()?;
            store.probe()?;
            Ok(Chosen {
                store: Arc::new(store),
                summary: "secrets: Secret Service (secret_store = \"keyring\")".into(),
            })
        }
        SecretStoreSetting::Auto => match keyring().and_then(|store| store.probe().map(|()| store))
        {
            Ok(store) => Ok(Chosen {
                store: Arc::new(store),
                summary: "secrets: Secret Service".into(),
            }),
            Err(error) => Ok(Chosen {
                summary: file_summary(format!("no usable Secret Service: {}", reason_of(&error))),
                store: Arc::new(file),
            }),
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
