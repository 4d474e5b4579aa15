//! Shell integration end to end: real bash, zsh and fish panes in a real calyx server report
//! their commands (OSC 133 / OSC 7), and the command history tools and `pane_run` with await
//! answer from them over `/mcp`.
//!
//! A shell that is not installed fails the test in CI (which installs all three) and is skipped
//! with a printed reason elsewhere.

mod common;

use std::process::Command;
use std::time::Duration;

use common::mcp::McpSession;
use common::{wait_until, wait_until_within, Env};
use serde_json::{json, Value};

/// Whether `shell` can run here; panics in CI when it cannot.
fn available(shell: &str) -> bool {
    let found = Command::new(shell)
        .args(["-c", "exit 0"])
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "{shell} is not installed, and CI must run this test (.ci/run installs it)"
        );
        eprintln!("skipping: {shell} is not installed (CI installs it)");
    }
    found
}

/// The finished commands of `pane` once there are at least `n`.
fn finished(mcp: &McpSession, pane: &str, n: usize) -> Vec<Value> {
    wait_until_within(
        &format!("{n} finished commands in {pane}"),
        Duration::from_secs(30),
        || {
            let listed = mcp.call(
                "terminal_list_commands",
                json!({"pane": pane, "state": "finished", "limit": 200}),
            );
            let commands = listed["structuredContent"]["commands"].as_array()?.clone();
            (commands.len() >= n).then_some(commands)
        },
    )
}

/// Types `line` literally (fish's `end` is not the End key) and presses Enter.
fn send(env: &Env, line: &str) {
    env.ok(&["send-keys", "-t", "sh", "-l", line]);
    env.ok(&["send-keys", "-t", "sh", "Enter"]);
}

/// Runs the commands in a `shell` pane and checks what the history recorded.
fn records_commands(shell: &str, multiline: &[&str]) {
    if !available(shell) {
        return;
    }
    let env = Env::new();
    let mut client = env.client(&["new", "-s", "sh", "--", shell], 40, 150);
    let panes = wait_until("the pane", || {
        let out = env.run(&["list-panes", "--json"]);
        let panes: Vec<Value> = serde_json::from_slice(&out.stdout).ok()?;
        (out.status.success() && !panes.is_empty()).then_some(panes)
    });
    let surface = panes[0]["surface_id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let mcp = McpSession::open(&env, &surface);
    // The first prompt: the shell reports itself before any command runs.
    wait_until("shell integration active", || {
        let listed = mcp.call("terminal_list_commands", json!({"pane": "%1"}));
        (listed["structuredContent"]["shell_integration"] == true).then_some(())
    });

    send(&env, "false");
    finished(&mcp, "%1", 1);
    send(&env, "echo hi");
    finished(&mcp, "%1", 2);
    for line in multiline {
        send(&env, line);
    }
    finished(&mcp, "%1", 3);
    send(&env, "seq 1 150000");
    finished(&mcp, "%1", 4);
    send(&env, "echo --password x");
    let commands = finished(&mcp, "%1", 5);

    let by = |text: &str| {
        commands
            .iter()
            .find(|c| c["command"].as_str().is_some_and(|c| c.starts_with(text)))
            .cloned()
            .unwrap_or_else(|| panic!("no {text:?} in {commands:#?}"))
    };
    let output = |c: &Value| {
        let read = mcp.call("terminal_read_output", json!({"command_id": c["id"]}));
        read["structuredContent"]["output"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let f = by("false");
    assert_eq!(f["exit_code"], 1, "{f}");
    assert_eq!(f["id"], "%1:1");
    assert_eq!(output(&f), "");
    let hi = by("echo hi");
    assert_eq!(hi["exit_code"], 0);
    assert_eq!(output(&hi), "hi\n");
    assert!(hi["cwd"].as_str().is_some_and(|d| !d.is_empty()), "{hi}");
    let multi = by("if true");
    assert!(
        multi["command"]
            .as_str()
            .unwrap_or_default()
            .contains("echo multi"),
        "{multi}"
    );
    assert_eq!(multi["exit_code"], 0);
    assert_eq!(output(&multi), "multi\n");
    let big = by("seq 1 150000");
    assert_eq!(big["exit_code"], 0);
    assert!(
        big["output_bytes"].as_u64().unwrap_or(0) >= 1_000_000,
        "{big}"
    );
    assert_eq!(big["output_truncated"], true);
    let text = output(&big);
    assert!(
        text.len() <= 256 * 1024 && text.len() > 200 * 1024,
        "{}",
        text.len()
    );
    assert!(
        text.ends_with("149999\n150000\n"),
        "{}",
        &text[text.len().saturating_sub(40)..]
    );
    let secret = by("echo --password");
    assert_eq!(secret["command"], "echo --password [REDACTED]");
    assert_eq!(output(&secret), "--password [REDACTED]\n");

    // terminal_await_command: the next command by its id (before it starts), and the running
    // one without an id; both wake when the shell reports the end.
    let next = {
        let mcp = McpSession::open(&env, &surface);
        std::thread::spawn(move || {
            mcp.call(
                "terminal_await_command",
                json!({"pane": "%1", "command_id": "%1:6", "timeout_ms": 20000}),
            )
        })
    };
    send(&env, "sleep 1; echo awaited");
    wait_until("the sleep to be running", || {
        let listed = mcp.call(
            "terminal_list_commands",
            json!({"pane": "%1", "state": "running"}),
        );
        (listed["structuredContent"]["matched"] == 1).then_some(())
    });
    let running = mcp.call(
        "terminal_await_command",
        json!({"pane": "%1", "timeout_ms": 20000}),
    );
    for awaited in [next.join().expect("await thread"), running] {
        let awaited = &awaited["structuredContent"];
        assert_eq!(awaited["status"], "finished", "{awaited}");
        assert_eq!(awaited["command_id"], "%1:6");
        assert_eq!(awaited["output"], "awaited\n");
        assert_eq!(awaited["command"]["exit_code"], 0);
    }

    // pane_run with await: approved by the human, then its exit code and output.
    let runner = {
        let mcp = McpSession::open(&env, &surface);
        std::thread::spawn(move || {
            mcp.call(
                "pane_run",
                json!({"pane": "%1", "command": "sh -c 'echo ran; exit 7'", "await": true, "timeout_ms": 20000}),
            )
        })
    };
    client.wait_for("exit 7");
    client.send("y");
    let ran = runner.join().expect("runner");
    let ran = &ran["structuredContent"];
    assert_eq!(ran["status"], "finished", "{ran}");
    assert_eq!(ran["exit_code"], 7, "{ran}");
    assert_eq!(ran["output"], "ran\n");
}

#[test]
fn bash_records_commands() {
    records_commands("bash", &["if true; then", "echo multi", "fi"]);
}

#[test]
fn zsh_records_commands() {
    records_commands("zsh", &["if true; then", "echo multi", "fi"]);
}

#[test]
fn fish_records_commands() {
    records_commands("fish", &["if true", "echo multi", "end"]);
}
