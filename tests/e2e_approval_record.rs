//! End to end: what approval requests do to agent rows (blocked while pending, working after
//! the decision, the sidebar naming who waits) and what `approvals.jsonl` records (a request
//! line and a decision line each, who decided, secrets redacted).

use crate::common;

use std::process::Command;

use common::gates::{
    agent_row, approvals_log, claude_bash, fixture_payload, gate, pane_ids, payload_file,
    side_by_side, wait_agent_state, wait_pending, CLAUDE_ALLOW,
};
use common::{calyx_bin, wait_until, Env};
use serde_json::Value;

/// Claude Code's Bash PermissionRequest from the conversation `session`.
fn claude_bash_in(session: &str, command: &str) -> Value {
    let mut p = claude_bash(command);
    p["session_id"] = Value::from(session);
    p
}

#[test]
fn a_pending_request_blocks_its_agent_and_the_decision_sets_it_working() {
    let (env, mut c, ids) = side_by_side(2, 160);
    let (asking, busy) = (ids[0].clone(), ids[1].clone());
    // Another agent, working, that never waits on approval.
    let mut prompt = fixture_payload("claude-2.1.197-UserPromptSubmit.json");
    prompt["session_id"] = Value::from("busy-agent");
    let prompt = payload_file(&env, "prompt.json", &prompt);
    env.ok(&[
        "send-keys",
        "-t",
        &busy,
        &format!("{} hook claude-code < {prompt}", calyx_bin().display()),
        "Enter",
    ]);
    wait_agent_state(&env, &busy, "working");
    c.prefix("a");
    c.wait_for("AGENTS");
    c.send("\x1b");

    let p = payload_file(&env, "p.json", &claude_bash_in("asking-agent", "ls"));
    let g = gate(&env, &asking, "claude-code", &p, "first");
    wait_agent_state(&env, &asking, "blocked");
    let screen = c.wait_screen("the sidebar and status line say who waits", |s| {
        s.contains("Claude Code approval: Bash") && s.contains("1 blocked")
    });
    assert_eq!(
        screen.matches("approval: ").count(),
        1,
        "only the asking agent waits:\n{screen}"
    );
    c.answer("y");
    assert_eq!(g.output(&env), CLAUDE_ALLOW);
    wait_agent_state(&env, &asking, "working");
    c.wait_screen("nobody waits", |s| !s.contains("approval: "));
    assert_eq!(
        agent_row(&env, &busy).map(|r| r["state"].clone()),
        Some(Value::from("working"))
    );

    // A request a rule answers at once never leaves the agent blocked.
    let g = gate(&env, &asking, "claude-code", &p, "always");
    c.wait_for("Claude Code approval: Bash");
    c.answer("a");
    assert_eq!(g.output(&env), CLAUDE_ALLOW);
    wait_agent_state(&env, &asking, "working");
    let g = gate(&env, &asking, "claude-code", &p, "by-rule");
    assert_eq!(g.output(&env), CLAUDE_ALLOW);
    assert_eq!(
        agent_row(&env, &asking).map(|r| r["state"].clone()),
        Some(Value::from("working")),
        "answered by the rule"
    );
}

#[test]
fn capital_a_also_answers_the_other_pending_request_and_both_agents_work_on() {
    let (env, mut c, ids) = side_by_side(2, 160);
    let (first, second) = (ids[0].clone(), ids[1].clone());
    let p1 = payload_file(&env, "p1.json", &claude_bash_in("agent-1", "ls"));
    let p2 = payload_file(&env, "p2.json", &claude_bash_in("agent-2", "ls"));
    let g1 = gate(&env, &first, "claude-code", &p1, "one");
    wait_pending(&env, 1);
    let g2 = gate(&env, &second, "claude-code", &p2, "two");
    wait_pending(&env, 2);
    wait_agent_state(&env, &first, "blocked");
    wait_agent_state(&env, &second, "blocked");
    c.wait_for(" 1 of 2 ");
    c.answer("A");
    assert_eq!(g1.output(&env), CLAUDE_ALLOW);
    assert_eq!(g2.output(&env), CLAUDE_ALLOW);
    wait_agent_state(&env, &first, "working");
    wait_agent_state(&env, &second, "working");
    let by: Vec<String> = approvals_log(&env)
        .iter()
        .filter_map(|l| l["by"].as_str().map(str::to_string))
        .collect();
    assert_eq!(by, ["human", "rule"]);
}

/// The record lines of each request id, in order.
fn by_request(log: &[Value]) -> std::collections::BTreeMap<u64, Vec<Value>> {
    let mut out = std::collections::BTreeMap::<u64, Vec<Value>>::new();
    for line in log {
        if let Some(id) = line["id"].as_u64() {
            out.entry(id).or_default().push(line.clone());
        }
    }
    out
}

/// The secrets the commands below carry; none may reach the record.
const SECRETS: [&str; 4] = ["sk-abc123", "hunter2", "xyz", "hunter3"];

