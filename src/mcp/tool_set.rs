//! Which of calyx's tools the agents see, and telling their sessions when that changes.
//!
//! The user can turn tools off for every agent (`[mcp] disabled_tools` in calyx's config, for
//! example `pane_run` and `pane_send_keys` on a machine where agents must never type into other
//! panes). `calyx reload-config` applies a changed list to the running server, and every open
//! MCP session hears `notifications/tools/list_changed`, so agents re-read the list instead of
//! calling a tool that is gone.

use std::collections::BTreeSet;
use std::sync::{Mutex, RwLock};

use rmcp::service::Peer;
use rmcp::RoleServer;

/// The names of every tool calyx serves.
pub fn all_names() -> Vec<String> {
    super::tools::list()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect()
}

/// The tools turned off, and the sessions to tell when that changes.
#[derive(Default)]
pub struct ToolSet {
    disabled: RwLock<BTreeSet<String>>,
    sessions: Mutex<Vec<Peer<RoleServer>>>,
}

impl std::fmt::Debug for ToolSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolSet")
            .field("disabled", &self.disabled())
            .finish_non_exhaustive()
    }
}

impl ToolSet {
    /// A set with these tools turned off.
    pub fn with_disabled(names: impl IntoIterator<Item = String>) -> Self {
        Self {
            disabled: RwLock::new(names.into_iter().collect()),
            sessions: Mutex::new(Vec::new()),
        }
    }

    /// Whether agents may see and call `tool`.
    pub fn is_enabled(&self, tool: &str) -> bool {
        !self
            .disabled
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .contains(tool)
    }

    /// The tools turned off, sorted.
    pub fn disabled(&self) -> Vec<String> {
        self.disabled
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .cloned()
            .collect()
    }

    /// Remembers a session (at its `initialize`) so it hears about changes.
    pub(crate) fn register(&self, peer: Peer<RoleServer>) {
        let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        sessions.retain(|p| !p.is_transport_closed());
        sessions.push(peer);
    }

    /// Forgets the sessions that have closed (called whenever one does), so a closed session's
    /// peer handle, and the channel it keeps alive, are not held until the next `initialize`.
    pub(crate) fn forget_closed(&self) {
        let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        sessions.retain(|p| !p.is_transport_closed());
    }

    /// The number of sessions it would tell about a change (closed ones not yet forgotten
    /// included): for tests.
    pub fn sessions_held(&self) -> usize {
        self.sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .len()
    }

    /// Replaces the turned-off tools. When the list changed, every open session is sent
    /// `notifications/tools/list_changed` (in the background: a slow client delays nobody).
    /// Returns whether it changed.
    pub fn set_disabled(&self, names: impl IntoIterator<Item = String>) -> bool {
        let names: BTreeSet<String> = names.into_iter().collect();
        {
            let mut disabled = self.disabled.write().unwrap_or_else(|e| e.into_inner());
            if *disabled == names {
                return false;
            }
            *disabled = names;
        }
        self.announce_change();
        true
    }

    /// Sends every open session `notifications/tools/list_changed` (in the background: a slow
    /// client delays nobody). The hosted route (`/mcp-hosted`) calls it when the set of
    /// republished tools changes.
    pub fn announce_change(&self) {
        let sessions: Vec<Peer<RoleServer>> = {
            let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
            sessions.retain(|p| !p.is_transport_closed());
            sessions.clone()
        };
        for peer in sessions {
            tokio::spawn(async move {
                if let Err(e) = peer.notify_tool_list_changed().await {
                    tracing::debug!("mcp: tools/list_changed not delivered: {e}");
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turning_tools_off_and_on() {
        let set = ToolSet::with_disabled(["pane_run".to_string()]);
        assert!(!set.is_enabled("pane_run"));
        assert!(set.is_enabled("pane_list"));
        assert!(!set.set_disabled(["pane_run".to_string()]), "unchanged");
        assert!(set.set_disabled(Vec::new()));
        assert!(set.is_enabled("pane_run"));
        assert!(all_names().iter().any(|n| n == "pane_send_keys"));
    }
}
