//! The transport against a real HTTP server on a random loopback port (hyper), scripted per
//! case: answers as JSON or as SSE with messages interleaved, 202s, the session id and
//! protocol version headers, an oversized event, a lost answer, a 404 for an expired session
//! and the 401 / 403 challenges the sign-in looks for.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper::{HeaderMap, Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};

use super::StreamableHttp;
use crate::hosted::connection::http_client::http_client;
use crate::hosted::connection::in_flight::OVERSIZED;
use crate::hosted::connection::raw_tap::TaskRequired;
use crate::hosted::oauth::{find_challenge, Challenge};

/// One request the server saw.
#[derive(Debug, Clone)]
struct Seen {
    method: Method,
    headers: HeaderMap,
    body: Value,
}

type Script = Arc<dyn Fn(&Seen) -> Response<Full<Bytes>> + Send + Sync>;

/// Serves `script` until the test ends; returns the URL and what was seen.
async fn serve(script: Script) -> (url::Url, Arc<Mutex<Vec<Seen>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (script, log) = (script.clone(), log.clone());
            let service = service_fn(move |request: Request<hyper::body::Incoming>| {
                let (script, log) = (script.clone(), log.clone());
                async move {
                    let method = request.method().clone();
                    let headers = request.headers().clone();
                    let body = request
                        .into_body()
                        .collect()
                        .await
                        .map(|b| b.to_bytes())
                        .unwrap_or_default();
                    let seen = Seen {
                        method,
                        headers,
                        body: serde_json::from_slice(&body).unwrap_or_default(),
                    };
                    let response = script(&seen);
                    log.lock().expect("log").push(seen);
                    Ok::<_, Infallible>(response)
                }
            });
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    let url = format!("http://127.0.0.1:{port}/mcp").parse().expect("url");
    (url, seen)
}

fn status(code: StatusCode) -> Response<Full<Bytes>> {
    Response::builder()
        .status(code)
        .body(Full::new(Bytes::new()))
        .unwrap_or_default()
}

fn json_body(value: Value) -> Response<Full<Bytes>> {
    Response::builder()
        .header("content-type", "application/json")
        .header("mcp-session-id", "s-1")
        .body(Full::new(Bytes::from(value.to_string())))
        .unwrap_or_default()
}

fn events(events: &[String]) -> Response<Full<Bytes>> {
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Full::new(Bytes::from(events.concat())))
        .unwrap_or_default()
}

fn event(value: Value) -> String {
    format!("event: message\ndata: {value}\n\n")
}

fn initialize_result(id: &Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {
        "protocolVersion": "2025-06-18",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "scripted", "version": "1"}}})
}

/// The answers every case shares: `initialize` (JSON, session `s-1`), 202 for notifications,
/// 405 for the GET stream, 200 for DELETE; `call` answers the rest.
fn script(call: impl Fn(&Value, &Seen) -> Response<Full<Bytes>> + Send + Sync + 'static) -> Script {
    Arc::new(move |seen: &Seen| {
        if seen.method == Method::GET {
            return status(StatusCode::METHOD_NOT_ALLOWED);
        }
        if seen.method == Method::DELETE {
            return status(StatusCode::OK);
        }
        let id = seen.body["id"].clone();
        match seen.body["method"].as_str() {
            Some("initialize") => json_body(initialize_result(&id)),
            _ if id.is_null() => status(StatusCode::ACCEPTED),
            _ => call(&id, seen),
        }
    })
}

async fn connect(
    url: &url::Url,
    task_required: &TaskRequired,
    limit: usize,
) -> RunningService<RoleClient, ()> {
    let transport = StreamableHttp::new(
        http_client().expect("client"),
        url.clone(),
        HeaderMap::new(),
        None,
        task_required.clone(),
    )
    .with_limit(limit);
    tokio::time::timeout(Duration::from_secs(10), ().serve(transport))
        .await
        .expect("initialize in time")
        .expect("initialized")
}

