//! A minimal MCP client over raw HTTP for end-to-end tests against a real server's `/mcp`:
//! POST any JSON-RPC message with any headers, or open a session with a pane's identity and
//! call tools.

use std::io::{Read, Write};

use super::{wait_until, Env};

/// Where the test server's endpoint listens, from its endpoint file.
#[derive(Debug, Clone)]
pub struct Endpoint {
    pub port: u16,
    pub token: String,
}

/// Waits for the server's endpoint file and reads it.
pub fn endpoint(env: &Env) -> Endpoint {
    let text = wait_until("endpoint file", || {
        std::fs::read_to_string(env.path().join("state/calyx/agent-endpoint.json")).ok()
    });
    let v: serde_json::Value = serde_json::from_str(&text).expect("endpoint json");
    Endpoint {
        port: v["port"].as_u64().unwrap_or(0) as u16,
        token: v["token"].as_str().unwrap_or_default().to_string(),
    }
}

/// POSTs one JSON-RPC message with the bearer token and `headers`; returns the response head
/// and the JSON-RPC response in its body (SSE or JSON), Null when there is none.
pub fn post(ep: &Endpoint, headers: &[(&str, &str)], body: &str) -> (String, serde_json::Value) {
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

/// The `Mcp-Session-Id` of a response head.
pub fn session_header(head: &str) -> String {
    head.lines()
        .find_map(|l| {
            l.split_once(':')
                .filter(|(k, _)| k.eq_ignore_ascii_case("mcp-session-id"))
                .map(|(_, v)| v.trim().to_string())
        })
        .expect("an mcp-session-id")
}

/// A session on the server's `/mcp`, bound to a pane by its surface id.
#[derive(Debug, Clone)]
pub struct McpSession {
    ep: Endpoint,
    /// Sent with every request: identity, session id, protocol version.
    headers: Vec<(String, String)>,
}

impl McpSession {
    /// Initializes a session as the pane whose `CALYX_SURFACE_ID` is `surface`.
    pub fn open(env: &Env, surface: &str) -> Self {
        Self::open_as(env, surface, None)
    }

    /// The same, also naming the agent CLI (`X-Calyx-Agent-Kind`) when `kind` is given.
    pub fn open_as(env: &Env, surface: &str, kind: Option<&str>) -> Self {
        let mut s = Self {
            ep: endpoint(env),
            headers: vec![("X-Calyx-Surface-ID".into(), surface.into())],
        };
        if let Some(kind) = kind {
            s.headers.push(("X-Calyx-Agent-Kind".into(), kind.into()));
        }
        let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"0"}}}"#;
        let (head, _) = s.post(init);
        s.headers
            .push(("Mcp-Session-Id".into(), session_header(&head)));
        s.headers
            .push(("MCP-Protocol-Version".into(), "2025-06-18".into()));
        s.post(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        s
    }

    /// Calls a tool; returns the JSON-RPC `result` (with `structuredContent` and `isError`).
    pub fn call(&self, tool: &str, args: serde_json::Value) -> serde_json::Value {
        let body = serde_json::json!({
            "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": tool, "arguments": args},
        });
        let (_, json) = self.post(&body.to_string());
        json["result"].clone()
    }

    fn post(&self, body: &str) -> (String, serde_json::Value) {
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        post(&self.ep, &headers, body)
    }
}
