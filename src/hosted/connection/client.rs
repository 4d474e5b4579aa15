//! One connection to a stdio server on rmcp's client: our spawn, the raw tap (which also fails
//! the calls in flight when a line is over 64 MiB), rmcp's newline-delimited transport with
//! 64 MiB lines, `initialize` within 60 s, then the tool list.

use std::time::Duration;

use rmcp::model::{ClientConfig, ProtocolVersion};
use rmcp::service::RunningService;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::{ClientHandler, RoleClient, ServiceExt};

use super::filter::{classify, Classified};
use super::in_flight::{InFlight, WriteTap};
use super::raw_tap::{RawTap, TaskRequired};
use super::spawn::{spawn, ServerProcess, StdioLaunch};
use super::ConnectError;

/// How long `initialize` may take (a first `npx -y` run downloads the package).
pub const INIT_TIMEOUT: Duration = Duration::from_secs(60);
/// The largest message (one stdio line) a server may send.
pub const MAX_MESSAGE: usize = 64 << 20;
/// Stderr lines a failure shows.
const STDERR_LINES: usize = 20;

/// How a connection answers the server's `elicitation/create`.
#[derive(Debug, Clone, Default)]
pub enum ElicitationPolicy {
    /// Not announced; rmcp's default answer (decline): the sign-in helper's connection, which
    /// runs no tools.
    #[default]
    Decline,
    /// Announced (`elicitation: {form: {}}`); a form is accepted with its schema's defaults
    /// (the conformance client, which has nobody to ask).
    AcceptDefaults,
    /// Announced (`elicitation: {form: {}, url: {}}`); every request waits in the server's
    /// queue for the user's answer in the panel (the supervisor's live connections).
    Ask(Asker),
}

/// Where a live connection's elicitations go: the queue, and the server they come from.
#[derive(Debug, Clone)]
pub struct Asker {
    pub queue: std::sync::Arc<crate::hosted::elicit::Elicitations>,
    pub alias: String,
    /// The server's display name (the panel's title).
    pub name: String,
}

/// calyx's side of a hosted connection: what it tells the server it supports. The MCP Apps
/// extension is announced so servers send their `ui://` views; elicitation is the hook the
/// views issue fills (see [`ElicitationPolicy`]).
#[derive(Clone)]
pub struct HostedClient {
    config: ClientConfig,
    elicitation: ElicitationPolicy,
    /// Where upstream progress goes (the agents' calls, see `hosted::progress`).
    progress: crate::hosted::progress::ProgressRoutes,
    /// Woken by the server's `notifications/tools/list_changed` (the supervisor re-lists).
    tools_changed: std::sync::Arc<tokio::sync::Notify>,
    /// The views' resources read on this connection (dropped on `resources/list_changed`).
    resources: crate::hosted::resource_cache::ResourceCache,
    /// Woken by the server's `notifications/resources/list_changed` (told to its views).
    resources_changed: std::sync::Arc<tokio::sync::Notify>,
}

impl HostedClient {
    pub fn new() -> Self {
        Self::with_elicitation(ElicitationPolicy::Decline)
    }

    /// A client answering elicitations as `elicitation` says.
    pub fn with_elicitation(elicitation: ElicitationPolicy) -> Self {
        let mut capabilities = serde_json::json!({
            "extensions": {
                "io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}
            }
        });
        match elicitation {
            ElicitationPolicy::Decline => {}
            ElicitationPolicy::AcceptDefaults => {
                capabilities["elicitation"] = serde_json::json!({"form": {}});
            }
            ElicitationPolicy::Ask(_) => {
                capabilities["elicitation"] = serde_json::json!({"form": {}, "url": {}});
            }
        }
        let config = serde_json::from_value(serde_json::json!({
            "protocolVersion": "2025-11-25",
            "capabilities": capabilities,
            "clientInfo": {"name": "calyx", "version": env!("CARGO_PKG_VERSION")}
        }))
        .unwrap_or_default();
        HostedClient {
            config,
            elicitation,
            progress: Default::default(),
            tools_changed: Default::default(),
            resources: Default::default(),
            resources_changed: Default::default(),
        }
    }

    /// Woken when the server says its resource list changed.
    pub fn resources_changed(&self) -> std::sync::Arc<tokio::sync::Notify> {
        self.resources_changed.clone()
    }

    /// Woken when the server says its tool list changed.
    pub fn tools_changed(&self) -> std::sync::Arc<tokio::sync::Notify> {
        self.tools_changed.clone()
    }

