//! The agent endpoint end to end: a real server on a kernel-assigned loopback port with a fake
//! owner loop, driven by raw HTTP/1.1 over TCP.

use crate::support_endpoint as common;

use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

use calyx::http::{self, endpoint_file, Identity};
use common::*;
use serde_json::json;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

const EVENT: &[u8] = br#"{"hook_event_name":"Stop","session_id":"abc"}"#;

fn known_pane() -> [(&'static str, &'static str); 1] {
    [("X-Calyx-Surface-ID", KNOWN_SURFACE)]
}

#[tokio::test]
async fn every_route_requires_the_bearer_token() {
    let server = start_server().await;
    let port = server.handle.port();
    let missing = request(port, "POST", "/agent-event", &known_pane(), EVENT).await;
    assert_eq!(missing.status, 401);
    assert!(missing.json()["error"].is_string());
    let wrong_token = format!("Bearer {}", "0".repeat(64));
    let wrong = request(
        port,
        "POST",
        "/agent-event",
        &[("Authorization", &wrong_token), known_pane()[0]],
        EVENT,
    )
    .await;
    assert_eq!(wrong.status, 401);
    assert!(wrong.json()["error"].is_string());
    for path in ["/health", "/mcp", "/approval-request", "/nope"] {
        assert_eq!(
            request(port, "GET", path, &[], b"").await.status,
            401,
            "{path}"
        );
    }
    let right = authed(&server, "POST", "/agent-event", &known_pane(), EVENT).await;
    assert_eq!(right.status, 204);
    assert!(right.body.is_empty());
}

#[tokio::test]
async fn agent_events_reach_the_owner_with_identity() {
    let mut server = start_server().await;
    let headers = [
        ("X-Calyx-Session-ID", KNOWN_SESSION),
        ("X-Calyx-Surface-ID", "surface-9"),
        ("X-Calyx-Agent-Kind", "codex"),
    ];
    assert_eq!(
        authed(&server, "POST", "/agent-event", &headers, EVENT)
            .await
            .status,
        204
    );
    let seen = server.seen.recv().await.expect("owner saw the event");
    assert_eq!(
        seen,
        Seen {
            approval: false,
            identity: Identity {
                session_id: Some(KNOWN_SESSION.into()),
                surface_id: Some("surface-9".into()),
                agent_kind: Some(calyx::http::CallerKind::parse("codex")),
            },
            payload: json!({"hook_event_name": "Stop", "session_id": "abc"}),
        }
    );
    // Without a kind header, hook routes assume Claude Code.
    assert_eq!(
        authed(&server, "POST", "/agent-event", &known_pane(), EVENT)
            .await
            .status,
        204
    );
    let seen = server.seen.recv().await.expect("owner saw the event");
    assert_eq!(
        seen.identity.agent_kind.as_ref().map(|k| k.name()),
        Some("claude-code")
    );
}

#[tokio::test]
async fn an_unresolved_pane_is_a_400_with_a_json_error() {
    let server = start_server().await;
    let got = authed(
        &server,
        "POST",
        "/agent-event",
        &[("X-Calyx-Surface-ID", "who")],
        EVENT,
    )
    .await;
    assert_eq!(got.status, 400);
    assert_eq!(got.json(), json!({"error": "unknown pane"}));
}

#[tokio::test]
async fn approvals_wait_for_the_owner_and_no_answer_is_an_error_never_silence() {
    let server = start_server_in(tempfile::tempdir().expect("tempdir"), |o| {
        http::EndpointOptions {
            approval_timeout: Duration::from_millis(300),
            ..o
        }
    })
    .await;
    let decided = authed(
        &server,
        "POST",
        "/approval-request",
        &known_pane(),
        br#"{"tool_name":"Bash"}"#,
    )
    .await;
    assert_eq!(decided.status, 200);
    assert_eq!(decided.json(), allow_decision());
    assert_eq!(decided.header("content-type"), Some("application/json"));

    let dropped = authed(
        &server,
        "POST",
        "/approval-request",
        &known_pane(),
        br#"{"owner":"drop"}"#,
    )
    .await;
    // No answer is an error (`calyx hook` then denies where silence would run the call, and
    // prints nothing for CLIs that ask in their own prompt), never an empty 200.
    assert_eq!(dropped.status, 503);

    let started = Instant::now();
    let expired = authed(
        &server,
        "POST",
        "/approval-request",
        &known_pane(),
        br#"{"owner":"hold"}"#,
    )
    .await;
    assert_eq!(expired.status, 504);
    assert!(started.elapsed() >= Duration::from_millis(300));
}

