//! End to end: a real calyx server's `/mcp`, called over HTTP the way an agent's MCP client
//! does (bearer token, identity headers, session id), answering from live panes; `pane_run`
//! waits for the human in the approval panel of a real client.

use crate::common;

use common::mcp::{endpoint, post, session_header, Endpoint, McpSession};
use common::{wait_until, Env};
use serde_json::json;

#[test]
fn tools_answer_from_live_panes_and_pane_run_waits_for_the_human() {
    let env = Env::new();
    let mut c = env.client(&["new", "-s", "mcp"], 40, 150);
    c.wait_for("$ ");
    let panes = env.panes();
    let surface = panes[0]["surface_id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    env.ok(&["send-keys", "-t", "mcp", "echo visible-marker", "Enter"]);
    env.wait_capture("mcp", "visible-marker");
    let ep = endpoint(&env);
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"0"}}}"#;
    let (head, result) = post(&ep, &[("X-Calyx-Surface-ID", &surface)], init);
    let session = session_header(&head);
    let instructions = result["result"]["instructions"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        instructions.contains("%1"),
        "instructions name the caller's pane: {instructions}"
    );
    let ids = [
        ("X-Calyx-Surface-ID", surface.as_str()),
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    post(
        &ep,
        &ids,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );

    let (_, listed) = post(
        &ep,
        &ids,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"pane_list","arguments":{}}}"#,
    );
    assert!(listed.to_string().contains("%1"), "{listed}");
    let (_, read) = post(
        &ep,
        &ids,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"pane_read","arguments":{"pane":"%1"}}}"#,
    );
    assert!(read.to_string().contains("visible-marker"), "{read}");

    // pane_run: waits in the approval panel until the human presses y, then types the command.
    let run_in_thread = |id: u32, command: &str| {
        let (ep, surface, session) = (ep.clone(), surface.clone(), session.clone());
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"pane_run","arguments":{{"pane":"%1","command":"{command}"}}}}}}"#
        );
        std::thread::spawn(move || {
            let ids = [
                ("X-Calyx-Surface-ID", surface.as_str()),
                ("Mcp-Session-Id", session.as_str()),
                ("MCP-Protocol-Version", "2025-06-18"),
            ];
            post(&ep, &ids, &body).1
        })
    };
    let runner = run_in_thread(4, "echo ran-by-mcp");
    c.wait_for("echo ran-by-mcp");
    c.answer("y");
    let outcome = runner.join().expect("runner");
    assert!(outcome.to_string().contains("sent"), "{outcome}");
    env.wait_capture("mcp", "ran-by-mcp\n");

    // Denied is a normal result, and nothing is typed.
    let runner = run_in_thread(5, "echo must-not-run");
    c.wait_for("echo must-not-run");
    c.answer("n");
    let outcome = runner.join().expect("runner");
    assert!(outcome.to_string().contains("denied"), "{outcome}");
    let screen = String::from_utf8_lossy(&env.run(&["capture", "-t", "mcp"]).stdout).to_string();
    assert!(!screen.contains("must-not-run"), "{screen}");
}

