//! Republishing: one `ServerHandler` over the tools of every ready hosted server, renamed
//! `<alias>-<tool>`. `tools/list` is the merged set; `tools/call` goes to the server with the
//! original name and arguments, and its answer comes back unchanged. calyx adds no approval and
//! no timeout of its own.
//!
//! The handler is transport-agnostic (tests serve it over an in-memory pipe); the `/mcp-hosted`
//! route serves it to agents ([`super::route`]).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use tokio::sync::watch;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResponse, CallToolResult,
    CancelledNotification, CancelledNotificationParam, ClientNotification, ClientRequest,
    ContentBlock, Implementation, InitializeRequestParams, InitializeResult, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig, ServerResult, Tool,
};
use rmcp::service::{Peer, PeerRequestOptions, RequestContext};
use rmcp::{ErrorData, RoleClient, RoleServer, ServerHandler};

use super::connection::filter::Classified;

/// Each server's instructions are cut to this many bytes in `initialize`.
pub const SERVER_INSTRUCTIONS_MAX: usize = 2 << 10;
/// The merged instructions are cut to this many bytes.
pub const INSTRUCTIONS_MAX: usize = 8 << 10;

/// A ready server as the republisher sees it.
pub struct PublishedServer {
    pub alias: String,
    pub name: String,
    /// The client side of the connection to it.
    pub peer: Peer<RoleClient>,
    pub tools: Classified,
    pub instructions: Option<String>,
    /// Where the connection's upstream progress goes (its client handler reads the same table).
    pub progress: super::progress::ProgressRoutes,
}

/// The ready servers, by alias. Cloning shares it.
#[derive(Clone)]
pub struct Registry {
    servers: Arc<RwLock<BTreeMap<String, Arc<PublishedServer>>>>,
    /// Counts changes of the published set, for whoever must hear of them (the announcer that
    /// tells the agents' sessions, see [`super::route::announce_changes`]).
    generation: Arc<watch::Sender<u64>>,
}

impl Default for Registry {
    fn default() -> Self {
        Registry {
            servers: Arc::default(),
            generation: Arc::new(watch::Sender::new(0)),
        }
    }
}

impl Registry {
    /// Publishes (or replaces) a server's tools.
    pub fn insert(&self, server: PublishedServer) {
        {
            let mut servers = self.servers.write().unwrap_or_else(|e| e.into_inner());
            servers.insert(server.alias.clone(), Arc::new(server));
        }
        self.bump();
    }

    fn bump(&self) {
        self.generation.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Withdraws a server's tools.
    pub fn remove(&self, alias: &str) {
        let removed = {
            let mut servers = self.servers.write().unwrap_or_else(|e| e.into_inner());
            servers.remove(alias).is_some()
        };
        if removed {
            self.bump();
        }
    }

    /// A receiver that wakes when the published set changes.
    pub fn watch_changes(&self) -> watch::Receiver<u64> {
        self.generation.subscribe()
    }

    /// The aliases of the servers whose tools are published.
    pub fn aliases(&self) -> Vec<String> {
        let servers = self.servers.read().unwrap_or_else(|e| e.into_inner());
        servers.keys().cloned().collect()
    }

    /// The published server `alias`, when it is ready.
    pub fn get(&self, alias: &str) -> Option<Arc<PublishedServer>> {
        let servers = self.servers.read().unwrap_or_else(|e| e.into_inner());
        servers.get(alias).cloned()
    }

    fn snapshot(&self) -> Vec<Arc<PublishedServer>> {
        let servers = self.servers.read().unwrap_or_else(|e| e.into_inner());
        servers.values().cloned().collect()
    }

    /// Every published tool, renamed, everything else as the server sent it.
    pub fn tools(&self) -> Vec<Tool> {
        self.snapshot()
            .iter()
            .flat_map(|server| {
                server.tools.published.iter().map(|(published, tool)| {
                    let mut tool = tool.clone();
                    tool.name = published.clone().into();
                    tool
                })
            })
            .collect()
    }

    /// The server and original name behind a published name.
    pub fn resolve(&self, published: &str) -> Option<(Arc<PublishedServer>, String)> {
        let alias = super::naming::alias_of(published)?;
        let servers = self.servers.read().unwrap_or_else(|e| e.into_inner());
        let server = servers.get(alias)?.clone();
        let original = server.tools.names.original.get(published)?.clone();
        Some((server, original))
    }

    /// What `initialize` says (see [`merge_instructions`]).
    pub fn instructions(&self) -> String {
        let servers = self.snapshot();
        merge_instructions(servers.iter().map(|s| {
            (
                s.alias.as_str(),
                s.name.as_str(),
                s.instructions.as_deref().unwrap_or(""),
            )
        }))
    }
}

/// One line on calyx-mcp, then each server's own instructions (alias, name, text) under
/// `## <alias> (<name>)`, 2 KiB each, 8 KiB in all; servers without instructions are left out.
pub fn merge_instructions<'a>(
    servers: impl Iterator<Item = (&'a str, &'a str, &'a str)>,
) -> String {
    let mut out = String::from(
        "calyx-mcp republishes the tools of the MCP servers the user added to calyx, named <alias>-<tool>.",
    );
    for (alias, name, own) in servers {
        let own = own.trim();
        if own.is_empty() {
            continue;
        }
        let section = format!(
            "\n\n## {alias} ({name})\n{}",
            cut(own, SERVER_INSTRUCTIONS_MAX)
        );
        if out.len() + section.len() > INSTRUCTIONS_MAX {
            break;
        }
        out.push_str(&section);
    }
    out
}

/// `text` cut to at most `max` bytes at a character boundary.
fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Who a calyx-mcp session belongs to: the identity headers `calyx setup` writes for every
/// entry (`X-Calyx-Surface-ID`, `X-Calyx-Session-ID`, `X-Calyx-Agent-Kind`), read as `/mcp`
/// reads them. Kept for what needs the caller's pane (the sign-in prompt in its client).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Caller {
    pub surface: Option<String>,
    pub session: Option<String>,
    pub kind: Option<String>,
}

