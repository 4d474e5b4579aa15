//! Where the multiplexer meets agent rows: hook events from the endpoint, pane exits, quiet
//! panes, focus, notifications, the blocked-agent jump and the `calyx agents` answers.

use std::time::Duration;

use calyx_integrations::{normalize, AgentKind, EventKind, NormalizedEvent};
use tokio::time::Instant;

use crate::agents::{osc_sequences, AgentState, Transition};
use crate::http::{CallerKind, EndpointCall, EndpointReply, EndpointRequest, Identity};
use crate::layout::PaneId;
use crate::protocol::Response;

use crate::server::owner::Server;

/// A working agent whose pane printed nothing for this long is taken as idle: Claude Code's Esc
/// interrupt fires no hook, but its spinner stops. Long enough that a tool running quietly is
/// not mistaken for idle by much.
pub const QUIET_AS_IDLE: Duration = Duration::from_secs(30);

/// How long after calyx answered a request a PermissionRequest ping for the same tool is taken
/// for that request's (hooks are delivered asynchronously; a new request brings its own gate).
const PING_AFTER_ANSWER: Duration = Duration::from_secs(10);

impl Server {
    /// The pane an identity names: the session id (persistent record) first, then the surface.
    pub(crate) fn pane_for_identity(&self, identity: &Identity) -> Option<PaneId> {
        let by_record = identity
            .session_id
            .as_deref()
            .and_then(|id| self.state.panes.values().find(|p| p.record_id == id));
        let by_surface = || {
            identity
                .surface_id
                .as_deref()
                .and_then(|id| self.state.panes.values().find(|p| p.surface_id == id))
        };
        by_record.or_else(by_surface).map(|p| p.id)
    }

    /// Handles a request from the HTTP endpoint.
    pub(crate) fn endpoint_request(&mut self, request: EndpointRequest) {
        let EndpointRequest { call, reply } = request;
        if let Some(capture) = self.payload_capture.as_mut() {
            let (route, identity, payload) = match &call {
                EndpointCall::AgentEvent { identity, payload } => {
                    ("agent-event", identity, payload)
                }
                EndpointCall::ApprovalRequest { identity, payload } => {
                    ("approval-request", identity, payload)
                }
            };
            capture.record(route, identity.agent_kind.as_ref(), payload);
        }
        match call {
            EndpointCall::AgentEvent { identity, payload } => {
                let answer = match self.agent_event(&identity, &payload) {
                    Err(message) => EndpointReply::BadRequest(message),
                    Ok(()) => EndpointReply::NoContent,
                };
                let _ = reply.send(answer);
            }
            EndpointCall::ApprovalRequest { identity, payload } => {
                self.approval_request(identity, payload, reply);
            }
        }
    }

    fn agent_event(
        &mut self,
        identity: &Identity,
        payload: &serde_json::Value,
    ) -> Result<(), String> {
        let pane = self.pane_for_identity(identity).ok_or_else(|| {
            format!(
                "no calyx pane has session id {:?} or surface id {:?}",
                identity.session_id.as_deref().unwrap_or(""),
                identity.surface_id.as_deref().unwrap_or("")
            )
        })?;
        let kind = match &identity.agent_kind {
            Some(CallerKind::Known(kind)) => *kind,
            Some(CallerKind::Unknown(name)) => return Err(format!("unknown agent kind {name:?}")),
            None => return Err("no agent kind (X-Calyx-Agent-Kind)".into()),
        };
        let kind_name = kind.as_str();
        let event = match normalize(kind, payload) {
            Ok(Some(event)) => event,
            Ok(None) => return Ok(()),
            Err(e) => {
                // An unknown shape is logged and ignored: a CLI release must never break calyx.
                tracing::warn!("pane %{pane}: ignored {kind_name} payload: {e}");
                return Ok(());
            }
        };
        if self.permission_already_answered(pane, kind, &event) {
            return Ok(());
        }
        self.apply_agent_event(pane, kind, &event);
        self.approvals_after_event(pane, kind, &event);
        Ok(())
    }

