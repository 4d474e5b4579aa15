//! Routing: authenticate, pick the handler, turn the request into an [`EndpointCall`] for the
//! owner loop and its [`EndpointReply`] back into a response. Every path returns a response; no
//! handler can fail or panic, so a bad request only ever costs its own connection.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};

use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{HeaderValue, ALLOW};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{json, Value};
use tokio::sync::oneshot;

use super::body::{self, BodyError};
use super::response::{self, ResponseBody};
use super::{auth, identity, EndpointCall, EndpointReply, EndpointRequest, EndpointSender};

/// What every request handler shares: the secret, the way to the owner, and the limits.
#[derive(Debug)]
pub(crate) struct Shared {
    pub token: String,
    pub sender: EndpointSender,
    pub started: Instant,
    pub max_body_bytes: usize,
    pub request_timeout: Duration,
    pub approval_timeout: Duration,
    /// The `/mcp` service, when the server provides one.
    pub mcp: Option<crate::mcp::McpService>,
    /// The `/mcp-hosted` service and its switch, when the server hosts MCP servers.
    pub hosted: Option<(
        crate::hosted::route::HostedRoute,
        crate::mcp::McpService<crate::hosted::publish::HostedHandler>,
    )>,
}

/// The two hook routes differ only in which call they make and what silence means.
#[derive(Debug, Clone, Copy)]
enum HookRoute {
    AgentEvent,
    ApprovalRequest,
}

/// How long an idle keep-alive connection is kept, told to clients in a `Keep-Alive` header:
/// a little under the server's head timeout (75 s), so a client that honours the hint retires
/// a pooled socket before the server closes it, never racing a request into a closing socket.
const KEEP_ALIVE_HINT: &str = "timeout=60";

/// The service function: one request in, one response out.
pub(crate) async fn handle(
    req: Request<Incoming>,
    shared: Arc<Shared>,
) -> Result<Response<ResponseBody>, Infallible> {
    let mut response = route(req, shared).await;
    response.headers_mut().insert(
        hyper::header::HeaderName::from_static("keep-alive"),
        HeaderValue::from_static(KEEP_ALIVE_HINT),
    );
    Ok(response)
}

async fn route(req: Request<Incoming>, shared: Arc<Shared>) -> Response<ResponseBody> {
    if !auth::authorized(req.headers(), &shared.token) {
        tracing::debug!(path = req.uri().path(), "endpoint: unauthorized request");
        return response::error(StatusCode::UNAUTHORIZED, "missing or wrong bearer token");
    }
    match req.uri().path() {
        "/agent-event" if req.method() == Method::POST => {
            hook_route(req, &shared, HookRoute::AgentEvent).await
        }
        "/approval-request" if req.method() == Method::POST => {
            hook_route(req, &shared, HookRoute::ApprovalRequest).await
        }
        "/agent-event" | "/approval-request" => method_not_allowed("POST"),
        "/mcp" => mcp_route(req, &shared).await,
        "/mcp-hosted" => hosted_route(req, &shared).await,
        "/health" if req.method() == Method::GET => health(&shared),
        "/health" => method_not_allowed("GET"),
        path => {
            tracing::debug!(path, "endpoint: unknown route");
            response::error(StatusCode::NOT_FOUND, "no such route")
        }
    }
}

/// `/mcp`: the MCP endpoint (rmcp's Streamable HTTP service). Host and Origin are checked
/// first (DNS rebinding), then the body is read under the same limits as the hook routes and
/// handed over whole, so a slow or huge body costs rmcp nothing.
pub(crate) async fn mcp_route(req: Request<Incoming>, shared: &Shared) -> Response<ResponseBody> {
    let Some(mcp) = &shared.mcp else {
        return response::error(StatusCode::NOT_IMPLEMENTED, "not yet");
    };
    serve_mcp(req, shared, mcp).await
}

/// `/mcp-hosted`: the user's hosted MCP servers' tools, served exactly like `/mcp` (same
/// guard, limits and protocol settings). With `[mcp] host_servers = false` there is no such
/// route.
async fn hosted_route(req: Request<Incoming>, shared: &Shared) -> Response<ResponseBody> {
    match &shared.hosted {
        Some((route, service)) if route.is_enabled() => serve_mcp(req, shared, service).await,
        _ => response::error(StatusCode::NOT_FOUND, "no such route"),
    }
}

/// Serves one request on an MCP route: Host/Origin, body limits, then rmcp.
async fn serve_mcp<H: rmcp::ServerHandler + Send + 'static>(
    req: Request<Incoming>,
    shared: &Shared,
    mcp: &crate::mcp::McpService<H>,
) -> Response<ResponseBody> {
    if let Err(reason) = crate::mcp::guard::check(req.headers()) {
        tracing::warn!(
            reason,
            path = req.uri().path(),
            "endpoint: refused an MCP request (DNS rebinding check)"
        );
        return response::error(StatusCode::FORBIDDEN, reason);
    }
    if body::announced_too_large(req.headers(), shared.max_body_bytes) {
        return response::error_and_close(StatusCode::PAYLOAD_TOO_LARGE, "body too large");
    }
    let (parts, incoming) = req.into_parts();
    let bytes = match body::read_limited(incoming, shared.max_body_bytes, shared.request_timeout)
        .await
    {
        Ok(bytes) => bytes,
        Err(BodyError::TooLarge) => {
            return response::error_and_close(StatusCode::PAYLOAD_TOO_LARGE, "body too large")
        }
        Err(BodyError::Timeout) => {
            return response::error_and_close(StatusCode::REQUEST_TIMEOUT, "request body timed out")
        }
        Err(BodyError::Read(e)) => {
            tracing::warn!(error = %e, "endpoint: failed to read an /mcp body");
            return response::error_and_close(StatusCode::BAD_REQUEST, "unreadable body");
        }
    };
    mcp.handle(Request::from_parts(parts, Full::new(bytes)))
        .await
}