impl Caller {
    /// The identity headers of a request (None when it sent none).
    fn of(context: &RequestContext<RoleServer>) -> Option<Caller> {
        use calyx_integrations::headers::{KIND_HEADER, SESSION_HEADER, SURFACE_HEADER};
        let headers = &context
            .extensions
            .get::<hyper::http::request::Parts>()?
            .headers;
        let header = |name: &str| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_string)
        };
        let caller = Caller {
            surface: header(SURFACE_HEADER),
            session: header(SESSION_HEADER),
            kind: header(KIND_HEADER),
        };
        (caller != Caller::default()).then_some(caller)
    }
}

/// The `Mcp-Session-Id` a request came with (None over a pipe, or before `initialize` made
/// one): what tells two sessions of one agent apart in the log.
fn transport_session(context: &RequestContext<RoleServer>) -> Option<&str> {
    context
        .extensions
        .get::<hyper::http::request::Parts>()?
        .headers
        .get("mcp-session-id")?
        .to_str()
        .ok()
}

/// The handler of one agent's calyx-mcp session.
#[derive(Clone)]
pub struct HostedHandler {
    registry: Registry,
    /// The open sessions that hear `tools/list_changed` (None: nobody is told, as in tests
    /// over a pipe).
    sessions: Option<Arc<crate::mcp::ToolSet>>,
    /// The caller named at `initialize` (or by a later request's headers).
    caller: Arc<std::sync::Mutex<Option<Caller>>>,
}

impl HostedHandler {
    pub fn new(registry: Registry) -> Self {
        HostedHandler {
            registry,
            sessions: None,
            caller: Arc::default(),
        }
    }

    /// The session's caller, else this request's.
    pub fn caller(&self, context: &RequestContext<RoleServer>) -> Option<Caller> {
        let mut bound = self.caller.lock().unwrap_or_else(|e| e.into_inner());
        if bound.is_none() {
            *bound = Caller::of(context);
        }
        bound.clone()
    }

    /// This handler registering its session in `sessions` at `initialize`, so it hears when
    /// the published tools change.
    pub fn with_sessions(mut self, sessions: Arc<crate::mcp::ToolSet>) -> Self {
        self.sessions = Some(sessions);
        self
    }
}

impl ServerHandler for HostedHandler {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("calyx-mcp", env!("CARGO_PKG_VERSION")))
            // As on `/mcp`: what a client asking for an unserved version is offered.
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
            .with_instructions(self.registry.instructions())
    }

    /// The versions `/mcp` serves, so an agent speaks to both entries alike.
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(&crate::mcp::PROTOCOL_VERSIONS)
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        if let Some(sessions) = &self.sessions {
            sessions.register(context.peer.clone());
        }
        let caller = self.caller(&context);
        tracing::debug!(?caller, "calyx-mcp: session initialized");
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // At debug, so a test can tell whether an agent re-lists after `tools/list_changed`
        // (tests/realcli/hosted_mcp.sh reads it from server.log).
        tracing::debug!(
            caller = ?self.caller(&context),
            session = transport_session(&context).unwrap_or("-"),
            "calyx-mcp: tools/list"
        );
        Ok(ListToolsResult::with_all_items(self.registry.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some((server, original)) = self.registry.resolve(&request.name) else {
            return Err(ErrorData::invalid_params(
                format!("no tool named {:?}; call tools/list", request.name),
                None,
            ));
        };
        tracing::debug!(
            tool = %request.name,
            caller = ?self.caller(&context),
            session = transport_session(&context).unwrap_or("-"),
            "calyx-mcp: forwarding a call to `{}`",
            server.alias
        );
        let mut upstream = CallToolRequestParams::new(original);
        upstream.arguments = request.arguments;
        let answer = forward_call(&server, upstream, &context).await;
        match answer {
            Ok(response) => Ok(response),
            Err(ForwardError::Cancelled) => {
                // rmcp drops the answer of a cancelled request; this reaches nobody.
                Err(ErrorData::internal_error("cancelled by the client", None))
            }
            Err(ForwardError::Upstream(error)) => {
                Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                    "server `{}` ({}) failed the call: {error}",
                    server.alias, server.name
                ))])
                .into())
            }
        }
    }
}

