//! Secret values of hosted servers: environment values, header values, OAuth tokens, client
//! secrets. They never go to the server list, a log or `--json` output; they live in the OS
//! keyring (the Secret Service on Linux) or, where none is usable, in a 0600 file.
//!
//! Accounts (service `calyx-mcp`): `<alias>/env/<NAME>`, `<alias>/header/<Name>`,
//! `<alias>/tokens`, `<alias>/client-secret`, `issuer/<issuer URL>/registration`.

mod elsewhere;
mod file;
pub(crate) mod keyring;
mod lazy;
mod memory;
mod select;

use thiserror::Error;

pub use elsewhere::keyring_index_path;
pub use file::FileStore;
pub use keyring::{KeyringStore, KEYRING_TIMEOUT};
pub use lazy::LazyChoice;
pub use memory::MemoryStore;
pub use select::{choose, choose_here, Chosen, SecretStoreSetting};

/// The keyring service name every account lives under.
pub const SERVICE: &str = "calyx-mcp";

/// Where secrets are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Keyring,
    File,
    /// Kept in memory for one process (throw-away entries such as the conformance client's).
    Memory,
}

impl Backend {
    /// As the user reads it.
    pub fn describe(self) -> &'static str {
        match self {
            Backend::Keyring => "the Secret Service",
            Backend::File => "the secrets file",
            Backend::Memory => "memory (this process only)",
        }
    }
}

/// Why a secret could not be read or written.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SecretError {
    #[error("the Secret Service is unavailable: {reason}; unlock your keyring (a session bus with a Secret Service provider, e.g. `printf PASSWORD | gnome-keyring-daemon --unlock --components=secrets` inside the session) or set secret_store = \"file\" under [mcp] in config.toml")]
    KeyringUnavailable { reason: String },
    #[error("the Secret Service did not answer within 3 s (a locked keyring waiting for a prompt nobody sees?): unlock your keyring (`printf PASSWORD | gnome-keyring-daemon --unlock --components=secrets`) or set secret_store = \"file\" under [mcp] in config.toml")]
    KeyringTimeout,
    #[error("cannot use the secrets file {path}: {reason}")]
    File { path: String, reason: String },
    /// The backend in use has no value, but the other one holds it (see `elsewhere.rs`).
    #[error("stored in {place}, {why}")]
    HeldElsewhere { place: String, why: String },
}

/// A place secrets are kept. Every call may block (D-Bus, a file lock): call it from a blocking
/// thread, never from the server's owner thread.
pub trait SecretStore: Send + Sync {
    /// The value of `account`; `None` when it has none.
    fn get(&self, account: &str) -> Result<Option<String>, SecretError>;
    /// Stores `value` under `account`, replacing any.
    fn set(&self, account: &str, value: &str) -> Result<(), SecretError>;
    /// Deletes `account`; deleting a missing one succeeds.
    fn delete(&self, account: &str) -> Result<(), SecretError>;
    /// Which backend this is.
    fn backend(&self) -> Backend;
}

/// `<alias>/env/<NAME>`.
pub fn env_account(alias: &str, name: &str) -> String {
    format!("{alias}/env/{name}")
}

/// `<alias>/header/<Name>`.
pub fn header_account(alias: &str, name: &str) -> String {
    format!("{alias}/header/{name}")
}

/// `<alias>/tokens` (rmcp's stored OAuth credentials as JSON).
pub fn tokens_account(alias: &str) -> String {
    format!("{alias}/tokens")
}

/// `<alias>/client-secret`.
pub fn client_secret_account(alias: &str) -> String {
    format!("{alias}/client-secret")
}

/// `issuer/<issuer URL>/registration`: a client registration calyx made with that
/// authorization server (kept after Remove, so the next server on that issuer reuses it).
pub fn registration_account(issuer: &str) -> String {
    format!("issuer/{issuer}/registration")
}

/// Deletes every secret of a removed server (not the issuer's client registration, which the
/// next server on that issuer reuses).
pub fn delete_server_secrets(
    store: &dyn SecretStore,
    entry: &crate::hosted::entry::ServerEntry,
) -> Result<(), SecretError> {
    for name in entry.secret_names() {
        store.delete(&format!("{}/{name}", entry.alias))?;
    }
    store.delete(&tokens_account(&entry.alias))?;
    store.delete(&client_secret_account(&entry.alias))
}

#[cfg(test)]
mod tests;
