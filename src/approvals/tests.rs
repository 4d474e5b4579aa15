//! Queue behaviour: expiry per schema with tokio's paused clock, the timer order, withdrawal,
//! rules, and that no interleaving of decisions, withdrawals, expiry and shutdown ever answers
//! allow without a human's allow.

use std::time::Duration;

use calyx_integrations::AgentKind;
use serde_json::json;
use tokio::sync::oneshot;
use tokio::time::Instant;

use super::*;

/// The answer body a request's outcome becomes in its CLI's words (None: an empty 200): the
/// queue answers typed outcomes, and these tests check what the CLI reads.
struct Replies {
    rx: oneshot::Receiver<Outcome>,
    schema: Schema,
}

type Body = Option<serde_json::Value>;

impl Replies {
    fn try_recv(&mut self) -> Result<Body, oneshot::error::TryRecvError> {
        let schema = self.schema;
        self.rx.try_recv().map(|outcome| outcome.body(schema))
    }
}

fn request(pane: u32, schema: Schema, tool: &str) -> (NewRequest, Replies) {
    let (tx, rx) = oneshot::channel();
    let rx = Replies { rx, schema };
    let kind = match schema {
        Schema::Claude => AgentKind::ClaudeCode,
        Schema::Codex => AgentKind::Codex,
        Schema::CopilotFlat => AgentKind::Copilot,
        Schema::DecisionFlat => AgentKind::Pi,
        Schema::OpenCode => AgentKind::OpenCode,
        Schema::GeminiDenyOnly => AgentKind::Gemini,
        Schema::HermesBlockOnly => AgentKind::Hermes,
        Schema::KimiDenyOnly => AgentKind::Kimi,
        Schema::CursorPermission => AgentKind::Cursor,
    };
    let summary = summarize(tool, &json!({"command": "echo hi"}));
    (
        NewRequest {
            pane,
            asker: Asker::Hook(kind),
            schema,
            tool: tool.into(),
            summary,
            suggestions: vec![],
            input: Some(json!({"command": "echo hi"})),
            agent_id: None,
            wait: None,
            app: None,
            answer: tx,
        },
        rx,
    )
}

