//! The rmcp `ServerHandler`: one instance per MCP session (rmcp calls the factory on
//! `initialize`). It binds the session to the caller's pane from the identity headers and
//! dispatches tool calls to [`super::tools`].

use std::borrow::Cow;
use std::sync::{Arc, Mutex};

use hyper::header::HeaderMap;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, InitializeRequestParams,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ProtocolVersion, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

use super::backend::{McpBackend, PaneRef};
use super::peers::PeerRegistry;
use super::tool_set::ToolSet;
use super::tools;
use calyx_integrations::headers::{KIND_HEADER, SESSION_HEADER, SURFACE_HEADER};

/// Protocol versions served, newest first: 2026-07-28 statelessly (no `initialize`, no
/// session: rmcp serves each request on its own, and the caller's pane comes from that request's
/// identity headers), the others with the `initialize` handshake and a session.
pub const PROTOCOL_VERSIONS: [ProtocolVersion; 4] = [
    ProtocolVersion::V_2026_07_28,
    ProtocolVersion::V_2025_11_25,
    ProtocolVersion::V_2025_06_18,
    ProtocolVersion::V_2025_03_26,
];

/// One MCP session's handler.
pub struct CalyxMcp {
    backend: Arc<dyn McpBackend>,
    peers: Arc<PeerRegistry>,
    tools: Arc<ToolSet>,
    /// The pane this session was bound to at `initialize`.
    bound: Mutex<Option<PaneRef>>,
}

impl CalyxMcp {
    pub(crate) fn new(
        backend: Arc<dyn McpBackend>,
        peers: Arc<PeerRegistry>,
        tools: Arc<ToolSet>,
    ) -> Self {
        Self {
            backend,
            peers,
            tools,
            bound: Mutex::new(None),
        }
    }

