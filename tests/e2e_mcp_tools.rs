//! End to end: the MCP tools against a real calyx server and real panes, checked against what
//! the panes really are (`calyx list-panes`, `calyx capture`, the client's screen, `calyx
//! agents`). Agent events come from real `calyx hook` processes; approvals are answered with the
//! real `calyx approve` / `calyx deny`.

use crate::common;

use common::mcp::McpSession;
use common::{wait_until, Client, Env};
use serde_json::{json, Value};

/// A client attached to a new session `name` running `command` (default: the test shell).
fn session(env: &Env, name: &str, command: &[&str]) -> Client {
    let mut args = vec!["new", "-s", name];
    if !command.is_empty() {
        args.push("--");
        args.extend_from_slice(command);
    }
    let c = env.client(&args, 40, 150);
    wait_until("the first pane", || {
        let out = env.run(&["list-panes", "--json"]);
        let panes: Vec<Value> = serde_json::from_slice(&out.stdout).ok()?;
        (out.status.success() && !panes.is_empty()).then_some(())
    });
    c
}

/// `calyx list-panes --json`'s entry for pane `id` (`%N`).
fn listed(env: &Env, id: &str) -> Value {
    env.panes()
        .into_iter()
        .find(|p| p["id"] == id)
        .unwrap_or_else(|| panic!("no pane {id} in list-panes: {:?}", env.panes()))
}