    /// The views' resources read on this connection (shared).
    pub fn resources(&self) -> crate::hosted::resource_cache::ResourceCache {
        self.resources.clone()
    }

    /// The progress routes of this connection (shared).
    pub fn progress(&self) -> crate::hosted::progress::ProgressRoutes {
        self.progress.clone()
    }
}

impl Default for HostedClient {
    fn default() -> Self {
        Self::new()
    }
}

impl ClientHandler for HostedClient {
    fn get_info(&self) -> ClientConfig {
        self.config.clone()
    }

    async fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        self.progress.forward(params).await;
    }

    async fn on_resource_list_changed(
        &self,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        self.resources.clear();
        self.resources_changed.notify_one();
    }

    async fn on_tool_list_changed(&self, _context: rmcp::service::NotificationContext<RoleClient>) {
        self.tools_changed.notify_one();
    }

    async fn on_custom_notification(
        &self,
        notification: rmcp::model::CustomNotification,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        // rmcp has no typed variant for it: a URL elicitation finished on the server's side.
        if notification.method != "notifications/elicitation/complete" {
            return;
        }
        let ElicitationPolicy::Ask(asker) = &self.elicitation else {
            return;
        };
        let id = notification
            .params
            .as_ref()
            .and_then(|p| p.get("elicitationId"))
            .and_then(serde_json::Value::as_str);
        if let Some(id) = id {
            asker.queue.complete(&asker.alias, id);
        }
    }

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};
        if let ElicitationPolicy::Ask(asker) = &self.elicitation {
            return Ok(ask(asker, request, &context).await);
        }
        let accepted = match (&self.elicitation, &request) {
            (
                ElicitationPolicy::AcceptDefaults,
                ElicitRequestParams::FormElicitationParams {
                    requested_schema, ..
                },
            ) => serde_json::to_value(requested_schema)
                .ok()
                .map(|schema| crate::hosted::elicitation::schema_defaults(&schema)),
            _ => None,
        };
        Ok(match accepted {
            Some(content) => ElicitResult::new(ElicitationAction::Accept)
                .with_content(serde_json::Value::Object(content)),
            None => ElicitResult::new(ElicitationAction::Decline),
        })
    }
}

/// Puts `request` in the server's queue and waits for the user's answer (or the server's
/// cancel of its request, which withdraws it: `cancel`).
async fn ask(
    asker: &Asker,
    request: rmcp::model::ElicitRequestParams,
    context: &rmcp::service::RequestContext<RoleClient>,
) -> rmcp::model::ElicitResult {
    use crate::hosted::elicit::{Answer, Request};
    use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};
    let request = match request {
        ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } => Request::Form {
            message,
            order: requested_schema.property_order.clone().unwrap_or_default(),
            schema: serde_json::to_value(&requested_schema).unwrap_or_default(),
        },
        ElicitRequestParams::UrlElicitationParams {
            message,
            url,
            elicitation_id,
            ..
        } => Request::Url {
            message,
            url,
            elicitation_id,
        },
        // A mode this rmcp does not know yet: nothing the panel could show.
        _ => return ElicitResult::new(ElicitationAction::Decline),
    };
    let answer = tokio::select! {
        answer = asker.queue.ask(&asker.alias, &asker.name, request) => answer,
        () = context.ct.cancelled() => Answer::Cancel,
    };
    match answer {
        Answer::Accept(Some(content)) => ElicitResult::new(ElicitationAction::Accept)
            .with_content(serde_json::Value::Object(content)),
        Answer::Accept(None) => ElicitResult::new(ElicitationAction::Accept),
        Answer::Decline => ElicitResult::new(ElicitationAction::Decline),
        Answer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
    }
}

/// A ready connection.
pub struct Connected {
    pub service: RunningService<RoleClient, HostedClient>,
    /// The server's process, for stdio servers.
    pub process: Option<ServerProcess>,
    pub tools: Classified,
    /// The negotiated protocol version, e.g. `2025-11-25`.
    pub protocol_version: String,
    /// The server's `serverInfo` name and version, when it sent them.
    pub server_name: Option<String>,
    pub server_version: Option<String>,
    /// The server's `instructions`.
    pub instructions: Option<String>,
    /// The tools the raw tap saw with `execution.taskSupport: "required"` (it keeps watching,
    /// so a re-list after `tools/list_changed` classifies new ones too).
    pub task_required: TaskRequired,
}

