//! How the benchmark client reaches a server: a stdio child over rmcp's line transport, or
//! Streamable HTTP (the fixture directly, or calyx's `/mcp-hosted` with its bearer token),
//! both with the 64 MiB message limit calyx itself uses.

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::model::ProgressNotificationParam;
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use tokio::sync::mpsc;

const MAX_MESSAGE: usize = 64 << 20;

/// Where the client connects.
#[derive(Clone, Debug)]
pub enum Target {
    /// A command and its arguments, spawned with stdin/stdout as the MCP stream.
    Stdio(Vec<String>),
    /// A Streamable HTTP URL; `token` goes in `Authorization: Bearer`, `surface` in
    /// `X-Calyx-Surface-ID`.
    Http {
        url: String,
        token: Option<String>,
        surface: Option<String>,
    },
}

/// The client's handler: each `tools/list_changed` sends the moment it arrived.
#[derive(Clone)]
pub struct Bench {
    pub list_changed: mpsc::UnboundedSender<std::time::Instant>,
}

impl ClientHandler for Bench {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.list_changed.send(std::time::Instant::now());
    }

    async fn on_progress(
        &self,
        _params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
    }
}

pub type Client = RunningService<RoleClient, Bench>;

/// A connected client (initialize done); with a stdio target, the child dies with it.
pub async fn connect(target: &Target, handler: Bench) -> anyhow::Result<Client> {
    match target {
        Target::Stdio(command) => {
            let (program, args) = command
                .split_first()
                .ok_or_else(|| anyhow::anyhow!("--stdio needs a command"))?;
            let mut child = tokio::process::Command::new(program)
                .args(args)
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::null())
                .kill_on_drop(true)
                .spawn()?;
            let stdin = child
                .stdin
                .take()
                .ok_or_else(|| anyhow::anyhow!("no stdin"))?;
            let stdout = child
                .stdout
                .take()
                .ok_or_else(|| anyhow::anyhow!("no stdout"))?;
            // The child lives as long as the process: the benchmark exits when done.
            tokio::spawn(async move {
                let _ = child.wait().await;
            });
            let transport =
                AsyncRwTransport::new_client(stdout, stdin).with_max_line_length(MAX_MESSAGE);
            Ok(handler.serve(transport).await?)
        }
        Target::Http {
            url,
            token,
            surface,
        } => {
            let _ = rustls::crypto::ring::default_provider().install_default();
            let mut headers = HashMap::new();
            if let Some(surface) = surface {
                headers.insert("x-calyx-surface-id".parse()?, surface.parse()?);
            }
            let mut config =
                StreamableHttpClientTransportConfig::with_uri(Arc::<str>::from(url.as_str()))
                    .custom_headers(headers)
                    .max_sse_event_size(MAX_MESSAGE)
                    .max_json_response_size(MAX_MESSAGE);
            if let Some(token) = token {
                config = config.auth_header(token.clone());
            }
            let transport = StreamableHttpClientTransport::from_config(config);
            Ok(handler.serve(transport).await?)
        }
    }
}
