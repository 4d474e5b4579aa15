//! Shared pieces of the endpoint tests: a fake owner loop, a server in a temp state dir, and a
//! raw HTTP/1.1 client that can send anything (including requests hyper's client would refuse).

pub mod fake_backend;

use std::path::PathBuf;
use std::time::Duration;

use calyx::http::{
    self, EndpointCall, EndpointHandle, EndpointOptions, EndpointReply, EndpointRequest, Identity,
};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

/// Surface ids the fake owner resolves; anything else is "no such pane".
pub const KNOWN_SURFACE: &str = "surface-known-1";
pub const KNOWN_SESSION: &str = "session-known-1";

/// The decision the fake owner gives every approval from a known pane.
pub fn allow_decision() -> Value {
    json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}})
}

/// What the fake owner received.
#[derive(Debug, Clone, PartialEq)]
pub struct Seen {
    pub approval: bool,
    pub identity: Identity,
    pub payload: Value,
}

/// A fake owner loop: answers like the real one would and reports every call it got.
///
/// Events from a known pane get NoContent, approvals from one get [`allow_decision`]; unknown
/// panes get BadRequest. An approval whose payload has `"owner": "drop"` has its reply sender
/// dropped; `"owner": "hold"` is never answered (the sender is kept alive).
pub fn spawn_owner() -> (http::EndpointSender, mpsc::UnboundedReceiver<Seen>) {
    let (sender, mut requests) = mpsc::channel::<EndpointRequest>(64);
    let (seen_tx, seen_rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Some(EndpointRequest { call, reply }) = requests.recv().await {
            let (approval, identity, payload) = match call {
                EndpointCall::AgentEvent { identity, payload } => (false, identity, payload),
                EndpointCall::ApprovalRequest { identity, payload } => (true, identity, payload),
            };
            let known = identity.surface_id.as_deref() == Some(KNOWN_SURFACE)
                || identity.session_id.as_deref() == Some(KNOWN_SESSION);
            let directive = payload
                .get("owner")
                .and_then(Value::as_str)
                .map(str::to_owned);
            let _ = seen_tx.send(Seen {
                approval,
                identity,
                payload,
            });
            match directive.as_deref() {
                Some("drop") => drop(reply),
                Some("hold") => held.push(reply),
                _ if !known => {
                    let _ = reply.send(EndpointReply::BadRequest("unknown pane".into()));
                }
                _ if approval => {
                    let _ = reply.send(EndpointReply::Json(allow_decision()));
                }
                _ => {
                    let _ = reply.send(EndpointReply::NoContent);
                }
            }
        }
    });
    (sender, seen_rx)
}

/// Options for a test server: kernel-assigned port, endpoint file under `state_home`
/// (`$XDG_STATE_HOME/calyx/agent-endpoint.json`, where `calyx hook` looks), short timeouts.
pub fn test_options(state_home: &std::path::Path) -> EndpointOptions {
    EndpointOptions {
        request_timeout: Duration::from_millis(500),
        head_timeout: Duration::from_millis(500),
        shutdown_grace: Duration::from_millis(500),
        ..EndpointOptions::ephemeral(endpoint_path(state_home))
    }
}

/// Where the endpoint file lives for a given `XDG_STATE_HOME`.
pub fn endpoint_path(state_home: &std::path::Path) -> PathBuf {
    state_home.join("calyx").join("agent-endpoint.json")
}

/// A started server with a fake owner in a fresh temp state dir.
pub struct TestServer {
    pub handle: EndpointHandle,
    pub seen: mpsc::UnboundedReceiver<Seen>,
    pub state_home: tempfile::TempDir,
}

pub async fn start_server() -> TestServer {
    let state_home = tempfile::tempdir().expect("tempdir");
    start_server_in(state_home, |o| o).await
}

pub async fn start_server_in(
    state_home: tempfile::TempDir,
    adjust: impl FnOnce(EndpointOptions) -> EndpointOptions,
) -> TestServer {
    let (sender, seen) = spawn_owner();
    let options = adjust(test_options(state_home.path()));
    let handle = http::start(sender, options).await.expect("endpoint starts");
    TestServer {
        handle,
        seen,
        state_home,
    }
}

/// A parsed response.
#[derive(Debug)]
pub struct RawResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl RawResponse {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "body is not JSON ({e}): {:?}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Sends a request with `Connection: close` and reads the whole response.
pub async fn request(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> RawResponse {
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: {}\r\n", body.len());
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body);
    send_raw(port, &bytes).await.expect("a response")
}

/// An authorized request.
pub async fn authed(
    server: &TestServer,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> RawResponse {
    let auth = format!("Bearer {}", server.handle.token());
    let mut all = vec![("Authorization", auth.as_str())];
    all.extend_from_slice(headers);
    request(server.handle.port(), method, path, &all, body).await
}

/// Writes `bytes`, then reads until the server closes; `None` when it closed without a
/// response. Fails the test after 10 s.
pub async fn send_raw(port: u16, bytes: &[u8]) -> Option<RawResponse> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("connect");
    // The server may answer and close before all of a refused request is written.
    let _ = stream.write_all(bytes).await;
    read_response(&mut stream).await
}

/// Reads until the server closes the connection (resets count as a close).
pub async fn read_response(stream: &mut TcpStream) -> Option<RawResponse> {
    let mut buf = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), async {
        let mut chunk = [0u8; 8192];
        loop {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
    })
    .await;
    assert!(
        read.is_ok(),
        "server neither answered nor closed within 10 s"
    );
    parse(&buf)
}

fn parse(buf: &[u8]) -> Option<RawResponse> {
    let end = buf.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&buf[..end]).ok()?;
    let mut lines = head.split("\r\n");
    let status = lines.next()?.split(' ').nth(1)?.parse().ok()?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let mut body = buf[end + 4..].to_vec();
    if let Some((_, len)) = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
    {
        body.truncate(len.parse().ok()?);
    }
    Some(RawResponse {
        status,
        headers,
        body,
    })
}
