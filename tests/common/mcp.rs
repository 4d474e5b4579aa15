//! A minimal MCP client over raw HTTP for end-to-end tests against a real server's `/mcp`:
//! initialize with a pane's identity, then call tools and get their `result` objects.

use std::io::{Read, Write};

use super::{wait_until, Env};

/// A session on the server's `/mcp`, bound to a pane by its surface id.
pub struct McpSession {
    port: u16,
    token: String,
    surface: String,
    session: String,
}

impl McpSession {
    /// Initializes a session as the pane whose `CALYX_SURFACE_ID` is `surface`.
    pub fn open(env: &Env, surface: &str) -> Self {
        let text = wait_until("endpoint file", || {
            std::fs::read_to_string(env.path().join("state/calyx/agent-endpoint.json")).ok()
        });
        let v: serde_json::Value = serde_json::from_str(&text).expect("endpoint json");
        let mut s = Self {
            port: v["port"].as_u64().unwrap_or(0) as u16,
            token: v["token"].as_str().unwrap_or_default().to_string(),
            surface: surface.to_string(),
            session: String::new(),
        };
        let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"0"}}}"#;
        let (head, _) = s.post(init);
        s.session = head
            .lines()
            .find_map(|l| {
                l.split_once(':')
                    .filter(|(k, _)| k.eq_ignore_ascii_case("mcp-session-id"))
                    .map(|(_, v)| v.trim().to_string())
            })
            .expect("an mcp-session-id");
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

    /// POSTs one JSON-RPC message; returns the response head and its JSON (SSE or JSON body).
    fn post(&self, body: &str) -> (String, serde_json::Value) {
        let mut s = std::net::TcpStream::connect(("127.0.0.1", self.port)).expect("connect");
        let mut req = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\nX-Calyx-Surface-ID: {}\r\nContent-Length: {}\r\n",
            self.port,
            self.token,
            self.surface,
            body.len()
        );
        if !self.session.is_empty() {
            req.push_str(&format!("Mcp-Session-Id: {}\r\n", self.session));
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
}