fn text(result: &rmcp::model::CallToolResult) -> String {
    serde_json::to_value(result).expect("json")["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn sse_answers_carry_interleaved_messages_and_the_session_headers() {
    let (url, seen) = serve(script(|id, seen| match seen.body["method"].as_str() {
        Some("tools/list") => events(&[event(json!({"jsonrpc": "2.0", "id": id, "result": {
            "tools": [{"name": "tasky", "inputSchema": {"type": "object"},
                       "execution": {"taskSupport": "required"}}]}}))]),
        _ => events(&[
            ": a comment\n\n".to_string(),
            event(json!({"jsonrpc": "2.0", "method": "notifications/message",
                         "params": {"level": "info", "data": "working"}})),
            event(json!({"jsonrpc": "2.0", "id": id,
                         "result": {"content": [{"type": "text", "text": "done"}]}})),
        ]),
    }))
    .await;
    let task_required = TaskRequired::default();
    let client = connect(&url, &task_required, 1 << 20).await;
    let tools = client.peer().list_all_tools().await.expect("tools/list");
    assert_eq!(tools.len(), 1);
    assert!(task_required.lock().expect("set").contains("tasky"));
    let done = client
        .peer()
        .call_tool(CallToolRequestParams::new("echo"))
        .await
        .expect("answered");
    assert_eq!(text(&done), "done");
    let _ = client.cancel().await;

    let seen = seen.lock().expect("seen").clone();
    let posts: Vec<&Seen> = seen.iter().filter(|s| s.method == Method::POST).collect();
    assert_eq!(posts[0].body["method"], "initialize");
    assert!(posts[0].headers.get("mcp-session-id").is_none());
    assert!(posts[0].headers.get("mcp-protocol-version").is_none());
    for post in &posts {
        let accept = post.headers.get("accept").map(|v| v.as_bytes());
        assert_eq!(accept, Some(&b"application/json, text/event-stream"[..]));
        assert_eq!(
            post.headers.get("content-type").map(|v| v.as_bytes()),
            Some(&b"application/json"[..])
        );
    }
    for later in &posts[1..] {
        assert_eq!(
            later.headers.get("mcp-session-id").map(|v| v.as_bytes()),
            Some(&b"s-1"[..]),
            "{:?}",
            later.body
        );
        assert_eq!(
            later
                .headers
                .get("mcp-protocol-version")
                .map(|v| v.as_bytes()),
            Some(&b"2025-06-18"[..])
        );
    }
    // The GET stream was tried (405: none), and closing deleted the session.
    assert!(seen.iter().any(|s| s.method == Method::GET));
    let delete = seen.iter().find(|s| s.method == Method::DELETE);
    let delete = delete.expect("DELETE on close");
    assert_eq!(
        delete.headers.get("mcp-session-id").map(|v| v.as_bytes()),
        Some(&b"s-1"[..])
    );
}

#[tokio::test]
async fn an_oversized_event_or_body_fails_that_call_and_the_session_goes_on() {
    let (url, _) = serve(script(|id, seen| {
        let big = "x".repeat(2048);
        let result = |text: &str| {
            json!({"jsonrpc": "2.0", "id": id,
                   "result": {"content": [{"type": "text", "text": text}]}})
        };
        match seen.body["params"]["name"].as_str() {
            Some("big-event") => events(&[event(result(&big))]),
            Some("big-json") => json_body(result(&big)),
            _ => json_body(result("small")),
        }
    }))
    .await;
    let client = connect(&url, &TaskRequired::default(), 1024).await;
    for name in ["big-event", "big-json"] {
        let error = client
            .peer()
            .call_tool(CallToolRequestParams::new(name))
            .await
            .expect_err("over the limit")
            .to_string();
        assert!(error.contains(OVERSIZED), "{name}: {error}");
    }
    let small = client
        .peer()
        .call_tool(CallToolRequestParams::new("small"))
        .await
        .expect("the session goes on");
    assert_eq!(text(&small), "small");
    let _ = client.cancel().await;
}

#[tokio::test]
async fn a_stream_that_ends_without_the_answer_fails_the_call() {
    let (url, _) = serve(script(|_, _| {
        events(&[event(
            json!({"jsonrpc": "2.0", "method": "notifications/message",
                               "params": {"level": "info", "data": "bye"}}),
        )])
    }))
    .await;
    let client = connect(&url, &TaskRequired::default(), 1 << 20).await;
    let error = tokio::time::timeout(
        Duration::from_secs(10),
        client.peer().call_tool(CallToolRequestParams::new("x")),
    )
    .await
    .expect("not left waiting")
    .expect_err("no answer")
    .to_string();
    assert!(error.contains("without answering"), "{error}");
    let _ = client.cancel().await;
}

#[tokio::test]
async fn a_404_for_the_session_ends_the_transport() {
    let (url, _) = serve(script(|_, _| status(StatusCode::NOT_FOUND))).await;
    let client = connect(&url, &TaskRequired::default(), 1 << 20).await;
    let error = client
        .peer()
        .call_tool(CallToolRequestParams::new("x"))
        .await
        .expect_err("expired")
        .to_string();
    assert!(error.contains("HTTP 404"), "{error}");
    // The service sees the transport end (the supervisor then reconnects).
    let quit = tokio::time::timeout(Duration::from_secs(10), client.waiting()).await;
    assert!(quit.is_ok(), "the session did not end");
}

/// An empty answer with `status` and the challenge `www-authenticate`.
fn challenge(status: StatusCode, www_authenticate: &str) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("www-authenticate", www_authenticate)
        .body(Full::new(Bytes::new()))
        .unwrap_or_default()
}

