//! `calyx server-upgrade` (issue 18 §3): the server replaces its binary in place and every
//! pane keeps running: the same program (same pid) still echoes, its screen and scrollback
//! capture the same, an attached client keeps working without being restarted, and a binary
//! that cannot take over leaves the old server serving.

use serde_json::Value;

use crate::common::gates::fixture_payload;
use crate::common::{calyx_bin, wait_until, Env};

/// The pane's program, as `list-panes` reports it.
fn pane_pid(env: &Env) -> u64 {
    env.panes()[0]["pid"].as_u64().expect("pane pid")
}

/// The pid the pane's `echo $$` printed, once the server and the pane are up (tolerating the
/// moments before the client started the server).
fn echoed_pid(env: &Env) -> u64 {
    wait_until("the pane's pid", || {
        let text = String::from_utf8_lossy(&env.run(&["capture", "-t", "up"]).stdout).to_string();
        text.trim().parse::<u64>().ok()
    })
}

/// `capture --ansi --scrollback` of the session's pane.
fn capture(env: &Env) -> String {
    env.ok(&["capture", "-t", "up", "--ansi", "--scrollback"])
}

#[test]
fn an_upgrade_keeps_the_program_its_screen_and_the_attached_client() {
    let env = Env::new();
    let mut client = env.client(
        &["new", "-s", "up", "--", "sh", "-c", "echo $$; exec cat"],
        24,
        80,
    );
    let pid = echoed_pid(&env);
    assert_eq!(pane_pid(&env), pid);
    // An agent row from a real hook payload, as Claude Code sends it at session start.
    let surface = env.first_surface();
    let mut payload = fixture_payload("claude-2.1.197-SessionStart.json");
    payload["session_id"] = Value::from("5e55-1d");
    env.hook_event(&surface, "claude-code", &payload);
    client.send("before upgrade\r");
    env.wait_capture("up", "before upgrade\nbefore upgrade");
    let before = capture(&env);
    let server = env.server_pid();
    let endpoint = crate::common::mcp::endpoint(&env);

    let said = env.ok(&[
        "server-upgrade",
        "--binary",
        &calyx_bin().display().to_string(),
    ]);
    assert!(said.contains("upgraded"), "{said}");

    assert_eq!(
        env.server_pid(),
        server,
        "the server kept its pid (exec in place)"
    );
    assert_eq!(
        pane_pid(&env),
        pid,
        "the pane's program is the same process"
    );
    assert_eq!(
        capture(&env),
        before,
        "screen and scrollback capture the same"
    );
    let agents: Value = serde_json::from_str(&env.ok(&["agents", "--json"])).expect("json");
    assert!(
        agents.to_string().contains("5e55-1d"),
        "the agent row was carried over: {agents}"
    );
    let log = std::fs::read_to_string(env.path().join("state/calyx/server.log")).expect("log");
    assert!(log.contains("took over 1 sessions and 1 panes"), "{log}");
    // The agent endpoint kept its listening socket and token: agents configured before the
    // upgrade reach it as they did.
    let after = crate::common::mcp::endpoint(&env);
    assert_eq!((after.port, &after.token), (endpoint.port, &endpoint.token));
    let (head, answer) = crate::common::mcp::post(&endpoint, &[], crate::common::mcp::INITIALIZE);
    assert!(
        head.contains(" 200 "),
        "the old port and token still serve: {head}"
    );
    assert!(answer["result"]["serverInfo"].is_object(), "{answer}");

    // The client reconnected by itself: what it types reaches the same program, and it draws.
    client.send("after upgrade\r");
    env.wait_capture("up", "after upgrade\nafter upgrade");
    client.wait_for("after upgrade");
    assert!(!client.exited(), "the client was not restarted");
}

#[test]
fn a_binary_that_exits_at_once_leaves_the_old_server_serving() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    env.ok(&[
        "new",
        "-d",
        "-s",
        "up",
        "--",
        "sh",
        "-c",
        "echo $$; exec cat",
    ]);
    let pid = echoed_pid(&env);
    let server = env.server_pid();
    let broken = env.path().join("calyx-broken");
    std::fs::write(&broken, "#!/bin/sh\nexit 0\n").expect("write");
    std::fs::set_permissions(&broken, std::fs::Permissions::from_mode(0o755)).expect("chmod");

    let out = env.run(&["server-upgrade", "--binary", &broken.display().to_string()]);
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("not a calyx binary"), "{said}");
    assert!(said.contains("keeps running"), "{said}");

    assert_eq!(env.server_pid(), server);
    assert_eq!(pane_pid(&env), pid);
    env.ok(&["send-keys", "-t", "up", "still here", "Enter"]);
    env.wait_capture("up", "still here\nstill here");
}

