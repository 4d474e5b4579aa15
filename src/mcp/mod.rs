//! calyx as an MCP server for the agents in its panes (`/mcp` on the agent endpoint).
//!
//! The protocol (Streamable HTTP, sessions, SSE, versions, ping, cancellation) is rmcp's
//! [`StreamableHttpService`]; this module adds calyx's tools ([`tools`]), the binding of a
//! session to its pane ([`handler`]), peers and inboxes ([`PeerRegistry`]) and DNS-rebinding
//! protection ([`guard`]). Everything about panes and agents comes from an [`McpBackend`] the
//! server implements, so nothing here touches the owner loop's state directly.

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tower_service::Service as _;

use crate::memory::Trimmer;

mod accept;
mod across;
pub mod backend;
pub mod commands;
pub mod from_afar;
pub mod guard;
mod handler;
mod limit;
pub mod peers;
mod schema;
pub mod sessions;
pub mod tool_set;
mod tools;

pub use backend::{
    AgentSummary, McpBackend, PaneRef, PaneSummary, RunOutcome, RunRequest, SplitDirection,
    SplitRequest, SubagentSummary, WindowRequest,
};
pub use commands::{CommandInfo, CommandOutput, CommandStatus, CommandWait, PaneCommands};
pub use handler::PROTOCOL_VERSIONS;
pub use peers::{PeerInfo, PeerRegistry};
pub use sessions::{MAX_SESSIONS, SESSION_IDLE};
pub use tool_set::ToolSet;

/// What the endpoint needs to serve `/mcp`: put it in
/// [`crate::http::EndpointOptions::mcp`]; without it `/mcp` answers 501.
#[derive(Clone)]
pub struct McpOptions {
    /// calyx's state, through the owner loop.
    pub backend: Arc<dyn McpBackend>,
    /// Peers and inboxes; shared so the server can show unread counts and forget closed panes.
    pub peers: Arc<PeerRegistry>,
    /// The tools the user turned off; shared so a config reload can change them.
    pub tools: Arc<ToolSet>,
    /// Live sessions at most ([`MAX_SESSIONS`]; lower in tests).
    pub max_sessions: usize,
    /// How long an idle session lives ([`SESSION_IDLE`]; shorter in tests).
    pub session_idle: std::time::Duration,
    /// The server's trim schedule, so that closing sessions hands memory back without taking
    /// an attached client's code pages (see `crate::memory`).
    pub trimmer: Trimmer,
}

impl McpOptions {
    /// Options with a fresh, empty peer registry and every tool on.
    pub fn new(backend: Arc<dyn McpBackend>) -> Self {
        Self {
            backend,
            peers: Arc::new(PeerRegistry::new()),
            tools: Arc::new(ToolSet::default()),
            max_sessions: MAX_SESSIONS,
            session_idle: SESSION_IDLE,
            trimmer: Trimmer::default(),
        }
    }

    /// These options trimming on the server's schedule (which knows whether a client is
    /// attached).
    pub fn with_trimmer(mut self, trimmer: Trimmer) -> Self {
        self.trimmer = trimmer;
        self
    }

    /// The session limits (and trim schedule) these options give `/mcp`, which `/mcp-hosted`
    /// shares.
    pub fn session_limits(&self) -> SessionLimits {
        SessionLimits {
            max_sessions: self.max_sessions,
            session_idle: self.session_idle,
            trimmer: self.trimmer.clone(),
        }
    }

    /// These options sharing `peers` with the server (which drops a closed pane's inbox).
    pub fn with_peers(mut self, peers: Arc<PeerRegistry>) -> Self {
        self.peers = peers;
        self
    }

    /// These options with the session limits the server's environment asks for:
    /// `CALYX_MCP_MAX_SESSIONS` and `CALYX_MCP_SESSION_IDLE_SECS`, positive numbers, meant for
    /// tests and benchmarks that need the limits small (anything else keeps the defaults).
    pub fn with_limits_from_env(mut self) -> Self {
        let var = |name: &str| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .filter(|&n| n > 0)
        };
        if let Some(n) = var("CALYX_MCP_MAX_SESSIONS") {
            self.max_sessions = usize::try_from(n).unwrap_or(MAX_SESSIONS);
        }
        if let Some(secs) = var("CALYX_MCP_SESSION_IDLE_SECS") {
            self.session_idle = std::time::Duration::from_secs(secs);
        }
        self
    }

    /// These options with `tools` deciding which tools are on.
    pub fn with_tools(mut self, tools: Arc<ToolSet>) -> Self {
        self.tools = tools;
        self
    }
}

impl std::fmt::Debug for McpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpOptions")
            .field("peers", &self.peers.list().len())
            .finish_non_exhaustive()
    }
}

/// The response body `/mcp` answers with: complete JSON or a streaming SSE body.
pub type McpBody = BoxBody<Bytes, Infallible>;

