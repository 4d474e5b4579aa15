//! A secret missing from the backend in use but held by the other one is reported, not
//! silently missing: "`ev` needs API_KEY: stored in the Secret Service, which is
//! unavailable now (...)". The two directions differ in what can be asked:
//!
//! - The Secret Service in use: the secrets file (always readable, no D-Bus) is looked at on a
//!   miss; it holds values written in a run that had no usable Secret Service.
//! - The file in use: the Secret Service is unusable (or the user chose the file) and cannot be
//!   asked, so every account calyx writes to the Secret Service is also listed, by name only,
//!   in `mcp-secrets-in-keyring.json` beside the secrets file; a miss looks there.
//!
//! A value is still read only from the backend in use (the rule); the other one only
//! explains a miss.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{Backend, FileStore, SecretError, SecretStore};
use crate::hosted::locked_file;

/// The names of the accounts the Secret Service holds, beside the secrets file at `secrets`.
pub fn keyring_index_path(secrets: &Path) -> PathBuf {
    secrets.with_file_name("mcp-secrets-in-keyring.json")
}

/// The other backend, as far as it can be asked.
pub(super) enum Other {
    /// The Secret Service is in use; the secrets file may hold older values.
    File(FileStore),
    /// The secrets file is in use; `why` says why the Secret Service is not (said after
    /// "which is ...": `unavailable now (reason)`, `not used with secret_store = "file"`).
    Keyring { index: PathBuf, why: String },
}

/// The backend in use, explaining its misses from the other one.
pub struct CrossChecked {
    used: Arc<dyn SecretStore>,
    other: Other,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Index {
    version: u32,
    accounts: BTreeSet<String>,
}

impl CrossChecked {
    pub(super) fn new(used: Arc<dyn SecretStore>, other: Other) -> Self {
        CrossChecked { used, other }
    }

    /// Where `account` is held instead, when the other backend holds it.
    fn held_elsewhere(&self, account: &str) -> Result<Option<SecretError>, SecretError> {
        match &self.other {
            Other::File(file) => Ok(file.get(account)?.map(|_| SecretError::HeldElsewhere {
                place: format!("the secrets file {}", file.path().display()),
                why: "which calyx does not read while the Secret Service works: set the value again with `calyx mcp edit`, or set secret_store = \"file\" under [mcp] in config.toml".into(),
            })),
            Other::Keyring { index, why } => {
                let listed = read_index(index)?.accounts.contains(account);
                Ok(listed.then(|| SecretError::HeldElsewhere {
                    place: "the Secret Service".into(),
                    why: format!("which is {why}"),
                }))
            }
        }
    }

    /// Notes that the Secret Service now holds (`held`) or no longer holds `account`. The
    /// index only explains misses, so failing to update it does not fail the write.
    fn note_in_keyring(&self, account: &str, held: bool) {
        if self.used.backend() != Backend::Keyring {
            return;
        }
        let Other::File(file) = &self.other else {
            return;
        };
        let index = keyring_index_path(file.path());
        if let Err(e) = change_index(&index, |accounts| {
            if held {
                accounts.insert(account.to_string());
            } else {
                accounts.remove(account);
            }
        }) {
            tracing::warn!("cannot update {}: {e}", index.display());
        }
    }
}

impl SecretStore for CrossChecked {
    fn get(&self, account: &str) -> Result<Option<String>, SecretError> {
        match self.used.get(account)? {
            Some(value) => Ok(Some(value)),
            // The other backend only explains a miss: if it cannot be read, the miss stands.
            None => match self.held_elsewhere(account) {
                Ok(Some(elsewhere)) => Err(elsewhere),
                Ok(None) => Ok(None),
                Err(e) => {
                    tracing::warn!("cannot look for {account} in the other secret store: {e}");
                    Ok(None)
                }
            },
        }
    }

    fn set(&self, account: &str, value: &str) -> Result<(), SecretError> {
        self.used.set(account, value)?;
        self.note_in_keyring(account, true);
        Ok(())
    }

    fn delete(&self, account: &str) -> Result<(), SecretError> {
        self.used.delete(account)?;
        self.note_in_keyring(account, false);
        // A removed server's secrets go from the file too, where an older run left them.
        if let Other::File(file) = &self.other {
            if let Err(e) = file.delete(account) {
                tracing::warn!(
                    "{account} is deleted from the Secret Service but not from {}: {e}",
                    file.path().display()
                );
            }
        }
        Ok(())
    }

    fn backend(&self) -> Backend {
        self.used.backend()
    }
}

fn index_error(path: &Path, reason: impl ToString) -> SecretError {
    SecretError::File {
        path: path.display().to_string(),
        reason: reason.to_string(),
    }
}

fn read_index(path: &Path) -> Result<Index, SecretError> {
    match locked_file::read(path).map_err(|e| index_error(path, e))? {
        None => Ok(Index::default()),
        Some(bytes) => serde_json::from_slice(&bytes).map_err(|e| index_error(path, e)),
    }
}

fn change_index(path: &Path, edit: impl FnOnce(&mut BTreeSet<String>)) -> Result<(), SecretError> {
    let held =
        locked_file::lock(path, Some(super::file::DIR_MODE)).map_err(|e| index_error(path, e))?;
    let mut index = read_index(path)?;
    index.version = 1;
    let had = index.accounts.clone();
    edit(&mut index.accounts);
    if index.accounts == had {
        return Ok(());
    }
    let bytes = serde_json::to_vec(&index).map_err(|e| index_error(path, e))?;
    locked_file::write_atomic(&held, path, &bytes).map_err(|e| index_error(path, e))
}
