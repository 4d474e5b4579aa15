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

use tokio::sync::{broadcast, watch};

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResponse, CallToolResult,
    CancelledNotification, CancelledNotificationParam, ClientNotification, ClientRequest,
    ContentBlock, Implementation, InitializeRequestParams, InitializeResult, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig, ServerResult, Tool,
};
use rmcp::service::{Peer, PeerRequestOptions, RequestContext};
use rmcp::{ErrorData, RoleClient, RoleServer, ServerHandler};

use super::connection::filter::Classified;
use super::elicit::required::{needed, needed_sentence, wait_for_needed, Needed};
use super::held::{
    reconnecting_sentence, withdraw_after, HeldServer, Unavailable, WithdrawTimer, RECONNECT_WAIT,
};
use super::oauth::{find_challenge, Challenge};
use super::sign_in_prompt::{sign_in_sentence, SignInPrompts, SIGN_IN_WAIT};
use super::step_up::wait_for_step_up;

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
    /// The views' resources read on the connection ([`super::resource_cache`]).
    pub resources: super::resource_cache::ResourceCache,
}

impl PublishedServer {
    /// This ready server's tools, kept while it reconnects: "server `ALIAS` is reconnecting:
    /// WHAT_HAPPENED" for calls still waiting after the 10 s wait.
    pub fn held_while_reconnecting(&self, what_happened: &str) -> HeldServer {
        HeldServer {
            alias: self.alias.clone(),
            name: self.name.clone(),
            tools: self.tools.clone(),
            instructions: self.instructions.clone(),
            unavailable: reconnecting_sentence(&self.alias, what_happened),
            wait: RECONNECT_WAIT,
            sign_in: false,
        }
    }

    /// This ready server's tools, kept while its connection needs sign-in: the sign-in sentence
    /// (naming it `name`, its display name now) and the 120 s wait; a call raises the prompt.
    pub fn held_needing_sign_in(&self, name: &str) -> HeldServer {
        HeldServer {
            alias: self.alias.clone(),
            name: name.to_string(),
            tools: self.tools.clone(),
            instructions: self.instructions.clone(),
            unavailable: sign_in_sentence(name, &self.alias),
            wait: SIGN_IN_WAIT,
            sign_in: true,
        }
    }
}

/// What the registry publishes for one alias: a ready server, or the tools of one that cannot
/// take calls now ([`super::held`]).
#[derive(Clone)]
pub enum Published {
    Live(Arc<PublishedServer>),
    Held(Arc<HeldServer>),
}

impl Published {
    /// The tools agents see of this server.
    pub fn tools(&self) -> &Classified {
        match self {
            Published::Live(s) => &s.tools,
            Published::Held(h) => &h.tools,
        }
    }

    fn alias(&self) -> &str {
        match self {
            Published::Live(s) => &s.alias,
            Published::Held(h) => &h.alias,
        }
    }

    /// The server's display name (`Everything`).
    pub fn name(&self) -> &str {
        match self {
            Published::Live(s) => &s.name,
            Published::Held(h) => &h.name,
        }
    }

    /// The server's own `instructions`.
    pub fn instructions(&self) -> Option<&str> {
        match self {
            Published::Live(s) => s.instructions.as_deref(),
            Published::Held(h) => h.instructions.as_deref(),
        }
    }
}

/// The published servers, by alias: ready ones and held ones. Cloning shares it.
#[derive(Clone)]
pub struct Registry {
    servers: Arc<RwLock<BTreeMap<String, Published>>>,
    /// Counts changes of the published tools, for whoever must hear of them (the announcer that
    /// tells the agents' sessions, see [`super::route::announce_changes`]). A server going from
    /// ready to held and back with the same tools changes nothing agents see: no count.
    generation: Arc<watch::Sender<u64>>,
    /// Counts every change of any entry (ready, held, gone), for calls waiting for a held
    /// server to be ready again.
    readiness: Arc<watch::Sender<u64>>,
    /// The calls waiting for a server's sign-in (the floating prompt's source).
    prompts: Arc<SignInPrompts>,
    /// The servers' elicitations waiting for the user (the elicitation panel's source).
    elicitations: Arc<super::elicit::Elicitations>,
    /// The servers' `notifications/tools/list_changed` and `resources/list_changed`, as
    /// `(alias, message)`, for the MCP App views of each server (they are forwarded to its
    /// pages).
    upstream_changes: broadcast::Sender<(String, serde_json::Value)>,
}