fn is_allow(reply: &Body) -> bool {
    match reply {
        Some(v) => {
            let t = v.to_string();
            t.contains("\"allow\"") || t.contains("\"once\"") || t.contains("\"always\"")
        }
        None => false,
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
    // Hermes cuts its hooks off at 300 s: server, then `calyx hook`, then Hermes.
    assert!(gate::HERMES_EXPIRY < crate::hook::HERMES_APPROVAL_TIMEOUT);
    assert!(crate::hook::HERMES_APPROVAL_TIMEOUT < Duration::from_secs(300));
    assert_eq!(
        crate::hook::approval_timeout(AgentKind::Hermes),
        crate::hook::HERMES_APPROVAL_TIMEOUT
    );
    assert_eq!(
        crate::hook::approval_timeout(AgentKind::Gemini),
        crate::hook::APPROVAL_TIMEOUT
    );
    // And the CLI's own limit is the one `calyx setup` really writes for each gate hook.
    for (kind, unit) in [
        (AgentKind::ClaudeCode, 1),
        (AgentKind::Codex, 1),
        (AgentKind::Copilot, 1),
        (AgentKind::Grok, 1),
        (AgentKind::Kimi, 1),
        (AgentKind::Cursor, 1),
        (AgentKind::Gemini, 1000),
    ] {
        let written = written_gate_timeouts(kind);
        assert!(!written.is_empty(), "{kind}: no gate hook written");
        for timeout in written {
            let cli = Duration::from_millis(timeout * 1000 / unit);
            assert!(crate::hook::APPROVAL_TIMEOUT < cli, "{kind}: {cli:?}");
        }
    }
}

/// The `timeout` of every `--approval` hook `calyx setup` writes for `kind` (in the CLI's unit),
/// read from the files it would write: the JSON object or TOML table around the command.
fn written_gate_timeouts(kind: AgentKind) -> Vec<u64> {
    let home = std::env::temp_dir().join(format!("calyx-timers-{kind}-{}", std::process::id()));
    let ctx = calyx_integrations::setup::Ctx {
        home: home.clone(),
        env: Default::default(),
        calyx_bin: "/c/calyx".into(),
        endpoint_file: home.join("ep.json"),
        port: 1,
        token: "x".into(),
        host_servers: true,
    };
    let plan = calyx_integrations::setup::plan(kind, &ctx, calyx_integrations::setup::Op::Install)
        .expect("plan");
    let mut found = Vec::new();
    for text in plan.changes.iter().filter_map(|c| c.after.as_deref()) {
        for (at, _) in text.match_indices("--approval") {
            let start = text[..at].rfind(['{', '[']).unwrap_or(0);
            let end = text[at..].find(['}', '[']).map_or(text.len(), |e| at + e);
            let around = &text[start..end];
            let digits: String = around
                .split("timeout")
                .nth(1)
                .unwrap_or("")
                .chars()
                .skip_while(|c| !c.is_ascii_digit())
                .take_while(char::is_ascii_digit)
                .collect();
            found.extend(digits.parse::<u64>().ok());
        }
    }
    found
}

#[tokio::test(start_paused = true)]
async fn hermes_expires_first_with_a_block_and_gemini_with_a_deny() {
    let mut q = ApprovalQueue::new(None);
    let (hermes, mut hermes_rx) = request(1, Schema::HermesBlockOnly, "terminal");
    let (gemini, mut gemini_rx) = request(2, Schema::GeminiDenyOnly, "run_shell_command");
    q.add(hermes, Instant::now());
    q.add(gemini, Instant::now());
    assert_eq!(q.next_expiry(), Some(Instant::now() + gate::HERMES_EXPIRY));
    tokio::time::advance(gate::HERMES_EXPIRY).await;
    assert_eq!(q.expire(Instant::now()), vec![1]);
    assert_eq!(
        hermes_rx.try_recv().ok(),
        Some(Some(
            json!({"decision": "block", "reason": answer::EXPIRED_REASON})
        ))
    );
    assert!(
        gemini_rx.try_recv().is_err(),
        "Gemini waits the full expiry"
    );
    tokio::time::advance(EXPIRY - gate::HERMES_EXPIRY).await;
    assert_eq!(q.expire(Instant::now()), vec![2]);
    assert_eq!(
        gemini_rx.try_recv().ok(),
        Some(Some(
            json!({"decision": "deny", "reason": answer::EXPIRED_REASON})
        ))
    );
}

#[test]
fn opencode_always_only_from_a_rule_the_human_set() {
    let now = Instant::now();
    let mut q = ApprovalQueue::new(None);
    let (a, mut a_rx) = request(1, Schema::OpenCode, "bash");
    let (b, mut b_rx) = request(1, Schema::OpenCode, "bash");
    let (ida, _) = q.add(a, now);
    let (idb, _) = q.add(b, now);
    // `y`: once.
    q.decide(ida, Decision::Allow, None);
    assert_eq!(a_rx.try_recv().ok(), Some(Some(json!({"reply": "once"}))));
    // `a`: always (OpenCode remembers too), and the rule answers the next one with once.
    q.decide(idb, Decision::Allow, Some(false));
    assert_eq!(b_rx.try_recv().ok(), Some(Some(json!({"reply": "always"}))));
    let (c, mut c_rx) = request(1, Schema::OpenCode, "bash");
    assert!(!q.add(c, now).1);
    assert_eq!(c_rx.try_recv().ok(), Some(Some(json!({"reply": "once"}))));
    // Silence and withdrawal: nothing (OpenCode's own dialog stays).
    let (d, mut d_rx) = request(2, Schema::OpenCode, "bash");
    q.add(d, now);
    drop(q);
    assert_eq!(d_rx.try_recv().ok(), Some(None));
}

#[test]
fn deny_only_clis_never_hear_allow() {
    let now = Instant::now();
    for schema in [
        Schema::GeminiDenyOnly,
        Schema::HermesBlockOnly,
        Schema::KimiDenyOnly,
    ] {
        let mut q = ApprovalQueue::new(None);
        let (a, mut a_rx) = request(1, schema, "terminal");
        let (b, mut b_rx) = request(1, schema, "terminal");
        let (ida, _) = q.add(a, now);
        let (idb, _) = q.add(b, now);
        // `y` steps aside: an empty answer, and the CLI's own rules decide.
        q.decide(ida, Decision::Allow, None);
        assert_eq!(a_rx.try_recv().ok(), Some(None));
        q.decide(
            idb,
            Decision::Deny {
                message: Some("no".into()),
            },
            None,
        );
        let denied = b_rx.try_recv().ok();
        assert!(
            matches!(&denied, Some(Some(v))
                if v["reason"] == "no"
                    || v["hookSpecificOutput"]["permissionDecisionReason"] == "no"),
            "{denied:?}"
        );
        assert_eq!(
            q.recent().next().map(|r| r.outcome.clone()).as_deref(),
            Some("step aside (the CLI decides)")
        );
    }
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
    assert_eq!(claude_rx.try_recv().ok(), Some(None));
    let pi_answer = pi_rx.try_recv().ok();
    assert_eq!(
        pi_answer,
        Some(Some(
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
    // Withdrawn: gone, answered with silence (Claude asks in its own prompt), and a late
    // decision does nothing.
    assert_eq!(q.withdraw(idc), Some(2));
    assert_eq!(q.decide(idc, Decision::Allow, None), None);
    assert!(c_rx.try_recv().is_ok_and(|r| r.is_none()));
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
    assert_eq!(a_rx.try_recv().ok(), Some(None));
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
    let schemas = Schema::ALL;
    for (order, schema) in orders
        .iter()
        .flat_map(|o| schemas.iter().map(move |s| (o.clone(), *s)))
    {
        let start = Instant::now();
        let mut q = ApprovalQueue::new(None);
        let (r, mut rx) = request(1, schema, "Bash");
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
        // Deny-only hooks never hear an allow at all (a human's allow is an empty answer).
        let want = allowed_first == Some(true) && schema.can_allow();
        assert_eq!(got_allow, want, "order {order:?} {schema:?}");
    }
}

#[test]
fn a_request_answered_in_the_cli_is_withdrawn_and_never_answered_twice() {
    use calyx_integrations::{EventKind, NormalizedEvent};
    let now = Instant::now();
    let mut q = ApprovalQueue::new(None);
    let (a, mut a_rx) = request(1, Schema::Claude, "Bash");
    let (b, mut b_rx) = request(2, Schema::Claude, "Bash");
    let (ida, _) = q.add(a, now);
    q.add(b, now);
    // Claude ran the call after the user said yes in its own dialog: PostToolUse, same input.
    let mut ran = NormalizedEvent::new(EventKind::PostToolUse, "PostToolUse");
    ran.tool_name = Some("Bash".into());
    ran.tool_input = Some(json!({"command": "echo hi"}));
    assert!(q.settle_from_event(1, AgentKind::ClaudeCode, &ran));
    assert_eq!(q.pending().len(), 1, "only pane 1's request");
    // Not decided by calyx: a hook that still listens gets silence (Claude's own prompt)...
    assert!(a_rx.try_recv().is_ok_and(|r| r.is_none()));
    // ...and a late decision finds nothing.
    assert_eq!(q.decide(ida, Decision::Allow, None), None);
    assert_eq!(
        q.recent().last().map(|r| (r.outcome.clone(), r.by)),
        Some((
            "answered in the CLI's own dialog".to_string(),
            DecidedBy::Withdrawn
        ))
    );
    // The other pane's request is untouched by pane 1's events.
    assert!(b_rx.try_recv().is_err());
    assert!(!q.settle_from_event(
        1,
        AgentKind::ClaudeCode,
        &NormalizedEvent::new(EventKind::Stop, "Stop")
    ));
}

#[test]
fn a_withdrawn_request_is_denied_where_silence_would_run_the_call() {
    // Grok and pi (DecisionFlat) and the deny gates of Gemini, Hermes and Kimi run a call on an
    // empty answer: a request calyx withdraws (a subagent's session ended, the pane closed) is
    // a deny for them, in their words; for the others it is their own prompt.
    for schema in [
        Schema::DecisionFlat,
        Schema::GeminiDenyOnly,
        Schema::HermesBlockOnly,
        Schema::KimiDenyOnly,
        Schema::Claude,
        Schema::CursorPermission,
    ] {
        let mut q = ApprovalQueue::new(None);
        let (r, mut rx) = request(1, schema, "Bash");
        let (id, _) = q.add(r, Instant::now());
        q.withdraw(id);
        let got = rx.try_recv().expect("answered");
        let text = match &got {
            Some(v) => v.to_string(),
            None => String::new(),
        };
        if schema == Schema::CursorPermission {
            assert_eq!(text, r#"{"permission":"ask"}"#);
        } else if schema.silence_falls_back() {
            assert!(text.is_empty(), "{schema:?}: {text}");
        } else {
            assert!(!is_allow(&got), "{schema:?}: {text}");
            assert!(text.contains("withdrew"), "{schema:?}: {text}");
        }
    }
}

#[test]
fn an_always_rule_covers_one_clis_tool_only() {
    let now = Instant::now();
    let mut q = ApprovalQueue::new(None);
    let (claude, mut claude_rx) = request(1, Schema::Claude, "Bash");
    let (codex_waiting, mut codex_rx) = request(1, Schema::Codex, "Bash");
    let (id, _) = q.add(claude, now);
    q.add(codex_waiting, now);
    // "a" on Claude's Bash in pane 1: Codex's Bash there still waits, and a later one asks.
    q.decide(id, Decision::Allow, Some(false));
    assert!(claude_rx.try_recv().ok().is_some_and(|r| is_allow(&r)));
    assert!(
        codex_rx.try_recv().is_err(),
        "Codex's request is not covered"
    );
    assert!(q.rule_allows(1, "claude-code", "Bash"));
    assert!(!q.rule_allows(1, "codex", "Bash"));
    assert!(!q.rule_allows(2, "claude-code", "Bash"), "another pane");
    let (later, _) = request(1, Schema::Codex, "Bash");
    assert!(
        q.add(later, now).1,
        "a later Codex Bash waits for the human"
    );
}

#[test]
fn only_a_decision_the_cli_received_counts_as_answered() {
    let now = Instant::now();
    let within = Duration::from_secs(10);
    let mut q = ApprovalQueue::new(None);
    // Stepping aside (Gemini's hook cannot allow): the CLI asks in its own dialog next.
    let (gemini, _rx) = request(1, Schema::GeminiDenyOnly, "run_shell_command");
    let (id, _) = q.add(gemini, now);
    q.decide(id, Decision::Allow, None);
    assert!(!q.answered_recently(1, "run_shell_command", within));
    // Withdrawn: not answered by calyx either.
    let (w, _rx) = request(1, Schema::Claude, "Bash");
    let (id, _) = q.add(w, now);
    q.withdraw(id);
    assert!(!q.answered_recently(1, "Bash", within));
    // A human's allow is.
    let (a, _rx) = request(1, Schema::Claude, "Bash");
    let (id, _) = q.add(a, now);
    q.decide(id, Decision::Allow, None);
    assert!(q.answered_recently(1, "Bash", within));
    assert!(!q.answered_recently(2, "Bash", within), "another pane");
}

/// The record redacts a request's detail as one text: a private key block over several lines
/// goes whole, not just its first line.
#[tokio::test]
async fn the_record_redacts_a_key_block_over_several_lines() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("approvals.jsonl");
    let mut q = ApprovalQueue::new(Some(path.clone()));
    let (mut new, _rx) = request(1, Schema::Claude, "Bash");
    let command = "cat > k <<EOF\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\nAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----\nEOF\ncurl -u admin:hunter2 https://x.test";
    new.summary = summarize("Bash", &json!({ "command": command }));
    q.add(new, Instant::now());
    let record = std::fs::read_to_string(&path).expect("record");
    for secret in [
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ",
        "AAAAAAAABAAAAMwAAAAtzc2gtZW",
        "hunter2",
    ] {
        assert!(!record.contains(secret), "{secret}: {record}");
    }
    assert!(record.contains("BEGIN OPENSSH PRIVATE KEY"), "{record}");
}