fn surface(env: &Env, id: &str) -> String {
    listed(env, id)["surface_id"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Splits `target` left/right and waits for the new pane; returns its id.
fn split(env: &Env, target: &str) -> String {
    let before = env.panes().len();
    env.ok(&["split", "-t", target, "-h"]);
    wait_until("the new pane", || {
        let panes = env.panes();
        (panes.len() > before).then(|| panes.last().map(|p| p["id"].clone()))
    })
    .and_then(|id| id.as_str().map(str::to_string))
    .unwrap_or_default()
}

/// `pane_list`'s entry for pane `id`.
fn pane_entry(mcp: &McpSession, id: &str) -> Value {
    let listed = mcp.call("pane_list", json!({}));
    listed["structuredContent"]["panes"]
        .as_array()
        .and_then(|panes| panes.iter().find(|p| p["id"] == id).cloned())
        .unwrap_or(Value::Null)
}

/// The text of a tool result.
fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Types `line` literally into `pane` and presses Enter.
fn type_line(env: &Env, pane: &str, line: &str) {
    env.ok(&["send-keys", "-t", pane, "-l", line]);
    env.ok(&["send-keys", "-t", pane, "Enter"]);
}

/// Plays one Claude Code hook payload from the pane with `surface` (see `Env::hook_event`).
fn hook(env: &Env, surface: &str, payload: Value) {
    env.hook_event(surface, "claude-code", &payload);
}

/// The state of pane `id`'s agent row in `calyx agents --json`.
fn agent_state(env: &Env, id: &str) -> Option<String> {
    let rows: Value = serde_json::from_str(&env.ok(&["agents", "--json"])).expect("agents json");
    rows["agents"].as_array()?.iter().find_map(|r| {
        (r["pane"] == id)
            .then(|| r["state"].as_str().map(str::to_string))
            .flatten()
    })
}

#[test]
fn pane_list_reports_each_pane_as_it_is() {
    let env = Env::new();
    let moved = env.path().join("home/moved-here");
    std::fs::create_dir_all(&moved).expect("mkdir");
    let moved = std::fs::canonicalize(&moved).expect("canonical");
    let _c = session(&env, "lst", &["bash"]);
    let (anon, _) = McpSession::open_with(&env, &[]);
    wait_until("bash's shell integration", || {
        let listed = anon.call("terminal_list_commands", json!({"pane": "%1"}));
        (listed["structuredContent"]["shell_integration"] == true).then_some(())
    });

    // cwd: the shell moved (bash reports it with OSC 7 at its next prompt).
    type_line(&env, "%1", &format!("cd '{}'", moved.display()));
    wait_until("%1's cwd to follow the cd", || {
        (pane_entry(&anon, "%1")["cwd"] == moved.display().to_string()).then_some(())
    });

    // title: set by the program with OSC 2; focus moves to the new pane.
    let second = split(&env, "lst");
    assert_eq!(second, "%2");
    type_line(&env, "%2", r"printf '\033]2;%s\007' calyx-e2e-title");
    wait_until("%2's OSC 2 title", || {
        (pane_entry(&anon, "%2")["title"] == "calyx-e2e-title").then_some(())
    });

    // An agent row made by the kind header shows on its pane.
    let agent = McpSession::open_as(&env, &surface(&env, "%2"), Some("codex"));
    let panes = agent.call("pane_list", json!({}))["structuredContent"]["panes"].clone();
    let panes = panes.as_array().cloned().unwrap_or_default();
    assert_eq!(panes.len(), 2, "{panes:?}");
    for p in &panes {
        let id = p["id"].as_str().unwrap_or_default();
        let truth = listed(&env, id);
        assert_eq!(p["session"], "lst", "{p}");
        assert_eq!(p["window"], 0, "{p}");
        assert_eq!(p["window_name"], truth["window_name"], "{p}");
        assert_eq!(
            (p["rows"].clone(), p["cols"].clone()),
            (truth["rows"].clone(), truth["cols"].clone()),
            "{p} vs {truth}"
        );
        assert_eq!(p["focused"], truth["focused"], "{p} vs {truth}");
    }
    let (one, two) = (&panes[0], &panes[1]);
    assert_eq!(one["cwd"], moved.display().to_string());
    assert_eq!(
        (one["focused"].clone(), two["focused"].clone()),
        (json!(false), json!(true))
    );
    assert!(
        one["cols"].as_u64().unwrap_or(0) + two["cols"].as_u64().unwrap_or(0) < 150,
        "side by side in 150 columns: {panes:?}"
    );
    assert_eq!(one["rows"], two["rows"], "{panes:?}");
    assert_eq!(
        (one["agent_kind"].clone(), one["agent_state"].clone()),
        (Value::Null, Value::Null)
    );
    assert_eq!(
        (two["agent_kind"].clone(), two["agent_state"].clone()),
        (json!("codex"), json!("idle"))
    );
    assert_eq!(two["title"], "calyx-e2e-title");

    // Focus follows select-pane, and a new window takes it from the old window's panes.
    env.ok(&["select", "-t", "%1"]);
    assert_eq!(pane_entry(&anon, "%1")["focused"], true);
    assert_eq!(pane_entry(&anon, "%2")["focused"], false);
    env.ok(&["new-window", "-t", "lst"]);
    let third = wait_until("the new window's pane", || {
        let p = pane_entry(&anon, "%3");
        (!p.is_null()).then_some(p)
    });
    assert_eq!(
        (third["window"].clone(), third["focused"].clone()),
        (json!(1), json!(true))
    );
    assert_eq!(pane_entry(&anon, "%1")["focused"], false);
}

/// Every 6-character piece of `secret` (a redaction that lets part of it through fails).
fn pieces(secret: &str) -> Vec<String> {
    let chars: Vec<char> = secret.chars().collect();
    chars.windows(6).map(|w| w.iter().collect()).collect()
}

fn assert_no_secret(read: &str, secrets: &[&str]) {
    for secret in secrets {
        for piece in pieces(secret) {
            assert!(
                !read.contains(&piece),
                "{piece:?} of a secret in pane_read output:\n{read}"
            );
        }
    }
}

const SECRETS: [&str; 3] = ["sk-live-1234567890abcdef", "abc.def.ghi", "hunter2"];

#[test]
fn pane_read_redacts_secrets_on_screen_and_in_scrollback_and_keeps_its_limits() {
    let env = Env::new();
    let c = session(&env, "red", &[]);
    c.wait_for("$ ");
    let mcp = McpSession::open(&env, &surface(&env, "%1"));
    let read = |args: Value| -> String {
        let r = mcp.call("pane_read", args);
        assert_ne!(r["isError"], true, "{r}");
        r["structuredContent"]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };

    // Typed (so on screen twice: the command line and its output).
    type_line(&env, "%1", "export API_KEY=sk-live-1234567890abcdef");
    type_line(
        &env,
        "%1",
        "echo \"curl -H 'Authorization: Bearer abc.def.ghi' https://example.com\"",
    );
    type_line(&env, "%1", "echo mysql --password hunter2");
    type_line(&env, "%1", "echo typed-secrets-done");
    env.wait_capture("%1", "\ntyped-secrets-done\n");
    let screen = read(json!({"pane": "%1"}));
    assert_no_secret(&screen, &SECRETS);
    for kept in [
        "API_KEY=",
        "Authorization: Bearer",
        "mysql --password",
        "[REDACTED]",
    ] {
        assert!(screen.contains(kept), "{kept:?} missing:\n{screen}");
    }

    // lines: the last N lines of the screen, the prompt last.
    type_line(&env, "%1", r"printf 'l1\nl2\nl3\n'");
    // The prompt after it too: the read below counts it among the last lines.
    env.wait_capture("%1", "\nl3\n$");
    assert_eq!(read(json!({"pane": "%1", "lines": 3})), "l2\nl3\n$\n");
    assert_eq!(
        read(json!({"pane": "%1", "lines": 3, "scrollback": true})),
        "l2\nl3\n$\n"
    );
    for bad in [0, 10_001] {
        let r = mcp.call("pane_read", json!({"pane": "%1", "lines": bad}));
        assert_eq!(r["isError"], true, "lines {bad}: {r}");
        assert!(text(&r).contains("lines"), "{r}");
    }

    // Scrolled off the screen: still redacted in the scrollback.
    type_line(&env, "%1", "seq 1 60; echo scrolled-done");
    env.wait_capture("%1", "\nscrolled-done\n");
    assert!(!read(json!({"pane": "%1"})).contains("API_KEY"));
    let history = read(json!({"pane": "%1", "scrollback": true}));
    assert!(history.contains("API_KEY=sk-…[REDACTED]"), "{history}");
    assert_no_secret(&history, &SECRETS);

    // The cap: a flood of more than 64 KiB comes back as its newest 64 KiB.
    type_line(
        &env,
        "%1",
        "yes 0123456789012345678901234567890123456789012345678901234567890123456789 | head -n 2000; echo flood-done",
    );
    env.wait_capture("%1", "\nflood-done\n");
    let flood = mcp.call("pane_read", json!({"pane": "%1", "scrollback": true}));
    let flooded = flood["structuredContent"]["text"].as_str().unwrap_or("");
    assert_eq!(
        flood["structuredContent"]["truncated"],
        true,
        "{}",
        flooded.len()
    );
    assert!(flooded.len() <= 64 * 1024, "{}", flooded.len());
    assert!(flooded.len() > 60 * 1024, "{}", flooded.len());
    assert!(
        flooded.ends_with("flood-done\n$\n"),
        "{}",
        &flooded[flooded.len() - 40..]
    );
    assert_eq!(
        read(json!({"pane": "%1"})).len(),
        read(json!({"pane": "%1", "lines": 10_000})).len(),
        "lines beyond the screen is the whole screen"
    );
}

/// Secret forms beyond assignments and flags (issue 13, 6a), printed by `cat`: a private key
/// block goes whole, tokens keep their prefix.
#[test]
fn pane_read_redacts_key_blocks_tokens_and_url_passwords() {
    let env = Env::new();
    let c = session(&env, "keys", &[]);
    c.wait_for("$ ");
    let mcp = McpSession::open(&env, &surface(&env, "%1"));
    let key_body = [
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
        "QyNTUxOQAAACDfakeFAKEfakeFAKEfakeFAKEfakeFAKEfakeFAKEfakeFAKE",
    ];
    let pat = "github_pat_11ABCDEFG0aB3dE6gH9jK2mN5pQ8sT1vW4yZ7";
    let file = env.path().join("leaky.txt");
    std::fs::write(
        &file,
        format!(
            "-----BEGIN OPENSSH PRIVATE KEY-----\n{}\n{}\n-----END OPENSSH PRIVATE KEY-----\n\
             token {pat}\nDATABASE_URL=postgres://app:s3cr3tPass99@db:5432/app\npassword: Tr0ub4dor3\n",
            key_body[0], key_body[1]
        ),
    )
    .expect("write");
    type_line(
        &env,
        "%1",
        &format!("cat {}; echo cat-done", file.display()),
    );
    env.wait_capture("%1", "\ncat-done\n");
    let r = mcp.call("pane_read", json!({"pane": "%1"}));
    let read = r["structuredContent"]["text"].as_str().unwrap_or("");
    assert_no_secret(
        read,
        &[
            key_body[0],
            key_body[1],
            &pat["github_pat_".len()..],
            "s3cr3tPass99",
            "Tr0ub4dor3",
        ],
    );
    for kept in [
        "-----BEGIN OPENSSH PRIVATE KEY-----",
        "github_pat_…[REDACTED]",
        "postgres://app:[REDACTED]@db",
        "password: [REDACTED]",
    ] {
        assert!(read.contains(kept), "{kept:?} missing:\n{read}");
    }
}

#[test]
fn pane_read_redacts_a_secret_that_wraps_in_a_narrow_pane() {
    let env = Env::new();
    let c = session(&env, "narrow", &[]);
    c.wait_for("$ ");
    let narrow = split(&env, "narrow");
    let narrow = split(&env, &narrow);
    let cols = listed(&env, &narrow)["cols"].as_u64().unwrap_or(0) as usize;
    assert!((30..60).contains(&cols), "a narrow pane: {cols}");
    let mcp = McpSession::open(&env, &surface(&env, &narrow));
    // The row ends inside the secret, on the command line and on the output line.
    let pad = "x".repeat(cols - 22);
    type_line(
        &env,
        &narrow,
        &format!("echo {pad} API_KEY=sk-live-1234567890abcdef"),
    );
    type_line(&env, &narrow, "echo wrapped-done");
    env.wait_capture(&narrow, "\nwrapped-done\n");
    let raw = String::from_utf8_lossy(&env.run(&["capture", "-t", &narrow]).stdout).to_string();
    assert!(
        !raw.contains("sk-live-1234567890abcdef"),
        "the secret wraps on the real screen:\n{raw}"
    );
    for scrollback in [false, true] {
        let r = mcp.call(
            "pane_read",
            json!({"pane": narrow, "scrollback": scrollback}),
        );
        let read = r["structuredContent"]["text"].as_str().unwrap_or("");
        assert!(read.contains("API_KEY=sk-…[REDACTED]"), "{read}");
        assert_no_secret(read, &SECRETS[..1]);
    }
}

#[test]
fn agent_wait_wakes_on_hooks_survives_focus_ends_on_exit_and_times_out_with_the_state() {
    let env = Env::new();
    let c = session(&env, "wait", &[]);
    c.wait_for("$ ");
    let other = split(&env, "wait");
    let agent_surface = surface(&env, "%1");
    let _agent = McpSession::open_as(&env, &agent_surface, Some("claude-code"));
    let (watcher, _) = McpSession::open_with(&env, &[]);
    assert_eq!(pane_entry(&watcher, "%1")["agent_state"], "idle");

    // (c) Timeout: a normal answer that says where the agent still is.
    let waited = watcher.call(
        "agent_wait",
        json!({"pane": "%1", "until": ["blocked"], "timeout_ms": 200}),
    );
    assert_ne!(waited["isError"], true, "{waited}");
    assert_eq!(
        wait_outcome(&waited),
        (json!("timeout"), json!(true), json!("idle")),
        "{waited}"
    );

    // (b) A hook transition wakes the wait; focus moving around meanwhile neither ends it nor
    // loses it.
    hook(
        &env,
        &agent_surface,
        json!({"hook_event_name": "UserPromptSubmit", "session_id": "w1", "prompt": "go"}),
    );
    assert_eq!(agent_state(&env, "%1").as_deref(), Some("working"));
    let pending = watcher.start(
        "agent_wait",
        json!({"pane": "%1", "until": ["idle"], "timeout_ms": 20000}),
    );
    env.ok(&["select", "-t", "%1"]);
    env.ok(&["select", "-t", &other]);
    hook(
        &env,
        &agent_surface,
        json!({"hook_event_name": "Stop", "session_id": "w1"}),
    );
    let woke = pending.join();
    assert_eq!(
        wait_outcome(&woke),
        (json!("idle"), json!(false), json!("idle")),
        "{woke}"
    );

    // (a) The pane's program exits: the idle row is done and the waiting call wakes.
    let pending = watcher.start(
        "agent_wait",
        json!({"pane": "%1", "until": ["done"], "timeout_ms": 20000}),
    );
    type_line(&env, "%1", "exit");
    let woke = pending.join();
    assert_eq!(woke["structuredContent"]["state"], "done", "{woke}");
    assert_eq!(woke["structuredContent"]["timed_out"], false, "{woke}");

    let gone = watcher.call("agent_wait", json!({"pane": "%1", "until": ["idle"]}));
    assert_eq!(gone["isError"], true, "{gone}");
    assert!(text(&gone).contains("pane_list"), "{gone}");
}

#[test]
fn agent_wait_wakes_when_a_remaining_panes_program_exits() {
    let env = Env::new();
    env.write_config("remain_on_exit = true\n");
    let c = session(&env, "remain", &[]);
    c.wait_for("$ ");
    let agent_surface = surface(&env, "%1");
    let _agent = McpSession::open_as(&env, &agent_surface, Some("claude-code"));
    let (watcher, _) = McpSession::open_with(&env, &[]);
    let pending = watcher.start(
        "agent_wait",
        json!({"pane": "%1", "until": ["done"], "timeout_ms": 20000}),
    );
    type_line(&env, "%1", "exit");
    let woke = pending.join();
    assert_eq!(woke["structuredContent"]["state"], "done", "{woke}");
    // The pane stays (dead), and so does its row, done.
    assert_eq!(listed(&env, "%1")["dead"], true);
    let entry = pane_entry(&watcher, "%1");
    assert_eq!(entry["agent_state"], "done", "{entry}");
}

/// The approval of the one pending request for `pane` whose summary mentions `what`.
fn pending_approval(env: &Env, pane: &str, what: &str) -> (u64, Value) {
    wait_until(&format!("a pending approval for {what:?}"), || {
        let out: Value =
            serde_json::from_str(&env.ok(&["approvals", "--json", "--pending"])).ok()?;
        out["pending"].as_array()?.iter().find_map(|a| {
            let matches =
                a["pane"] == pane && a["summary"].as_str().is_some_and(|s| s.contains(what));
            matches.then(|| (a["id"].as_u64().unwrap_or(0), a.clone()))
        })
    })
}

#[test]
fn pane_send_keys_waits_for_approve_or_deny() {
    let env = Env::new();
    let c = session(&env, "keys", &[]);
    c.wait_for("$ ");
    let mcp = McpSession::open(&env, &surface(&env, "%1"));

    // Approved: tmux key names, then the keys reach the pane.
    let pending = mcp.start(
        "pane_send_keys",
        json!({"pane": "%1", "keys": ["echo keys-arrived", "Enter"]}),
    );
    let (id, request) = pending_approval(&env, "%1", "keys-arrived");
    assert_eq!(request["state"], "pending", "{request}");
    let before = String::from_utf8_lossy(&env.run(&["capture", "-t", "%1"]).stdout).to_string();
    assert!(
        !before.contains("keys-arrived"),
        "typed before approval:\n{before}"
    );
    env.ok(&["approve", &id.to_string()]);
    let sent = pending.join();
    assert_ne!(sent["isError"], true, "{sent}");
    assert_eq!(sent["structuredContent"]["status"], "sent", "{sent}");
    env.wait_capture("%1", "\nkeys-arrived\n");

    // C-c interrupts what runs in the pane.
    type_line(&env, "%1", "sleep 60");
    let pending = mcp.start("pane_send_keys", json!({"pane": "%1", "keys": ["C-c"]}));
    let (id, _) = pending_approval(&env, "%1", "C-c");
    env.ok(&["approve", &id.to_string()]);
    assert_eq!(pending.join()["structuredContent"]["status"], "sent");
    type_line(&env, "%1", "echo after-interrupt");
    env.wait_capture("%1", "\nafter-interrupt\n");

    // Denied: a normal answer with the reason, and nothing typed.
    let pending = mcp.start(
        "pane_send_keys",
        json!({"pane": "%1", "keys": ["echo must-not-type", "Enter"]}),
    );
    let (id, _) = pending_approval(&env, "%1", "must-not-type");
    env.ok(&["deny", &id.to_string(), "-m", "not now"]);
    let denied = pending.join();
    assert_ne!(denied["isError"], true, "{denied}");
    assert_eq!(denied["structuredContent"]["status"], "denied", "{denied}");
    assert_eq!(denied["structuredContent"]["reason"], "not now", "{denied}");
    type_line(&env, "%1", "echo deny-checked");
    let screen = env.wait_capture("%1", "\ndeny-checked\n");
    assert!(!screen.contains("must-not-type"), "{screen}");
    let left: Value =
        serde_json::from_str(&env.ok(&["approvals", "--json", "--pending"])).expect("json");
    assert_eq!(left["pending"], json!([]), "{left}");
}

#[test]
fn pane_split_and_window_create_make_real_panes_where_asked() {
    let env = Env::new();
    let work = env.path().join("home/work-dir");
    std::fs::create_dir_all(&work).expect("mkdir");
    let work = std::fs::canonicalize(&work).expect("canonical");
    let workdir = work.display().to_string();
    let c = session(&env, "mk", &[]);
    c.wait_for("$ ");
    // A later session: the latest, but not the caller's.
    env.ok(&["new", "-d", "-s", "side"]);
    let mcp = McpSession::open(&env, &surface(&env, "%1"));

    // A command waits for the human (issue 13); approved here from the CLI.
    let pending = mcp.start(
        "pane_split",
        json!({"pane": "%1", "direction": "down", "cwd": workdir,
               "command": "pwd; echo split-ran; exec cat"}),
    );
    let (approval, _) = pending_approval(&env, "%1", "split-ran");
    env.ok(&["approve", &approval.to_string()]);
    let split = pending.join();
    assert_ne!(split["isError"], true, "{split}");
    let made = &split["structuredContent"]["pane"];
    let id = made["id"].as_str().unwrap_or_default().to_string();
    let truth = listed(&env, &id);
    assert_eq!(
        (truth["session"].clone(), truth["window"].clone()),
        (json!("mk"), json!(0)),
        "{truth}"
    );
    assert_eq!(
        (made["session"].clone(), made["window"].clone()),
        (json!("mk"), json!(0))
    );
    // An agent's new pane does not take the user's focus.
    assert_eq!(
        (made["focused"].clone(), truth["focused"].clone()),
        (json!(false), json!(false))
    );
    assert_eq!(listed(&env, "%1")["focused"], true);
    let shown = env.wait_capture(&id, "split-ran");
    assert!(shown.contains(&workdir), "{shown}");
    assert_eq!(listed(&env, &id)["cwd"], workdir.as_str());
    // Down: stacked, so as wide as the pane it split.
    assert_eq!(listed(&env, "%1")["cols"], truth["cols"]);

    let split = mcp.call("pane_split", json!({"pane": "%1", "direction": "right"}));
    let right = split["structuredContent"]["pane"]["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert_eq!(listed(&env, "%1")["rows"], listed(&env, &right)["rows"]);

    let pending = mcp.start(
        "window_create",
        json!({"name": "built", "cwd": workdir, "command": "echo window-ran; exec cat"}),
    );
    let (approval, _) = pending_approval(&env, "%1", "window-ran");
    env.ok(&["approve", &approval.to_string()]);
    let window = pending.join();
    assert_ne!(window["isError"], true, "{window}");
    let made = &window["structuredContent"]["pane"];
    let id = made["id"].as_str().unwrap_or_default().to_string();
    let truth = listed(&env, &id);
    assert_eq!(
        (
            truth["session"].clone(),
            truth["window"].clone(),
            truth["window_name"].clone()
        ),
        (json!("mk"), json!(1), json!("built")),
        "in the caller's session: {truth}"
    );
    env.wait_capture(&id, "window-ran");
    assert_eq!(listed(&env, &id)["cwd"], workdir.as_str());

    // A client outside calyx gets the latest session.
    let (anon, _) = McpSession::open_with(&env, &[]);
    let window = anon.call("window_create", json!({}));
    let id = window["structuredContent"]["pane"]["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert_eq!(listed(&env, &id)["session"], "side", "{window}");

    // Mistakes are tool errors that say what to do.
    let bad = mcp.call("pane_split", json!({"pane": "%99", "direction": "right"}));
    assert_eq!(bad["isError"], true, "{bad}");
    assert!(text(&bad).contains("pane_list"), "{bad}");
    let bad = mcp.call("pane_split", json!({"pane": "%1", "direction": "sideways"}));
    assert_eq!(bad["isError"], true, "{bad}");
    assert!(
        text(&bad).contains("direction") || text(&bad).contains("variant"),
        "{bad}"
    );
    let panes = env.panes().len();
    for bad in [
        mcp.call(
            "pane_split",
            json!({"pane": "%1", "direction": "right", "cwd": "/no/such/dir"}),
        ),
        mcp.call("window_create", json!({"cwd": "/no/such/dir"})),
        mcp.call("window_create", json!({"cwd": "relative/dir"})),
    ] {
        assert_eq!(bad["isError"], true, "{bad}");
        assert!(text(&bad).contains("dir\" is not"), "{bad}");
    }
    assert_eq!(env.panes().len(), panes, "no pane made by a refused call");
}

/// Issue 13: whoever holds the endpoint's token must not run a command without the human.
#[test]
fn a_command_in_a_new_pane_or_window_waits_for_the_human_and_a_deny_runs_nothing() {
    let env = Env::new();
    let c = session(&env, "gate", &[]);
    c.wait_for("$ ");
    let marker = env.path().join("marker");
    let command = format!("id > {}", marker.display());
    // A client outside calyx (only the token), as another user with a stolen token would be.
    let (stranger, _) = McpSession::open_with(&env, &[]);
    let panes = env.panes().len();

    for (tool, args) in [
        ("window_create", json!({"command": command})),
        (
            "pane_split",
            json!({"pane": "%1", "direction": "right", "command": command}),
        ),
    ] {
        let pending = stranger.start(tool, args);
        let (id, request) = pending_approval(&env, "%1", "marker");
        assert!(
            request["tool"].as_str().is_some_and(|t| t.contains(tool)),
            "the panel names the tool: {request}"
        );
        assert!(!marker.exists(), "{tool} ran its command before any answer");
        assert_eq!(
            env.panes().len(),
            panes,
            "{tool} made a pane before any answer"
        );
        env.ok(&["deny", &id.to_string(), "-m", "not from you"]);
        let denied = pending.join();
        assert_eq!(denied["isError"], true, "{denied}");
        assert!(text(&denied).contains("not from you"), "{denied}");
        assert!(!marker.exists(), "{tool} ran a denied command");
        assert_eq!(env.panes().len(), panes, "{tool} made a pane after a deny");
    }

    // A timeout is an answer too, and runs nothing.
    let timed_out = stranger.call(
        "window_create",
        json!({"command": command, "timeout_ms": 300}),
    );
    assert_eq!(timed_out["isError"], true, "{timed_out}");
    assert!(text(&timed_out).contains("timeout"), "{timed_out}");
    assert!(!marker.exists());

    // A shell needs no approval: it runs nothing the caller chose.
    let shell = stranger.call("window_create", json!({}));
    assert_ne!(shell["isError"], true, "{shell}");
    let left: Value =
        serde_json::from_str(&env.ok(&["approvals", "--json", "--pending"])).expect("json");
    assert_eq!(left["pending"], json!([]), "{left}");
}

#[test]
fn session_id_binds_a_client_to_its_pane_and_strangers_are_not_peers() {
    let env = Env::new();
    let c = session(&env, "ids", &[]);
    c.wait_for("$ ");
    let second = split(&env, "ids");
    let record = listed(&env, &second)["record_id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(!record.is_empty());

    // Only the session id: bound to that pane.
    let (bound, init) = McpSession::open_with(&env, &[("X-Calyx-Session-ID", &record)]);
    let instructions = init["instructions"].as_str().unwrap_or_default();
    assert!(
        instructions.contains(&format!("pane {second}")),
        "{instructions}"
    );
    let peer = bound.call("register_peer", json!({"name": "by-session"}));
    assert_eq!(
        peer["structuredContent"]["peer"]["pane"],
        second.as_str(),
        "{peer}"
    );

    // An id calyx does not know: not a peer, and told why.
    let (stranger, init) = McpSession::open_with(
        &env,
        &[
            ("X-Calyx-Session-ID", "no-such-session"),
            ("X-Calyx-Agent-Kind", "codex"),
        ],
    );
    let instructions = init["instructions"].as_str().unwrap_or_default();
    assert!(
        instructions.contains("not inside a calyx pane"),
        "{instructions}"
    );
    let refused = stranger.call("register_peer", json!({"name": "stranger"}));
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(text(&refused).contains("not in a calyx pane"), "{refused}");
    let panes = stranger.call("pane_list", json!({}));
    assert_eq!(
        panes["structuredContent"]["panes"].as_array().map(Vec::len),
        Some(2)
    );

    // No identity headers: lists and reads, but no peer, no messages, no agent row.
    let (anon, init) = McpSession::open_with(&env, &[("X-Calyx-Agent-Kind", "codex")]);
    assert!(init["instructions"]
        .as_str()
        .is_some_and(|i| i.contains("not inside a calyx pane")));
    let panes = anon.call("pane_list", json!({}));
    assert_ne!(panes["isError"], true, "{panes}");
    for p in panes["structuredContent"]["panes"]
        .as_array()
        .into_iter()
        .flatten()
    {
        assert_eq!(p["agent_kind"], Value::Null, "no row from a stranger: {p}");
    }
    let read = anon.call("pane_read", json!({"pane": "%1"}));
    assert_ne!(read["isError"], true, "{read}");
    for (tool, args) in [
        ("register_peer", json!({"name": "anon"})),
        ("send_message", json!({"to": second, "content": "hi"})),
        ("receive_messages", json!({})),
    ] {
        let r = anon.call(tool, args);
        assert_eq!(r["isError"], true, "{tool}: {r}");
        assert!(text(&r).contains("not in a calyx pane"), "{tool}: {r}");
    }
    assert_eq!(agent_state(&env, "%1"), None);
    assert_eq!(agent_state(&env, &second), None);
}

#[test]
fn unread_messages_show_on_the_border_and_in_the_sidebar_until_received() {
    let env = Env::new();
    env.write_config("sidebar = true\n");
    let c = session(&env, "side", &[]);
    c.wait_for("$ ");
    let second = split(&env, "side");
    let alpha = McpSession::open_as(&env, &surface(&env, "%1"), Some("claude-code"));
    let beta = McpSession::open_as(&env, &surface(&env, &second), Some("codex"));
    // A title too long for the sidebar column, as agents set them.
    type_line(
        &env,
        &second,
        r"printf '\033]2;%s\007' reviewing-the-very-long-pull-request-title",
    );
    let sidebar = |c: &Client| c.region(0, 0, 39, 32).join("\n");
    let right_of_sidebar = |c: &Client| c.region(0, 32, 39, 118).join("\n");
    wait_until("both agents in the sidebar, the long title cut", || {
        let s = sidebar(&c);
        (s.contains("Codex reviewing") && s.contains("Claude")).then_some(())
    });

    alpha.call("register_peer", json!({"name": "alpha"}));
    beta.call("register_peer", json!({"name": "beta"}));
    for n in 1..=2 {
        let sent = alpha.call(
            "send_message",
            json!({"to": second, "content": format!("note {n}")}),
        );
        assert_ne!(sent["isError"], true, "{sent}");
    }
    wait_until("✉2 in the sidebar and on the border", || {
        (sidebar(&c).contains("✉2") && right_of_sidebar(&c).contains("✉2")).then_some(())
    });
    let inbox = beta.call("receive_messages", json!({}));
    assert_eq!(
        inbox["structuredContent"]["messages"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );
    wait_until("the count gone from both", || {
        let screen = c.screen();
        (!screen.contains('✉')).then_some(())
    });
}

#[test]
fn the_agent_kind_header_refreshes_a_row_of_another_kind_but_leaves_hooked_rows_to_hooks() {
    let env = Env::new();
    let c = session(&env, "kind", &[]);
    c.wait_for("$ ");
    let surface = surface(&env, "%1");
    let row = |mcp: &McpSession| {
        let p = pane_entry(mcp, "%1");
        (p["agent_kind"].clone(), p["agent_state"].clone())
    };
    let codex = McpSession::open_as(&env, &surface, Some("codex"));
    assert_eq!(row(&codex), (json!("codex"), json!("idle")));

    // Another CLI connects from the pane: the row is now that CLI's.
    let claude = McpSession::open_as(&env, &surface, Some("claude-code"));
    assert_eq!(row(&claude), (json!("claude-code"), json!("idle")));

    // A row its hooks ended stays done when the same CLI's MCP client connects again (Codex's
    // does while it quits, after its SessionEnd); the hooks start the next session.
    hook(
        &env,
        &surface,
        json!({"hook_event_name": "SessionEnd", "session_id": "k1", "reason": "exit"}),
    );
    assert_eq!(agent_state(&env, "%1").as_deref(), Some("done"));
    let again = McpSession::open_as(&env, &surface, Some("claude-code"));
    assert_eq!(row(&again), (json!("claude-code"), json!("done")));

    // A live row of the same CLI is left to its hooks.
    hook(
        &env,
        &surface,
        json!({"hook_event_name": "UserPromptSubmit", "session_id": "k2", "prompt": "go"}),
    );
    let same = McpSession::open_as(&env, &surface, Some("claude-code"));
    assert_eq!(row(&same), (json!("claude-code"), json!("working")));
    // An unknown kind changes nothing.
    let odd = McpSession::open_as(&env, &surface, Some("no-such-cli"));
    assert_eq!(row(&odd), (json!("claude-code"), json!("working")));
}

/// An `agent_wait` result's (state, timed_out, agent_state).
fn wait_outcome(result: &Value) -> (Value, Value, Value) {
    let out = &result["structuredContent"];
    (
        out["state"].clone(),
        out["timed_out"].clone(),
        out["agent_state"].clone(),
    )
}

/// The nice value of each pane reader thread of the server (`/proc/PID/task/*/stat`).
fn reader_nice_values(env: &Env) -> Vec<i64> {
    let pid = env.server_pid();
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).expect("tasks");
    let mut out = Vec::new();
    for task in tasks.flatten() {
        let path = task.path();
        let comm = std::fs::read_to_string(path.join("comm")).unwrap_or_default();
        if comm.trim() != "calyx-pane-read" {
            continue;
        }
        let stat = std::fs::read_to_string(path.join("stat")).unwrap_or_default();
        // After the `(comm)` field, nice is the 17th (field 19 of proc(5)).
        let nice: Option<i64> = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(16))
            .and_then(|n| n.parse().ok());
        out.extend(nice);
    }
    out.sort_unstable();
    out
}

/// Whether a thread here can lower its priority and raise it back (root, or a `RLIMIT_NICE`
/// that allows it): only then does the server renice background readers.
fn renice_is_reversible() -> bool {
    std::thread::spawn(|| {
        // SAFETY: get/setpriority(2) take only integers; `who` 0 is the calling thread on Linux.
        unsafe {
            let base = libc::getpriority(libc::PRIO_PROCESS, 0);
            base < 19
                && libc::setpriority(libc::PRIO_PROCESS, 0, base + 1) == 0
                && libc::setpriority(libc::PRIO_PROCESS, 0, base) == 0
        }
    })
    .join()
    .unwrap_or(false)
}

#[test]
fn a_pane_split_by_an_agent_runs_at_background_priority_without_a_keystroke() {
    let env = Env::new();
    let ticking = ["sh", "-c", "while :; do echo tick; sleep 0.1; done"];
    let _c = session(&env, "prio", &ticking);
    let (mcp, _) = McpSession::open_with(&env, &[]);
    let pending = mcp.start(
        "pane_split",
        json!({"pane": "%1", "direction": "right", "command": "while :; do echo tock; sleep 0.1; done"}),
    );
    let (approval, _) = pending_approval(&env, "%1", "tock");
    env.ok(&["approve", &approval.to_string()]);
    let split = pending.join();
    assert_ne!(split["isError"], true, "{split}");
    // The new pane does not take focus, so its reader drops to background priority (the
    // reader applies it at its next read); the focused pane's stays normal. Both relative to
    // the server's own priority, which is this test's (cargo test may run under `nice`).
    // SAFETY: getpriority(2) reads integers only; this process's nice is never -1 here.
    let base = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
    let low = if renice_is_reversible() {
        (base + 10).min(19)
    } else {
        base
    };
    let expected = [i64::from(base), i64::from(low)];
    wait_until("one niced reader and one normal", || {
        (reader_nice_values(&env) == expected).then_some(())
    });
}

#[test]
fn an_approved_pane_run_leaves_the_target_panes_agent_row_alone() {
    let env = Env::new();
    let c = session(&env, "run", &[]);
    c.wait_for("$ ");
    let shell = split(&env, "run");
    let claude_surface = surface(&env, "%1");
    hook(
        &env,
        &claude_surface,
        json!({"hook_event_name": "SessionStart", "session_id": "r1", "source": "startup"}),
    );
    assert_eq!(agent_state(&env, "%1").as_deref(), Some("idle"));

    // An MCP client with no agent row types into the shell pane, and a Codex agent into
    // Claude's pane: the requests name who asked, and approving them adds or changes no row.
    let (anon, _) = McpSession::open_with(&env, &[]);
    let codex = McpSession::open_as(&env, &surface(&env, &shell), Some("codex"));
    let into_shell = anon.start(
        "pane_run",
        json!({"pane": shell, "command": "echo typed-by-anon"}),
    );
    let asked = common::gates::wait_pending(&env, 1);
    assert_eq!(asked[0]["cli"], "mcp", "{asked:?}");
    env.ok(&["approve", &asked[0]["id"].to_string()]);
    assert!(into_shell.join().to_string().contains("sent"));
    env.wait_capture(&shell, "typed-by-anon\n");
    let into_claude = codex.start(
        "pane_run",
        json!({"pane": "%1", "command": "echo typed-by-codex"}),
    );
    let asked = common::gates::wait_pending(&env, 1);
    assert_eq!(asked[0]["cli"], "codex", "{asked:?}");
    env.ok(&["approve", &asked[0]["id"].to_string()]);
    assert!(into_claude.join().to_string().contains("sent"));
    env.wait_capture("%1", "typed-by-codex\n");

    let rows: Value = serde_json::from_str(&env.ok(&["agents", "--json"])).expect("json");
    let kinds: Vec<(Value, Value, Value)> = rows["agents"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .map(|r| (r["pane"].clone(), r["agent"].clone(), r["state"].clone()))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        kinds,
        [
            (json!("%1"), json!("claude-code"), json!("idle")),
            (json!(shell), json!("codex"), json!("idle")),
        ]
    );
}
