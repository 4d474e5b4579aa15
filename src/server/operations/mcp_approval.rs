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

use crate::approvals::answer::DEFAULT_DENY;
use crate::approvals::{Asker, Decision, Outcome, Schema, Silence, Summary};
use crate::layout::PaneId;
use crate::mcp::PaneRef;

use crate::server::messages::Msg;
use crate::server::owner::Server;

/// What became of a request calyx's own tool queued.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HumanAnswer {
    /// A human, or a rule a human set, allowed it.
    Allow,
    /// Denied, with the reason to give the caller.
    Deny(String),
    /// Nobody answered before the tool's timeout.
    Expired,
}

/// One request of an acting tool, as the panel shows it.
pub(crate) struct ToolAsk<'a> {
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

/// What the queue's outcome means for a tool calyx runs itself (no JSON: the typed outcome).
fn read_answer(outcome: Option<Outcome>) -> HumanAnswer {
    match outcome {
        Some(Outcome::Decided(d)) if d.allows() => HumanAnswer::Allow,
        Some(Outcome::Decided(Decision::Deny { message } | Decision::DenyAndStop { message })) => {
            HumanAnswer::Deny(
                message
                    .filter(|m| !m.trim().is_empty())
                    .unwrap_or_else(|| DEFAULT_DENY.to_string()),
            )
        }
        // The queue's expiry at the tool's timeout: a timeout, not a human's deny.
        Some(Outcome::NoDecision(Silence::Expired)) => HumanAnswer::Expired,
        Some(Outcome::NoDecision(why)) => HumanAnswer::Deny(why.reason().to_string()),
        // Allows are all matched above; the queue dropped without answering: no decision.
        Some(Outcome::Decided(_)) | None => {
            HumanAnswer::Deny("no decision was made in calyx".into())
        }
    }
}

/// Waits for the human's answer; `None` when the tool call went away first (its request is
/// withdrawn then, so nothing acts for a caller that no longer waits).
pub(crate) async fn human_answer<T>(
    id: u64,
    answer: oneshot::Receiver<Outcome>,
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
    pub(crate) fn ask_human(&mut self, ask: ToolAsk<'_>) -> (u64, oneshot::Receiver<Outcome>) {
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
            app: None,
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

    #[test]
    fn only_an_allow_decision_allows() {
        let decided = |d| read_answer(Some(Outcome::Decided(d)));
        assert_eq!(decided(Decision::Allow), HumanAnswer::Allow);
        assert_eq!(decided(Decision::AllowAlways), HumanAnswer::Allow);
        let deny = Decision::Deny {
            message: Some("no".into()),
        };
        assert_eq!(decided(deny), HumanAnswer::Deny("no".into()));
        let plain = Decision::Deny { message: None };
        assert_eq!(decided(plain), HumanAnswer::Deny(DEFAULT_DENY.into()));
        let expired = read_answer(Some(Outcome::NoDecision(Silence::Expired)));
        assert_eq!(expired, HumanAnswer::Expired);
        for why in [Silence::Withdrawn, Silence::ShuttingDown] {
            let answer = read_answer(Some(Outcome::NoDecision(why)));
            assert_eq!(answer, HumanAnswer::Deny(why.reason().into()));
        }
        assert!(matches!(read_answer(None), HumanAnswer::Deny(_)));
    }
}