    fn bound(&self) -> Option<PaneRef> {
        self.bound.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The caller: the session's pane, else whatever this request's headers resolve to (a
    /// client may start sending identity headers after `initialize`).
    async fn caller(&self, context: &RequestContext<RoleServer>) -> Option<PaneRef> {
        if let Some(pane) = self.bound() {
            return Some(pane);
        }
        let headers = headers(context)?;
        let pane = resolve(&*self.backend, headers).await?;
        *self.bound.lock().unwrap_or_else(|e| e.into_inner()) = Some(pane.clone());
        Some(pane)
    }
}

fn headers(context: &RequestContext<RoleServer>) -> Option<&HeaderMap> {
    context
        .extensions
        .get::<hyper::http::request::Parts>()
        .map(|parts| &parts.headers)
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    let value = headers.get(name)?.to_str().ok()?.trim();
    (!value.is_empty()).then_some(value)
}

async fn resolve(backend: &dyn McpBackend, headers: &HeaderMap) -> Option<PaneRef> {
    let surface = header(headers, SURFACE_HEADER);
    let session = header(headers, SESSION_HEADER);
    if surface.is_none() && session.is_none() {
        return None;
    }
    backend.identity(surface, session).await
}

/// What `initialize` tells the agent about itself and the tools.
pub(crate) fn instructions(pane: Option<&PaneRef>) -> String {
    let who = match pane {
        Some(p) => format!(
            "You are running in calyx pane {pane}. Your peer id is {pane} once you call \
             register_peer {{name}}; other agents address you by it.",
            pane = p.pane
        ),
        None => "This client is not inside a calyx pane, so it can list and read panes and \
                 agents but cannot register as a peer or exchange messages."
            .to_owned(),
    };
    format!(
        "calyx is the terminal multiplexer this agent runs in. {who}\n\
         Tools: pane_list, pane_read and agent_list show the other panes and the agents in them; \
         agent_wait blocks until an agent is idle, blocked or done; pane_split and window_create \
         open new panes; pane_run and pane_send_keys type into a pane after a human approves \
         (denied and timeout are normal answers). register_peer, list_peers, send_message, \
         broadcast, receive_messages and get_peer_status coordinate with other agents: call \
         receive_messages when asked to check your inbox. pane_list, agent_list, agent_wait, \
         pane_read, pane_run, send_message and list_peers also reach the user's saved machines: \
         pass `machine` (a saved machine's name) or a machine-qualified id such as build/%3."
    )
}

impl ServerHandler for CalyxMcp {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("calyx", env!("CARGO_PKG_VERSION")))
            // What `initialize` offers a client asking for a version calyx does not serve: the
            // newest one that has an `initialize` handshake.
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
            .with_instructions(instructions(self.bound().as_ref()))
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(&PROTOCOL_VERSIONS)
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        self.tools.register(context.peer.clone());
        if let Some(headers) = headers(&context) {
            let pane = resolve(&*self.backend, headers).await;
            // The kind is parsed here, at the edge; a name calyx does not know makes no row.
            let kind =
                header(headers, KIND_HEADER).map(|k| k.parse::<calyx_integrations::AgentKind>());
            match (&pane, kind) {
                (Some(pane), Some(Ok(kind))) => self.backend.agent_seen(pane, kind).await,
                (_, Some(Err(unknown))) => tracing::info!("MCP initialize: {unknown}"),
                _ => {}
            }
            *self.bound.lock().unwrap_or_else(|e| e.into_inner()) = pane;
        }
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let on = tools::list()
            .into_iter()
            .filter(|t| self.tools.is_enabled(&t.name))
            .collect();
        Ok(ListToolsResult::with_all_items(on))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if !self.tools.is_enabled(&request.name) {
            return Err(ErrorData::invalid_params(
                format!(
                    "{} is turned off in the user's calyx config ([mcp] disabled_tools); call tools/list",
                    request.name
                ),
                None,
            ));
        }
        let caller = self.caller(&context).await;
        let ctx = tools::Ctx {
            backend: &self.backend,
            peers: &self.peers,
            caller: caller.as_ref(),
            from_afar: None,
        };
        let args = request.arguments.unwrap_or_default();
        let total = args
            .get("timeout_ms")
            .and_then(serde_json::Value::as_f64)
            .map(|ms| ms / 1000.0);
        let progress = progress_reports(&context, &request.name, total);
        // `notifications/cancelled` only signals: dropping the call here is what stops it (an
        // approval it queued is withdrawn, a wait ends). rmcp drops the answer of a cancelled
        // request, so the error below reaches nobody.
        let result = tokio::select! {
            result = tools::call(ctx, &request.name, args) => result,
            _ = context.ct.cancelled() => {
                return Err(ErrorData::internal_error("cancelled by the client", None));
            }
            never = progress => match never {},
        };
        match result {
            Some(result) => Ok(result.into()),
            None => Err(ErrorData::invalid_params(
                format!("no tool named {:?}; call tools/list", request.name),
                None,
            )),
        }
    }
}

/// How often a tool call that carries a progress token hears that it is still running.
const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// While a tool call runs: when the request carried a `progressToken`, a
/// `notifications/progress` every [`PROGRESS_EVERY`] (seconds waited so far, of `total` when the
/// call has a `timeout_ms`), so clients with their own request timeouts (which progress resets)
/// keep waiting for a human's approval or an agent's state. Never finishes.
async fn progress_reports(
    context: &RequestContext<RoleServer>,
    tool: &str,
    total: Option<f64>,
) -> std::convert::Infallible {
    let Some(token) = context.meta.get_progress_token() else {
        return std::future::pending().await;
    };
    let started = tokio::time::Instant::now();
    let mut ticks = tokio::time::interval_at(started + PROGRESS_EVERY, PROGRESS_EVERY);
    loop {
        ticks.tick().await;
        let waited = started.elapsed().as_secs_f64().floor();
        let mut report = ProgressNotificationParam::new(token.clone(), waited)
            .with_message(format!("{tool}: still waiting after {waited} s"));
        if let Some(total) = total {
            report = report.with_total(total);
        }
        // A client that cannot take notifications any more still gets its result.
        let _ = context.peer.notify_progress(report).await;
    }
}
