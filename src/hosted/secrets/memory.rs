//! Secrets kept in memory only, for throw-away entries (the conformance client's `conf`): they
//! must not touch the user's keyring or secrets file, and vanish with the process.

use std::collections::HashMap;
use std::sync::Mutex;

use super::{Backend, SecretError, SecretStore};

/// A secret store that lives as long as the process.
#[derive(Debug, Default)]
pub struct MemoryStore {
    values: Mutex<HashMap<String, String>>,
}

impl SecretStore for MemoryStore {
    fn get(&self, account: &str) -> Result<Option<String>, SecretError> {
        let values = self.values.lock().unwrap_or_else(|e| e.into_inner());
        Ok(values.get(account).cloned())
    }

    fn set(&self, account: &str, value: &str) -> Result<(), SecretError> {
        let mut values = self.values.lock().unwrap_or_else(|e| e.into_inner());
        values.insert(account.to_string(), value.to_string());
        Ok(())
    }

    fn delete(&self, account: &str) -> Result<(), SecretError> {
        let mut values = self.values.lock().unwrap_or_else(|e| e.into_inner());
        values.remove(account);
        Ok(())
    }

    fn backend(&self) -> Backend {
        Backend::Memory
    }
}