/// `GET /health`: liveness for `calyx setup` and scripts. Version, uptime and the number of
/// live MCP sessions (to watch the session cap), no secrets.
fn health(shared: &Shared) -> Response<ResponseBody> {
    let mut body = json!({
        "version": env!("CARGO_PKG_VERSION"),
        "uptime_secs": shared.started.elapsed().as_secs(),
    });
    if let Some(mcp) = &shared.mcp {
        body["mcp_sessions"] = json!(mcp.sessions());
    }
    response::json(StatusCode::OK, &body)
}

fn method_not_allowed(allow: &'static str) -> Response<ResponseBody> {
    let mut response = response::error(StatusCode::METHOD_NOT_ALLOWED, "method not allowed");
    response
        .headers_mut()
        .insert(ALLOW, HeaderValue::from_static(allow));
    response
}

/// `/agent-event` and `/approval-request`: read the JSON payload, ask the owner, answer.
async fn hook_route(
    req: Request<Incoming>,
    shared: &Shared,
    route: HookRoute,
) -> Response<ResponseBody> {
    if body::announced_too_large(req.headers(), shared.max_body_bytes) {
        tracing::warn!(?route, "endpoint: refused a body announced over the limit");
        return response::error_and_close(StatusCode::PAYLOAD_TOO_LARGE, "body too large");
    }
    let identity = identity::from_headers(req.headers(), Some(identity::DEFAULT_HOOK_KIND));
    let bytes = match body::read_limited(
        req.into_body(),
        shared.max_body_bytes,
        shared.request_timeout,
    )
    .await
    {
        Ok(bytes) => bytes,
        Err(BodyError::TooLarge) => {
            tracing::warn!(?route, "endpoint: body over the limit");
            return response::error_and_close(StatusCode::PAYLOAD_TOO_LARGE, "body too large");
        }
        Err(BodyError::Timeout) => {
            tracing::warn!(?route, "endpoint: body did not arrive in time");
            return response::error_and_close(
                StatusCode::REQUEST_TIMEOUT,
                "request body timed out",
            );
        }
        Err(BodyError::Read(e)) => {
            tracing::warn!(?route, error = %e, "endpoint: failed to read body");
            return response::error_and_close(StatusCode::BAD_REQUEST, "unreadable body");
        }
    };
    let payload: Value = match serde_json::from_slice(&bytes) {
        Ok(value) => value,
        Err(e) => {
            tracing::warn!(?route, error = %e, ?identity, "endpoint: malformed JSON payload");
            return response::error(StatusCode::BAD_REQUEST, &format!("malformed JSON: {e}"));
        }
    };
    let call = match route {
        HookRoute::AgentEvent => EndpointCall::AgentEvent { identity, payload },
        HookRoute::ApprovalRequest => EndpointCall::ApprovalRequest { identity, payload },
    };
    // No answer is an error, never an empty 200: on a gate, `calyx hook` turns it into the
    // CLI's own prompt, or a deny where silence would run the call.
    match ask_owner(shared, call, route).await {
        Ok(reply) => reply_response(reply),
        Err(NoAnswer::Gone) => response::error(
            StatusCode::SERVICE_UNAVAILABLE,
            "calyx is not handling events",
        ),
        Err(NoAnswer::TimedOut) => response::error(
            StatusCode::GATEWAY_TIMEOUT,
            "no decision was made in calyx in time",
        ),
    }
}

/// Why the owner loop gave no answer.
enum NoAnswer {
    /// It is gone, or dropped the reply sender.
    Gone,
    /// An approval request outlived the approval timeout (the queue's own expiry answers
    /// before it; this is the backstop for an owner loop that fell behind).
    TimedOut,
}

/// Sends the call to the owner loop and waits for its reply.
async fn ask_owner(
    shared: &Shared,
    call: EndpointCall,
    route: HookRoute,
) -> Result<EndpointReply, NoAnswer> {
    let (reply, receiver) = oneshot::channel();
    if shared
        .sender
        .send(EndpointRequest { call, reply })
        .await
        .is_err()
    {
        tracing::warn!(?route, "endpoint: owner loop is gone");
        return Err(NoAnswer::Gone);
    }
    match route {
        HookRoute::ApprovalRequest => {
            match tokio::time::timeout(shared.approval_timeout, receiver).await {
                Ok(answer) => answer.map_err(|_| NoAnswer::Gone),
                Err(_) => {
                    tracing::info!("endpoint: approval request expired without a decision");
                    Err(NoAnswer::TimedOut)
                }
            }
        }
        HookRoute::AgentEvent => receiver.await.map_err(|_| NoAnswer::Gone),
    }
}

fn reply_response(reply: EndpointReply) -> Response<ResponseBody> {
    match reply {
        EndpointReply::NoContent => response::empty(StatusCode::NO_CONTENT),
        EndpointReply::Json(value) => response::json(StatusCode::OK, &value),
        EndpointReply::EmptyOk => response::empty(StatusCode::OK),
        EndpointReply::BadRequest(message) => {
            tracing::info!(%message, "endpoint: owner refused a request");
            response::error(StatusCode::BAD_REQUEST, &message)
        }
    }
}
