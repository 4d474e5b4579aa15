//! Queue behaviour: expiry per schema with tokio's paused clock, the timer order, withdrawal,
//! rules, and that no interleaving of decisions, withdrawals, expiry and shutdown ever answers
//! allow without a human's allow.

use std::time::Duration;

use calyx_integrations::AgentKind;
use serde_json::json;
use tokio::sync::oneshot;
use tokio::time::Instant;

use super::*;
use crate::http::EndpointReply;

fn request(
    pane: u32,
    schema: Schema,
    tool: &str,
) -> (NewRequest, oneshot::Receiver<EndpointReply>) {
    let (tx, rx) = oneshot::channel();
    let kind = match schema {
        Schema::Claude => AgentKind::ClaudeCode,
        Schema::Codex => AgentKind::Codex,
        Schema::CopilotFlat => AgentKind::Copilot,
        Schema::DecisionFlat => AgentKind::Pi,
    };
    let summary = summarize(tool, &json!({"command": "echo hi"}));
    (
        NewRequest {
            pane,
            kind,
            schema,
            tool: tool.into(),
            summary,
            suggestions: vec![],
            answer: tx,
        },
        rx,
    )
}

fn is_allow(reply: &EndpointReply) -> bool {
    match reply {
        EndpointReply::Json(v) => v.to_string().contains("\"allow\""),
        _ => false,
    }
}

#[test]
fn timers_nest_server_then_hook_then_cli() {
    assert!(EXPIRY < crate::hook::APPROVAL_TIMEOUT);
    assert!(crate::hook::APPROVAL_TIMEOUT < Duration::from_secs(600));
    assert!(
        crate::http::APPROVAL_TIMEOUT > EXPIRY,
        "the HTTP layer is only a safety net"
    );
}

#[tokio::test(start_paused = true)]
async fn expiry_falls_back_or_denies_per_cli() {
    let mut q = ApprovalQueue::new(None);
    let (claude, mut claude_rx) = request(1, Schema::Claude, "Bash");
    let (pi, mut pi_rx) = request(2, Schema::DecisionFlat, "bash");
    q.add(claude, Instant::now());
    q.add(pi, Instant::now());
    tokio::time::advance(EXPIRY - Duration::from_secs(1)).await;
    assert!(q.expire(Instant::now()).is_empty());
    assert!(claude_rx.try_recv().is_err(), "still waiting");
    tokio::time::advance(Duration::from_secs(1)).await;
    assert_eq!(q.expire(Instant::now()), vec![1, 2]);
    assert_eq!(claude_rx.try_recv().ok(), Some(EndpointReply::EmptyOk));
    let pi_answer = pi_rx.try_recv().ok();
    assert_eq!(
        pi_answer,
        Some(EndpointReply::Json(
            json!({"decision": "deny", "reason": answer::EXPIRED_REASON})
        ))
    );
    assert!(q.pending().is_empty());
}

#[test]
fn decisions_rules_and_withdrawal() {
    let now = Instant::now();
    let mut q = ApprovalQueue::new(None);
    let (a, mut a_rx) = request(1, Schema::Claude, "Bash");
    let (b, mut b_rx) = request(1, Schema::Claude, "Bash");
    let (c, mut c_rx) = request(2, Schema::Claude, "Bash");
    let (ida, _) = q.add(a, now);
    q.add(b, now);
    let (idc, _) = q.add(c, now);
    // "a": always allow Bash in pane 1: answers b too, not c (another pane).
    assert_eq!(q.decide(ida, Decision::Allow, Some(false)), Some(1));
    assert!(a_rx.try_recv().ok().is_some_and(|r| is_allow(&r)));
    assert!(b_rx.try_recv().ok().is_some_and(|r| is_allow(&r)));
    assert_eq!(q.pending().len(), 1);
    // Withdrawn: gone, and a late decision does nothing.
    assert_eq!(q.withdraw(idc), Some(2));
    assert_eq!(q.decide(idc, Decision::Allow, None), None);
    assert!(c_rx.try_recv().is_err());
    // A later request from pane 1 is allowed by the rule without waiting.
    let (d, mut d_rx) = request(1, Schema::Claude, "Bash");
    assert!(!q.add(d, now).1);
    assert!(d_rx.try_recv().ok().is_some_and(|r| is_allow(&r)));
    assert_eq!(q.recent().last().map(|r| r.by), Some(DecidedBy::Rule));
}

#[test]
fn dropping_the_queue_answers_no_decision() {
    let mut q = ApprovalQueue::new(None);
    let (a, mut a_rx) = request(1, Schema::Codex, "Bash");
    let (b, mut b_rx) = request(1, Schema::DecisionFlat, "bash");
    q.add(a, Instant::now());
    q.add(b, Instant::now());
    drop(q);
    assert_eq!(a_rx.try_recv().ok(), Some(EndpointReply::EmptyOk));
    assert!(b_rx.try_recv().ok().is_some_and(|r| !is_allow(&r)));
}

#[test]
fn no_interleaving_answers_allow_without_a_human_allow() {
    // Every order of: human allow, human deny, withdraw, expire, shutdown.
    let ops = ["allow", "deny", "withdraw", "expire", "drop"];
    let mut orders: Vec<Vec<&str>> = vec![vec![]];
    for _ in 0..4 {
        orders = orders
            .into_iter()
            .flat_map(|o| ops.iter().map(move |op| [o.clone(), vec![*op]].concat()))
            .collect();
    }
    for order in orders {
        let start = Instant::now();
        let mut q = ApprovalQueue::new(None);
        let (r, mut rx) = request(1, Schema::Claude, "Bash");
        let (id, _) = q.add(r, start);
        let mut allowed_first = None;
        let mut dropped = false;
        for op in &order {
            let live = q.pending().iter().any(|p| p.id == id);
            match *op {
                "allow" => {
                    if live && allowed_first.is_none() {
                        allowed_first = Some(true);
                    }
                    q.decide(id, Decision::Allow, None);
                }
                "deny" => {
                    if live && allowed_first.is_none() {
                        allowed_first = Some(false);
                    }
                    q.decide(id, Decision::Deny { message: None }, None);
                }
                "withdraw" => {
                    if live && allowed_first.is_none() {
                        allowed_first = Some(false);
                    }
                    q.withdraw(id);
                }
                "expire" => {
                    if live && allowed_first.is_none() {
                        allowed_first = Some(false);
                    }
                    q.expire(start + EXPIRY);
                }
                _ => {
                    if !dropped {
                        if live && allowed_first.is_none() {
                            allowed_first = Some(false);
                        }
                        dropped = true;
                        q = ApprovalQueue::new(None);
                    }
                }
            }
        }
        drop(q);
        let got_allow = rx.try_recv().ok().is_some_and(|r| is_allow(&r));
        assert_eq!(got_allow, allowed_first == Some(true), "order {order:?}");
    }
}
