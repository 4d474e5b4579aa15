//! The fixture over Streamable HTTP on 127.0.0.1 (rmcp's service under hyper), with the
//! task-support mark added to `tools/list` answers (crate::raw).

use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::Value;
use tokio::net::TcpListener;

use crate::raw::mark_task_support;
use crate::tools::Fixture;

type Service = StreamableHttpService<Fixture, LocalSessionManager>;

/// Set by the `forget_sessions` tool: the next `tools/call` finds every session forgotten (as a
/// restarted server would), so it gets 404. Only a call consumes the mark: whatever else the
/// client sends in between (a notification, a stream reopened) must not take it, or the test's
/// next call would meet the new session instead of the 404.
pub static FORGET_SESSIONS: AtomicBool = AtomicBool::new(false);

/// Serves `fixture` on a free loopback port; prints `http://127.0.0.1:PORT/mcp` on stdout
/// first, then runs until the process ends.
/// `oauth`: wants the fixture's bearer ([`crate::oauth`]).
pub async fn serve(fixture: Fixture, oauth: bool) -> anyhow::Result<()> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let origin = format!("http://{}", listener.local_addr()?);
    println!("{origin}/mcp");
    let oauth = oauth.then_some(Arc::new(origin));
    let config = StreamableHttpServerConfig::default().with_max_request_body_bytes(64 << 20);
    let sessions = Arc::new(LocalSessionManager::default());
    let service: Arc<Service> = Arc::new(StreamableHttpService::new(
        move || Ok(fixture.clone()),
        sessions.clone(),
        config,
    ));
    loop {
        let (stream, _) = listener.accept().await?;
        // Small SSE writes go out at once (as Node's HTTP server does by default), rather than
        // waiting for the peer's delayed ACK.
        stream.set_nodelay(true)?;
        let service = service.clone();
        let oauth = oauth.clone();
        let sessions = sessions.clone();
        tokio::spawn(async move {
            let serve = hyper::service::service_fn(move |request| {
                let service = service.clone();
                let oauth = oauth.clone();
                let sessions = sessions.clone();
                async move {
                    Ok::<_, Infallible>(
                        answer(&service, &sessions, oauth.as_deref(), request).await,
                    )
                }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), serve)
                .await;
        });
    }
}

/// Hands the request to rmcp; a `tools/list` answer (small, one event) is read whole and
/// marked.
async fn answer(
    service: &Service,
    sessions: &LocalSessionManager,
    oauth: Option<&String>,
    request: Request<Incoming>,
) -> Response<BoxBody<Bytes, Infallible>> {
    let (parts, body) = request.into_parts();
    let body = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) => {
            let mut refused = Response::new(Full::new(Bytes::from(e.to_string())).boxed());
            *refused.status_mut() = hyper::StatusCode::BAD_REQUEST;
            return refused;
        }
    };
    if let Some(answer) = oauth.and_then(|origin| crate::oauth::route(origin, &parts, &body)) {
        return answer;
    }
    let method = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|v| v["method"].as_str().map(str::to_owned));
    let is_tools_list = method.as_deref() == Some("tools/list");
    if method.as_deref() == Some("tools/call") && FORGET_SESSIONS.swap(false, Ordering::SeqCst) {
        sessions.sessions.write().await.clear();
    }
    let response = service
        .handle(Request::from_parts(parts, Full::new(body)))
        .await;
    if !is_tools_list {
        return response;
    }
    let (parts, body) = response.into_parts();
    let Ok(collected) = body.collect().await;
    let text = String::from_utf8_lossy(&collected.to_bytes()).into_owned();
    Response::from_parts(parts, Full::new(Bytes::from(mark_body(&text))).boxed())
}

/// Marks a `tools/list` answer sent as a JSON body or as SSE `data:` lines.
fn mark_body(text: &str) -> String {
    if let Ok(mut value) = serde_json::from_str::<Value>(text) {
        mark_task_support(&mut value);
        return value.to_string();
    }
    let mut out = String::with_capacity(text.len() + 64);
    for line in text.split_inclusive('\n') {
        let marked = line
            .strip_prefix("data:")
            .and_then(|data| serde_json::from_str::<Value>(data.trim()).ok())
            .and_then(|mut value| mark_task_support(&mut value).then_some(value));
        match marked {
            Some(value) => {
                out.push_str("data: ");
                out.push_str(&value.to_string());
                out.push('\n');
            }
            None => out.push_str(line),
        }
    }
    out
}