#[tokio::test]
async fn challenges_reach_the_sign_in_code() {
    let (url, _) = serve(Arc::new(|_: &Seen| {
        challenge(
            StatusCode::UNAUTHORIZED,
            "Bearer resource_metadata=\"http://x/meta\"",
        )
    }))
    .await;
    let transport = StreamableHttp::new(
        http_client().expect("client"),
        url,
        HeaderMap::new(),
        None,
        TaskRequired::default(),
    );
    let error = ().serve(transport).await.expect_err("401");
    // As `http::initialize_failed` reads it: the transport's error inside rmcp's.
    let rmcp::service::ClientInitializeError::TransportError { error, .. } = error else {
        panic!("not a transport error: {error}");
    };
    assert_eq!(
        find_challenge(&error),
        Some(Challenge::Unauthorized(
            "Bearer resource_metadata=\"http://x/meta\"".into()
        ))
    );

    let (url, _) = serve(script(|_, _| {
        challenge(
            StatusCode::FORBIDDEN,
            "Bearer error=\"insufficient_scope\", scope=\"files:write\"",
        )
    }))
    .await;
    let client = connect(&url, &TaskRequired::default(), 1 << 20).await;
    let error = client
        .peer()
        .call_tool(CallToolRequestParams::new("x"))
        .await
        .expect_err("403");
    assert!(
        matches!(find_challenge(&error), Some(Challenge::InsufficientScope(h)) if h.contains("files:write")),
        "{error}"
    );
    let _ = client.cancel().await;
}

#[test]
fn the_scope_of_a_challenge() {
    assert_eq!(
        super::scope_of("Bearer error=\"insufficient_scope\", scope=\"a b\"").as_deref(),
        Some("a b")
    );
    assert_eq!(super::scope_of("Bearer scope=x, y=z").as_deref(), Some("x"));
    assert_eq!(super::scope_of("Bearer error=\"x\""), None);
}

/// A server whose answer stream sends only `priming` (an event with an id, no message) and
/// ends; a GET resuming after `e1` gets the answer, "resumed".
fn resumes_after(priming: &'static str) -> Script {
    Arc::new(move |seen: &Seen| {
        let resume = seen.headers.get("last-event-id").map(|v| v.as_bytes());
        match (&seen.method, resume) {
            (&Method::GET, Some(b"e1")) => events(&[format!(
                "id: e2\nevent: message\ndata: {}\n\n",
                json!({"jsonrpc": "2.0", "id": 1,
                   "result": {"content": [{"type": "text", "text": "resumed"}]}})
            )]),
            (&Method::GET, _) => status(StatusCode::METHOD_NOT_ALLOWED),
            (&Method::DELETE, _) => status(StatusCode::OK),
            _ => {
                let id = seen.body["id"].clone();
                match seen.body["method"].as_str() {
                    Some("initialize") => json_body(initialize_result(&id)),
                    _ if id.is_null() => status(StatusCode::ACCEPTED),
                    _ => events(&[priming.to_string()]),
                }
            }
        }
    })
}

