//! `$XDG_CONFIG_HOME/calyx/mcp-servers.json`: the servers the user added. Owned by the server
//! process (commands reach it through the socket); `list` without a server reads it directly.
//! Every change is a read-modify-write under the file's lock ([`update`]), so a hand edit or a
//! second calyx is never overwritten with a stale copy.

use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::entry::ServerEntry;
use super::locked_file;
use super::validate::{check_alias, check_entry, InvalidEntry, Warning};

/// The file format this code writes and reads.
pub const VERSION: u32 = 1;

/// At most this many hosted servers.
pub const MAX_SERVERS: usize = 50;

/// The file's contents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerList {
    pub version: u32,
    pub servers: Vec<ServerEntry>,
}

impl Default for ServerList {
    fn default() -> Self {
        ServerList {
            version: VERSION,
            servers: Vec::new(),
        }
    }
}

/// Why the list could not be read, written or changed.
#[derive(Debug, Error)]
pub enum ListError {
    #[error("cannot access {}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
    #[error("{} does not parse at line {line}, column {column}: {message}; fix or remove the file", path.display())]
    Parse {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{} has version {found}, and this calyx reads version {VERSION}: upgrade calyx or restore the file", path.display())]
    Version { path: PathBuf, found: u64 },
    #[error("{} lists the alias `{alias}` twice: remove one of them", path.display())]
    Duplicate { path: PathBuf, alias: String },
    #[error(transparent)]
    Invalid(#[from] InvalidEntry),
    #[error("no hosted server has the alias `{0}`: `calyx mcp list` shows them")]
    Unknown(String),
    #[error("calyx hosts at most {MAX_SERVERS} servers: remove one first")]
    Full,
}

/// Where the list lives: next to `config.toml`.
pub fn servers_file() -> PathBuf {
    crate::paths::config_file().with_file_name("mcp-servers.json")
}

/// Reads the list; a missing file is an empty list.
pub fn load(path: &Path) -> Result<ServerList, ListError> {
    let io_err = |source| ListError::Io {
        path: path.to_path_buf(),
        source,
    };
    let Some(bytes) = locked_file::read(path).map_err(io_err)? else {
        return Ok(ServerList::default());
    };
    parse(path, &bytes)
}

fn parse(path: &Path, bytes: &[u8]) -> Result<ServerList, ListError> {
    let parse_err = |e: serde_json::Error| ListError::Parse {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    };
    // The version first: a newer file may not have a shape this code can read at all.
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(parse_err)?;
    let found = value.get("version").and_then(|v| v.as_u64()).unwrap_or(0);
    if found != u64::from(VERSION) {
        return Err(ListError::Version {
            path: path.to_path_buf(),
            found,
        });
    }
    let list: ServerList = serde_json::from_slice(bytes).map_err(parse_err)?;
    for (i, entry) in list.servers.iter().enumerate() {
        check_alias(&entry.alias)?;
        if list.servers[..i].iter().any(|e| e.alias == entry.alias) {
            return Err(ListError::Duplicate {
                path: path.to_path_buf(),
                alias: entry.alias.clone(),
            });
        }
    }
    Ok(list)
}

/// Reads the list under its lock, lets `change` edit it, and writes it back when `change`
/// succeeds. The file is created (0600, directory created) on the first change.
pub fn update<T>(
    path: &Path,
    change: impl FnOnce(&mut ServerList) -> Result<T, ListError>,
) -> Result<T, ListError> {
    let io_err = |source| ListError::Io {
        path: path.to_path_buf(),
        source,
    };
    let held = locked_file::lock(path, None).map_err(io_err)?;
    let mut list = load(path)?;
    let result = change(&mut list)?;
    let mut bytes = serde_json::to_vec_pretty(&list).map_err(|e| io_err(io::Error::other(e)))?;
    bytes.push(b'\n');
    locked_file::write_atomic(&held, path, &bytes).map_err(io_err)?;
    Ok(result)
}

impl ServerList {
    /// The server with this alias.
    pub fn get(&self, alias: &str) -> Option<&ServerEntry> {
        self.servers.iter().find(|e| e.alias == alias)
    }

    fn position(&self, alias: &str) -> Result<usize, ListError> {
        self.servers
            .iter()
            .position(|e| e.alias == alias)
            .ok_or_else(|| ListError::Unknown(alias.to_string()))
    }

    /// Adds a new server; its alias must be free.
    pub fn add(&mut self, entry: ServerEntry) -> Result<Vec<Warning>, ListError> {
        let warnings = check_entry(&entry)?;
        if self.get(&entry.alias).is_some() {
            return Err(InvalidEntry::AliasTaken(entry.alias).into());
        }
        if self.servers.len() >= MAX_SERVERS {
            return Err(ListError::Full);
        }
        self.servers.push(entry);
        Ok(warnings)
    }

    /// Replaces the server `alias` with `entry` (an edit): anything may change but the alias.
    pub fn edit(&mut self, alias: &str, entry: ServerEntry) -> Result<Vec<Warning>, ListError> {
        let at = self.position(alias)?;
        if entry.alias != alias {
            return Err(InvalidEntry::AliasChange {
                from: alias.to_string(),
                to: entry.alias,
            }
            .into());
        }
        let warnings = check_entry(&entry)?;
        self.servers[at] = entry;
        Ok(warnings)
    }

    /// Removes a server and returns it (the caller deletes its secrets).
    pub fn remove(&mut self, alias: &str) -> Result<ServerEntry, ListError> {
        let at = self.position(alias)?;
        Ok(self.servers.remove(at))
    }

    /// Switches a server on or off; enabling clears an import note.
    pub fn set_enabled(&mut self, alias: &str, enabled: bool) -> Result<(), ListError> {
        let at = self.position(alias)?;
        let entry = &mut self.servers[at];
        entry.enabled = enabled;
        if enabled {
            entry.note = None;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