/// Why a forwarded call has no answer to pass on.
enum ForwardError {
    /// The agent cancelled (or its session closed).
    Cancelled,
    /// The upstream request failed (connection gone, an error answer, a bad result).
    Upstream(String),
}

/// Sends `params` upstream as a cancellable request. The agent's `progressToken`, when it sent
/// one, receives the upstream progress ([`super::progress`]); the agent cancelling sends
/// `notifications/cancelled` upstream (`RequestHandle::cancel`), and so does dropping this
/// future (the agent's session closed), and a late upstream answer is discarded.
async fn forward_call(
    server: &PublishedServer,
    params: CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> Result<CallToolResponse, ForwardError> {
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let mut handle = server
        .peer
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .map_err(|e| ForwardError::Upstream(e.to_string()))?;
    let _route = context.meta.get_progress_token().map(|agent_token| {
        server.progress.add(
            handle.progress_token.clone(),
            context.peer.clone(),
            agent_token,
        )
    });
    let mut cancel_on_drop = CancelOnDrop {
        peer: Some(server.peer.clone()),
        id: handle.id.clone(),
    };
    let answer = tokio::select! {
        answer = &mut handle.rx => answer,
        _ = context.ct.cancelled() => {
            cancel_on_drop.peer = None;
            if let Err(e) = handle.cancel(Some("cancelled by the agent".into())).await {
                tracing::debug!("hosted MCP: upstream cancel not sent: {e}");
            }
            return Err(ForwardError::Cancelled);
        }
    };
    cancel_on_drop.peer = None;
    let result = answer
        .map_err(|_| ForwardError::Upstream("the server's connection closed".into()))?
        .map_err(|e| ForwardError::Upstream(e.to_string()))?;
    match result {
        ServerResult::CallToolResult(result) => Ok(CallToolResponse::Complete(result)),
        ServerResult::InputRequiredResult(result) => Ok(CallToolResponse::InputRequired(result)),
        ServerResult::CreateTaskResult(result) => Ok(CallToolResponse::Task(result)),
        // A result without `content` decodes as another variant; read it back as a call result.
        other => serde_json::to_value(&other)
            .and_then(serde_json::from_value::<CallToolResult>)
            .map(CallToolResponse::Complete)
            .map_err(|_| ForwardError::Upstream("the server sent no tool result".into())),
    }
}

/// Sends `notifications/cancelled` upstream when a forwarded call is dropped unanswered (the
/// agent's session went away mid-call); disarmed once the call ends normally.
struct CancelOnDrop {
    peer: Option<Peer<RoleClient>>,
    id: rmcp::model::RequestId,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(peer) = self.peer.take() else {
            return;
        };
        let notification = CancelledNotification::new(CancelledNotificationParam::new(
            Some(self.id.clone()),
            Some("the agent's session closed".into()),
        ));
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = peer
                    .send_notification(ClientNotification::CancelledNotification(notification))
                    .await;
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_are_merged_under_headings_within_limits() {
        let long = "x".repeat(5000);
        let merged = merge_instructions(
            [
                ("ev", "Everything", "  Use echo to test.  "),
                ("gh", "GitHub", ""),
                ("big", "Big", long.as_str()),
                ("big2", "Big 2", long.as_str()),
                ("big3", "Big 3", long.as_str()),
                ("big4", "Big 4", long.as_str()),
            ]
            .into_iter(),
        );
        assert!(merged.starts_with("calyx-mcp republishes the tools"));
        assert!(merged.contains("\n\n## ev (Everything)\nUse echo to test."));
        assert!(!merged.contains("## gh"), "no instructions, no heading");
        assert!(merged.contains(&format!("## big (Big)\n{}", "x".repeat(2048))));
        assert!(!merged.contains(&"x".repeat(2049)));
        assert!(merged.len() <= INSTRUCTIONS_MAX, "{}", merged.len());
        assert!(!merged.contains("## big4"), "the 8 KiB budget ran out");
    }

    #[test]
    fn cut_respects_characters() {
        assert_eq!(cut("héllo", 2), "h");
        assert_eq!(cut("héllo", 3), "hé");
        assert_eq!(cut("abc", 10), "abc");
    }
}
