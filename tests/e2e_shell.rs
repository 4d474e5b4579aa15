//! Shell integration end to end: real bash, zsh and fish panes in a real calyx server report
//! their commands (OSC 133 / OSC 7), and the command history tools and `pane_run` with await
//! answer from them over `/mcp`.
//!
//! A shell that is not installed fails the test in CI (`CI` or `CALYX_REQUIRE_SHELLS` set;
//! .ci/run installs all three) and is skipped with a printed reason elsewhere.

use crate::common;

use std::process::Command;
use std::time::Duration;

use common::mcp::McpSession;
use common::{wait_until, wait_until_within, Client, Env};
use serde_json::{json, Value};

/// Whether `shell` can run here; panics in CI when it cannot.
fn available(shell: &str) -> bool {
    let found = Command::new(shell)
        .args(["-c", "exit 0"])
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none() && std::env::var_os("CALYX_REQUIRE_SHELLS").is_none(),
            "{shell} is not installed, and CI must run this test (.ci/run installs it)"
        );
        eprintln!("skipping: {shell} is not installed (CI installs it)");
    }
    found
}

/// A session `sh` whose only pane (`%1`) runs `shell`, with an attached client and an MCP
/// session bound to the pane.
struct ShellPane {
    env: Env,
    client: Client,
    mcp: McpSession,
    surface: String,
    /// Commands finished so far.
    done: usize,
}

impl ShellPane {
    /// Starts `shell` after `setup` prepared the (empty) home directory; waits for its first
    /// prompt when `integrated`.
    fn start(shell: &str, setup: impl FnOnce(&Env), integrated: bool) -> Self {
        let env = Env::new();
        setup(&env);
        let client = env.client(&["new", "-s", "sh", "--", shell], 40, 150);
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
        if integrated {
            // The first prompt: the shell reports itself before any command runs.
            wait_until("shell integration active", || {
                let listed = mcp.call("terminal_list_commands", json!({"pane": "%1"}));
                (listed["structuredContent"]["shell_integration"] == true).then_some(())
            });
        }
        Self {
            env,
            client,
            mcp,
            surface,
            done: 0,
        }
    }

    /// Types `line` literally (fish's `end` is not the End key) and presses Enter.
    fn send(&self, line: &str) {
        self.env.ok(&["send-keys", "-t", "sh", "-l", line]);
        self.env.ok(&["send-keys", "-t", "sh", "Enter"]);
    }

