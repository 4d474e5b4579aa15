//! End to end for agent state: captured Claude Code payloads played through real `calyx hook`
//! processes inside a real calyx pane; the row's state is asserted on the client's screen, and
//! the notification on the outer terminal.

use crate::common;

use common::{calyx_bin, wait_until, Env};

/// Writes the `payload` of a captured fixture to a file the pane's shell can feed to the hook.
/// The captures come from different sessions; one conversation needs one session id.
fn payload_file(env: &Env, fixture: &str) -> String {
    let path = format!("{}/fixtures/payloads/{fixture}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("fixture");
    let captured: serde_json::Value = serde_json::from_str(&text).expect("fixture json");
    let mut payload = captured["payload"].clone();
    payload["session_id"] = serde_json::Value::from("e2e-session-1");
    let out = env.path().join(fixture);
    std::fs::write(&out, payload.to_string()).expect("write payload");
    out.display().to_string()
}

fn play(env: &Env, pane: &str, fixture: &str) {
    let file = payload_file(env, fixture);
    let line = format!("{} hook claude-code < {file}", calyx_bin().display());
    env.ok(&["send-keys", "-t", pane, &line, "Enter"]);
}

fn agents_json(env: &Env) -> serde_json::Value {
    serde_json::from_str(&env.ok(&["agents", "--json"])).expect("agents json")
}

fn state_of(env: &Env) -> String {
    agents_json(env)["agents"][0]["state"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

#[test]
fn claude_payloads_move_the_row_on_screen_and_notify() {
    let env = Env::new();
    let mut c = env.client(&["new", "-s", "agents"], 40, 160);
    c.wait_for("$ ");
    let agent = env.panes()[0]["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    // A second pane takes focus, so the agent's pane is not the one the user looks at.
    env.ok(&["split", "-h", "-t", &agent, "--", "sh"]);
    c.prefix("a");
    c.wait_for("AGENTS");
    c.send("\x1b");

    play(&env, &agent, "claude-2.1.197-SessionStart.json");
    wait_until("row idle", || (state_of(&env) == "idle").then_some(()));
    c.wait_for("Claude Code");

    play(&env, &agent, "claude-2.1.197-UserPromptSubmit.json");
    wait_until("row working", || {
        (state_of(&env) == "working").then_some(())
    });
    c.wait_for("◐ working");
    c.wait_for("1 working");

    play(&env, &agent, "claude-2.1.197-PermissionRequest.json");
    wait_until("row blocked", || {
        (state_of(&env) == "blocked").then_some(())
    });
    c.wait_for("! blocked");
    c.wait_for("1 blocked");
    wait_until("desktop notification on the outer terminal", || {
        let raw = String::from_utf8_lossy(&c.raw()).to_string();
        (raw.contains("\x1b]9;") && raw.contains("\x1b]777;notify;")).then_some(())
    });

    play(&env, &agent, "claude-2.1.197-Stop.json");
    wait_until("row idle again", || {
        (state_of(&env) == "idle").then_some(())
    });
    c.wait_for("○ idle");

    play(&env, &agent, "claude-2.1.197-SessionEnd.json");
    wait_until("row done", || (state_of(&env) == "done").then_some(()));
    c.wait_for("✓ done");

    // explain names the rule and the events.
    let explain = env.ok(&["agents", "explain", &agent]);
    assert!(explain.contains("SessionEnd"), "{explain}");
    assert!(explain.contains("PermissionRequest"), "{explain}");

    // prefix b jumps to the agent waiting longest: none now.
    c.prefix("b");
    c.wait_for("no agent is waiting for you");
}

#[test]
fn jump_to_blocked_agent_and_pane_exit_settles_the_row() {
    let env = Env::new();
    let mut c = env.client(&["new", "-s", "jump"], 30, 120);
    c.wait_for("$ ");
    let agent = env.panes()[0]["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    env.ok(&["split", "-v", "-t", &agent, "--", "sh"]);
    play(&env, &agent, "claude-2.1.197-UserPromptSubmit.json");
    play(&env, &agent, "claude-2.1.197-PermissionRequest.json");
    wait_until("row blocked", || {
        (state_of(&env) == "blocked").then_some(())
    });
    let focused = |env: &Env| {
        env.panes()
            .iter()
            .find(|p| p["focused"] == true)
            .and_then(|p| p["id"].as_str().map(str::to_string))
            .unwrap_or_default()
    };
    assert_ne!(focused(&env), agent);
    c.prefix("b");
    wait_until("focus jumped to the blocked agent", || {
        (focused(&env) == agent).then_some(())
    });
    // The agent's process dies: the row never stays live-looking.
    env.ok(&["send-keys", "-t", &agent, "exit", "Enter"]);
    wait_until("row gone or done", || {
        let rows = agents_json(&env)["agents"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        rows.iter().all(|r| r["state"] == "done").then_some(())
    });
}

#[test]
fn events_for_unknown_panes_are_rejected() {
    let env = Env::new();
    env.ok(&["new", "-d", "-s", "x", "--", "sh"]);
    let endpoint = wait_until("endpoint file", || {
        std::fs::read_to_string(env.path().join("state/calyx/agent-endpoint.json")).ok()
    });
    let info: serde_json::Value = serde_json::from_str(&endpoint).expect("endpoint json");
    let port = info["port"].as_u64().unwrap_or(0);
    let token = info["token"].as_str().unwrap_or_default().to_string();
    use std::io::{Read, Write};
    let send = |surface: &str| -> String {
        let body = r#"{"hook_event_name":"Stop","session_id":"s"}"#;
        let mut s = std::net::TcpStream::connect(("127.0.0.1", port as u16)).expect("connect");
        let req = format!(
            "POST /agent-event HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\nX-Calyx-Surface-ID: {surface}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        s.write_all(req.as_bytes()).expect("write");
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        out
    };
    let answer = send("not-a-pane");
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("no calyx pane"), "{answer}");
    let surface = env.first_surface();
    let answer = send(&surface);
    assert!(answer.starts_with("HTTP/1.1 204"), "{answer}");
}

#[test]
fn prefix_b_and_the_sidebar_reach_an_agent_in_another_session() {
    let env = Env::new();
    let mut c = env.client(&["new", "-s", "here"], 30, 120);
    c.wait_for("$ ");
    env.ok(&["new", "-d", "-s", "there"]);
    let agent = wait_until("the pane of session there", || {
        env.panes()
            .into_iter()
            .find(|p| p["session"] == "there")
            .and_then(|p| p["id"].as_str().map(str::to_string))
    });
    play(&env, &agent, "claude-2.1.197-UserPromptSubmit.json");
    play(&env, &agent, "claude-2.1.197-PermissionRequest.json");
    wait_until("row blocked", || {
        (state_of(&env) == "blocked").then_some(())
    });
    // prefix b: the client switches to the agent's session (tmux's switch-client).
    c.prefix("b");
    c.wait_for("[there]");

    // Back home by the sidebar: the agent's row there, Enter shows its session again.
    c.prefix("d");
    c.wait_exit();
    let mut c = env.client(&["attach", "-t", "here"], 30, 120);
    c.wait_for("[here]");
    c.prefix("a");
    c.wait_for("AGENTS");
    c.send("\r");
    c.wait_for("[there]");
}