impl Connected {
    /// Closes the session (which closes a stdio server's stdin) and stops its process the
    /// spec's way.
    pub async fn shutdown(self) {
        let _ = self.service.cancel().await;
        if let Some(process) = self.process {
            process.shutdown().await;
        }
    }

    /// The process group of a stdio server.
    pub fn pgid(&self) -> Option<i32> {
        self.process.as_ref().and_then(ServerProcess::pgid)
    }
}

/// Starts server `alias` as `launch` says and connects to it.
pub async fn connect_stdio(
    alias: &str,
    launch: &StdioLaunch,
    init_timeout: Duration,
) -> Result<Connected, ConnectError> {
    connect_stdio_with(alias, launch, ElicitationPolicy::Decline, init_timeout).await
}

/// [`connect_stdio`] answering the server's elicitations as `elicitation` says.
pub async fn connect_stdio_with(
    alias: &str,
    launch: &StdioLaunch,
    elicitation: ElicitationPolicy,
    init_timeout: Duration,
) -> Result<Connected, ConnectError> {
    let (mut process, stdin, stdout) = spawn(launch)?;
    let task_required = TaskRequired::default();
    let in_flight = InFlight::default();
    let tapped =
        RawTap::new(stdout, MAX_MESSAGE, task_required.clone()).guarding(in_flight.clone());
    let stdin = WriteTap::new(stdin, MAX_MESSAGE, in_flight);
    let transport = AsyncRwTransport::new_client(tapped, stdin).with_max_line_length(MAX_MESSAGE);
    let service = match tokio::time::timeout(
        init_timeout,
        HostedClient::with_elicitation(elicitation).serve(transport),
    )
    .await
    {
        Ok(Ok(service)) => service,
        Ok(Err(error)) => {
            let exited = process.wait_exit(Duration::from_secs(1)).await;
            process.drain_stderr(Duration::from_secs(1)).await;
            let stderr = process.stderr.tail(STDERR_LINES);
            return Err(match exited {
                Some(status) => ConnectError::ExitedEarly { status, stderr },
                None => ConnectError::Initialize {
                    reason: error.to_string(),
                    stderr,
                },
            });
        }
        Err(_) => {
            return Err(ConnectError::InitTimeout {
                after: init_timeout,
                stderr: process.stderr.tail(STDERR_LINES),
            })
        }
    };
    ready(alias, service, Some(process), &task_required, init_timeout).await
}

/// Lists the tools of a session that finished `initialize` and describes it.
pub(super) async fn ready(
    alias: &str,
    service: RunningService<RoleClient, HostedClient>,
    process: Option<ServerProcess>,
    task_required: &TaskRequired,
    init_timeout: Duration,
) -> Result<Connected, ConnectError> {
    // The spec: a client that does not support the version the server answered disconnects.
    if let Some(version) = service.peer_info().map(|i| i.protocol_version.clone()) {
        if !ProtocolVersion::KNOWN_VERSIONS.contains(&version) {
            return Err(ConnectError::UnsupportedProtocol {
                version: version.to_string(),
                known: ProtocolVersion::KNOWN_VERSIONS
                    .iter()
                    .map(|v| v.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
    }
    let tools = match tokio::time::timeout(init_timeout, service.peer().list_all_tools()).await {
        Ok(Ok(tools)) => tools,
        Ok(Err(error)) => {
            use crate::hosted::oauth::{find_challenge, Challenge};
            return Err(match find_challenge(&error) {
                Some(Challenge::Unauthorized(challenge)) => ConnectError::NeedsSignIn {
                    challenge: Some(challenge),
                },
                Some(Challenge::InsufficientScope(challenge)) => {
                    ConnectError::NeedsScope { challenge }
                }
                None => ConnectError::ListTools {
                    reason: error.to_string(),
                },
            });
        }
        Err(_) => {
            return Err(ConnectError::ListTools {
                reason: "no answer within 60 s".into(),
            })
        }
    };
    let required = task_required
        .lock()
        .map(|set| set.clone())
        .unwrap_or_default();
    let tools = classify(alias, tools, &required);
    let info = service.peer_info();
    let protocol_version = info
        .as_ref()
        .map(|i| i.protocol_version.to_string())
        .unwrap_or_default();
    let server = info.as_ref().and_then(|i| i.server_info.clone());
    Ok(Connected {
        protocol_version,
        server_name: server.as_ref().map(|s| s.name.clone()),
        server_version: server.as_ref().map(|s| s.version.clone()),
        instructions: info.as_ref().and_then(|i| i.instructions.clone()),
        task_required: task_required.clone(),
        service,
        process,
        tools,
    })
}
