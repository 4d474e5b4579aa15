//! App-registered tools (issue 17, "App context and app-registered tools"): the tools each MCP
//! App view's page registered, kept per view with the view's pane and server alias, so
//! `/mcp-hosted` publishes them as `<alias>-app_<name>` to the sessions of that pane only.
//!
//! The view server reports a page's tools (`HostAction::AppTools`, an empty list when the page
//! goes); a removed view's tools go with it ([`AppTools::follow`]). Whenever a pane's tools
//! change, the calyx-mcp sessions bound to that pane, and no others, get
//! `notifications/tools/list_changed`. Calls reach the view through the view server's
//! [`Apps`] handle, set once the view server listens.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use rmcp::service::Peer;
use rmcp::RoleServer;
use serde_json::Value;
use tokio::sync::broadcast;

use super::naming::app_tool_name;
use crate::layout::PaneId;
use crate::views::hub::{HubEvent, ViewHub};
use crate::views::registry::ViewId;
use crate::views::server::Apps;

/// The tools one view's page registered.
#[derive(Debug, Clone, PartialEq)]
pub struct ViewTools {
    /// The view's pane (None: a standalone view, whose tools no session sees).
    pub pane: Option<PaneId>,
    /// The view's server.
    pub alias: String,
    /// The tools as the view listed them (each has a string `name`).
    pub tools: Vec<Value>,
}

/// One app tool as a pane's sessions see it.
#[derive(Debug, Clone, PartialEq)]
pub struct PaneTool {
    /// Its published name (`<alias>-app_<name>`, or with a hash suffix).
    pub published: String,
    /// The view that registered it.
    pub view: ViewId,
    /// Its name in the view.
    pub name: String,
    /// The tool as the view listed it.
    pub tool: Value,
}

#[derive(Default)]
struct State {
    views: BTreeMap<ViewId, ViewTools>,
    /// The calyx-mcp sessions bound to a pane, told when that pane's tools change.
    sessions: Vec<(PaneId, Peer<RoleServer>)>,
    /// The view server's pages, once it listens.
    apps: Option<Apps>,
}

/// The app tools of every view. Cloning shares them.
#[derive(Clone, Default)]
pub struct AppTools {
    state: Arc<Mutex<State>>,
}

impl std::fmt::Debug for AppTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppTools").finish_non_exhaustive()
    }
}

impl AppTools {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Plain data behind the lock: a panic elsewhere leaves it usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// View `view` (in `pane`, of server `alias`) registered `tools`; an empty list withdraws
    /// its tools. The pane's sessions are told when what they see changed.
    pub fn set(&self, view: ViewId, pane: Option<PaneId>, alias: &str, tools: Vec<Value>) {
        let changed = {
            let mut state = self.lock();
            let next = (!tools.is_empty()).then(|| ViewTools {
                pane,
                alias: alias.to_string(),
                tools,
            });
            let previous = match &next {
                Some(next) => state.views.insert(view, next.clone()),
                None => state.views.remove(&view),
            };
            (previous != next).then(|| pane.or(previous.and_then(|p| p.pane)))
        };
        if let Some(Some(pane)) = changed {
            self.announce(pane);
        }
    }

    /// View `view` was removed: its tools go.
    pub fn remove(&self, view: ViewId) {
        let gone = self.lock().views.remove(&view);
        if let Some(pane) = gone.and_then(|v| v.pane) {
            self.announce(pane);
        }
    }

    /// What view `view` registered.
    pub fn of_view(&self, view: ViewId) -> Option<ViewTools> {
        self.lock().views.get(&view).cloned()
    }

    /// The app tools pane `pane`'s sessions see, named. `taken` says which names are the
    /// servers' own (those keep them). Of two views registering the same name, the newer
    /// view's tool keeps the plain name and the older one's takes the hash suffix.
    pub fn in_pane(&self, pane: PaneId, taken: impl Fn(&str) -> bool) -> Vec<PaneTool> {
        let views: Vec<(ViewId, ViewTools)> = {
            let state = self.lock();
            state
                .views
                .iter()
                .rev()
                .filter(|(_, v)| v.pane == Some(pane))
                .map(|(id, v)| (*id, v.clone()))
                .collect()
        };
        let mut named: Vec<PaneTool> = Vec::new();
        for (view, tools) in views {
            for tool in tools.tools {
                let Some(name) = tool.get("name").and_then(Value::as_str) else {
                    continue;
                };
                let name = name.to_string();
                let published = app_tool_name(&tools.alias, &name, |candidate| {
                    taken(candidate) || named.iter().any(|t| t.published == candidate)
                });
                match published {
                    Some(published) => named.push(PaneTool {
                        published,
                        view,
                        name,
                        tool,
                    }),
                    None => tracing::debug!(
                        "MCP App view {view}: app tool {name:?} has no free name; not published"
                    ),
                }
            }
        }
        named.sort_by(|a, b| a.published.cmp(&b.published));
        named
    }

    /// A calyx-mcp session bound to `pane`: told when that pane's app tools change.
    pub fn bind_session(&self, pane: PaneId, peer: Peer<RoleServer>) {
        let mut state = self.lock();
        state.sessions.retain(|(_, p)| !p.is_transport_closed());
        state.sessions.push((pane, peer));
    }

    /// The number of open sessions bound to `pane`.
    pub fn sessions_of(&self, pane: PaneId) -> usize {
        let state = self.lock();
        state
            .sessions
            .iter()
            .filter(|(p, peer)| *p == pane && !peer.is_transport_closed())
            .count()
    }

    /// Tells `pane`'s sessions `notifications/tools/list_changed`.
    fn announce(&self, pane: PaneId) {
        let peers: Vec<Peer<RoleServer>> = {
            let mut state = self.lock();
            state.sessions.retain(|(_, p)| !p.is_transport_closed());
            state
                .sessions
                .iter()
                .filter(|(p, _)| *p == pane)
                .map(|(_, peer)| peer.clone())
                .collect()
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        for peer in peers {
            runtime.spawn(async move {
                if let Err(e) = peer.notify_tool_list_changed().await {
                    tracing::debug!("calyx-mcp: tools/list_changed not delivered: {e}");
                }
            });
        }
    }

    /// The view server listens: calls go to its pages through `apps`.
    pub fn set_apps(&self, apps: Apps) {
        self.lock().apps = Some(apps);
    }

    /// The view server's pages, once it listens.
    pub fn apps(&self) -> Option<Apps> {
        self.lock().apps.clone()
    }

    /// Follows `hub` for the server's life: a removed view's tools go.
    pub async fn follow(self, hub: ViewHub) {
        let mut events = hub.subscribe();
        loop {
            match events.recv().await {
                Ok(HubEvent::Removed(id)) => self.remove(id),
                Ok(_) => {}
                // Fallen behind, removals may be lost: the hub's records are the truth.
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    self.retain(|id| hub.get(id).is_some());
                }
                Err(broadcast::error::RecvError::Closed) => return,
            }
        }
    }

    /// Drops the tools of the views `alive` says are gone.
    pub fn retain(&self, alive: impl Fn(ViewId) -> bool) {
        let gone: Vec<ViewId> = {
            let state = self.lock();
            state
                .views
                .keys()
                .copied()
                .filter(|id| !alive(*id))
                .collect()
        };
        for id in gone {
            self.remove(id);
        }
    }
}

#[cfg(test)]
#[path = "app_tools_tests.rs"]
mod tests;
