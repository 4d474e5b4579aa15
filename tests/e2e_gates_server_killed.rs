//! Issue 13: no gate of any CLI runs a tool unasked when calyx is gone. Real `calyx hook KIND
//! --approval` processes wait on a real server with their CLI's captured gate payload; the
//! server is killed (SIGKILL, no goodbye) and each hook must print what makes its CLI ask the
//! user itself (nothing, or Cursor's "ask") or a deny: never an allow, never a silence that
//! would run the call. pi's extension is covered under node in integrations/tests/plugin_js.rs.

use crate::common;

use std::process::{Child, Command, Stdio};

use common::{wait_until, Env};

fn fixture(path: &str) -> serde_json::Value {
    let file = format!("{}/fixtures/payloads/{path}", env!("CARGO_MANIFEST_DIR"));
    let captured: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).expect("fixture")).expect("json");
    captured["payload"].clone()
}

fn start_gate(env: &Env, surface: &str, kind: &str, payload: &serde_json::Value) -> Child {
    env.hook_process(surface, &[kind, "--approval"], payload, Stdio::piped())
}

fn pending(env: &Env) -> usize {
    let out: serde_json::Value =
        serde_json::from_str(&env.ok(&["approvals", "--json", "--pending"])).expect("json");
    out["pending"].as_array().map_or(0, Vec::len)
}

#[test]
fn every_gate_asks_or_denies_when_the_server_is_killed_under_it() {
    let env = Env::new();
    // The opt-in gates too: they are the ones whose silence would run the call.
    env.write_config("[approvals]\ndeny_gates = [\"gemini\", \"hermes\", \"kimi\", \"cursor\"]\n");
    env.ok(&["new", "-d", "-s", "gates", "--", "sh"]);
    let panes = env.panes();
    let surface = panes[0]["surface_id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let mut grok = fixture("synthetic/synthetic-grok-pre_tool_use.json");
    grok["permissionMode"] = "bypassPermissions".into();
    // (kind, payload, what its CLI does with the answer when calyx is gone)
    let gates = [
        (
            "claude-code",
            fixture("claude-2.1.197-PermissionRequest.json"),
            Answer::OwnPrompt,
        ),
        (
            "codex",
            fixture("codex-0.171.0-PermissionRequest.json"),
            Answer::OwnPrompt,
        ),
        (
            "copilot",
            fixture("copilot-1.0.102-permissionRequest.json"),
            Answer::OwnPrompt,
        ),
        ("grok", grok, Answer::Deny("\"decision\":\"deny\"")),
        (
            "gemini",
            fixture("gemini-0.61.0-BeforeTool.json"),
            Answer::Deny("\"decision\":\"deny\""),
        ),
        (
            "hermes",
            fixture("hermes-0.19.0-pre_tool_call.json"),
            Answer::Deny("\"decision\":\"block\""),
        ),
        (
            "kimi",
            fixture("synthetic/synthetic-kimi-PreToolUse.json"),
            Answer::Deny("\"permissionDecision\":\"deny\""),
        ),
        (
            "cursor",
            fixture("synthetic/synthetic-cursor-beforeShellExecution.json"),
            Answer::Exactly(r#"{"permission":"ask"}"#),
        ),
    ];
    let children: Vec<(&str, Child, Answer)> = gates
        .into_iter()
        .map(|(kind, payload, answer)| (kind, start_gate(&env, &surface, kind, &payload), answer))
        .collect();
    let held = children.len();
    wait_until("every gate to be held for a human", || {
        (pending(&env) == held).then_some(())
    });

    let pid = env.server_pid();
    let killed = Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());

    for (kind, child, answer) in children {
        let out = child.wait_with_output().expect("hook output");
        assert!(out.status.success(), "{kind}: {:?}", out.status);
        let printed = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(
            !printed.contains("allow"),
            "{kind} printed an allow: {printed}"
        );
        match answer {
            Answer::OwnPrompt => assert_eq!(printed, "", "{kind}"),
            Answer::Exactly(text) => assert_eq!(printed, text, "{kind}"),
            Answer::Deny(marker) => {
                assert!(printed.contains(marker), "{kind}: {printed}");
                assert!(printed.contains("calyx"), "{kind} says why: {printed}");
            }
        }
    }
}

/// What a gate's hook must print once calyx is gone.
#[derive(Debug, Clone, Copy)]
enum Answer {
    /// Nothing: the CLI asks in its own dialog.
    OwnPrompt,
    /// This exact text.
    Exactly(&'static str),
    /// A deny in the CLI's words (contains this), saying calyx could not answer.
    Deny(&'static str),
}
