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
    post_to(ep, "/mcp", headers, body)
}

/// [`post`] to another MCP route (`/mcp-hosted`).
pub fn post_to(
    ep: &Endpoint,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (String, serde_json::Value) {
    let mut s = send(ep, path, headers, body);
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    let (head, rest) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
    (head.to_string(), response_json(rest))
}

/// A tool call the server is working on (see [`McpSession::start`]).
#[derive(Debug)]
pub struct PendingCall {
    reader: std::thread::JoinHandle<serde_json::Value>,
}

impl PendingCall {
    /// Waits for the answer; returns the JSON-RPC `result`.
    pub fn join(self) -> serde_json::Value {
        self.reader.join().expect("reader thread")
    }
}

/// Writes one request; the response is left on the stream.
fn send(ep: &Endpoint, path: &str, headers: &[(&str, &str)], body: &str) -> std::net::TcpStream {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", ep.port)).expect("connect");
    let mut req = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
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
    s
}

/// The JSON-RPC response in a body (SSE or JSON), Null when there is none.
fn response_json(body: &str) -> serde_json::Value {
    body.lines()
        .filter_map(|l| {
            l.strip_prefix("data:")
                .map(str::trim)
                .or_else(|| l.trim_start().starts_with('{').then_some(l.trim()))
        })
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v.get("result").is_some() || v.get("error").is_some())
        .unwrap_or(serde_json::Value::Null)
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
        let mut headers = vec![("X-Calyx-Surface-ID", surface)];
        if let Some(kind) = kind {
            headers.push(("X-Calyx-Agent-Kind", kind));
        }
        Self::open_with(env, &headers).0
    }

    /// Initializes a session sending exactly these identity headers (none: a client outside
    /// calyx); returns it with the `initialize` result (its `instructions`).
    pub fn open_with(env: &Env, identity: &[(&str, &str)]) -> (Self, serde_json::Value) {
        let mut s = Self {
            ep: endpoint(env),
            headers: identity
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        };
        let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"0"}}}"#;
        let (head, initialized) = s.post(init);
        s.headers
            .push(("Mcp-Session-Id".into(), session_header(&head)));
        s.headers
            .push(("MCP-Protocol-Version".into(), "2025-06-18".into()));
        s.post(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        (s, initialized["result"].clone())
    }

    /// Starts a tool call and returns once the server has accepted it (the head of its SSE
    /// answer arrived: rmcp sends it after handing the request to the session, long before the
    /// result), so the test can drive the change the call waits for; [`PendingCall::join`]
    /// gives its `result`.
    pub fn start(&self, tool: &str, args: serde_json::Value) -> PendingCall {
        let body = serde_json::json!({
            "jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": tool, "arguments": args},
        });
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let mut stream = send(&self.ep, "/mcp", &headers, &body.to_string());
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            match stream.read(&mut byte) {
                Ok(1) => head.push(byte[0]),
                _ => break,
            }
        }
        let reader = std::thread::spawn(move || {
            let mut rest = String::new();
            let _ = stream.read_to_string(&mut rest);
            response_json(&rest)["result"].clone()
        });
        PendingCall { reader }
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

/// The `initialize` a client sends first (protocol 2025-06-18, no identity).
pub const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"0"}}}"#;

/// The status code of a response head ("HTTP/1.1 200 OK" → 200; 0 when there is none).
pub fn status(head: &str) -> u16 {
    head.split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// Whether the server still has session `id`: its `notifications/initialized` is accepted
/// (202) rather than answered 404.
pub fn session_alive(ep: &Endpoint, id: &str) -> bool {
    let (head, _) = post(
        ep,
        &[
            ("Mcp-Session-Id", id),
            ("MCP-Protocol-Version", "2025-06-18"),
        ],
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    status(&head) == 202
}

/// Sends a bodiless request (`GET`, `DELETE`) to `path` with the token and `headers`; returns
/// the open stream once the response head has arrived, with that head.
pub fn open(
    ep: &Endpoint,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> (std::net::TcpStream, String) {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", ep.port)).expect("connect");
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\nAuthorization: Bearer {}\r\nAccept: application/json, text/event-stream\r\n",
        ep.port, ep.token
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).expect("write");
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match s.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => break,
        }
    }
    (s, String::from_utf8_lossy(&head).into_owned())
}

/// The resident memory of process `pid` in KiB (VmRSS in /proc/PID/status).
pub fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
        .unwrap_or(0)
}