#[tokio::test]
async fn health_reports_version_and_uptime_only() {
    let server = start_server().await;
    let got = authed(&server, "GET", "/health", &[], b"").await;
    assert_eq!(got.status, 200);
    let body = got.json();
    assert_eq!(body["version"], env!("CARGO_PKG_VERSION"));
    assert!(body["uptime_secs"].is_u64(), "{body}");
    assert_eq!(body.as_object().map(|o| o.len()), Some(2));
    assert!(!String::from_utf8_lossy(&got.body).contains(server.handle.token()));
}

#[tokio::test]
async fn unknown_routes_wrong_methods_and_mcp() {
    let server = start_server().await;
    let unknown = authed(&server, "GET", "/nope", &[], b"").await;
    assert_eq!(unknown.status, 404);
    assert!(unknown.json()["error"].is_string());
    let wrong = authed(&server, "GET", "/agent-event", &[], b"").await;
    assert_eq!(wrong.status, 405);
    assert_eq!(wrong.header("allow"), Some("POST"));
    assert_eq!(
        authed(&server, "POST", "/health", &[], b"").await.status,
        405
    );
    let mcp = authed(
        &server,
        "POST",
        "/mcp",
        &[],
        br#"{"jsonrpc":"2.0","id":1,"method":"initialize"}"#,
    )
    .await;
    assert_eq!(mcp.status, 501);
    assert_eq!(mcp.json(), json!({"error": "not yet"}));
}

#[tokio::test]
async fn malformed_json_is_a_400_with_a_json_error() {
    let mut server = start_server().await;
    for body in [&b"{not json"[..], b"", b"{\"a\":1} trailing"] {
        let got = authed(&server, "POST", "/agent-event", &known_pane(), body).await;
        assert_eq!(got.status, 400, "{body:?}");
        let error = got.json()["error"]
            .as_str()
            .map(str::to_owned)
            .unwrap_or_default();
        assert!(error.starts_with("malformed JSON"), "{error}");
    }
    assert!(
        server.seen.try_recv().is_err(),
        "a malformed payload reached the owner"
    );
}

#[tokio::test]
async fn oversized_headers_get_431() {
    // hyper's max_header_size: a head over 8 KiB is answered with 431 and the connection is
    // closed. (A reset before the client reads it is also acceptable to callers; on loopback
    // the 431 arrives.)
    let server = start_server().await;
    let big = "x".repeat(9 * 1024);
    let auth = format!("Bearer {}", server.handle.token());
    let raw = format!("POST /agent-event HTTP/1.1\r\nHost: x\r\nAuthorization: {auth}\r\nX-Big: {big}\r\nContent-Length: 2\r\n\r\n{{}}");
    let got = send_raw(server.handle.port(), raw.as_bytes()).await;
    let status = got.map(|r| r.status);
    eprintln!("oversized head answered with {status:?}");
    assert!(matches!(status, Some(431) | None), "{status:?}");
    // Just under the limit still works.
    let fits = "x".repeat(7 * 1024);
    let ok = authed(
        &server,
        "POST",
        "/agent-event",
        &[known_pane()[0], ("X-Pad", &fits)],
        EVENT,
    )
    .await;
    assert_eq!(ok.status, 204);
}

