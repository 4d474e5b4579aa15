//! MCP App views in the owner loop (issue 17): following the hub's events (the cards are
//! drawn again, a local browser opens when `[mcp_apps] open_browser = "local"`), naming the
//! pane behind a calyx-mcp caller, `calyx mcp views`, and the lifetimes the owner sees first:
//! a pane closing and its agent's conversation ending or changing.

use calyx_integrations::{EventKind, NormalizedEvent};

use crate::config::mcp_apps::OpenBrowser;
use crate::hosted::oauth::open::{launch_with, opener, Opener};
use crate::hosted::publish::Caller;
use crate::hosted::views::CallerPane;
use crate::layout::PaneId;
use crate::protocol::Response;
use crate::server::messages::Msg;
use crate::server::model::ids::ClientId;
use crate::server::owner::Server;
use crate::views::hub::HubEvent;

impl Server {
    /// Follows the hub for as long as the server runs: each change comes to the loop as
    /// [`Msg::Views`] (a receiver that lags gets a `Changed` of nothing: the cards read the
    /// records anyway).
    pub(crate) fn watch_views(&self) {
        let mut events = self.views.hub.subscribe();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            use tokio::sync::broadcast::error::RecvError;
            loop {
                let event = match events.recv().await {
                    Ok(event) => event,
                    Err(RecvError::Lagged(_)) => {
                        HubEvent::Changed(crate::views::registry::ViewId(0))
                    }
                    Err(RecvError::Closed) => return,
                };
                if tx.send(Msg::Views(event)).is_err() {
                    return;
                }
            }
        });
    }

    /// A view was created, changed or removed: every client is drawn again (docks come and
    /// go, states change), and a new view opens in a local browser when the config says so.
    pub(crate) fn views_event(&mut self, event: HubEvent) {
        if let HubEvent::Removed(id) = event {
            self.app_view_removed(id);
        }
        let created = match event {
            HubEvent::Created(id) => {
                if self.state.config.mcp_apps.open_browser == OpenBrowser::Local {
                    self.open_view_locally(id);
                }
                Some(id)
            }
            _ => None,
        };
        self.rebuild_docks(created);
        for c in self.state.clients.values_mut() {
            c.dirty = true;
        }
    }

    /// Opens view `id` in the browser of a local client (one attached to the view's session
    /// first), once: two tabs of one view would take it over from each other.
    fn open_view_locally(&mut self, id: crate::views::registry::ViewId) {
        let Some(url) = self.views.hub.page_url(id) else {
            return;
        };
        let session = self
            .views
            .hub
            .get(id)
            .and_then(|v| v.view.origin.pane)
            .and_then(|pane| self.state.panes.get(&pane))
            .map(|p| p.session);
        let mut clients: Vec<_> = self.state.clients.values().collect();
        clients.sort_by_key(|c| (Some(c.session) != session, c.id));
        for client in clients {
            let env = client.opener_env.clone();
            let lookup = |name: &str| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
            if let Opener::Browser(program) = opener(lookup) {
                if let Err(e) = launch_with(&program, &url, &env) {
                    tracing::warn!("MCP App view {id}: starting the browser `{program}`: {e}");
                }
                return;
            }
        }
    }

    /// The pane behind a calyx-mcp caller's identity headers, with its agent row's kind and
    /// conversation.
    pub(crate) fn view_caller(&self, caller: Caller) -> CallerPane {
        let identity = crate::http::Identity {
            session_id: caller.session,
            surface_id: caller.surface,
            agent_kind: None,
        };
        let Some(pane) = self.pane_for_identity(&identity) else {
            return CallerPane::default();
        };
        let row = self.agents.row(u64::from(pane));
        CallerPane {
            pane: Some(pane),
            agent: row.map(|r| r.kind),
            conversation: row.and_then(|r| r.session_id.clone()),
        }
    }

    /// `calyx mcp views`: answered here, from the hub (no hosted server needs asking).
    pub(crate) fn views_request(&mut self, id: ClientId) {
        let view_server = self.view_server.as_ref();
        let logs = |id| {
            view_server
                .and_then(|server| server.notes(id))
                .map(|notes| notes.logs.into_iter().collect())
                .unwrap_or_default()
        };
        let (json, text) = crate::hosted::views_list::list(&self.views.hub, &logs);
        let answer = crate::hosted::host::McpAnswer {
            exit: 0,
            text,
            json: Some(json),
        };
        let response = match serde_json::to_value(&answer) {
            Ok(json) => Response::Json(json),
            Err(e) => Response::Error(format!("cannot encode the answer: {e}")),
        };
        self.reply(id, response);
    }

    /// A pane is gone: its views go.
    pub(crate) fn views_pane_closed(&mut self, pane: PaneId) {
        self.views.hub.pane_closed(pane);
    }

    /// A pane's agent ended its conversation (SessionEnd) or started one (SessionStart with a
    /// `session_id`): the views of the conversation that ended go.
    pub(crate) fn views_agent_event(&mut self, pane: PaneId, event: &NormalizedEvent) {
        match (event.kind, event.session_id.as_deref()) {
            (EventKind::SessionEnd, _) => {
                self.views.hub.conversation_ended(pane);
            }
            (EventKind::SessionStart, Some(session)) => {
                self.views.hub.conversation_started(pane, session);
            }
            _ => {}
        }
    }
}
