//! The human's say over calyx's own acting MCP tools: typing into a pane (`pane_run`,
//! `pane_send_keys`) and starting a command in a new pane (`pane_split` / `window_create` with
//! a `command`). Each queues a request in the approval panel exactly like an agent's permission
//! request, and acts only on an allow from a human or from a rule the human set.
//!
//! Why every command-starting tool: the endpoint's token sits in agent configs, and a tool that
//! runs a command without asking would turn anyone who reads it into the user.

use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use crate::approvals::{Asker, Schema, Summary};
use crate::http::EndpointReply;
use crate::layout::PaneId;
use crate::mcp::PaneRef;

use super::{Msg, Server};

/// What became of a request calyx's own tool queued.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum HumanAnswer {
    /// A human, or a rule a human set, allowed it.
    Allow,
    /// Denied, with the reason to give the caller.
    Deny(String),
    /// Nobody answered before the tool's timeout.
    Expired,
}

/// One request of an acting tool, as the panel shows it.
pub(super) struct ToolAsk<'a> {
    /// The pane the tool acts on (types into, splits, or adds a window next to).
    pub pane: PaneId,
    /// The MCP caller's pane, if it is one of ours.
    pub caller: Option<PaneRef>,
    /// What the panel's title names, e.g. `pane_split`; `None` for typing (`pane_run`).
    pub verb: Option<&'a str>,
    pub summary: Summary,
    /// How long the human has.
    pub timeout: Duration,
}

/// Reads the queue's answer to a tool's request (the Grok/pi flat schema: `decision`, `reason`).
fn read_answer(answer: Option<EndpointReply>) -> HumanAnswer {
    let Some(EndpointReply::Json(v)) = answer else {
        return HumanAnswer::Deny("no decision was made in calyx".into());
    };
    let reason = v.get("reason").and_then(|r| r.as_str());
    match v.get("decision").and_then(|d| d.as_str()) {
        Some("allow") => HumanAnswer::Allow,
        _ if reason == Some(crate::approvals::answer::EXPIRED_REASON) => HumanAnswer::Expired,
        _ => HumanAnswer::Deny(reason.unwrap_or("denied").to_string()),
    }
}

/// Waits for the human's answer; `None` when the tool call went away first (its request is
/// withdrawn then, so nothing acts for a caller that no longer waits).
pub(super) async fn human_answer<T>(
    id: u64,
    answer: oneshot::Receiver<EndpointReply>,
    reply: &mut oneshot::Sender<T>,
    tx: &mpsc::UnboundedSender<Msg>,
) -> Option<HumanAnswer> {
    let answer = tokio::select! {
        answer = answer => read_answer(answer.ok()),
        _ = reply.closed() => {
            let _ = tx.send(Msg::ApprovalWithdrawn { id });
            return None;
        }
    };
    // The call went away as the human answered: nobody waits for the result.
    if reply.is_closed() {
        return None;
    }
    Some(answer)
}

impl Server {
    /// Queues `ask` in the approval panel (a rule the human set may answer it at once) and
    /// shows the panel to every client. Returns the request's id and where its answer comes.
    pub(super) fn ask_human(
        &mut self,
        ask: ToolAsk<'_>,
    ) -> (u64, oneshot::Receiver<EndpointReply>) {
        let caller_pane = ask
            .caller
            .as_ref()
            .and_then(|c| c.pane.trim_start_matches('%').parse::<PaneId>().ok());
        let caller_kind = caller_pane.and_then(|p| self.agents.row(u64::from(p)).map(|r| r.kind));
        let from = ask
            .caller
            .map(|c| format!(" from {}", c.pane))
            .unwrap_or_default();
        let verb = ask.verb.map(|v| format!(" {v}")).unwrap_or_default();
        let (answer_tx, answer_rx) = oneshot::channel();
        let request = crate::approvals::NewRequest {
            pane: ask.pane,
            asker: Asker::Tool(caller_kind),
            schema: Schema::DecisionFlat,
            tool: format!("calyx-ipc{verb}{from}"),
            summary: ask.summary,
            suggestions: Vec::new(),
            input: None,
            agent_id: None,
            wait: Some(ask.timeout),
            answer: answer_tx,
        };
        let (id, _) = self.approvals.add(request, Instant::now());
        for c in self.state.clients.values_mut() {
            c.panel.hidden = false;
            c.dirty = true;
        }
        (id, answer_rx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_an_allow_decision_allows() {
        let allow = EndpointReply::Json(json!({"decision": "allow"}));
        assert_eq!(read_answer(Some(allow)), HumanAnswer::Allow);
        let deny = EndpointReply::Json(json!({"decision": "deny", "reason": "no"}));
        assert_eq!(read_answer(Some(deny)), HumanAnswer::Deny("no".into()));
        let expired = EndpointReply::Json(json!({
            "decision": "deny",
            "reason": crate::approvals::answer::EXPIRED_REASON,
        }));
        assert_eq!(read_answer(Some(expired)), HumanAnswer::Expired);
        assert!(matches!(read_answer(None), HumanAnswer::Deny(_)));
        let odd = EndpointReply::Json(json!({"decision": "Allow"}));
        assert!(matches!(read_answer(Some(odd)), HumanAnswer::Deny(_)));
    }
}