    /// A PermissionRequest ping (Claude and Codex send one beside their gate, asynchronously)
    /// that calyx's gate already answered: a rule the human set covers the tool, or a request
    /// of this pane for it ended a moment ago and none waits. Applying it would show the
    /// agent blocked (and ring for it) after it went on.
    fn permission_already_answered(
        &self,
        pane: PaneId,
        kind: AgentKind,
        event: &NormalizedEvent,
    ) -> bool {
        if event.kind != EventKind::PermissionRequest {
            return false;
        }
        let Some(tool) = event.tool_name.as_deref() else {
            return false;
        };
        let waiting = self
            .approvals
            .pending()
            .iter()
            .any(|p| p.pane == pane && p.tool == tool);
        self.approvals
            .rule_allows_call(pane, kind.as_str(), tool, event.tool_input.as_ref())
            || (!waiting
                && self
                    .approvals
                    .answered_recently(pane, tool, PING_AFTER_ANSWER))
    }

    /// Feeds one normalized event to the agent rows and acts on the transitions.
    pub(crate) fn apply_agent_event(
        &mut self,
        pane: PaneId,
        kind: AgentKind,
        event: &calyx_integrations::NormalizedEvent,
    ) {
        self.views_agent_event(pane, event);
        let now = Instant::now();
        let transitions = self.agents.apply(u64::from(pane), kind, event, now);
        self.after_agent_change(pane, &transitions, now);
    }

    /// Acts on what an event did to `pane`'s agent row and redraws where the row shows.
    pub(crate) fn after_agent_change(
        &mut self,
        pane: PaneId,
        transitions: &[Transition],
        now: Instant,
    ) {
        self.after_transitions(transitions, now);
        self.state.mark_pane_dirty(pane);
        self.mark_sidebars_dirty();
    }

    /// Rings bells and sends desktop notifications for transitions the user should hear about.
    pub(crate) fn after_transitions(&mut self, transitions: &[Transition], now: Instant) {
        if transitions.is_empty() {
            // A closed pane still ends the waits on it.
            self.wake_agent_waiters();
            return;
        }
        let state = &self.state;
        let is_focused = |pane: u64| -> bool {
            let Ok(pane) = PaneId::try_from(pane) else {
                return false;
            };
            let Some((session, window)) = state.locate(pane) else {
                return false;
            };
            let watched = state.clients.values().any(|c| c.session == session);
            watched
                && state
                    .sessions
                    .get(&session)
                    .is_some_and(|s| s.active_window == window && s.active_pane() == Some(pane))
        };
        let notifications = self.notifier.decide(transitions, &is_focused, now);
        for n in notifications {
            let bytes = osc_sequences(&n, self.notifier.config());
            if bytes.is_empty() {
                continue;
            }
            let session = PaneId::try_from(n.pane)
                .ok()
                .and_then(|p| self.state.locate(p))
                .map(|(s, _)| s);
            let mut sent = false;
            for c in self
                .state
                .clients
                .values()
                .filter(|c| Some(c.session) == session)
            {
                sent |= c.send_terminal(bytes.clone()).is_ok();
            }
            if !sent {
                // Nobody looks at that session: tell whoever is attached anywhere.
                for c in self.state.clients.values() {
                    let _ = c.send_terminal(bytes.clone());
                }
            }
        }
        for t in transitions {
            if let Ok(pane) = PaneId::try_from(t.pane) {
                self.state.mark_pane_dirty(pane);
            }
        }
        self.mark_sidebars_dirty();
        self.wake_agent_waiters();
    }

    /// Redraws every client that shows the sidebar or agent counts.
    pub(crate) fn mark_sidebars_dirty(&mut self) {
        for c in self.state.clients.values_mut() {
            c.dirty = true;
        }
    }

