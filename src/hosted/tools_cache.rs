//! The tools cache, `$XDG_STATE_HOME/calyx/mcp-tools-cache.json`: the last tool list each
//! hosted server published, kept across runs so that a server that cannot connect yet (one
//! that needs sign-in) can still show agents its tools, and a call to one can raise the
//! sign-in prompt (issue 16, "States and reconnect").
//!
//! The supervisor [`remember`](ToolsCache::remember)s a server's list whenever what it publishes
//! changes (it became ready, or re-listed after `tools/list_changed`); the file is read once at
//! start. [`cached_tools_for`](ToolsCache::cached_tools_for) gives a server's last list as the
//! registry publishes it. The file is 0600 (tool descriptions can say what a user's servers
//! are), written atomically under the same `flock` scheme as the server list; it holds no secret
//! values. A file that does not parse is logged and treated as empty: it is only a cache.
//!
//! ```json
//! {"version": 1, "servers": {"ev": {"name": "Everything", "instructions": "...",
//!   "tools": [{"name": "echo", "inputSchema": {...}, ...}, ...]}}}
//! ```

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rmcp::model::Tool;
use serde::{Deserialize, Serialize};

use super::connection::filter::{classify, Classified};
use super::locked_file;

/// The file format's version.
pub const VERSION: u32 = 1;

/// One server's last published list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CachedTools {
    /// The server's display name then.
    pub name: String,
    /// Its `instructions`.
    #[serde(default)]
    pub instructions: Option<String>,
    /// Every tool it offered that calyx kept (published and app-only), as the server sent it,
    /// under its original name. Classifying them again gives the same published names: names
    /// depend only on the alias and the set of names.
    pub tools: Vec<Tool>,
}

impl CachedTools {
    /// What to cache of a server's classified tools.
    pub fn of(name: &str, instructions: Option<&str>, tools: &Classified) -> Self {
        CachedTools {
            name: name.to_string(),
            instructions: instructions.map(str::to_string),
            tools: tools
                .published
                .iter()
                .map(|(_, tool)| tool.clone())
                .chain(tools.app_only.iter().cloned())
                .collect(),
        }
    }

    /// The tools as the registry publishes them for `alias`.
    pub fn classified(&self, alias: &str) -> Classified {
        classify(alias, self.tools.clone(), &HashSet::new())
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct CacheFile {
    version: u32,
    servers: BTreeMap<String, CachedTools>,
}

/// The cache: in memory, and in its file when it has one.
#[derive(Debug, Default)]
pub struct ToolsCache {
    /// None: memory only (tests, and a supervisor without a state directory).
    path: Option<PathBuf>,
    servers: Mutex<BTreeMap<String, CachedTools>>,
    /// Held while the file is written, so that the last writer writes the newest lists.
    writing: Mutex<()>,
}

impl ToolsCache {
    /// `$XDG_STATE_HOME/calyx/mcp-tools-cache.json`.
    pub fn default_path() -> PathBuf {
        crate::paths::state_dir().join("mcp-tools-cache.json")
    }

    /// A cache kept in memory only.
    pub fn in_memory() -> Self {
        ToolsCache::default()
    }

    /// The cache of the file at `path`, read now (blocking: a file read).
    pub fn open(path: PathBuf) -> Self {
        let servers = match read(&path) {
            Ok(servers) => servers,
            Err(e) => {
                tracing::warn!(
                    "hosted MCP: ignoring the tools cache {}: {e}",
                    path.display()
                );
                BTreeMap::new()
            }
        };
        ToolsCache {
            path: Some(path),
            servers: Mutex::new(servers),
            writing: Mutex::new(()),
        }
    }

    /// The last list server `alias` published (this run or an earlier one), classified as the
    /// registry publishes it; `None` when it never published one. What a supervisor publishes
    /// as held tools while the server is not ready (sign-in required).
    pub fn cached_tools_for(&self, alias: &str) -> Option<(CachedTools, Classified)> {
        let servers = self.servers.lock().unwrap_or_else(|e| e.into_inner());
        let cached = servers.get(alias)?.clone();
        let classified = cached.classified(alias);
        Some((cached, classified))
    }

    /// Records `alias`'s list; true when it differs from the cached one, in which case the
    /// file is rewritten too (blocking: call it from a blocking thread).
    pub fn remember(&self, alias: &str, tools: CachedTools) -> bool {
        let changed = self.note(alias, tools);
        if changed {
            self.save();
        }
        changed
    }

    /// Records `alias`'s list in memory only (never blocks); true when it differs from the
    /// cached one and the file needs a [`ToolsCache::save`]. Noting in order and saving later
    /// keeps the newest list even when saves run out of order.
    pub fn note(&self, alias: &str, tools: CachedTools) -> bool {
        let mut servers = self.servers.lock().unwrap_or_else(|e| e.into_inner());
        if servers.get(alias) == Some(&tools) {
            return false;
        }
        servers.insert(alias.to_string(), tools);
        true
    }

    /// Forgets a removed server.
    pub fn forget(&self, alias: &str) {
        {
            let mut servers = self.servers.lock().unwrap_or_else(|e| e.into_inner());
            if servers.remove(alias).is_none() {
                return;
            }
        }
        self.save();
    }

    /// Writes the lists as they are now to the file (blocking; a failure is logged).
    pub fn save(&self) {
        let Some(path) = &self.path else {
            return;
        };
        let _writing = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        let servers = self
            .servers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if let Err(e) = write(path, servers) {
            tracing::warn!(
                "hosted MCP: cannot write the tools cache {}: {e}",
                path.display()
            );
        }
    }
}

fn read(path: &Path) -> Result<BTreeMap<String, CachedTools>, String> {
    let Some(bytes) = locked_file::read(path).map_err(|e| e.to_string())? else {
        return Ok(BTreeMap::new());
    };
    let file: CacheFile = serde_json::from_slice(&bytes).map_err(|e| e.to_string())?;
    if file.version != VERSION {
        return Err(format!("version {} is not {VERSION}", file.version));
    }
    Ok(file.servers)
}

fn write(path: &Path, servers: BTreeMap<String, CachedTools>) -> std::io::Result<()> {
    let file = CacheFile {
        version: VERSION,
        servers,
    };
    let bytes = serde_json::to_vec(&file).map_err(std::io::Error::other)?;
    let lock = locked_file::lock(path, None)?;
    locked_file::write_atomic(&lock, path, &bytes)
}

#[cfg(test)]
mod tests;