/// A running Streamable HTTP MCP service: one per endpoint and route, cloned per request.
/// `/mcp` serves calyx's own tools ([`handler::CalyxMcp`], the default); `/mcp-hosted` serves
/// the user's hosted servers with the same settings ([`service_with`]).
pub struct McpService<H = handler::CalyxMcp> {
    inner: StreamableHttpService<H, sessions::BoundedSessions>,
    sessions: Arc<sessions::BoundedSessions>,
    port: u16,
}

impl<H> Clone for McpService<H> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            sessions: self.sessions.clone(),
            port: self.port,
        }
    }
}

impl<H> std::fmt::Debug for McpService<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpService")
            .field("port", &self.port)
            .finish_non_exhaustive()
    }
}

/// The Streamable HTTP settings every calyx MCP route shares.
fn streamable_config(max_body_bytes: usize) -> StreamableHttpServerConfig {
    // No SSE priming events: they carry an empty `data:` that Gemini CLI 0.61.0's MCP client
    // feeds to JSON.parse, fails on, and then drops the whole server ("MCP ERROR ... Unexpected
    // end of JSON input"). They only serve resumption, which needs an event store calyx does not
    // keep (a resumed stream would come back empty anyway).
    StreamableHttpServerConfig::default()
        .with_sse_retry(None)
        // Stateless (2026-07-28) requests get a plain JSON body unless the tool has something
        // to stream first; sessions answer SSE, turned into JSON for a client that accepts
        // only JSON (see `accept`).
        .with_json_response(true)
        .with_allowed_hosts(["127.0.0.1", "localhost", "::1"])
        .with_max_request_body_bytes(max_body_bytes)
}

/// Builds the `/mcp` service for an endpoint listening on `port` with a `max_body_bytes` limit.
pub fn service(options: McpOptions, port: u16, max_body_bytes: usize) -> McpService {
    let limits = options.session_limits();
    let McpOptions {
        backend,
        peers,
        tools,
        ..
    } = options;
    let sessions_tools = tools.clone();
    service_with(
        move || handler::CalyxMcp::new(backend.clone(), peers.clone(), tools.clone()),
        sessions_tools,
        limits,
        port,
        max_body_bytes,
    )
}

/// How many sessions a route keeps, and for how long; and the trim schedule that closing
/// them feeds.
#[derive(Debug, Clone)]
pub struct SessionLimits {
    pub max_sessions: usize,
    pub session_idle: std::time::Duration,
    pub trimmer: Trimmer,
}

impl Default for SessionLimits {
    fn default() -> Self {
        Self {
            max_sessions: MAX_SESSIONS,
            session_idle: SESSION_IDLE,
            trimmer: Trimmer::default(),
        }
    }
}

/// A Streamable HTTP service over any handler, with `/mcp`'s settings, session cap and
/// content negotiation; `tools` holds the sessions to tell about list changes (each handler
/// registers its session there at `initialize`).
pub fn service_with<H, F>(
    factory: F,
    tools: Arc<ToolSet>,
    limits: SessionLimits,
    port: u16,
    max_body_bytes: usize,
) -> McpService<H>
where
    H: rmcp::ServerHandler + Send + 'static,
    F: Fn() -> H + Send + Sync + 'static,
{
    let sessions = Arc::new(sessions::BoundedSessions::new(
        limits.max_sessions,
        limits.session_idle,
        tools,
        limits.trimmer,
    ));
    let inner = StreamableHttpService::new(
        move || Ok(factory()),
        sessions.clone(),
        streamable_config(max_body_bytes),
    );
    McpService {
        inner,
        sessions,
        port,
    }
}

impl<H: rmcp::ServerHandler + Send + 'static> McpService<H> {
    /// The port the endpoint listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The number of live MCP sessions (for `/health`).
    pub fn sessions(&self) -> usize {
        self.sessions.len()
    }

    /// Serves one `/mcp` request whose body has already been read under the endpoint's limits
    /// and whose Host/Origin passed [`guard::check`].
    /// Clients that accept only JSON, or only SSE, are served too ([`accept`]).
    /// An `initialize` first makes room among the sessions ([`sessions`]), or is refused with
    /// 503 when every session is busy.
    pub async fn handle(&self, mut request: Request<Full<Bytes>>) -> Response<McpBody> {
        let accepts = accept::accepts(&request);
        accept::widen(&mut request, accepts);
        let (parts, body) = request.into_parts();
        let Ok(body) = body.collect().await.map(|c| c.to_bytes());
        let _slot = match limit::initialize_id(&parts, &body) {
            Some(id) => match self.sessions.reserve().await {
                Ok(slot) => Some(slot),
                Err(e) => return limit::too_many_sessions(id, &e),
            },
            None => None,
        };
        let request = Request::from_parts(parts, Full::new(body));
        let response = match self.inner.clone().call(request).await {
            Ok(response) => response,
            Err(never) => match never {},
        };
        accept::narrow(response, accepts).await
    }
}
