//! The legacy HTTP+SSE transport against a loopback hyper server written for what the real
//! server-everything cannot be made to do: it records the configured header on the GET and
//! on every POST, drops its event stream on demand (the session must end), sends an event over
//! 64 MiB (every call in flight fails with the sentence), and can name a message endpoint on
//! another origin (refused before anything is posted there).

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use calyx::hosted::connection::in_flight::OVERSIZED;
use calyx::hosted::connection::{connect_http, ConnectError, Connected, HttpLaunch, INIT_TIMEOUT};
use futures::StreamExt;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::Frame;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest};
use rmcp::service::PeerRequestOptions;
use serde_json::{json, Value};
use tokio::sync::mpsc;

type Body = UnsyncBoxBody<Bytes, Infallible>;

/// What the fake server shares with the test.
#[derive(Default)]
struct Fake {
    /// The endpoint event's data.
    endpoint: String,
    /// `(method and path, X-Team header)` of every request.
    requests: Mutex<Vec<(String, Option<String>)>>,
    /// `(method and path, Authorization header)` of every request.
    authorizations: Mutex<Vec<(String, Option<String>)>>,
    /// The open event stream; taking it out drops the stream.
    events: Mutex<Option<mpsc::UnboundedSender<Bytes>>>,
}

fn empty(status: StatusCode) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::new()).boxed_unsync());
    *response.status_mut() = status;
    response
}

fn answer(message: &Value) -> Option<Value> {
    let id = message.get("id")?.clone();
    Some(match message["method"].as_str() {
        Some("initialize") => json!({"jsonrpc": "2.0", "id": id, "result": {
            "protocolVersion": "2024-11-05",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "legacy", "version": "1"}}}),
        Some("tools/list") => json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [
            {"name": "echo", "inputSchema": {"type": "object"}}]}}),
        Some("tools/call") if message["params"]["name"] == "hang" => return None,
        Some("tools/call") if message["params"]["name"] == "big" => {
            json!({"jsonrpc": "2.0", "id": id, "result": {"content": [
                {"type": "text", "text": "x".repeat(65 << 20)}]}})
        }
        _ => json!({"jsonrpc": "2.0", "id": id,
                    "error": {"code": -32601, "message": "method not found"}}),
    })
}

async fn handle(fake: Arc<Fake>, request: Request<hyper::body::Incoming>) -> Response<Body> {
    let team = request
        .headers()
        .get("x-team")
        .and_then(|v| v.to_str().ok())
        .map(String::from);
    let line = format!("{} {}", request.method(), request.uri().path());
    let authorization = request
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(String::from);
    fake.authorizations
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((line.clone(), authorization));
    fake.requests
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((line, team));
    match (request.method(), request.uri().path()) {
        (&Method::GET, "/sse") => {
            let (sender, receiver) = mpsc::unbounded_channel::<Bytes>();
            let _ = sender.send(Bytes::from(format!(
                "event: endpoint\ndata: {}\n\n",
                fake.endpoint
            )));
            *fake.events.lock().unwrap_or_else(|e| e.into_inner()) = Some(sender);
            let stream = futures::stream::unfold(receiver, |mut receiver| async move {
                let bytes = receiver.recv().await?;
                Some((Ok::<_, Infallible>(Frame::data(bytes)), receiver))
            });
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(BodyExt::boxed_unsync(StreamBody::new(stream.boxed())))
                .unwrap_or_else(|_| empty(StatusCode::INTERNAL_SERVER_ERROR))
        }
        (&Method::POST, "/message") => {
            let body = request
                .into_body()
                .collect()
                .await
                .map(|b| b.to_bytes())
                .unwrap_or_default();
            let message: Value = serde_json::from_slice(&body).unwrap_or_default();
            if let Some(reply) = answer(&message) {
                let events = fake.events.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(events) = events.as_ref() {
                    let _ = events.send(Bytes::from(format!("event: message\ndata: {reply}\n\n")));
                }
            }
            empty(StatusCode::ACCEPTED)
        }
        _ => empty(StatusCode::NOT_FOUND),
    }
}

