//! The secrets file `$XDG_STATE_HOME/calyx/mcp-secrets.json`: where secrets go when no keyring
//! is usable (a headless box, an SSH session without a Secret Service) or the user chose it.
//! Mode 0600 in a 0700 directory, written atomically under its lock; other local users cannot
//! read it, the same protection as the agent endpoint's token file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Backend, SecretError, SecretStore};
use crate::hosted::locked_file;

/// Mode of the directory holding the file.
pub const DIR_MODE: u32 = 0o700;

#[derive(Debug, Default, Serialize, Deserialize)]
struct SecretsFile {
    version: u32,
    secrets: BTreeMap<String, String>,
}

/// The file backend.
#[derive(Debug, Clone)]
pub struct FileStore {
    path: PathBuf,
}

impl FileStore {
    /// The store at `path` (created on the first write).
    pub fn new(path: PathBuf) -> Self {
        FileStore { path }
    }

    /// `$XDG_STATE_HOME/calyx/mcp-secrets.json`.
    pub fn default_path() -> PathBuf {
        crate::paths::state_dir().join("mcp-secrets.json")
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn error(&self, reason: impl ToString) -> SecretError {
        SecretError::File {
            path: self.path.display().to_string(),
            reason: reason.to_string(),
        }
    }

    fn read(&self) -> Result<SecretsFile, SecretError> {
        match locked_file::read(&self.path).map_err(|e| self.error(e))? {
            None => Ok(SecretsFile {
                version: 1,
                secrets: BTreeMap::new(),
            }),
            Some(bytes) => serde_json::from_slice(&bytes).map_err(|e| self.error(e)),
        }
    }

    /// Read-modify-write under the lock.
    fn change(&self, edit: impl FnOnce(&mut BTreeMap<String, String>)) -> Result<(), SecretError> {
        let held = locked_file::lock(&self.path, Some(DIR_MODE)).map_err(|e| self.error(e))?;
        let mut file = self.read()?;
        file.version = 1;
        edit(&mut file.secrets);
        let bytes = serde_json::to_vec(&file).map_err(|e| self.error(e))?;
        locked_file::write_atomic(&held, &self.path, &bytes).map_err(|e| self.error(e))
    }
}

impl SecretStore for FileStore {
    fn get(&self, account: &str) -> Result<Option<String>, SecretError> {
        Ok(self.read()?.secrets.remove(account))
    }

    fn set(&self, account: &str, value: &str) -> Result<(), SecretError> {
        self.change(|secrets| {
            secrets.insert(account.to_string(), value.to_string());
        })
    }

    fn delete(&self, account: &str) -> Result<(), SecretError> {
        if self.get(account)?.is_none() {
            return Ok(());
        }
        self.change(|secrets| {
            secrets.remove(account);
        })
    }

    fn backend(&self) -> Backend {
        Backend::File
    }
}