#[test]
fn the_record_has_a_request_and_a_decision_line_each_with_secrets_redacted() {
    let env = Env::new();
    let mut c = env.client(&["new", "-s", "gates"], 40, 160);
    c.wait_for("$ ");
    let pane = pane_ids(&env)[0].clone();
    let curl = payload_file(
        &env,
        "curl.json",
        &claude_bash("curl -H 'Authorization: Bearer sk-abc123' https://api.example.com/v1"),
    );
    let deploy = payload_file(
        &env,
        "deploy.json",
        &claude_bash("PASSWORD=hunter2 ./deploy --token xyz"),
    );
    // 1: allowed by the human.
    let g = gate(&env, &pane, "claude-code", &curl, "curl");
    c.wait_for("wants Bash");
    c.answer("y");
    assert_eq!(g.output(&env), CLAUDE_ALLOW);
    c.wait_panel_gone();
    // 2: denied by the human with a message that carries a secret too.
    let g = gate(&env, &pane, "claude-code", &deploy, "deploy-denied");
    c.wait_for("wants Bash");
    c.answer("m");
    c.wait_for("deny with message");
    c.send("not with --password hunter3\r");
    assert!(g.output(&env).contains("\"behavior\":\"deny\""));
    c.wait_panel_gone();
    // 3: withdrawn: the hook dies while waiting.
    let line = format!(
        "{} hook claude-code --approval < {deploy}",
        calyx_bin().display()
    );
    env.ok(&["send-keys", "-t", &pane, "clear", "Enter"]);
    env.ok(&["send-keys", "-t", &pane, &line, "Enter"]);
    wait_pending(&env, 1);
    env.ok(&["send-keys", "-t", &pane, "C-c"]);
    wait_pending(&env, 0);
    c.wait_panel_gone();
    // 4: always allowed by the human, 5: then by the rule.
    let g = gate(&env, &pane, "claude-code", &deploy, "deploy-always");
    c.wait_for("wants Bash");
    c.answer("a");
    assert_eq!(g.output(&env), CLAUDE_ALLOW);
    let g = gate(&env, &pane, "claude-code", &deploy, "deploy-rule");
    assert_eq!(g.output(&env), CLAUDE_ALLOW);

    let log = wait_until("five decisions recorded", || {
        let log = approvals_log(&env);
        (log.iter().filter(|l| !l["by"].is_null()).count() == 5).then_some(log)
    });
    let requests = by_request(&log);
    assert_eq!(requests.len(), 5, "{log:?}");
    let decided: Vec<(String, String)> = requests
        .values()
        .map(|lines| {
            assert_eq!(lines.len(), 2, "a request and a decision line: {lines:?}");
            assert_eq!(lines[0]["event"], "requested");
            assert!(lines[0]["by"].is_null());
            for l in lines {
                assert_eq!(l["pane"], pane.as_str());
                assert_eq!(l["cli"], "claude-code");
                assert_eq!(l["tool"], "Bash");
            }
            (
                lines[1]["by"].as_str().unwrap_or("").to_string(),
                lines[1]["event"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let by: Vec<&str> = decided.iter().map(|(by, _)| by.as_str()).collect();
    assert_eq!(by, ["human", "human", "withdrawn", "human", "rule"]);
    assert_eq!(decided[0].1, "allow");
    assert_eq!(decided[1].1, "deny: not with --password [REDACTED]");
    assert_eq!(decided[3].1, "allow (always)");
    assert_eq!(decided[4].1, "allow");
    // What was asked stays readable, without the secrets.
    let first = &requests.values().next().expect("request 1")[0];
    assert_eq!(
        first["summary"],
        "run: curl -H 'Authorization: Bearer [REDACTED]' https://api.example.com/v1"
    );
    let second = &requests.values().nth(1).expect("request 2")[0];
    assert_eq!(
        second["summary"],
        "run: PASSWORD=[REDACTED] ./deploy --token [REDACTED]"
    );
    assert_no_secrets(&env);
    // `calyx approvals` shows the same redacted summaries.
    let listed = env.ok(&["approvals", "--json"]);
    for secret in SECRETS {
        assert!(!listed.contains(secret), "{secret} in {listed}");
    }
}

fn assert_no_secrets(env: &Env) {
    let text = std::fs::read_to_string(env.path().join("state/calyx/approvals.jsonl"))
        .expect("approvals.jsonl");
    for secret in SECRETS {
        assert!(!text.contains(secret), "{secret} recorded:\n{text}");
    }
}

#[test]
fn an_expired_request_is_recorded_as_expired_with_secrets_redacted() {
    let env = Env::new();
    let mut cmd = Command::new(calyx_bin());
    cmd.args(["new", "-d", "-s", "gates"]).env_clear();
    for (k, v) in env.vars() {
        cmd.env(k, v);
    }
    cmd.env("CALYX_APPROVAL_EXPIRY_SECS", "1");
    assert!(cmd.status().expect("calyx new").success());
    let pane = pane_ids(&env)[0].clone();
    let deploy = payload_file(
        &env,
        "deploy.json",
        &claude_bash("PASSWORD=hunter2 ./deploy --token xyz"),
    );
    let g = gate(&env, &pane, "claude-code", &deploy, "expires");
    assert_eq!(g.output(&env), "");
    let log = approvals_log(&env);
    let lines: Vec<&Value> = log.iter().collect();
    assert_eq!(lines.len(), 2, "{log:?}");
    assert_eq!(lines[0]["event"], "requested");
    assert_eq!(lines[1]["by"], "expiry");
    assert_eq!(lines[1]["event"], "expired (the CLI asks itself)");
    assert_no_secrets(&env);
}
