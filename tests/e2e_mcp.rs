//! End to end: a real calyx server's `/mcp`, called over HTTP the way an agent's MCP client
//! does (bearer token, identity headers, session id), answering from live panes; `pane_run`
//! waits for the human in the approval panel of a real client.

mod common;

use std::io::{Read, Write};

use common::{wait_until, Env};

struct Endpoint {
    port: u16,
    token: String,
}

fn endpoint(env: &Env) -> Endpoint {
    let text = wait_until("endpoint file", || {
        std::fs::read_to_string(env.path().join("state/calyx/agent-endpoint.json")).ok()
    });
    let v: serde_json::Value = serde_json::from_str(&text).expect("endpoint json");
    Endpoint {
        port: v["port"].as_u64().unwrap_or(0) as u16,
        token: v["token"].as_str().unwrap_or_default().to_string(),
    }
}

/// POSTs one JSON-RPC message; returns the response head and the JSON of its result (SSE or JSON).
fn post(ep: &Endpoint, headers: &[(&str, &str)], body: &str) -> (String, serde_json::Value) {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", ep.port)).expect("connect");
    let mut req = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        ep.port,
        ep.token,
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).expect("write");
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    let (head, rest) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
    let json = rest
        .lines()
        .filter_map(|l| {
            l.strip_prefix("data:")
                .map(str::trim)
                .or_else(|| l.trim_start().starts_with('{').then_some(l.trim()))
        })
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v.get("result").is_some() || v.get("error").is_some())
        .unwrap_or(serde_json::Value::Null);
    (head.to_string(), json)
}

fn session_header(head: &str) -> String {
    head.lines()
        .find_map(|l| {
            l.split_once(':')
                .filter(|(k, _)| k.eq_ignore_ascii_case("mcp-session-id"))
                .map(|(_, v)| v.trim().to_string())
        })
        .expect("an mcp-session-id")
}

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
    let ep2 = Endpoint {
        port: ep.port,
        token: ep.token.clone(),
    };
    let (surface2, session2) = (surface.clone(), session.clone());
    let runner = std::thread::spawn(move || {
        let ids = [
            ("X-Calyx-Surface-ID", surface2.as_str()),
            ("Mcp-Session-Id", session2.as_str()),
            ("MCP-Protocol-Version", "2025-06-18"),
        ];
        post(&ep2, &ids, r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"pane_run","arguments":{"pane":"%1","command":"echo ran-by-mcp"}}}"#).1
    });
    c.wait_for("echo ran-by-mcp");
    c.send("y");
    let outcome = runner.join().expect("runner");
    assert!(outcome.to_string().contains("sent"), "{outcome}");
    env.wait_capture("mcp", "ran-by-mcp\n");

    // Denied is a normal result, and nothing is typed.
    let ep3 = Endpoint {
        port: ep.port,
        token: ep.token.clone(),
    };
    let runner = std::thread::spawn(move || {
        let ids = [
            ("X-Calyx-Surface-ID", surface.as_str()),
            ("Mcp-Session-Id", session.as_str()),
            ("MCP-Protocol-Version", "2025-06-18"),
        ];
        post(&ep3, &ids, r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"pane_run","arguments":{"pane":"%1","command":"echo must-not-run"}}}"#).1
    });
    c.wait_for("echo must-not-run");
    c.send("n");
    let outcome = runner.join().expect("runner");
    assert!(outcome.to_string().contains("denied"), "{outcome}");
    let screen = String::from_utf8_lossy(&env.run(&["capture", "-t", "mcp"]).stdout).to_string();
    assert!(!screen.contains("must-not-run"), "{screen}");
}

/// Initializes an MCP session for a pane (its surface id, and the agent-kind header when
/// given); returns the headers every later request of that session carries.
fn mcp_session(ep: &Endpoint, surface: &str, kind: Option<&str>) -> Vec<(String, String)> {
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"0"}}}"#;
    let mut headers = vec![("X-Calyx-Surface-ID".to_string(), surface.to_string())];
    if let Some(kind) = kind {
        headers.push(("X-Calyx-Agent-Kind".to_string(), kind.to_string()));
    }
    let borrowed: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let (head, _) = post(ep, &borrowed, init);
    headers.push(("Mcp-Session-Id".to_string(), session_header(&head)));
    headers.push(("MCP-Protocol-Version".to_string(), "2025-06-18".to_string()));
    let ids: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    post(
        ep,
        &ids,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    headers
}

fn call(ep: &Endpoint, headers: &[(String, String)], id: u32, tool: &str, args: &str) -> String {
    let ids: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{args}}}}}"#
    );
    post(ep, &ids, &body).1.to_string()
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
    let ep = endpoint(&env);
    let alpha = mcp_session(&ep, &surface(0), None);
    let beta = mcp_session(&ep, &surface(1), Some("codex"));

    // The agent-kind header alone gives the pane an agent row; no identity kind, no row.
    let rows = wait_until("a codex row for %2", || {
        let out = env.ok(&["agents", "--json"]);
        out.contains("\"%2\"").then_some(out)
    });
    assert!(rows.contains("\"codex\""), "{rows}");
    assert!(!rows.contains("\"%1\""), "{rows}");

    let a = call(&ep, &alpha, 2, "register_peer", r#"{"name":"alpha"}"#);
    assert!(a.contains("alpha"), "{a}");
    let b = call(&ep, &beta, 2, "register_peer", r#"{"name":"beta"}"#);
    let beta_id = serde_json::from_str::<serde_json::Value>(&b)
        .ok()
        .and_then(|v| {
            v["result"]["structuredContent"]["peer"]["peer_id"]
                .as_str()
                .map(str::to_string)
        })
        .unwrap_or_else(|| panic!("no peer_id in {b}"));
    let sent = call(
        &ep,
        &alpha,
        3,
        "send_message",
        &format!(r#"{{"to":"{beta_id}","content":"review PR 7 please"}}"#),
    );
    assert!(!sent.contains("\"isError\":true"), "{sent}");
    // Beta's border shows the unread count; reading the inbox clears it.
    c.wait_for("✉1");
    let inbox = call(&ep, &beta, 3, "receive_messages", "{}");
    assert!(inbox.contains("review PR 7 please"), "{inbox}");
    wait_until("the unread badge is gone", || {
        (!c.screen().contains("✉1")).then_some(())
    });

    // deliver "type": beta's agent is idle, so the message is also typed into its pane as a
    // prompt, once the human approves it in the panel.
    let ep2 = Endpoint {
        port: ep.port,
        token: ep.token.clone(),
    };
    let (alpha2, to) = (alpha.clone(), beta_id.clone());
    let typer = std::thread::spawn(move || {
        let args = format!(r#"{{"to":"{to}","content":"echo typed-by-peer","deliver":"type"}}"#);
        call(&ep2, &alpha2, 4, "send_message", &args)
    });
    c.wait_for("typed-by-peer");
    c.send("y");
    let outcome = typer.join().expect("typer");
    assert!(outcome.contains("\"typed\":\"typed\""), "{outcome}");
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
    let surface = env.panes()[0]["surface_id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
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
