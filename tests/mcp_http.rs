//! `/mcp` at the HTTP level: the DNS-rebinding guard, the token, the body limit, and a raw
//! `initialize` with its session header, sent over raw TCP so any Host or Origin can be tried.

use crate::support_endpoint as common;

use std::sync::Arc;

use calyx::mcp::McpOptions;
use common::fake_backend::FakeBackend;
use common::*;

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;

async fn start() -> TestServer {
    let options = McpOptions::new(Arc::new(FakeBackend::new()));
    let state = tempfile::tempdir().expect("tempdir");
    start_server_in(state, move |o| calyx::http::EndpointOptions {
        mcp: Some(options),
        ..o
    })
    .await
}

/// A POST to /mcp with an explicit Host (the helper's default Host has no port).
async fn post(server: &TestServer, host: &str, extra: &[(&str, &str)], body: &str) -> RawResponse {
    post_accepting(
        server,
        host,
        "application/json, text/event-stream",
        extra,
        body,
    )
    .await
}

/// [`post`] with the client's own `Accept` header.
async fn post_accepting(
    server: &TestServer,
    host: &str,
    accept: &str,
    extra: &[(&str, &str)],
    body: &str,
) -> RawResponse {
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Length: {}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nAccept: {accept}\r\n",
        body.len(),
        server.handle.token()
    );
    for (name, value) in extra {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    head.push_str(body);
    send_raw(server.handle.port(), head.as_bytes())
        .await
        .expect("a response")
}

#[tokio::test]
async fn initialize_over_raw_http_gets_a_session() {
    let server = start().await;
    let host = format!("127.0.0.1:{}", server.handle.port());
    let response = post(
        &server,
        &host,
        &[("Origin", &format!("http://{host}"))],
        INIT,
    )
    .await;
    assert_eq!(
        response.status,
        200,
        "{:?}",
        String::from_utf8_lossy(&response.body)
    );
    assert!(response.header("mcp-session-id").is_some());
    let body = String::from_utf8_lossy(&response.body);
    assert!(body.contains(r#""protocolVersion":"2025-06-18""#), "{body}");
    assert!(body.contains("calyx"), "{body}");
}

#[tokio::test]
async fn foreign_host_or_origin_is_forbidden() {
    let server = start().await;
    let port = server.handle.port();
    let ours = format!("127.0.0.1:{port}");
    for (host, origin) in [
        ("evil.example.com".to_owned(), None),
        (
            format!("evil.example.com:{port}"),
            Some("http://evil.example.com"),
        ),
        (format!("127.0.0.2:{port}"), None),
        (ours.clone(), Some("http://evil.example.com")),
        (ours.clone(), Some("null")),
    ] {
        let extra: Vec<(&str, &str)> = origin.iter().map(|o| ("Origin", *o)).collect();
        let response = post(&server, &host, &extra, INIT).await;
        assert_eq!(response.status, 403, "{host} {origin:?}");
    }
    let localhost = post(&server, &format!("localhost:{port}"), &[], INIT).await;
    assert_eq!(localhost.status, 200);
}

#[tokio::test]
async fn token_and_body_limit_still_apply() {
    let server = start().await;
    let port = server.handle.port();
    let no_token = request(port, "POST", "/mcp", &[], INIT.as_bytes()).await;
    assert_eq!(no_token.status, 401);
    let huge = format!(
        "{{\"pad\":\"{}\"}}",
        "x".repeat(calyx::http::MAX_BODY_BYTES)
    );
    let too_big = post(&server, &format!("127.0.0.1:{port}"), &[], &huge).await;
    assert_eq!(too_big.status, 413);
}

#[tokio::test]
async fn each_client_gets_the_response_type_it_accepts() {
    let server = start().await;
    let host = format!("127.0.0.1:{}", server.handle.port());
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#;
    // JSON only: one JSON object, for the handshake and for requests in the session.
    let init = post_accepting(&server, &host, "application/json", &[], INIT).await;
    assert_eq!(
        init.status,
        200,
        "{:?}",
        String::from_utf8_lossy(&init.body)
    );
    assert_eq!(init.header("content-type"), Some("application/json"));
    assert_eq!(init.json()["result"]["serverInfo"]["name"], "calyx");
    let session = init.header("mcp-session-id").expect("a session").to_owned();
    let in_session = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let done = post_accepting(&server, &host, "application/json", &in_session, initialized).await;
    assert_eq!(done.status, 202);
    let tools = post_accepting(&server, &host, "application/json", &in_session, list).await;
    assert_eq!(tools.header("content-type"), Some("application/json"));
    let names = tools.json()["result"]["tools"].as_array().map(Vec::len);
    assert!(names.is_some_and(|n| n > 10), "{names:?}");
    // SSE only: an event stream.
    let init = post_accepting(&server, &host, "text/event-stream", &[], INIT).await;
    assert_eq!(
        init.status,
        200,
        "{:?}",
        String::from_utf8_lossy(&init.body)
    );
    assert_eq!(init.header("content-type"), Some("text/event-stream"));
    assert!(String::from_utf8_lossy(&init.body).contains("data: {"));
    // Neither: refused with what to send.
    let neither = post_accepting(&server, &host, "image/png", &[], INIT).await;
    assert_eq!(neither.status, 406);
}
