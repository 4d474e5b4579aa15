//! Approval requests made the way agent CLIs make them: a real `calyx hook KIND --approval`
//! process in a real pane, its stdin a payload file, its stdout kept in a file the test reads
//! once the pane prints `DONE:<name>:<exit code>`.

use std::path::PathBuf;

use serde_json::Value;

use super::{calyx_bin, wait_until, Client, Env};

/// The exact allow Claude Code reads.
pub const CLAUDE_ALLOW: &str = r#"{"hookSpecificOutput":{"decision":{"behavior":"allow"},"hookEventName":"PermissionRequest"}}"#;

/// The payload of a captured fixture, as the CLI posted it.
pub fn fixture_payload(name: &str) -> Value {
    let path = format!("{}/fixtures/payloads/{name}", env!("CARGO_MANIFEST_DIR"));
    let captured: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("json");
    captured["payload"].clone()
}

/// Claude Code's captured PermissionRequest for Bash, with `command` in place of its own.
pub fn claude_bash(command: &str) -> Value {
    let mut payload = fixture_payload("claude-2.1.197-PermissionRequest.json");
    payload["tool_input"]["command"] = Value::from(command);
    payload
}

/// Writes a payload to a file in the test's directory; returns its path.
pub fn payload_file(env: &Env, name: &str, payload: &Value) -> String {
    let path = env.path().join(name);
    std::fs::write(&path, payload.to_string()).expect("write payload");
    path.display().to_string()
}

/// A `calyx hook` started in a pane.
pub struct Gate {
    pub pane: String,
    out: PathBuf,
    name: String,
}

/// Starts `calyx hook KIND --approval < payload > out` in `pane`; `name` names its output.
pub fn gate(env: &Env, pane: &str, kind: &str, payload: &str, name: &str) -> Gate {
    let out = env.path().join(format!("{name}.out"));
    let line = format!(
        "{} hook {kind} --approval < {payload} > {}; echo DONE:{name}:$?",
        calyx_bin().display(),
        out.display()
    );
    env.ok(&["send-keys", "-t", pane, "clear", "Enter"]);
    env.ok(&["send-keys", "-t", pane, &line, "Enter"]);
    Gate {
        pane: pane.to_string(),
        out,
        name: name.to_string(),
    }
}

impl Gate {
    /// Waits for the hook to exit (successfully) and returns exactly what it printed.
    pub fn output(&self, env: &Env) -> String {
        env.wait_capture(&self.pane, &format!("DONE:{}:0", self.name));
        std::fs::read_to_string(&self.out).unwrap_or_default()
    }

    /// Whether the hook has exited (without waiting): `DONE:<name>:` and a digit, which the
    /// typed command line (`DONE:<name>:$?`) does not show.
    pub fn done(&self, env: &Env) -> bool {
        let out = env.run(&["capture", "-t", &self.pane]);
        let text = String::from_utf8_lossy(&out.stdout).replace('\n', "");
        let marker = format!("DONE:{}:", self.name);
        text.match_indices(&marker).any(|(at, _)| {
            text[at + marker.len()..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_digit())
        })
    }
}

/// `calyx approvals --json --pending`: the pending requests.
pub fn pending(env: &Env) -> Vec<Value> {
    let v: Value =
        serde_json::from_str(&env.ok(&["approvals", "--json", "--pending"])).expect("json");
    v["pending"].as_array().cloned().unwrap_or_default()
}

/// Waits until exactly `n` requests are pending; returns them.
pub fn wait_pending(env: &Env, n: usize) -> Vec<Value> {
    wait_until(&format!("{n} pending approvals"), || {
        let p = pending(env);
        (p.len() == n).then_some(p)
    })
}

/// A session "gates" with `panes` panes side by side, focus on the first, shown by a client
/// `cols` wide; returns the pane ids in `list-panes` order (the first pane first).
pub fn side_by_side(panes: usize, cols: u16) -> (Env, Client, Vec<String>) {
    let env = Env::new();
    let c = env.client(&["new", "-s", "gates"], 40, cols);
    c.wait_for("$ ");
    let first = pane_ids(&env)[0].clone();
    for _ in 1..panes {
        env.ok(&["split", "-h", "-d", "-t", &first]);
    }
    let ids = pane_ids(&env);
    assert_eq!(ids.len(), panes);
    (env, c, ids)
}

/// The pane ids of every pane, in `list-panes` order.
pub fn pane_ids(env: &Env) -> Vec<String> {
    env.panes()
        .iter()
        .filter_map(|p| p["id"].as_str().map(str::to_string))
        .collect()
}

/// The focused pane of `session`.
pub fn focused_pane(env: &Env, session: &str) -> Option<String> {
    env.panes()
        .into_iter()
        .find(|p| p["session"] == session && p["focused"] == true)
        .and_then(|p| p["id"].as_str().map(str::to_string))
}

/// `calyx agents --json`: the row of `pane`, if it has one.
pub fn agent_row(env: &Env, pane: &str) -> Option<Value> {
    let v: Value = serde_json::from_str(&env.ok(&["agents", "--json"])).expect("agents json");
    v["agents"]
        .as_array()?
        .iter()
        .find(|r| r["pane"] == pane)
        .cloned()
}

/// Waits until the agent row of `pane` is in `state`.
pub fn wait_agent_state(env: &Env, pane: &str, state: &str) {
    wait_until(&format!("agent in {pane} {state}"), || {
        agent_row(env, pane)
            .is_some_and(|r| r["state"] == state)
            .then_some(())
    });
}

/// The approval record (`approvals.jsonl` in calyx's state directory), one value a line.
pub fn approvals_log(env: &Env) -> Vec<Value> {
    std::fs::read_to_string(env.path().join("state/calyx/approvals.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}