#[tokio::test]
async fn a_broken_answer_stream_is_resumed_with_last_event_id() {
    // A priming event (an id, empty data), then the stream ends unanswered.
    let (url, seen) = serve(resumes_after("id: e1\ndata:\n\n")).await;
    let client = connect(&url, &TaskRequired::default(), 1 << 20).await;
    let answer = tokio::time::timeout(
        Duration::from_secs(10),
        client.peer().call_tool(CallToolRequestParams::new("x")),
    )
    .await
    .expect("answered in time")
    .expect("resumed");
    assert_eq!(text(&answer), "resumed");
    let _ = client.cancel().await;
    let seen = seen.lock().expect("seen").clone();
    let resumed = seen
        .iter()
        .find(|s| s.headers.get("last-event-id").is_some())
        .expect("a resuming GET");
    assert_eq!(resumed.method, Method::GET);
    assert_eq!(
        resumed.headers.get("mcp-session-id").map(|v| v.as_bytes()),
        Some(&b"s-1"[..])
    );
}

#[tokio::test]
async fn a_resume_waits_as_long_as_the_stream_s_retry_field_asks() {
    // A priming event asking for 400 ms before a reconnect, then the end.
    let (url, _) = serve(resumes_after("id: e1\nretry: 400\ndata:\n\n")).await;
    let client = connect(&url, &TaskRequired::default(), 1 << 20).await;
    let started = std::time::Instant::now();
    let answer = tokio::time::timeout(
        Duration::from_secs(10),
        client.peer().call_tool(CallToolRequestParams::new("x")),
    )
    .await
    .expect("answered in time")
    .expect("resumed");
    assert_eq!(text(&answer), "resumed");
    // A lower bound only: the answer cannot come before the resume, which waits the 400 ms.
    assert!(
        started.elapsed() >= Duration::from_millis(400),
        "resumed after {:?}",
        started.elapsed()
    );
    let _ = client.cancel().await;
}

/// A client that counts `notifications/tools/list_changed`.
#[derive(Clone, Default)]
struct Counting(Arc<std::sync::atomic::AtomicUsize>);

impl rmcp::ClientHandler for Counting {
    fn on_tool_list_changed(
        &self,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) -> impl std::future::Future<Output = ()> + '_ {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        std::future::ready(())
    }
}

#[tokio::test]
async fn server_messages_arrive_on_the_get_stream() {
    let gets = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = gets.clone();
    // Unlike the shared script (405), this server has one event stream, then none.
    let (url, seen) = serve(Arc::new(move |seen: &Seen| {
        if seen.method == Method::GET
            && counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0
        {
            return events(&[event(
                json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
            )]);
        }
        if seen.method == Method::GET {
            return status(StatusCode::METHOD_NOT_ALLOWED);
        }
        let id = seen.body["id"].clone();
        match seen.body["method"].as_str() {
            Some("initialize") => json_body(initialize_result(&id)),
            _ => status(StatusCode::ACCEPTED),
        }
    }))
    .await;
    let counting = Counting::default();
    let transport = StreamableHttp::new(
        http_client().expect("client"),
        url,
        HeaderMap::new(),
        None,
        TaskRequired::default(),
    );
    let client = tokio::time::timeout(Duration::from_secs(10), counting.clone().serve(transport))
        .await
        .expect("in time")
        .expect("initialized");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while counting.0.load(std::sync::atomic::Ordering::SeqCst) == 0 {
        assert!(tokio::time::Instant::now() < deadline, "no list_changed");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // After the stream ended it was opened again (then 405: given up).
    while gets.load(std::sync::atomic::Ordering::SeqCst) < 2 {
        assert!(tokio::time::Instant::now() < deadline, "not reopened");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let get = seen
        .lock()
        .expect("seen")
        .iter()
        .find(|s| s.method == Method::GET)
        .cloned()
        .expect("a GET");
    assert_eq!(
        get.headers.get("accept").map(|v| v.as_bytes()),
        Some(&b"text/event-stream"[..])
    );
    let _ = client.cancel().await;
}