impl Default for Registry {
    fn default() -> Self {
        Registry {
            servers: Arc::default(),
            generation: Arc::new(watch::Sender::new(0)),
            readiness: Arc::new(watch::Sender::new(0)),
            prompts: Arc::default(),
            elicitations: Arc::default(),
            upstream_changes: broadcast::channel(64).0,
        }
    }
}

impl Registry {
    /// The calls waiting for a server's sign-in: the server's loop shows the prompt for them
    /// and cancels them.
    pub fn sign_in_prompts(&self) -> &Arc<SignInPrompts> {
        &self.prompts
    }

    /// The servers' elicitations: the live connections put them here, the server's loop shows
    /// them in the panel and answers them.
    pub fn elicitations(&self) -> &Arc<super::elicit::Elicitations> {
        &self.elicitations
    }

    /// Follows the servers' list changes (see `upstream_changes`).
    pub fn upstream_changes(&self) -> broadcast::Receiver<(String, serde_json::Value)> {
        self.upstream_changes.subscribe()
    }

    /// Server `alias` sent `notifications/<what>/list_changed`.
    pub fn upstream_list_changed(&self, alias: &str, what: &str) {
        let message = serde_json::json!({
            "jsonrpc": "2.0",
            "method": format!("notifications/{what}/list_changed"),
        });
        // Nobody following (no view server) is fine.
        let _ = self.upstream_changes.send((alias.to_string(), message));
    }

    /// Publishes (or replaces) a ready server's tools.
    pub fn insert(&self, server: PublishedServer) {
        self.put(Published::Live(Arc::new(server)));
    }

    /// Publishes the tools of a server that cannot take calls now (see [`super::held`]),
    /// replacing whatever `alias` had.
    pub fn hold(&self, held: HeldServer) {
        self.put(Published::Held(Arc::new(held)));
    }

    /// Keeps the tools of the ready server `alias` published as held by `held_as`, which makes
    /// the [`HeldServer`] from it (false when `alias` is not a ready server).
    pub fn hold_live(
        &self,
        alias: &str,
        held_as: impl FnOnce(&PublishedServer) -> HeldServer,
    ) -> bool {
        let live = match self.entry(alias) {
            Some(Published::Live(server)) => server,
            _ => return false,
        };
        self.hold(held_as(&live));
        true
    }

    /// Changes the sentence a call to held `alias` gets (a later reconnect attempt failed
    /// otherwise); nothing agents see changes.
    pub fn set_held_sentence(&self, alias: &str, unavailable: String) {
        let mut servers = self.servers.write().unwrap_or_else(|e| e.into_inner());
        if let Some(Published::Held(held)) = servers.get_mut(alias) {
            let mut changed = HeldServer::clone(held);
            changed.unavailable = unavailable;
            *held = Arc::new(changed);
        }
    }

    fn put(&self, entry: Published) {
        let alias = entry.alias().to_string();
        let previous = {
            let mut servers = self.servers.write().unwrap_or_else(|e| e.into_inner());
            servers.insert(alias, entry.clone())
        };
        let same = previous.is_some_and(|p| p.tools().published == entry.tools().published);
        if !same {
            self.bump();
        }
        self.readiness.send_modify(|n| *n = n.wrapping_add(1));
    }