/// Serves a fake whose endpoint event says `endpoint`; returns it and the stream's URL.
async fn serve(endpoint: &str) -> (Arc<Fake>, String) {
    let fake = Arc::new(Fake {
        endpoint: endpoint.into(),
        ..Fake::default()
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let shared = fake.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let fake = shared.clone();
            let service = service_fn(move |request| {
                let fake = fake.clone();
                async move { Ok::<_, Infallible>(handle(fake, request).await) }
            });
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    (fake, format!("http://127.0.0.1:{port}/sse"))
}

fn launch(url: String) -> HttpLaunch {
    HttpLaunch {
        url,
        legacy_sse: true,
        headers: vec![("X-Team".into(), "calyx".into())],
    }
}

#[tokio::test]
async fn headers_go_on_the_get_and_every_post_and_a_dropped_stream_ends_the_session() {
    let (fake, url) = serve("/message?sessionId=s1").await;
    let connected = connect_http("old", &launch(url), INIT_TIMEOUT)
        .await
        .expect("connects");
    assert_eq!(connected.protocol_version, "2024-11-05");
    assert_eq!(connected.tools.published.len(), 1);
    let requests = fake
        .requests
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    // GET, initialize, initialized, tools/list.
    assert_eq!(requests.len(), 4, "{requests:?}");
    assert_eq!(requests[0].0, "GET /sse");
    assert!(requests[1..]
        .iter()
        .all(|(line, _)| line == "POST /message"));
    assert!(
        requests
            .iter()
            .all(|(_, team)| team.as_deref() == Some("calyx")),
        "{requests:?}"
    );

    // The server drops its event stream: the session ends.
    fake.events.lock().unwrap_or_else(|e| e.into_inner()).take();
    let Connected { service, .. } = connected;
    let ended = tokio::time::timeout(Duration::from_secs(30), service.waiting()).await;
    assert!(ended.is_ok(), "the session ends with the stream");
}

#[tokio::test]
async fn an_endpoint_on_another_origin_is_refused() {
    let (fake, url) = serve("http://127.0.0.2:9/message?sessionId=s1").await;
    let err = connect_http("old", &launch(url), INIT_TIMEOUT)
        .await
        .err()
        .expect("refused");
    assert!(matches!(err, ConnectError::Http { .. }), "{err:?}");
    let sentence = err.to_string();
    assert!(
        sentence.starts_with(
            "the server named a message endpoint on another origin (http://127.0.0.2:9/message?sessionId=s1)"
        ),
        "{sentence}"
    );
    // Nothing was posted anywhere.
    let requests = fake.requests.lock().unwrap_or_else(|e| e.into_inner());
    assert_eq!(requests.len(), 1, "{requests:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_over_64_mib_fails_every_call_in_flight_and_ends_the_session() {
    let (_fake, url) = serve("/message?sessionId=s1").await;
    let connected = connect_http("old", &launch(url), INIT_TIMEOUT)
        .await
        .expect("connects");
    let peer = connected.service.peer().clone();
    let call = |name: &str| {
        ClientRequest::CallToolRequest(CallToolRequest::new(CallToolRequestParams::new(
            name.to_owned(),
        )))
    };
    let hang = peer
        .send_cancellable_request(call("hang"), PeerRequestOptions::no_options())
        .await
        .expect("hang is sent");
    let deadline = Duration::from_secs(120);
    let big = tokio::time::timeout(deadline, peer.call_tool(CallToolRequestParams::new("big")))
        .await
        .expect("big ends instead of waiting for ever")
        .expect_err("big fails")
        .to_string();
    assert!(big.contains(OVERSIZED), "{big}");
    let hang = tokio::time::timeout(deadline, hang.await_response())
        .await
        .expect("hang ends too")
        .expect_err("hang fails")
        .to_string();
    assert!(hang.contains(OVERSIZED), "{hang}");
    let Connected { service, .. } = connected;
    let ended = tokio::time::timeout(deadline, service.waiting()).await;
    assert!(ended.is_ok(), "the session ends after the oversized event");
}

#[tokio::test]
async fn with_oauth_the_bearer_goes_on_the_get_and_every_post() {
    use calyx::hosted::connection::{connect_http_with, HttpAuth};
    use calyx::hosted::oauth::{OAuthEngine, OAuthSettings};
    use calyx::hosted::secrets::{MemoryStore, SecretStore};
    let (fake, url) = serve("/message?sessionId=s1").await;
    let secrets: Arc<dyn SecretStore> = Arc::new(MemoryStore::default());
    secrets
        .set(
            "old/tokens",
            r#"{"client_id":"c","token_response":{"access_token":"tok-1","token_type":"bearer"},"granted_scopes":[]}"#,
        )
        .expect("stored");
    let engine = OAuthEngine::new("old", &url, OAuthSettings::default(), secrets)
        .await
        .expect("engine");
    let auth = HttpAuth {
        oauth: Some(engine),
        ..HttpAuth::default()
    };
    let connected = connect_http_with("old", &launch(url), &auth, INIT_TIMEOUT)
        .await
        .expect("connects");
    assert_eq!(connected.tools.published.len(), 1);
    let seen = fake
        .authorizations
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    // The transport's own requests come last: GET, initialize, initialized, tools/list (before
    // them, discovery for the stored tokens probes the server unauthenticated, as rmcp does).
    let transport = &seen[seen.len().saturating_sub(4)..];
    let lines: Vec<&str> = transport.iter().map(|(line, _)| line.as_str()).collect();
    assert_eq!(
        lines,
        [
            "GET /sse",
            "POST /message",
            "POST /message",
            "POST /message"
        ],
        "{seen:?}"
    );
    assert!(
        transport
            .iter()
            .all(|(_, auth)| auth.as_deref() == Some("Bearer tok-1")),
        "{seen:?}"
    );
    // The fake keeps its stream open: drop the session rather than wait for a clean close.
    drop(connected);
}