#[tokio::test]
async fn bodies_over_one_mebibyte_get_413() {
    let server = start_server().await;
    let auth = format!("Bearer {}", server.handle.token());
    // Announced too large: refused from Content-Length alone, before any body is sent.
    let head = format!(
        "POST /agent-event HTTP/1.1\r\nHost: x\r\nAuthorization: {auth}\r\nContent-Length: {}\r\n\r\n",
        2 * 1024 * 1024
    );
    let got = send_raw(server.handle.port(), head.as_bytes())
        .await
        .expect("a response");
    assert_eq!(got.status, 413);
    assert!(got.json()["error"].is_string());

    // Streamed too large: chunked, with no length up front.
    let mut raw = format!("POST /agent-event HTTP/1.1\r\nHost: x\r\nAuthorization: {auth}\r\nTransfer-Encoding: chunked\r\n\r\n").into_bytes();
    let chunk = vec![b' '; 64 * 1024];
    for _ in 0..17 {
        raw.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        raw.extend_from_slice(&chunk);
        raw.extend_from_slice(b"\r\n");
    }
    raw.extend_from_slice(b"0\r\n\r\n");
    let got = send_raw(server.handle.port(), &raw)
        .await
        .expect("a response");
    assert_eq!(got.status, 413);

    // Exactly at the limit is accepted (a JSON string padded with spaces).
    let mut body = vec![b' '; 1024 * 1024 - 2];
    body.extend_from_slice(b"{}");
    let ok = authed(&server, "POST", "/agent-event", &known_pane(), &body).await;
    assert_eq!(ok.status, 204);
}

#[tokio::test]
async fn a_stalled_head_is_closed_after_the_request_timeout() {
    let server = start_server().await; // request_timeout: 500 ms
    let mut stream = TcpStream::connect(("127.0.0.1", server.handle.port()))
        .await
        .expect("connect");
    stream
        .write_all(b"POST /agent-event HTTP/1.1\r\nHost: x\r\nContent-Le")
        .await
        .expect("write");
    let started = Instant::now();
    let got = read_response(&mut stream).await;
    let waited = started.elapsed();
    // hyper's header_read_timeout closes the connection without a response.
    assert!(
        got.is_none() || got.as_ref().is_some_and(|r| r.status == 408),
        "{got:?}"
    );
    assert!(
        waited >= Duration::from_millis(400) && waited < Duration::from_secs(5),
        "{waited:?}"
    );
}