    fn bump(&self) {
        self.generation.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Withdraws a server's tools, ready or held.
    pub fn remove(&self, alias: &str) {
        let removed = {
            let mut servers = self.servers.write().unwrap_or_else(|e| e.into_inner());
            servers.remove(alias).is_some()
        };
        if removed {
            self.bump();
            self.readiness.send_modify(|n| *n = n.wrapping_add(1));
        }
    }

    /// Withdraws `alias`'s held tools after `after`, unless the timer is dropped first (the
    /// server came back, failed, or was stopped).
    pub fn withdraw_held_after(&self, alias: &str, after: std::time::Duration) -> WithdrawTimer {
        let registry = self.clone();
        let alias = alias.to_string();
        withdraw_after(after, move || registry.withdraw_held(&alias))
    }

    /// Withdraws `alias`'s tools if they are held (a ready server is left alone).
    pub fn withdraw_held(&self, alias: &str) {
        if matches!(self.entry(alias), Some(Published::Held(_))) {
            self.remove(alias);
        }
    }

    /// A receiver that wakes when the published set changes.
    pub fn watch_changes(&self) -> watch::Receiver<u64> {
        self.generation.subscribe()
    }

    /// The aliases of the servers whose tools are published (ready or held).
    pub fn aliases(&self) -> Vec<String> {
        let servers = self.servers.read().unwrap_or_else(|e| e.into_inner());
        servers.keys().cloned().collect()
    }

    /// What `alias` publishes, ready or held.
    pub fn entry(&self, alias: &str) -> Option<Published> {
        let servers = self.servers.read().unwrap_or_else(|e| e.into_inner());
        servers.get(alias).cloned()
    }

    /// The published server `alias`, when it is ready.
    pub fn get(&self, alias: &str) -> Option<Arc<PublishedServer>> {
        match self.entry(alias)? {
            Published::Live(server) => Some(server),
            Published::Held(_) => None,
        }
    }

    /// The held server `alias`, when its tools are published but it cannot take calls.
    pub fn held(&self, alias: &str) -> Option<Arc<HeldServer>> {
        match self.entry(alias)? {
            Published::Held(held) => Some(held),
            Published::Live(_) => None,
        }
    }

    fn snapshot(&self) -> Vec<Published> {
        let servers = self.servers.read().unwrap_or_else(|e| e.into_inner());
        servers.values().cloned().collect()
    }

    /// Every published tool, renamed, everything else as the server sent it.
    pub fn tools(&self) -> Vec<Tool> {
        self.snapshot()
            .iter()
            .flat_map(|server| {
                server.tools().published.iter().map(|(published, tool)| {
                    let mut tool = tool.clone();
                    tool.name = published.clone().into();
                    tool
                })
            })
            .collect()
    }

    /// Whether `published` is a tool name some server publishes (ready or held).
    pub fn publishes(&self, published: &str) -> bool {
        super::naming::alias_of(published)
            .and_then(|alias| self.entry(alias))
            .is_some_and(|entry| entry.tools().names.original.contains_key(published))
    }

    /// The ready server and original name behind a published name.
    pub fn resolve(&self, published: &str) -> Option<(Arc<PublishedServer>, String)> {
        let alias = super::naming::alias_of(published)?;
        let server = self.get(alias)?;
        let original = server.tools.names.original.get(published)?.clone();
        Some((server, original))
    }

    /// The ready server and original name a call to `published` goes to. A held server's tool
    /// (or a ready one whose connection just closed) waits up to the hold's wait for its
    /// server to be ready again; still not ready, the held sentence comes back.
    pub async fn callable(
        &self,
        published: &str,
    ) -> Result<(Arc<PublishedServer>, String), Unavailable> {
        let alias = super::naming::alias_of(published).ok_or(Unavailable::Unknown)?;
        let (wait, sentence, sign_in) = match self.entry(alias) {
            None => return Err(Unavailable::Unknown),
            Some(entry) if !entry.tools().names.original.contains_key(published) => {
                return Err(Unavailable::Unknown)
            }
            Some(Published::Live(server)) if !server.peer.is_transport_closed() => {
                let original = server.tools.names.original[published].clone();
                return Ok((server, original));
            }
            Some(Published::Live(_)) => (
                RECONNECT_WAIT,
                reconnecting_sentence(alias, "the server's connection ended"),
                None,
            ),
            Some(Published::Held(held)) => (
                held.wait,
                held.unavailable.clone(),
                held.sign_in.then(|| held.name.clone()),
            ),
        };
        let live = match sign_in {
            // The prompt shows while this call waits; `Esc` there ends the wait.
            Some(name) => {
                let ask = self.prompts.ask(alias, &name);
                tokio::select! {
                    live = self.live_within(alias, wait) => live,
                    _ = ask.cancelled() => None,
                    // Stopped or removed meanwhile: nothing to sign in to any more.
                    _ = self.withdrawn(alias) => None,
                }
            }
            None => self.live_within(alias, wait).await,
        };
        let Some(server) = live else {
            // The sentence as it is now: a later attempt may have said more.
            let sentence = self
                .held(alias)
                .map(|h| h.unavailable.clone())
                .unwrap_or(sentence);
            return Err(Unavailable::NotReady(sentence));
        };
        match server.tools.names.original.get(published) {
            Some(original) => Ok((server.clone(), original.clone())),
            None => Err(Unavailable::Unknown),
        }
    }

    /// Resolves once nothing is published for `alias`.
    async fn withdrawn(&self, alias: &str) {
        let mut changes = self.readiness.subscribe();
        while self.entry(alias).is_some() {
            if changes.changed().await.is_err() {
                // The registry is going away with its last clone: never resolves.
                std::future::pending::<()>().await;
            }
        }
    }

    /// `alias` once it is ready with an open connection, waiting at most `within`.
    pub async fn live_within(
        &self,
        alias: &str,
        within: std::time::Duration,
    ) -> Option<Arc<PublishedServer>> {
        let mut changes = self.readiness.subscribe();
        let deadline = tokio::time::sleep(within);
        tokio::pin!(deadline);
        loop {
            if let Some(server) = self.get(alias).filter(|s| !s.peer.is_transport_closed()) {
                return Some(server);
            }
            tokio::select! {
                changed = changes.changed() => {
                    if changed.is_err() {
                        return None;
                    }
                }
                _ = &mut deadline => return None,
            }
        }
    }

    /// What `initialize` says (see [`merge_instructions`]).
    pub fn instructions(&self) -> String {
        let servers = self.snapshot();
        merge_instructions(
            servers
                .iter()
                .map(|s| (s.alias(), s.name(), s.instructions().unwrap_or(""))),
        )
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

/// What a call's MCP App view is told as the call goes (`hosted::views::ViewCall`).
/// Publishing knows nothing of views beyond these two traits, so the views module may use
/// publishing's types without the two importing each other.
pub trait CallWatch: Send + Sync {
    /// The upstream `tools/call` went out with `upstream`.
    fn sent(&self, upstream: &rmcp::model::RequestId);
    /// The call returned `result` (unchanged).
    fn result(self: Box<Self>, result: &CallToolResult);
    /// The call ended without a result.
    fn cancelled(self: Box<Self>, reason: &str);
}

/// The future of [`ViewStarter::begin`].
pub type ViewBegun<'a> =
    std::pin::Pin<Box<dyn std::future::Future<Output = Option<Box<dyn CallWatch>>> + Send + 'a>>;

/// Starts the MCP App view of a call (`hosted::views::ViewWire`).
pub trait ViewStarter: Send + Sync {
    /// The view of a call of `published` (original name `original`) on `server`, or None for
    /// a plain call.
    fn begin<'a>(
        &'a self,
        server: &'a Arc<PublishedServer>,
        published: &'a str,
        original: &'a str,
        arguments: Option<&'a serde_json::Map<String, serde_json::Value>>,
        caller: Option<Caller>,
    ) -> ViewBegun<'a>;
}

/// A boxed future of [`PaneToolSource`].
pub type PaneFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

/// The tools a session has because of its caller's pane (issue 17, "App context and
/// app-registered tools"): its views' app-registered tools and `app_context`
/// (`hosted::pane_tools::PaneTools`). Sessions of other panes, and sessions bound to none,
/// never see them.
pub trait PaneToolSource: Send + Sync {
    /// A session of `caller` initialized: when the caller has a pane, the session is told
    /// `tools/list_changed` when that pane's tools change.
    fn bind<'a>(&'a self, caller: Option<Caller>, peer: Peer<RoleServer>) -> PaneFuture<'a, ()>;
    /// The tools `caller`'s pane adds to `tools/list`.
    fn list<'a>(&'a self, caller: Option<Caller>) -> PaneFuture<'a, Vec<Tool>>;
    /// A call of `name` when it is one of these tools (None: it is not).
    fn call<'a>(
        &'a self,
        caller: Option<Caller>,
        name: &'a str,
        arguments: Option<serde_json::Map<String, serde_json::Value>>,
    ) -> PaneFuture<'a, Option<CallToolResult>>;
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
    /// MCP App views (None: calls create none, as in tests over a pipe).
    views: Option<Arc<dyn ViewStarter>>,
    /// The pane's own tools: app-registered tools and `app_context` (None: there are none).
    pane_tools: Option<Arc<dyn PaneToolSource>>,
}

