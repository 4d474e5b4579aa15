//! Where approvals meet the multiplexer: gate requests from the endpoint are queued, the panel
//! is drawn for every client, its keys answer requests, `calyx approve/deny/approvals` work from
//! other terminals, expiry and withdrawal are handled.

use std::str::FromStr;

use calyx_integrations::{normalize, AgentKind, EventKind, NormalizedEvent};
use calyx_tui::ApprovalView;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget;
use serde_json::{json, Value};
use tokio::sync::oneshot;
use tokio::time::Instant;

use crate::approvals::{gate, summarize, visible, Decision, NewRequest};
use crate::http::{EndpointReply, Identity};
use crate::keys::{Key, KeyCode};
use crate::layout::PaneId;
use crate::protocol::Response;

use super::state::ClientId;
use super::{Msg, Server};

/// One frame's panel content.
#[derive(Debug, Clone)]
pub struct PanelData {
    pub cli: String,
    pub pane: String,
    pub tool: String,
    pub headline: String,
    pub lines: Vec<String>,
    pub index: usize,
    pub count: usize,
    pub scroll: u16,
    pub suggestions: Vec<String>,
    pub message: Option<String>,
    pub confirm_all: bool,
    pub waited: String,
    /// What `y` means where the CLI's hook cannot allow (Gemini, Hermes).
    pub note: Option<&'static str>,
}

impl PanelData {
    /// Draws the panel over `area`.
    pub fn render(&self, area: Rect, buf: &mut Buffer) {
        ApprovalView {
            cli: &self.cli,
            pane: &self.pane,
            tool: &self.tool,
            headline: &self.headline,
            lines: &self.lines,
            index: self.index,
            count: self.count,
            scroll: self.scroll,
            suggestions: &self.suggestions,
            message: self.message.as_deref(),
            confirm_all: self.confirm_all,
            waited: &self.waited,
            note: self.note,
        }
        .render(area, buf);
    }
}

/// Per-client state of the approval panel.
#[derive(Debug, Default, Clone)]
pub struct PanelState {
    /// Esc hid the panel; a new request or `prefix i` shows it again.
    pub hidden: bool,
    /// The request shown (None: the focused pane's, else the oldest).
    pub selected: Option<u64>,
    pub scroll: u16,
    /// A deny message being typed.
    pub message: Option<String>,
    pub confirm_all: bool,
}

