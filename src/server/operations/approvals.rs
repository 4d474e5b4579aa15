//! Where approvals meet the multiplexer: gate requests from the endpoint are queued, answers
//! move agent rows on, `calyx approve/deny/approvals` work from other terminals, expiry and
//! withdrawal are handled. The panel each client sees is in `approval_panel`.

use calyx_integrations::{normalize, AgentKind, EventKind, NormalizedEvent};
use serde_json::{json, Value};
use tokio::sync::oneshot;
use tokio::time::Instant;

use crate::approvals::gate::may_gate;
use crate::approvals::{gate, summarize, Asker, Decision, NewRequest, Outcome, Silence};
use crate::http::{CallerKind, EndpointReply, Identity};
use crate::layout::PaneId;
use crate::protocol::Response;

use crate::server::messages::Msg;
use crate::server::owner::Server;

impl Server {
    /// A permission gate from the endpoint. The event also moves the agent row (blocked).
    pub(crate) fn approval_request(
        &mut self,
        identity: Identity,
        payload: Value,
        reply: oneshot::Sender<EndpointReply>,
    ) {
        let Some(pane) = self.pane_for_identity(&identity) else {
            // An agent whose pane is gone (or a calyx-made env inherited by a program outside
            // it) is outside calyx: silence, as a hook with no calyx at all gives. A refusal
            // would make the deny-only hooks of Gemini, Hermes and Kimi deny every call.
            tracing::info!(?identity, "approval request from no calyx pane: not held");
            let _ = reply.send(EndpointReply::EmptyOk);
            return;
        };
        // An unknown CLI (or none named) has no gate calyx can answer: its own prompt decides.
        let Some(kind) = identity.agent_kind.as_ref().and_then(CallerKind::known) else {
            let _ = reply.send(EndpointReply::EmptyOk);
            return;
        };
        let kind_name = kind.as_str();
        let policy = self.state.config.approval_policy;
        let event = match normalize(kind, &payload) {
            Ok(Some(event)) => event,
            // A shape calyx cannot read where gates are held (a CLI release changed it) is
            // refused: the hook then denies where silence would run the call. Elsewhere it is
            // no gate: the CLI asks itself, at once.
            unreadable => {
                tracing::warn!(%kind_name, ?unreadable, "approval request calyx cannot read");
                let _ = reply.send(if may_gate(kind, policy) {
                    EndpointReply::BadRequest(format!(
                        "not a {kind_name} permission request calyx can read"
                    ))
                } else {
                    EndpointReply::EmptyOk
                });
                return;
            }
        };
        let schema = gate(kind, &event, policy);
        let tool = event.tool_name.clone().unwrap_or_else(|| "tool".into());
        // A gate a rule the human set will answer at once never shows the agent as blocked
        // (no flash of "blocked", no bell): the row goes on working below.
        let ruled = schema.is_some()
            && self.approvals.rule_allows_call(
                pane,
                kind.as_str(),
                &tool,
                event.tool_input.as_ref(),
            );
        if !(ruled && event.kind == EventKind::PermissionRequest) {
            self.apply_agent_event(pane, kind, &event);
        }
        let Some(schema) = schema else {
            let _ = reply.send(EndpointReply::EmptyOk);
            return;
        };
        let input = event.tool_input.clone().unwrap_or(Value::Null);
        let suggestions = payload
            .get("permission_suggestions")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let (answer_tx, answer_rx) = oneshot::channel();
        let request = NewRequest {
            pane,
            asker: Asker::Hook(kind),
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
            app: None,
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
            // The HTTP edge: the queue's outcome in this CLI's words.
            match answer {
                Some(outcome) => {
                    let _ = reply.send(EndpointReply::from_body(outcome.body(schema)));
                }
                None if reply.is_closed() => {
                    let _ = tx.send(Msg::ApprovalWithdrawn { id });
                }
                // The queue always answers (dropping a request answers silence); should it
                // not, the answer is still silence in the CLI's terms, never a bare empty 200.
                None => {
                    let silence = Outcome::NoDecision(Silence::Withdrawn);
                    let _ = reply.send(EndpointReply::from_body(silence.body(schema)));
                }
            }
        });
        if waits {
            // The agent now waits for the human, whatever event carried the gate (pi's gate
            // is its tool_call).
            if event.kind != EventKind::PermissionRequest {
                let now = Instant::now();
                let transitions =
                    self.agents
                        .awaiting_human(u64::from(pane), kind, event.tool_name.clone(), now);
                self.after_agent_change(pane, &transitions, now);
            }
            for c in self.state.clients.values_mut() {
                c.panel.hidden = false;
                c.dirty = true;
            }
        } else {
            // A rule the human set answered at once: the agent goes on, as after a decision.
            self.agent_decided(pane, kind, event.tool_name.clone());
        }
    }

    /// A request of `pane` was answered: its agent's row moves on to working.
    pub(crate) fn agent_decided(&mut self, pane: PaneId, kind: AgentKind, tool: Option<String>) {
        let now = Instant::now();
        let transitions = self.agents.human_answered(u64::from(pane), kind, tool, now);
        self.after_agent_change(pane, &transitions, now);
    }

    /// An agent event that may show the CLI answered a held request in its own dialog.
    pub(crate) fn approvals_after_event(
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
    pub(crate) fn approval_withdrawn(&mut self, id: u64) {
        if self.approvals.withdraw(id).is_some() {
            self.mark_all_dirty();
        }
    }

    /// Requests of a closed pane go away with it.
    pub(crate) fn approvals_pane_closed(&mut self, pane: PaneId) {
        if self.approvals.withdraw_pane(pane) {
            self.mark_all_dirty();
        }
    }

    pub(crate) fn approvals_expire(&mut self, now: Instant) {
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
    pub(crate) fn answer_request(
        &mut self,
        id: u64,
        decision: Decision,
        always: Option<crate::approvals::Always>,
    ) -> bool {
        self.answer_request_by(None, id, decision, always)
    }

    /// [`Server::answer_request`] by `client` (None: `calyx approve/deny`, `!`): an MCP App's
    /// request is carried out for it (its message copied to that client's clipboard), and its
    /// "always" is the view's, never a rule.
    pub(crate) fn answer_request_by(
        &mut self,
        client: Option<crate::server::model::ids::ClientId>,
        id: u64,
        decision: Decision,
        always: Option<crate::approvals::Always>,
    ) -> bool {
        if self.approvals.app_of(id).is_some() {
            let decision = match decision {
                Decision::Allow if always.is_some() => Decision::AllowAlways,
                other => other,
            };
            return self.answer_app(id, decision, client);
        }
        // A rule set by this decision answers other pending requests too: each of their
        // agents moves on as well. (A request of calyx's own tools blocks no agent row.)
        let before: Vec<(u64, PaneId, AgentKind, String)> = self
            .approvals
            .pending()
            .iter()
            .filter_map(|p| Some((p.id, p.pane, p.asker.hook()?, p.tool.clone())))
            .collect();
        if self.approvals.decide_always(id, decision, always).is_none() {
            return false;
        }
        let still: std::collections::HashSet<u64> =
            self.approvals.pending().iter().map(|p| p.id).collect();
        for (_, pane, kind, tool) in before.into_iter().filter(|b| !still.contains(&b.0)) {
            self.agent_decided(pane, kind, Some(tool));
        }
        self.mark_all_dirty();
        if always.is_some_and(|a| a.anywhere) {
            self.anywhere_sync();
        }
        true
    }

    /// `calyx approvals [--pending]`.
    pub(crate) fn approvals_response(&self, pending_only: bool) -> Response {
        let now = Instant::now();
        let pending: Vec<Value> = self
            .approvals
            .pending()
            .iter()
            .map(|p| {
                // A standalone view's request has no pane: it names its view instead.
                let pane = match &p.app {
                    Some(app) if app.pane.is_none() => format!("view {}", app.view),
                    _ => format!("%{}", p.pane),
                };
                json!({
                    "id": p.id, "pane": pane, "cli": p.asker.as_str(), "tool": p.tool,
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
                        "id": r.id, "pane": format!("%{}", r.pane), "cli": r.asker.as_str(), "tool": r.tool,
                        "summary": r.headline, "state": r.outcome, "by": format!("{:?}", r.by).to_lowercase(),
                    })
                })
                .collect()
        };
        let rules: Vec<Value> = self.approvals.rules().iter().map(|r| json!({
            "rule": r.id, "pane": r.pane.map(|p| format!("%{p}")), "cli": r.cli, "tool": r.tool,
            "covers": crate::approvals::redact::redact(&crate::approvals::rules::covers_words(&r.covers)),
            "machines": r.scope.words(),
        })).collect();
        let mut pending = pending;
        pending.extend(self.remote_pending());
        Response::Json(json!({ "pending": pending, "recent": recent, "rules": rules }))
    }

    /// `calyx approve ID` / `calyx deny ID [-m MESSAGE]`.
    #[cfg(test)]
    pub(crate) fn approve_response(
        &mut self,
        id: u64,
        allow: bool,
        message: Option<String>,
    ) -> Response {
        self.approve_response_from(id, allow, message, None, None)
    }

    /// [`Server::approve_response`] for an answer that came over a saved machine's link
    /// from machine `answered_from` (recorded in the audit log).
    pub(crate) fn approve_response_from(
        &mut self,
        id: u64,
        allow: bool,
        message: Option<String>,
        answered_from: Option<String>,
        always: Option<char>,
    ) -> Response {
        let decision = if allow {
            Decision::Allow
        } else {
            Decision::Deny { message }
        };
        // An "always" key answered from another machine's panel: the rule it names here.
        let rule = match always {
            Some(key) if allow => match crate::approvals::rules::always_for_key(key) {
                Some(rule) => Some(rule),
                None => return Response::Error(format!("{key:?} makes no rule")),
            },
            _ => None,
        };
        // Another machine's word, for the record only: one printable line.
        let from = answered_from.map(|f| crate::remote::handshake::printable(&f));
        let remote_anywhere = from.is_some() && rule.is_some_and(|r| r.anywhere);
        let rules_before = self.approvals.rules().len();
        self.approvals.set_answered_from(from);
        let answered = self.answer_request(id, decision, rule);
        self.approvals.set_answered_from(None);
        // An `e`/`E` from another machine's panel: that machine holds the rule from now on
        // (and pushes it back here): it is told which rule its key made.
        if answered && remote_anywhere && self.approvals.rules().len() > rules_before {
            if let Some(made) = self.approvals.rules().last() {
                let rule = crate::approvals::anywhere::SharedRule {
                    cli: made.cli.to_string(),
                    tool: made.tool.clone(),
                    covers: made.covers.clone(),
                };
                return Response::Json(serde_json::json!({ "anywhere": rule }));
            }
        }
        if !answered && rule.is_some() {
            return Response::Error(format!(
                "no pending approval with id {id} with that rule to offer (a/A make the exact one)"
            ));
        }
        if answered {
            Response::Ok
        } else {
            Response::Error(format!(
                "no pending approval with id {id} (see calyx approvals --pending)"
            ))
        }
    }
}