/// The oldest pending approval's id, once there is one.
fn first_pending(env: &Env) -> String {
    wait_until("a pending request", || {
        let v: Value = serde_json::from_str(&env.ok(&["approvals", "--json", "--pending"])).ok()?;
        v["pending"][0]["id"].as_u64().map(|id| id.to_string())
    })
}

#[test]
fn a_hook_waiting_for_a_human_before_the_upgrade_gets_the_answer_given_after_it() {
    let env = Env::new();
    env.ok(&["new", "-d", "-s", "up", "--", "sh"]);
    let surface = env.first_surface();
    let payload = fixture_payload("claude-2.1.197-PermissionRequest.json");
    let hook = env.hook_process(
        &surface,
        &["claude-code", "--approval"],
        &payload,
        std::process::Stdio::piped(),
    );
    first_pending(&env);

    env.ok(&[
        "server-upgrade",
        "--binary",
        &calyx_bin().display().to_string(),
    ]);

    // The hook asked the new server again; the human answers there.
    let id = first_pending(&env);
    env.ok(&["approve", &id]);
    let out = hook.wait_with_output().expect("hook output");
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        r#"{"hookSpecificOutput":{"decision":{"behavior":"allow"},"hookEventName":"PermissionRequest"}}"#
    );
}

#[test]
fn the_prompt_upgrades_and_its_own_client_comes_back() {
    let env = Env::new();
    let mut client = env.client(
        &["new", "-s", "up", "--", "sh", "-c", "echo $$; exec cat"],
        24,
        100,
    );
    let pid = echoed_pid(&env);
    let server = env.server_pid();
    let log = env.path().join("state/calyx/server.log");
    client.prefix(":");
    client.send(format!(
        "server-upgrade --binary {}\r",
        calyx_bin().display()
    ));
    wait_until("the new server took over", || {
        let text = std::fs::read_to_string(&log).ok()?;
        text.contains("took over 1 sessions and 1 panes")
            .then_some(())
    });
    assert_eq!(env.server_pid(), server);
    assert_eq!(pane_pid(&env), pid);
    client.send("typed after\r");
    env.wait_capture("up", "typed after\ntyped after");
    client.wait_for("typed after");
    assert!(!client.exited());
}

#[test]
fn an_always_rule_made_before_the_upgrade_still_answers_after_it() {
    use crate::common::gates::{claude_bash, gate, payload_file, side_by_side, CLAUDE_ALLOW};
    let ask_in = |env: &Env, pane: &str, command: &str, name: &str| {
        let payload = payload_file(env, &format!("{name}.json"), &claude_bash(command));
        gate(env, pane, "claude-code", &payload, name)
    };
    let (env, mut c, panes) = side_by_side(1, 150);
    let pane = &panes[0];
    let g = ask_in(&env, pane, "rm -rf /tmp/x", "first");
    c.wait_for("wants Bash");
    c.answer("a");
    assert_eq!(g.output(&env), CLAUDE_ALLOW);
    c.wait_panel_gone();

    env.ok(&[
        "server-upgrade",
        "--binary",
        &calyx_bin().display().to_string(),
    ]);

    let rules = env.ok(&["approvals", "--rules"]);
    assert!(rules.contains("exactly `rm -rf /tmp/x`"), "{rules}");
    let again = ask_in(&env, pane, "rm -rf /tmp/x", "again");
    assert_eq!(
        again.output(&env),
        CLAUDE_ALLOW,
        "allowed by the carried rule"
    );
}

#[test]
fn a_client_that_forwards_keys_itself_reconnects_too() {
    let env = Env::new();
    env.write_config("direct_terminal = false\n");
    let mut client = env.client(
        &["new", "-s", "up", "--", "sh", "-c", "echo $$; exec cat"],
        24,
        80,
    );
    let pid = echoed_pid(&env);
    client.send("one\r");
    client.wait_for("one");
    env.ok(&[
        "server-upgrade",
        "--binary",
        &calyx_bin().display().to_string(),
    ]);
    assert_eq!(pane_pid(&env), pid);
    // Typed at once: keys that meet the closed socket wait for the new connection.
    client.send("three\r");
    env.wait_capture("up", "three\nthree");
    client.send("two\r");
    env.wait_capture("up", "two\ntwo");
    client.wait_for("two");
    assert!(!client.exited());
}
