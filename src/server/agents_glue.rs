//! Where the multiplexer meets agent rows: focus, pane exits, the blocked-agent jump and the
//! `calyx agents` answers. Agent state is filled in by the agent endpoint.

use crate::layout::PaneId;
use crate::protocol::Response;

use super::Server;

impl Server {
    /// A pane got focus.
    pub(super) fn on_focus_changed(&mut self, _pane: PaneId) {}

    /// A pane is gone (closed, or its program exited).
    pub(super) fn after_pane_closed(&mut self, _pane: PaneId) {}

    /// The pane whose agent has waited longest for the human.
    pub(super) fn oldest_blocked_pane(&self) -> Option<PaneId> {
        None
    }

    pub(super) fn agents_response(&self) -> Response {
        Response::Json(serde_json::json!({ "agents": [] }))
    }

    pub(super) fn agents_explain_response(&self, pane: &str) -> Response {
        Response::Error(format!("no agent has reported from pane {pane}"))
    }
}