impl HostedHandler {
    pub fn new(registry: Registry) -> Self {
        HostedHandler {
            registry,
            sessions: None,
            caller: Arc::default(),
            views: None,
            pane_tools: None,
        }
    }

    /// This handler adding the caller's pane's tools (see [`PaneToolSource`]).
    pub fn with_pane_tools(mut self, pane_tools: Arc<dyn PaneToolSource>) -> Self {
        self.pane_tools = Some(pane_tools);
        self
    }

    /// This handler creating views for calls of tools with a `ui://` resource.
    pub fn with_views(mut self, views: Arc<dyn ViewStarter>) -> Self {
        self.views = Some(views);
        self
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
        if let Some(pane_tools) = &self.pane_tools {
            pane_tools.bind(caller, context.peer.clone()).await;
        }
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
        let mut tools = self.registry.tools();
        if let Some(pane_tools) = &self.pane_tools {
            tools.extend(pane_tools.list(self.caller(&context)).await);
        }
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // The pane's own tools are names no server publishes (`app_context` has no alias).
        if let Some(pane_tools) = self.pane_tools.as_ref() {
            if !self.registry.publishes(&request.name) {
                let caller = self.caller(&context);
                let arguments = request.arguments.clone();
                let answer = tokio::select! {
                    answer = pane_tools.call(caller, &request.name, arguments) => answer,
                    _ = context.ct.cancelled() => {
                        return Err(ErrorData::internal_error("cancelled by the client", None));
                    }
                };
                if let Some(result) = answer {
                    return Ok(result.into());
                }
            }
        }
        let callable = tokio::select! {
            callable = self.registry.callable(&request.name) => callable,
            _ = context.ct.cancelled() => {
                return Err(ErrorData::internal_error("cancelled by the client", None));
            }
        };
        let (server, original) = match callable {
            Ok(found) => found,
            Err(Unavailable::Unknown) => {
                return Err(ErrorData::invalid_params(
                    format!("no tool named {:?}; call tools/list", request.name),
                    None,
                ))
            }
            Err(Unavailable::NotReady(sentence)) => {
                return Ok(CallToolResult::error(vec![ContentBlock::text(sentence)]).into())
            }
        };
        tracing::debug!(
            tool = %request.name,
            caller = ?self.caller(&context),
            session = transport_session(&context).unwrap_or("-"),
            "calyx-mcp: forwarding a call to `{}`",
            server.alias
        );
        let mut view = match &self.views {
            Some(views) => {
                let caller = self.caller(&context);
                let arguments = request.arguments.as_ref();
                views
                    .begin(&server, &request.name, &original, arguments, caller)
                    .await
            }
            None => None,
        };
        let mut upstream = CallToolRequestParams::new(original);
        upstream.arguments = request.arguments;
        // While it runs, the server's questions name this caller's pane.
        let surface = self.caller(&context).and_then(|c| c.surface);
        let _in_flight = self
            .registry
            .elicitations()
            .call_started(&server.alias, surface);
        let mut answer = forward_call(&server, upstream.clone(), &context, view.as_deref()).await;
        if let Err(ForwardError::UrlsNeeded(needed)) = &answer {
            // -32042: the user opens the pages in the elicitation panel, then the call once
            // more (see `elicit::required`).
            let queue = self.registry.elicitations();
            let (alias, name) = (server.alias.as_str(), server.name.as_str());
            let wait = super::elicit::required::NEEDED_WAIT;
            if !wait_for_needed(queue, alias, name, needed, wait, &context.ct).await {
                let sentence = needed_sentence(name, needed);
                if let Some(view) = view.take() {
                    view.cancelled(&sentence);
                }
                return Ok(CallToolResult::error(vec![ContentBlock::text(sentence)]).into());
            }
            answer = forward_call(&server, upstream.clone(), &context, view.as_deref()).await;
        }
        if let Err(ForwardError::Challenge(challenge)) = answer {
            // Step-up (or a sign-in again): the prompt, then the same call once more.
            let prompts = self.registry.sign_in_prompts();
            let alias = server.alias.as_str();
            let waited =
                wait_for_step_up(prompts, alias, &server.name, challenge, &context.ct).await;
            if let Err(sentence) = waited {
                if let Some(view) = view.take() {
                    view.cancelled(&sentence);
                }
                return Ok(CallToolResult::error(vec![ContentBlock::text(sentence)]).into());
            }
            answer = match forward_call(&server, upstream, &context, view.as_deref()).await {
                Err(ForwardError::Challenge(_)) => Err(ForwardError::Upstream(
                    "the server still refuses the call after the sign-in".into(),
                )),
                other => other,
            };
        }
        if let Some(view) = view {
            match &answer {
                Ok(CallToolResponse::Complete(result)) => view.result(result),
                Ok(_) => view.cancelled("the server answered with no tool result"),
                Err(ForwardError::Cancelled) => view.cancelled("cancelled by the agent"),
                Err(ForwardError::Upstream(error)) => view.cancelled(error),
                Err(ForwardError::Challenge(_)) => view.cancelled("the server wants a sign-in"),
                Err(ForwardError::UrlsNeeded(_)) => {
                    view.cancelled("the server still needs pages opened")
                }
            }
        }
        match answer {
            Ok(response) => Ok(response),
            Err(ForwardError::Cancelled) => {
                // rmcp drops the answer of a cancelled request; this reaches nobody.
                Err(ErrorData::internal_error("cancelled by the client", None))
            }
            // Not reached (a challenge above is waited on, a second one made Upstream).
            Err(ForwardError::Challenge(_)) => Ok(CallToolResult::error(vec![ContentBlock::text(
                sign_in_sentence(&server.name, &server.alias),
            )])
            .into()),
            Err(ForwardError::UrlsNeeded(needed)) => {
                Ok(
                    CallToolResult::error(vec![ContentBlock::text(needed_sentence(
                        &server.name,
                        &needed,
                    ))])
                    .into(),
                )
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
    /// The server asked for authorization: a 403 `insufficient_scope` (step-up) or a 401.
    Challenge(Challenge),
    /// The server answered `-32042`: the user must open these pages first.
    UrlsNeeded(Vec<Needed>),
}

/// A failed upstream request: its authorization challenge when it carries one.
fn upstream_error(error: rmcp::ServiceError) -> ForwardError {
    if let rmcp::ServiceError::McpError(data) = &error {
        if let Some(needed) = needed(data) {
            return ForwardError::UrlsNeeded(needed);
        }
    }
    match find_challenge(&error) {
        Some(challenge) => ForwardError::Challenge(challenge),
        None => ForwardError::Upstream(error.to_string()),
    }
}

/// Sends `params` upstream as a cancellable request. The agent's `progressToken`, when it sent
/// one, receives the upstream progress ([`super::progress`]); the agent cancelling sends
/// `notifications/cancelled` upstream (`RequestHandle::cancel`), and so does dropping this
/// future (the agent's session closed), and a late upstream answer is discarded. A `view`
/// watching the call learns the upstream request's id.
async fn forward_call(
    server: &PublishedServer,
    params: CallToolRequestParams,
    context: &RequestContext<RoleServer>,
    view: Option<&dyn CallWatch>,
) -> Result<CallToolResponse, ForwardError> {
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let mut handle = server
        .peer
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .map_err(upstream_error)?;
    if let Some(view) = view {
        view.sent(&handle.id);
    }
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
        .map_err(upstream_error)?;
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