impl Server {
    /// A permission gate from the endpoint. The event also moves the agent row (blocked).
    pub(super) fn approval_request(
        &mut self,
        identity: Identity,
        payload: Value,
        reply: oneshot::Sender<EndpointReply>,
    ) {
        let Some(pane) = self.pane_for_identity(&identity) else {
            let _ = reply.send(EndpointReply::BadRequest(
                "no calyx pane has this session or surface id".into(),
            ));
            return;
        };
        let kind_name = identity
            .agent_kind
            .clone()
            .unwrap_or_else(|| "claude-code".into());
        let Ok(kind) = AgentKind::from_str(&kind_name) else {
            let _ = reply.send(EndpointReply::EmptyOk);
            return;
        };
        let event = match normalize(kind, &payload) {
            Ok(Some(event)) => event,
            // Unknown kinds and shapes are not gates: the CLI asks itself, at once.
            _ => {
                let _ = reply.send(EndpointReply::EmptyOk);
                return;
            }
        };
        self.apply_agent_event(pane, kind, &event);
        let Some(schema) = gate(kind, &event, self.state.config.approval_policy) else {
            let _ = reply.send(EndpointReply::EmptyOk);
            return;
        };
        let tool = event.tool_name.clone().unwrap_or_else(|| "tool".into());
        let input = event.tool_input.clone().unwrap_or(Value::Null);
        let suggestions = payload
            .get("permission_suggestions")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let (answer_tx, answer_rx) = oneshot::channel();
        let request = NewRequest {
            pane,
            kind,
            schema,
            summary: summarize(&tool, &input),
            tool,
            suggestions: if kind == AgentKind::ClaudeCode {
                suggestions
            } else {
                Vec::new()
            },
            input: Some(input),
            agent_id: event.agent_id.clone(),
            wait: None,
            answer: answer_tx,
        };
        let (id, waits) = self.approvals.add(request, Instant::now());
        // Forward the answer to the HTTP request; if the hook process goes away first (agent
        // interrupted, pane closed), withdraw the request from the queue at once.
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let mut reply = reply;
            let answer = tokio::select! {
                answer = answer_rx => answer.ok(),
                _ = reply.closed() => None,
            };
            match answer {
                Some(answer) => {
                    let _ = reply.send(answer);
                }
                None if reply.is_closed() => {
                    let _ = tx.send(Msg::ApprovalWithdrawn { id });
                }
                None => {
                    let _ = reply.send(EndpointReply::EmptyOk);
                }
            }
        });
        if waits {
            // The agent now waits for the human, whatever event carried the gate (pi's gate
            // is its tool_call).
            if event.kind != EventKind::PermissionRequest {
                let mut blocked =
                    NormalizedEvent::new(EventKind::PermissionRequest, "calyx:approval");
                blocked.tool_name = event.tool_name.clone();
                self.apply_agent_event(pane, kind, &blocked);
            }
            for c in self.state.clients.values_mut() {
                c.panel.hidden = false;
                c.dirty = true;
            }
        }
    }

    /// An agent event that may show the CLI answered a held request in its own dialog.
    pub(super) fn approvals_after_event(
        &mut self,
        pane: PaneId,
        kind: AgentKind,
        event: &NormalizedEvent,
    ) {
        if self.approvals.settle_from_event(pane, kind, event) {
            self.mark_all_dirty();
        }
    }

    /// The hook process went away.
    pub(super) fn approval_withdrawn(&mut self, id: u64) {
        if self.approvals.withdraw(id).is_some() {
            self.mark_all_dirty();
        }
    }

    /// Requests of a closed pane go away with it.
    pub(super) fn approvals_pane_closed(&mut self, pane: PaneId) {
        if self.approvals.withdraw_pane(pane) {
            self.mark_all_dirty();
        }
    }

    pub(super) fn approvals_expire(&mut self, now: Instant) {
        if !self.approvals.expire(now).is_empty() {
            self.mark_all_dirty();
        }
    }

    fn mark_all_dirty(&mut self) {
        for c in self.state.clients.values_mut() {
            c.dirty = true;
        }
    }

    /// Answers a request; the agent's row moves on to working.
    pub(super) fn answer_request(
        &mut self,
        id: u64,
        decision: Decision,
        always: Option<bool>,
    ) -> bool {
        let tool = self
            .approvals
            .pending()
            .iter()
            .find(|p| p.id == id)
            .map(|p| (p.tool.clone(), p.kind));
        let Some(pane) = self.approvals.decide(id, decision, always) else {
            return false;
        };
        if let Some((tool, kind)) = tool {
            let mut event = NormalizedEvent::new(EventKind::PostToolUse, "calyx:decision");
            event.tool_name = Some(tool);
            self.apply_agent_event(pane, kind, &event);
        }
        self.mark_all_dirty();
        true
    }

    /// The request a client's panel shows: its selection, else the focused pane's, else the
    /// oldest.
    pub(super) fn panel_request(&self, client: ClientId) -> Option<u64> {
        let c = self.state.clients.get(&client)?;
        if c.panel.hidden {
            return None;
        }
        let pending = self.approvals.pending();
        if let Some(id) = c
            .panel
            .selected
            .filter(|id| pending.iter().any(|p| p.id == *id))
        {
            return Some(id);
        }
        let focused = self
            .state
            .sessions
            .get(&c.session)
            .and_then(|s| s.active_pane());
        pending
            .iter()
            .find(|p| Some(p.pane) == focused)
            .or_else(|| pending.first())
            .map(|p| p.id)
    }

    /// What a client's panel shows this frame (owned, so rendering can borrow the state).
    pub(super) fn panel_data(&self, client: ClientId) -> Option<PanelData> {
        let id = self.panel_request(client)?;
        let c = self.state.clients.get(&client)?;
        let pending = self.approvals.pending();
        let (index, p) = pending.iter().enumerate().find(|(_, p)| p.id == id)?;
        let pane_label = match self
            .state
            .locate(p.pane)
            .and_then(|(s, w)| self.state.sessions.get(&s).map(|s| (s.name.clone(), w)))
        {
            Some((session, window)) => format!("%{} ({session}:{window})", p.pane),
            None => format!("%{}", p.pane),
        };
        let suggestions: Vec<String> = p
            .suggestions
            .iter()
            .map(|s| visible(&suggestion_label(s)))
            .collect();
        let waited = crate::agents::short_duration(Instant::now().duration_since(p.created));
        Some(PanelData {
            cli: p.kind.display_name().to_string(),
            pane: pane_label,
            tool: visible(&p.tool),
            headline: p.summary.headline.clone(),
            lines: p.summary.lines.clone(),
            index: index + 1,
            count: pending.len(),
            scroll: c.panel.scroll,
            suggestions,
            message: c.panel.message.clone(),
            confirm_all: c.panel.confirm_all,
            waited,
            note: p.schema.allow_note(),
        })
    }

    /// A key while the panel is shown. Returns false when the key is not the panel's.
    pub(super) fn panel_key(&mut self, client: ClientId, key: Key) -> bool {
        let Some(id) = self.panel_request(client) else {
            return false;
        };
        let Some(panel) = self.state.clients.get(&client).map(|c| c.panel.clone()) else {
            return false;
        };
        let set = |s: &mut Self, f: &dyn Fn(&mut PanelState)| {
            if let Some(c) = s.state.clients.get_mut(&client) {
                f(&mut c.panel);
                c.dirty = true;
            }
        };
        if let Some(mut message) = panel.message.clone() {
            match key.code {
                KeyCode::Enter => {
                    set(self, &|p| p.message = None);
                    self.answer_request(
                        id,
                        Decision::Deny {
                            message: Some(message),
                        },
                        None,
                    );
                }
                KeyCode::Escape => set(self, &|p| p.message = None),
                KeyCode::Backspace => {
                    message.pop();
                    set(self, &move |p| p.message = Some(message.clone()));
                }
                KeyCode::Char(ch) if !key.ctrl && !key.alt => {
                    if message.len() < 2000 {
                        message.push(ch);
                    }
                    set(self, &move |p| p.message = Some(message.clone()));
                }
                _ => {}
            }
            return true;
        }
        if panel.confirm_all {
            set(self, &|p| p.confirm_all = false);
            if key.code == KeyCode::Char('y') {
                let ids: Vec<u64> = self.approvals.pending().iter().map(|p| p.id).collect();
                for id in ids {
                    self.answer_request(id, Decision::Allow, None);
                }
            }
            return true;
        }
        let pending: Vec<u64> = self.approvals.pending().iter().map(|p| p.id).collect();
        let at = pending.iter().position(|p| *p == id).unwrap_or(0);
        match key.code {
            KeyCode::Char('y') => {
                self.answer_request(id, Decision::Allow, None);
            }
            KeyCode::Char('n') => {
                self.answer_request(id, Decision::Deny { message: None }, None);
            }
            KeyCode::Char('x') => {
                self.answer_request(id, Decision::DenyAndStop { message: None }, None);
            }
            KeyCode::Char('m') => set(self, &|p| p.message = Some(String::new())),
            KeyCode::Char('a') => {
                self.answer_request(id, Decision::Allow, Some(false));
            }
            KeyCode::Char('A') => {
                self.answer_request(id, Decision::Allow, Some(true));
            }
            KeyCode::Char('!') => set(self, &|p| p.confirm_all = true),
            KeyCode::Char(d @ '1'..='9') => {
                let index = (d as u8 - b'1') as usize;
                let suggestion = self
                    .approvals
                    .pending()
                    .iter()
                    .find(|p| p.id == id)
                    .and_then(|p| p.suggestions.get(index).cloned());
                if let Some(suggestion) = suggestion {
                    self.answer_request(id, Decision::AllowRemember { suggestion }, None);
                }
            }
            KeyCode::Tab | KeyCode::Char('j') | KeyCode::Down => {
                let next = pending.get((at + 1) % pending.len().max(1)).copied();
                set(self, &move |p| {
                    p.selected = next;
                    p.scroll = 0;
                });
            }
            KeyCode::BackTab | KeyCode::Char('k') | KeyCode::Up => {
                let prev = pending
                    .get((at + pending.len().max(1) - 1) % pending.len().max(1))
                    .copied();
                set(self, &move |p| {
                    p.selected = prev;
                    p.scroll = 0;
                });
            }
            KeyCode::PageDown | KeyCode::Char(' ') => {
                set(self, &|p| p.scroll = p.scroll.saturating_add(5))
            }
            KeyCode::PageUp => set(self, &|p| p.scroll = p.scroll.saturating_sub(5)),
            KeyCode::Char('g') => {
                if let Some(pane) = self
                    .approvals
                    .pending()
                    .iter()
                    .find(|p| p.id == id)
                    .map(|p| p.pane)
                {
                    self.focus_pane(pane);
                }
            }
            KeyCode::Escape => set(self, &|p| p.hidden = true),
            // Everything else waits: while a request is shown, keys do not leak into panes.
            _ => {}
        }
        true
    }

    /// `prefix i`: show the panel again.
    pub(super) fn show_panel(&mut self, client: ClientId) {
        if let Some(c) = self.state.clients.get_mut(&client) {
            c.panel.hidden = false;
            c.dirty = true;
        }
        if self.approvals.pending().is_empty() {
            self.message(client, "no approvals pending");
        }
    }

    /// `calyx approvals [--pending]`.
    pub(super) fn approvals_response(&self, pending_only: bool) -> Response {
        let now = Instant::now();
        let pending: Vec<Value> = self
            .approvals
            .pending()
            .iter()
            .map(|p| {
                json!({
                    "id": p.id, "pane": format!("%{}", p.pane), "cli": p.kind.as_str(), "tool": p.tool,
                    "summary": crate::approvals::redact::redact(&p.summary.headline),
                    "waiting_seconds": now.duration_since(p.created).as_secs(), "state": "pending",
                })
            })
            .collect();
        let recent: Vec<Value> = if pending_only {
            Vec::new()
        } else {
            self.approvals
                .recent()
                .map(|r| {
                    json!({
                        "id": r.id, "pane": format!("%{}", r.pane), "cli": r.kind.as_str(), "tool": r.tool,
                        "summary": r.headline, "state": r.outcome, "by": format!("{:?}", r.by).to_lowercase(),
                    })
                })
                .collect()
        };
        Response::Json(json!({ "pending": pending, "recent": recent }))
    }

    /// `calyx approve ID` / `calyx deny ID [-m MESSAGE]`.
    pub(super) fn approve_response(
        &mut self,
        id: u64,
        allow: bool,
        message: Option<String>,
    ) -> Response {
        let decision = if allow {
            Decision::Allow
        } else {
            Decision::Deny { message }
        };
        if self.answer_request(id, decision, None) {
            Response::Ok
        } else {
            Response::Error(format!(
                "no pending approval with id {id} (see calyx approvals --pending)"
            ))
        }
    }
}

/// A short label for one of Claude Code's permission suggestions.
fn suggestion_label(s: &Value) -> String {
    let kind = s.get("type").and_then(Value::as_str).unwrap_or("rule");
    let what = s
        .get("directories")
        .or_else(|| s.get("rules"))
        .map(|v| v.to_string())
        .unwrap_or_default();
    let scope = s.get("destination").and_then(Value::as_str).unwrap_or("");
    format!("{kind} {what} ({scope})")
}