#[test]
fn agent_kind_header_creates_a_row_and_unread_messages_show_on_the_border() {
    let env = Env::new();
    let mut c = env.client(&["new", "-s", "peers"], 40, 150);
    c.wait_for("$ ");
    env.ok(&["split", "-t", "peers", "-h"]);
    let panes = wait_until("two panes", || {
        let p = env.panes();
        (p.len() == 2).then_some(p)
    });
    let surface = |i: usize| {
        panes[i]["surface_id"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let alpha = McpSession::open(&env, &surface(0));
    let beta = McpSession::open_as(&env, &surface(1), Some("codex"));

    // The agent-kind header alone gives the pane an agent row; no identity kind, no row.
    let rows = wait_until("a codex row for %2", || {
        let out = env.ok(&["agents", "--json"]);
        out.contains("\"%2\"").then_some(out)
    });
    assert!(rows.contains("\"codex\""), "{rows}");
    assert!(!rows.contains("\"%1\""), "{rows}");

    let a = alpha.call("register_peer", json!({"name": "alpha"}));
    assert!(a.to_string().contains("alpha"), "{a}");
    let b = beta.call("register_peer", json!({"name": "beta"}));
    let beta_id = b["structuredContent"]["peer"]["peer_id"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| panic!("no peer_id in {b}"));
    let sent = alpha.call(
        "send_message",
        json!({"to": beta_id, "content": "review PR 7 please"}),
    );
    assert_ne!(sent["isError"], true, "{sent}");
    // Beta's border shows the unread count; reading the inbox clears it.
    c.wait_for("✉1");
    let inbox = beta.call("receive_messages", json!({}));
    assert!(inbox.to_string().contains("review PR 7 please"), "{inbox}");
    wait_until("the unread badge is gone", || {
        (!c.screen().contains("✉1")).then_some(())
    });

    // deliver "type": beta's agent is idle, so the message is also typed into its pane as a
    // prompt, once the human approves it in the panel.
    let (alpha2, to) = (alpha.clone(), beta_id.clone());
    let typer = std::thread::spawn(move || {
        alpha2.call(
            "send_message",
            json!({"to": to, "content": "echo typed-by-peer", "deliver": "type"}),
        )
    });
    c.wait_for("typed-by-peer");
    c.answer("y");
    let outcome = typer.join().expect("typer");
    assert_eq!(outcome["structuredContent"]["typed"], "typed", "{outcome}");
    env.wait_capture("%2", "typed-by-peer\n");
}

/// A 2026-07-28 request: no `initialize`, no session; the version in a header and in `_meta`.
fn modern(
    ep: &Endpoint,
    identity: Option<&str>,
    method: &str,
    name: Option<&str>,
    params: &str,
) -> (String, serde_json::Value) {
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"e2e","version":"0"}}"#;
    let body =
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{{params}{meta}}}}}"#);
    let mut headers = vec![
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", method),
    ];
    if let Some(name) = name {
        headers.push(("Mcp-Name", name));
    }
    if let Some(surface) = identity {
        headers.push(("X-Calyx-Surface-ID", surface));
    }
    post(ep, &headers, &body)
}

#[test]
fn the_stateless_2026_era_serves_each_request_with_its_own_identity() {
    let env = Env::new();
    let c = env.client(&["new", "-s", "modern"], 30, 120);
    c.wait_for("$ ");
    let surface = env.first_surface();
    let ep = endpoint(&env);

    let (_, discovered) = modern(&ep, None, "server/discover", None, "");
    let versions = discovered["result"]["supportedVersions"].to_string();
    assert!(
        versions.contains("2026-07-28") && versions.contains("2025-06-18"),
        "{discovered}"
    );

    // Each request names its pane itself: no session is created or needed.
    let (head, registered) = modern(
        &ep,
        Some(&surface),
        "tools/call",
        Some("register_peer"),
        r#""name":"register_peer","arguments":{"name":"modern"},"#,
    );
    assert!(
        !head.to_ascii_lowercase().contains("mcp-session-id"),
        "{head}"
    );
    assert_eq!(
        registered["result"]["structuredContent"]["peer"]["pane"], "%1",
        "{registered}"
    );
    let (_, anonymous) = modern(
        &ep,
        None,
        "tools/call",
        Some("receive_messages"),
        r#""name":"receive_messages","arguments":{},"#,
    );
    assert_eq!(anonymous["result"]["isError"], true, "{anonymous}");
    let (_, listed) = modern(
        &ep,
        None,
        "tools/call",
        Some("pane_list"),
        r#""name":"pane_list","arguments":{},"#,
    );
    assert!(listed.to_string().contains("\"modern\""), "{listed}");
}
