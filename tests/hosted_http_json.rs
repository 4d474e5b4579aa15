//! Streamable HTTP answers that server-everything does not give: a server on loopback (hyper)
//! that answers with plain JSON bodies instead of SSE, whose raw `tools/list` body the tap
//! reads for `execution.taskSupport` (once: no repeated request); one that checks the
//! configured header arrives; an answer over 64 MiB fails that call only; and one that answers
//! 401.

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use calyx::hosted::connection::filter::Exclusion;
use calyx::hosted::connection::in_flight::OVERSIZED;
use calyx::hosted::connection::{connect_http, ConnectError, HttpLaunch, INIT_TIMEOUT};
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rmcp::model::CallToolRequestParams;
use serde_json::{json, Value};

/// How the fake server behaves.
#[derive(Clone, Copy)]
enum Mode {
    /// Answers every request with an `application/json` body.
    Json,
    /// Answers everything with 401 and no challenge.
    Unauthorized,
}

/// The fake server's counters.
#[derive(Default)]
struct Seen {
    tools_lists: AtomicUsize,
    /// Requests that carried `X-Team: calyx`.
    with_header: AtomicUsize,
    requests: AtomicUsize,
}

fn answer(message: &Value) -> Response<Full<Bytes>> {
    let id = message.get("id").cloned();
    let Some(id) = id else {
        return Response::builder()
            .status(StatusCode::ACCEPTED)
            .body(Full::new(Bytes::new()))
            .unwrap_or_default();
    };
    let body = match message["method"].as_str() {
        Some("initialize") => json!({"jsonrpc": "2.0", "id": id, "result": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "json-only", "version": "1"}}}),
        Some("tools/list") => json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [
            {"name": "plain", "inputSchema": {"type": "object"}},
            {"name": "tasky", "inputSchema": {"type": "object"},
             "execution": {"taskSupport": "required"}}]}}),
        Some("tools/call") => {
            let text = match message["params"]["name"].as_str() {
                Some("big") => "x".repeat(65 << 20),
                _ => "plain".to_string(),
            };
            json!({"jsonrpc": "2.0", "id": id,
                   "result": {"content": [{"type": "text", "text": text}]}})
        }
        _ => json!({"jsonrpc": "2.0", "id": id,
                    "error": {"code": -32601, "message": "method not found"}}),
    };
    Response::builder()
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap_or_default()
}

/// Serves `mode` on a free loopback port until the test ends; returns the URL.
async fn serve(mode: Mode, seen: Arc<Seen>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let seen = seen.clone();
            let service = service_fn(move |request: Request<hyper::body::Incoming>| {
                let seen = seen.clone();
                async move {
                    seen.requests.fetch_add(1, Ordering::SeqCst);
                    if request.headers().get("x-team").map(|v| v.as_bytes()) == Some(b"calyx") {
                        seen.with_header.fetch_add(1, Ordering::SeqCst);
                    }
                    if let Mode::Unauthorized = mode {
                        return Ok::<_, Infallible>(
                            Response::builder()
                                .status(StatusCode::UNAUTHORIZED)
                                .body(Full::new(Bytes::from_static(b"sign in first")))
                                .unwrap_or_default(),
                        );
                    }
                    if request.method() != hyper::Method::POST {
                        return Ok(Response::builder()
                            .status(StatusCode::METHOD_NOT_ALLOWED)
                            .body(Full::new(Bytes::new()))
                            .unwrap_or_default());
                    }
                    let body = request
                        .into_body()
                        .collect()
                        .await
                        .map(|b| b.to_bytes())
                        .unwrap_or_default();
                    let message: Value = serde_json::from_slice(&body).unwrap_or_default();
                    if message["method"] == "tools/list" {
                        seen.tools_lists.fetch_add(1, Ordering::SeqCst);
                    }
                    Ok(answer(&message))
                }
            });
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    format!("http://127.0.0.1:{port}/mcp")
}

#[tokio::test]
async fn a_json_answer_to_tools_list_is_read_raw_for_task_support() {
    let seen = Arc::new(Seen::default());
    let url = serve(Mode::Json, seen.clone()).await;
    let launch = HttpLaunch {
        url,
        legacy_sse: false,
        headers: vec![("X-Team".into(), "calyx".into())],
    };
    let connected = connect_http("js", &launch, INIT_TIMEOUT)
        .await
        .expect("connects");
    let published: Vec<&str> = connected
        .tools
        .published
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(published, ["js-plain"]);
    assert_eq!(
        connected.tools.excluded,
        [("tasky".to_string(), Exclusion::TaskRequired)]
    );
    // The tap reads the answer's own bytes: `tools/list` is not repeated.
    assert_eq!(seen.tools_lists.load(Ordering::SeqCst), 1);

    // An answer over 64 MiB fails that call; the session goes on.
    let peer = connected.service.peer().clone();
    let big = peer
        .call_tool(CallToolRequestParams::new("big"))
        .await
        .expect_err("over 64 MiB")
        .to_string();
    assert!(big.contains(OVERSIZED), "{big}");
    let plain = peer
        .call_tool(CallToolRequestParams::new("plain"))
        .await
        .expect("the next call works");
    assert_eq!(
        serde_json::to_value(&plain).expect("json")["content"][0]["text"],
        "plain"
    );
    // Every request carried the configured header.
    assert_eq!(
        seen.with_header.load(Ordering::SeqCst),
        seen.requests.load(Ordering::SeqCst)
    );
    connected.shutdown().await;
}

#[tokio::test]
async fn a_401_says_sign_in_is_needed() {
    let url = serve(Mode::Unauthorized, Arc::default()).await;
    let launch = HttpLaunch {
        url,
        ..HttpLaunch::default()
    };
    let err = connect_http("auth", &launch, INIT_TIMEOUT)
        .await
        .err()
        .expect("refused");
    assert!(matches!(err, ConnectError::SignInRequired), "{err:?}");
    assert_eq!(
        err.to_string(),
        "the server requires sign-in (HTTP 401), which calyx cannot do for it: add an Authorization header in Edit"
    );
}