    /// Time-based agent changes (aging, quiet panes) are due.
    pub(crate) fn agent_timer(&mut self, now: Instant) {
        let mut transitions = self.agents.tick(now);
        let quiet: Vec<PaneId> = self
            .agents
            .iter()
            .filter(|row| row.state == AgentState::Working)
            .filter_map(|row| PaneId::try_from(row.pane).ok())
            .filter(|pane| {
                self.last_output
                    .get(pane)
                    .is_some_and(|t| now.duration_since(*t) >= QUIET_AS_IDLE)
            })
            .collect();
        for pane in quiet {
            transitions.extend(self.agents.pane_evidence_idle(u64::from(pane), now));
            self.last_output.remove(&pane);
        }
        self.after_transitions(&transitions, now);
    }

    /// When the next time-based agent change is due.
    pub(crate) fn agent_deadline(&self) -> Option<Instant> {
        let quiet = self
            .agents
            .iter()
            .filter(|row| row.state == AgentState::Working)
            .filter_map(|row| PaneId::try_from(row.pane).ok())
            .filter_map(|pane| self.last_output.get(&pane).map(|t| *t + QUIET_AS_IDLE))
            .min();
        [self.agents.next_deadline(), quiet]
            .into_iter()
            .flatten()
            .min()
    }

    /// A pane printed something (evidence that its agent is alive).
    pub(crate) fn note_pane_output(&mut self, pane: PaneId) {
        if self.agents.row(u64::from(pane)).is_some() {
            self.last_output.insert(pane, Instant::now());
        }
    }

    /// A pane got focus.
    pub(crate) fn on_focus_changed(&mut self, _pane: PaneId) {
        self.mark_sidebars_dirty();
    }

    /// The pane whose agent has waited longest for the human.
    pub(crate) fn oldest_blocked_pane(&self) -> Option<PaneId> {
        self.agents
            .rows(Instant::now())
            .into_iter()
            .filter(|r| r.state == AgentState::Blocked)
            .max_by_key(|r| r.in_state)
            .and_then(|r| PaneId::try_from(r.pane).ok())
    }

    pub(crate) fn agents_response(&self) -> Response {
        let now = Instant::now();
        let rows: Vec<serde_json::Value> = self
            .agents
            .rows(now)
            .into_iter()
            .map(|r| {
                let pane = PaneId::try_from(r.pane).ok();
                let p = pane.and_then(|p| self.state.panes.get(&p));
                let row = self.agents.row(r.pane);
                serde_json::json!({
                    "pane": pane.map(|p| format!("%{p}")),
                    "agent": r.kind.as_str(),
                    "agent_name": r.kind.display_name(),
                    "state": r.state.as_str(),
                    "seconds_in_state": r.in_state.as_secs(),
                    "seconds_since_event": r.since_last_event.as_secs(),
                    "session_id": r.session_id,
                    "cwd": r.cwd,
                    "last_tool": r.last_tool,
                    "rule": r.rule.describe(),
                    "last_event": row.and_then(|row| row.last_event_name().map(str::to_string)),
                    "events_recorded": row.map_or(0, |row| row.events_recorded),
                    "title": p.map(|p| p.glance.title().as_deref().unwrap_or("").to_string()),
                    "subagents": r.subagents.iter().map(|s| serde_json::json!({
                        "agent_id": s.agent_id,
                        "agent_type": s.agent_type,
                        "last_tool": s.last_tool,
                        "seconds": s.elapsed.as_secs(),
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        if !self.machines.any() {
            return Response::Json(serde_json::json!({ "agents": rows }));
        }
        // With saved machines: every row names its machine, and machines not live are listed.
        let mut rows = rows;
        for row in &mut rows {
            if let Some(row) = row.as_object_mut() {
                row.insert("machine".into(), crate::machines::store::LOCAL.into());
            }
        }
        let (remote, down) = self.remote_agent_rows();
        rows.extend(remote);
        Response::Json(serde_json::json!({ "agents": rows, "machines_down": down }))
    }

    pub(crate) fn agents_explain_response(&self, pane: &str) -> Response {
        let id = match self.state.resolve(Some(pane)) {
            Ok(t) => t.pane,
            Err(e) => return Response::Error(e),
        };
        if self.agents.row(u64::from(id)).is_none() {
            return Response::Error(format!("no agent has reported from pane %{id}"));
        }
        Response::Text(self.agents.explain(u64::from(id), Instant::now()))
    }
}