#[tokio::test]
async fn a_stalled_body_gets_408() {
    let server = start_server().await; // request_timeout: 500 ms
    let mut stream = TcpStream::connect(("127.0.0.1", server.handle.port()))
        .await
        .expect("connect");
    let head = format!(
        "POST /agent-event HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\nContent-Length: 100\r\n\r\n{{\"half\":",
        server.handle.token()
    );
    stream.write_all(head.as_bytes()).await.expect("write");
    let started = Instant::now();
    let got = read_response(&mut stream).await.expect("a response");
    assert_eq!(got.status, 408);
    assert!(got.json()["error"].is_string());
    assert!(started.elapsed() < Duration::from_secs(5));
    // The server is still answering others.
    assert_eq!(
        authed(&server, "GET", "/health", &[], b"").await.status,
        200
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_hundred_concurrent_events_are_all_answered() {
    let mut server = start_server().await;
    let port = server.handle.port();
    let auth = format!("Bearer {}", server.handle.token());
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..500 {
        let auth = auth.clone();
        tasks.spawn(async move {
            let body = format!(r#"{{"n":{i}}}"#);
            request(
                port,
                "POST",
                "/agent-event",
                &[("Authorization", &auth), known_pane()[0]],
                body.as_bytes(),
            )
            .await
            .status
        });
    }
    let mut statuses = Vec::new();
    while let Some(status) = tasks.join_next().await {
        statuses.push(status.expect("task"));
    }
    assert_eq!(statuses.len(), 500);
    assert!(statuses.iter().all(|s| *s == 204), "{statuses:?}");
    let mut seen = 0;
    while server.seen.try_recv().is_ok() {
        seen += 1;
    }
    assert_eq!(seen, 500);
}

#[tokio::test]
async fn the_endpoint_file_is_private_and_describes_the_server() {
    let server = start_server().await;
    let path = endpoint_path(server.state_home.path());
    let info = endpoint_file::read(&path).expect("endpoint file");
    assert_eq!(info.port, server.handle.port());
    assert_eq!(info.token, server.handle.token());
    assert!(http::token::is_valid(server.handle.token()));
    let text = std::fs::read_to_string(&path).expect("read");
    let value: serde_json::Value = serde_json::from_str(&text).expect("json");
    assert_eq!(value, json!({"port": info.port, "token": info.token}));
    let mode = std::fs::metadata(&path).expect("meta").permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let dir_mode = std::fs::metadata(path.parent().expect("dir"))
        .expect("meta")
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(dir_mode, 0o700);
}

#[tokio::test]
async fn a_clean_shutdown_removes_the_file_and_stops_listening() {
    let server = start_server().await;
    let path = endpoint_path(server.state_home.path());
    let port = server.handle.port();
    assert!(path.exists());
    server.handle.shutdown().await.expect("shutdown");
    assert!(!path.exists());
    assert!(TcpStream::connect(("127.0.0.1", port)).await.is_err());
}

#[tokio::test]
async fn a_restart_reuses_the_remembered_port_and_token() {
    let first = start_server().await;
    let path = endpoint_path(first.state_home.path());
    let remembered = std::fs::read(&path).expect("endpoint file");
    let (port, token) = (first.handle.port(), first.handle.token().to_owned());
    let state_home = first.state_home;
    first.handle.shutdown().await.expect("shutdown");
    // A crash leaves the file behind; a clean shutdown removed it, so put it back.
    std::fs::write(&path, &remembered).expect("restore file");

    let second = start_server_in(state_home, |o| o).await;
    assert_eq!(second.handle.port(), port);
    assert_eq!(second.handle.token(), token);
    assert_eq!(
        authed(&second, "GET", "/health", &[], b"").await.status,
        200
    );
    let info = endpoint_file::read(&path).expect("endpoint file");
    assert_eq!((info.port, info.token), (port, token));
}

#[tokio::test]
async fn a_remembered_port_in_use_gets_a_new_port_and_token() {
    let blocker = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let busy = blocker.local_addr().expect("addr").port();
    let state_home = tempfile::tempdir().expect("tempdir");
    let path = endpoint_path(state_home.path());
    let stale = endpoint_file::EndpointInfo {
        port: busy,
        token: "ab".repeat(32),
    };
    endpoint_file::write(&path, &stale).expect("write");

    let server = start_server_in(state_home, |o| o).await;
    assert_ne!(server.handle.port(), busy);
    assert_ne!(server.handle.token(), stale.token);
    assert_eq!(
        endpoint_file::read(&path).map(|i| i.port),
        Some(server.handle.port())
    );
}

#[tokio::test]
async fn keep_alive_connections_serve_several_requests() {
    let server = start_server().await;
    let mut stream = TcpStream::connect(("127.0.0.1", server.handle.port()))
        .await
        .expect("connect");
    let auth = format!("Bearer {}", server.handle.token());
    let one = format!("GET /health HTTP/1.1\r\nHost: x\r\nAuthorization: {auth}\r\n\r\n");
    let last = format!(
        "GET /health HTTP/1.1\r\nHost: x\r\nAuthorization: {auth}\r\nConnection: close\r\n\r\n"
    );
    stream
        .write_all(format!("{one}{one}{last}").as_bytes())
        .await
        .expect("write");
    let mut all = Vec::new();
    let _ = tokio::time::timeout(
        Duration::from_secs(10),
        tokio::io::AsyncReadExt::read_to_end(&mut stream, &mut all),
    )
    .await;
    let text = String::from_utf8_lossy(&all);
    assert_eq!(text.matches("HTTP/1.1 200 OK").count(), 3, "{text}");
}