    /// Types the lines of one command, waits for it to finish; returns its record and output.
    fn run(&mut self, lines: &[&str]) -> (Value, String) {
        for line in lines {
            self.send(line);
        }
        self.done += 1;
        let n = self.done;
        let record = wait_until_within(
            &format!("command {n} ({lines:?}) to finish"),
            Duration::from_secs(30),
            || {
                let listed = self.mcp.call(
                    "terminal_list_commands",
                    json!({"pane": "%1", "state": "finished", "limit": 200}),
                );
                let commands = listed["structuredContent"]["commands"].as_array()?.clone();
                commands.get(n - 1).cloned()
            },
        );
        let read = self
            .mcp
            .call("terminal_read_output", json!({"command_id": record["id"]}));
        let output = read["structuredContent"]["output"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        (record, output)
    }
}

/// Runs the commands in a `shell` pane and checks what the history recorded.
fn records_commands(shell: &str, multiline: &[&str]) {
    if !available(shell) {
        return;
    }
    let mut pane = ShellPane::start(shell, |_| {}, true);

    let (f, out) = pane.run(&["false"]);
    assert_eq!(
        (f["id"].clone(), f["exit_code"].clone()),
        (json!("%1:1"), json!(1)),
        "{f}"
    );
    assert_eq!(f["command"], "false");
    assert_eq!(out, "");

    let (hi, out) = pane.run(&["echo hi"]);
    assert_eq!(hi["exit_code"], 0);
    assert_eq!(out, "hi\n");
    assert!(
        hi["cwd"].as_str().is_some_and(|d| d.contains("calyx-test")),
        "{hi}"
    );

    let (multi, out) = pane.run(multiline);
    let text = multi["command"].as_str().unwrap_or_default();
    assert!(
        text.starts_with("if true") && text.contains("echo multi"),
        "{multi}"
    );
    assert_eq!(multi["exit_code"], 0);
    assert_eq!(out, "multi\n");

    let (big, out) = pane.run(&["seq 1 150000"]);
    assert_eq!(big["exit_code"], 0);
    assert!(
        big["output_bytes"].as_u64().unwrap_or(0) >= 1_000_000,
        "{big}"
    );
    assert_eq!(big["output_truncated"], true);
    assert!(
        out.len() <= 256 * 1024 && out.len() > 200 * 1024,
        "{}",
        out.len()
    );
    assert!(
        out.ends_with("149999\n150000\n"),
        "{}",
        &out[out.len().saturating_sub(40)..]
    );

    let (secret, out) = pane.run(&["echo --password x"]);
    assert_eq!(secret["command"], "echo --password [REDACTED]");
    assert_eq!(out, "--password [REDACTED]\n");

    // terminal_await_command: the next command by its id (before it starts), and the running
    // one without an id; both wake when the shell reports the end.
    let next = {
        let mcp = McpSession::open(&pane.env, &pane.surface);
        std::thread::spawn(move || {
            mcp.call(
                "terminal_await_command",
                json!({"pane": "%1", "command_id": "%1:6", "timeout_ms": 20000}),
            )
        })
    };
    pane.send("sleep 1; echo awaited");
    wait_until("the sleep to be running", || {
        let listed = pane.mcp.call(
            "terminal_list_commands",
            json!({"pane": "%1", "state": "running"}),
        );
        (listed["structuredContent"]["matched"] == 1).then_some(())
    });
    let running = pane.mcp.call(
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
        let mcp = McpSession::open(&pane.env, &pane.surface);
        std::thread::spawn(move || {
            mcp.call(
                "pane_run",
                json!({"pane": "%1", "command": "sh -c 'echo ran; exit 7'", "await": true, "timeout_ms": 20000}),
            )
        })
    };
    pane.client.wait_for("exit 7");
    pane.client.send("y");
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

#[test]
fn bash_keeps_the_users_bashrc_prompt_command_and_debug_trap() {
    if !available("bash") {
        return;
    }
    let rc = "alias hi='echo from-alias'\nPROMPT_COMMAND='user_prompts=$((user_prompts+1))'\ntrap 'user_debug=yes' DEBUG\n";
    let mut pane = ShellPane::start(
        "bash",
        |env| std::fs::write(env.path().join("home/.bashrc"), rc).expect("write .bashrc"),
        true,
    );
    assert_eq!(pane.run(&["hi"]).1, "from-alias\n");
    let (_, out) = pane.run(&["echo \"$user_debug $((user_prompts > 1))\""]);
    assert_eq!(out, "yes 1\n");
}

#[test]
fn zsh_keeps_the_users_zshrc_hooks_and_zdotdir() {
    if !available("zsh") {
        return;
    }
    let rc = "alias hi='echo from-alias'\nuser_precmd() { user_prompts=$((user_prompts+1)) }\nprecmd_functions+=(user_precmd)\n";
    let mut pane = ShellPane::start(
        "zsh",
        |env| std::fs::write(env.path().join("home/.zshrc"), rc).expect("write .zshrc"),
        true,
    );
    assert_eq!(pane.run(&["hi"]).1, "from-alias\n");
    let (_, out) = pane.run(&["echo ${ZDOTDIR-unset} $((user_prompts > 1))"]);
    assert_eq!(out, "unset 1\n");
}

#[test]
fn switched_off_panes_report_no_commands_and_pane_run_says_so() {
    if !available("bash") {
        return;
    }
    let pane = ShellPane::start(
        "bash",
        |env| {
            env.write_config("shell_integration = false\n");
        },
        false,
    );
    let listed = pane
        .mcp
        .call("terminal_list_commands", json!({"pane": "%1"}));
    assert_eq!(
        listed["structuredContent"]["shell_integration"], false,
        "{listed}"
    );
    let waited = pane.mcp.call(
        "terminal_await_command",
        json!({"pane": "%1", "timeout_ms": 100}),
    );
    assert_eq!(waited["isError"], true, "{waited}");
    assert!(waited.to_string().contains("shell_integration"), "{waited}");

    let runner = {
        let mcp = McpSession::open(&pane.env, &pane.surface);
        std::thread::spawn(move || {
            mcp.call(
                "pane_run",
                json!({"pane": "%1", "command": "echo unawaited", "await": true}),
            )
        })
    };
    pane.client.wait_for("echo unawaited");
    let mut client = pane.client;
    client.send("y");
    let ran = runner.join().expect("runner");
    assert_eq!(ran["structuredContent"]["status"], "sent", "{ran}");
    assert!(ran.to_string().contains("pane_read"), "{ran}");
}
