//! The OpenCode plugin and pi extension calyx writes, run under node against a recording
//! endpoint with the payloads captured from the real CLIs: every post carries the bearer
//! token and identity headers, and every body is a shape calyx's normalizer accepts. Skipped
//! when node is not installed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use calyx_integrations::setup::{self, Ctx, Op};
use calyx_integrations::{normalize, AgentKind};
use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// Writes the module for `kind` and runs the harness; None when node is missing (a failure
/// instead when CALYX_REQUIRE_NODE is set, as .ci/run does: CI must not skip silently).
fn run(kind: AgentKind, surface: Option<&str>) -> Option<Value> {
    run_with(kind, surface, "ok")
}

/// As [`run`], with the harness's endpoint mode: "ok", "unreachable" or "missing".
fn run_with(kind: AgentKind, surface: Option<&str>, endpoint: &str) -> Option<Value> {
    run_with_env(kind, surface, endpoint, &[])
}

/// As [`run_with`], with extra environment variables for the CLI's process.
fn run_with_env(
    kind: AgentKind,
    surface: Option<&str>,
    endpoint: &str,
    env: &[(&str, &str)],
) -> Option<Value> {
    run_set_up(kind, surface, endpoint, env, true)
}

/// As [`run_with_env`], with the files setup writes when `[mcp] host_servers` is `host_servers`.
fn run_set_up(
    kind: AgentKind,
    surface: Option<&str>,
    endpoint: &str,
    env: &[(&str, &str)],
    host_servers: bool,
) -> Option<Value> {
    let dir = tempfile::tempdir().unwrap();
    let ctx = Ctx {
        home: dir.path().join("home"),
        env: BTreeMap::new(),
        calyx_bin: "/c/calyx".into(),
        endpoint_file: dir.path().join("ep.json"),
        port: 1,
        token: "x".into(),
        host_servers,
    };
    let plan = setup::plan(kind, &ctx, Op::Install).unwrap();
    let source = plan
        .changes
        .iter()
        .find(|c| c.path.extension().is_some_and(|e| e == "js" || e == "ts"))
        .and_then(|c| c.after.clone())
        .unwrap();
    let module = dir.path().join("module.mjs");
    std::fs::write(&module, source).unwrap();
    let mut cmd = Command::new("node");
    cmd.arg(root().join("tests/js/harness.mjs"))
        .arg(if kind == AgentKind::Pi {
            "pi"
        } else {
            "opencode"
        })
        .arg(&module)
        .arg(dir.path().join("ep.json"))
        .arg(root().join("../fixtures/payloads"))
        .env("HARNESS_ENDPOINT", endpoint)
        .env_remove("CALYX_SURFACE_ID")
        .env_remove("CALYX_SESSION_ID")
        .env_remove("HERDR_PANE_ID")
        .env_remove("CALYX_PI_WHEN_UNREACHABLE")
        .env_remove("HARNESS_CALL_HOSTED")
        .envs(env.iter().copied());
    if let Some(s) = surface {
        cmd.env("CALYX_SURFACE_ID", s);
    }
    let out = match cmd.output() {
        Ok(out) => out,
        Err(e) => {
            assert!(
                std::env::var_os("CALYX_REQUIRE_NODE").is_none(),
                "node is required (CALYX_REQUIRE_NODE is set) but could not run: {e}"
            );
            eprintln!("node not available: skipped");
            return None;
        }
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

fn check_headers(req: &Value, kind: &str) {
    let h = &req["headers"];
    assert_eq!(h["authorization"], "Bearer t0k", "{req}");
    assert_eq!(h["x-calyx-agent-kind"], kind);
    assert_eq!(h["x-calyx-surface-id"], "surf-1");
    assert!(h.get("x-calyx-session-id").is_none());
}

#[test]
fn opencode_plugin_posts_what_the_normalizer_reads() {
    let Some(out) = run(AgentKind::OpenCode, Some("surf-1")) else {
        return;
    };
    let requests = out["requests"].as_array().unwrap();
    assert!(requests.len() >= 8, "{out}");
    let mut kinds = Vec::new();
    for req in requests {
        // A permission is held in calyx's panel; everything else is state.
        let want = match req["body"]["type"].as_str() {
            Some("permission.asked") => "/approval-request",
            _ => "/agent-event",
        };
        assert_eq!(req["path"], want, "{req}");
        check_headers(req, "opencode");
        let ev = normalize(AgentKind::OpenCode, &req["body"])
            .unwrap_or_else(|e| panic!("{e}: {}", req["body"]));
        if let Some(ev) = ev {
            kinds.push(format!("{:?}", ev.kind));
        }
    }
    for want in [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "PermissionRequest",
        "Stop",
    ] {
        assert!(
            kinds.iter().any(|k| k == want),
            "{want} missing from {kinds:?}"
        );
    }
    // The idle sent while the permission was pending was held back; the one after the reply was not.
    let idles: Vec<&Value> = requests
        .iter()
        .filter(|r| {
            r["body"]["type"] == "session.idle"
                && r["body"]["properties"]["sessionID"] == "ses_pending"
        })
        .collect();
    assert_eq!(idles.len(), 1, "{idles:?}");
    let plugin_hook = requests
        .iter()
        .find(|r| r["body"]["hook"] == "tool.execute.before")
        .unwrap();
    assert_eq!(plugin_hook["body"]["directory"], "/home/dev/src/app");
    // calyx's answer went to OpenCode's reply route, message and all; the permission answered
    // in OpenCode's own dialog first was dropped from calyx (and not answered again).
    assert_eq!(
        out["results"]["replies"],
        serde_json::json!([{
            "url": "/permission/{requestID}/reply",
            "path": {"requestID": "per_2"},
            "body": {"reply": "reject", "message": "no"},
        }])
    );
    assert_eq!(out["results"]["withdrawn"], serde_json::json!(["per_1"]));
}

#[test]
fn pi_extension_posts_events_gates_tool_calls_and_registers_one_tool() {
    let Some(out) = run(AgentKind::Pi, Some("surf-1")) else {
        return;
    };
    assert_eq!(out["results"]["tool"], "calyx");
    assert_eq!(
        out["results"]["tool_call"],
        serde_json::json!({"block": true, "reason": "no"})
    );
    let requests = out["requests"].as_array().unwrap();
    // The gate posts the PermissionRequest shape scripts use, not pi's own event.
    let gate = requests
        .iter()
        .find(|r| r["path"] == "/approval-request")
        .expect("the tool_call was gated");
    assert_eq!(
        gate["body"],
        serde_json::json!({
            "hook_event_name": "PermissionRequest",
            "tool_name": "bash",
            "tool_input": {"command": "echo hi > marker.txt"},
            "tool_call_id": "call_000002",
            "session_id": "pi-sess",
            "cwd": "/home/dev/src/app",
        })
    );
    let paths: Vec<&str> = requests.iter().filter_map(|r| r["path"].as_str()).collect();
    assert!(
        paths.contains(&"/approval-request") && paths.contains(&"/mcp"),
        "{paths:?}"
    );
    for req in requests {
        check_headers(req, "pi");
        if req["path"] == "/mcp" {
            assert_eq!(req["body"]["method"], "initialize");
            continue;
        }
        let ev = normalize(AgentKind::Pi, &req["body"])
            .unwrap_or_else(|e| panic!("{e}: {}", req["body"]));
        let ev = ev.unwrap_or_else(|| panic!("ignored: {}", req["body"]));
        assert_eq!(ev.session_id.as_deref(), Some("pi-sess"));
        assert_eq!(ev.cwd.as_deref(), Some("/home/dev/src/app"));
    }
}

#[test]
fn outside_calyx_nothing_is_registered() {
    for kind in [AgentKind::OpenCode, AgentKind::Pi] {
        let Some(out) = run(kind, None) else {
            return;
        };
        assert_eq!(
            out["results"]["registered"],
            serde_json::json!([]),
            "{kind}"
        );
        assert_eq!(out["requests"], serde_json::json!([]), "{kind}");
    }
}

/// Issue 13: pi has no prompt of its own, so no answer from calyx must not run the tool.
#[test]
fn pi_blocks_when_calyx_is_unreachable_or_never_ran_unless_told_to_run() {
    for endpoint in ["unreachable", "missing"] {
        let Some(out) = run_with(AgentKind::Pi, Some("surf-1"), endpoint) else {
            return;
        };
        let call = &out["results"]["tool_call"];
        assert_eq!(call["block"], true, "{endpoint}: {}", out["results"]);
        let reason = call["reason"].as_str().unwrap_or_default();
        assert!(
            reason.contains("could not be reached"),
            "{endpoint}: {reason}"
        );
        // The tool still registered: the model keeps its calyx tool, which reports the error.
        assert_eq!(out["results"]["tool"], "calyx", "{endpoint}");
        assert_eq!(out["requests"], serde_json::json!([]), "{endpoint}");

        // The user's explicit choice: run tools when calyx is gone.
        let env = [("CALYX_PI_WHEN_UNREACHABLE", "run")];
        let Some(out) = run_with_env(AgentKind::Pi, Some("surf-1"), endpoint, &env) else {
            return;
        };
        assert!(
            out["results"].get("tool_call").is_none(),
            "{endpoint}: {}",
            out["results"]
        );
    }
}

#[test]
fn pi_blocks_a_tool_call_calyx_is_there_for_but_refuses() {
    // A reachable calyx that refuses the request (413: a tool input over its body limit) cannot
    // ask a human, so the call must not run unasked.
    let Some(out) = run_with(AgentKind::Pi, Some("surf-1"), "refuses") else {
        return;
    };
    assert_eq!(
        out["results"]["tool_call"]["block"], true,
        "{}",
        out["results"]
    );
    let reason = out["results"]["tool_call"]["reason"]
        .as_str()
        .unwrap_or_default();
    assert!(reason.contains("HTTP 413"), "{reason}");
}

/// Issue 16: pi has no MCP client, so its extension's `calyx_mcp` tool stands in for the
/// `calyx-mcp` entry: `list` drains every page of `/mcp-hosted`'s `tools/list` into names,
/// descriptions and schemas; a call goes to `tools/call` there on the same kind of MCP session
/// `calyx` uses for `/mcp` (initialize, then notifications/initialized), opened again when a
/// restarted calyx answers 404 for the old one; errors reach the model as errors.
#[test]
fn pi_calyx_mcp_lists_and_calls_the_hosted_tools() {
    let env = [("HARNESS_CALL_HOSTED", "1")];
    let Some(out) = run_with_env(AgentKind::Pi, Some("surf-1"), "ok", &env) else {
        return;
    };
    let results = &out["results"];
    assert_eq!(results["tools"], serde_json::json!(["calyx", "calyx_mcp"]));
    let used = &results["calyx_mcp"];
    let listed: Value = serde_json::from_str(used["list"].as_str().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}: {used}"));
    assert_eq!(
        listed,
        serde_json::json!([
            {"name": "ev-echo", "description": "Echoes back the input", "inputSchema":
                {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}},
            {"name": "ev-get-sum", "description": "Adds two numbers", "inputSchema":
                {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}},
        ])
    );
    assert_eq!(used["echo"], "Echo: hi", "{used}");
    assert_eq!(used["failed"], serde_json::json!({"error": "boom"}));
    assert_eq!(
        used["unknown"],
        serde_json::json!({"error": "Unknown tool: nope"})
    );

    let hosted: Vec<&Value> = out["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["path"] == "/mcp-hosted")
        .collect();
    for req in &hosted {
        check_headers(req, "pi");
        // After initialize, the negotiated version rides on every request.
        let version = req["headers"]["mcp-protocol-version"].as_str();
        if req["body"]["method"] == "initialize" {
            assert_eq!(version, None, "{req}");
        } else {
            assert_eq!(version, Some("2025-06-18"), "{req}");
        }
    }
    let sequence: Vec<String> = hosted
        .iter()
        .map(|r| {
            let session = r["headers"]["mcp-session-id"].as_str().unwrap_or("-");
            let method = r["body"]["method"].as_str().unwrap_or("?");
            let name = r["body"]["params"]["name"].as_str().unwrap_or("");
            format!("{session} {method} {name}").trim_end().to_string()
        })
        .collect();
    assert_eq!(
        sequence,
        [
            "- initialize",
            "hosted-1 notifications/initialized",
            "hosted-1 tools/list",
            "hosted-1 tools/list",
            // calyx "restarted" after the last page: the old session gets a 404 ...
            "hosted-1 tools/call ev-echo",
            // ... and the call goes through on a new one.
            "- initialize",
            "hosted-2 notifications/initialized",
            "hosted-2 tools/call ev-echo",
            "hosted-2 tools/call ev-fail",
            "hosted-2 tools/call nope",
        ],
        "{sequence:#?}"
    );
    let call = hosted
        .iter()
        .find(|r| r["body"]["params"]["name"] == "ev-echo")
        .unwrap();
    assert_eq!(
        call["body"]["params"]["arguments"],
        serde_json::json!({"message": "hi"})
    );
    assert_eq!(
        hosted[3]["body"]["params"],
        serde_json::json!({"cursor": "p2"})
    );
}

/// With `[mcp] host_servers = false` the extension setup writes has no `calyx_mcp` tool.
#[test]
fn pi_without_hosting_registers_only_the_calyx_tool() {
    let env = [("HARNESS_CALL_HOSTED", "1")];
    let Some(out) = run_set_up(AgentKind::Pi, Some("surf-1"), "ok", &env, false) else {
        return;
    };
    assert_eq!(out["results"]["tools"], serde_json::json!(["calyx"]));
    assert!(out["results"].get("calyx_mcp").is_none());
    let paths: Vec<&str> = out["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["path"].as_str())
        .collect();
    assert!(!paths.contains(&"/mcp-hosted"), "{paths:?}");
}
