//! Connections to hosted servers, all on rmcp's client: stdio servers over our own spawn
//! (process group, stderr ring, 64 MiB lines), and the Streamable HTTP and legacy HTTP+SSE
//! client transports written here (on reqwest); plus the tool filter and the
//! state/backoff rules the supervisor follows.

mod client;
pub mod filter;
mod http;
pub mod http_client;
pub mod in_flight;
pub mod legacy;
pub mod line_scan;
pub mod raw_tap;
pub mod ring;
pub mod spawn;
pub mod sse;
pub mod state;
mod streamable;

use thiserror::Error;

pub use client::{
    connect_stdio, connect_stdio_with, Asker, Connected, ElicitationPolicy, HostedClient,
    INIT_TIMEOUT, MAX_MESSAGE,
};
pub use http::{connect_http, connect_http_with, HttpAuth, HttpLaunch};
use spawn::StdioLaunch;

/// How to reach one server, with its secret values filled in.
#[derive(Debug, Clone)]
pub enum Launch {
    Stdio(StdioLaunch),
    Http(HttpLaunch),
}

/// Connects to server `alias` over its transport.
pub async fn connect(
    alias: &str,
    launch: &Launch,
    init_timeout: std::time::Duration,
) -> Result<Connected, ConnectError> {
    match launch {
        Launch::Stdio(stdio) => connect_stdio(alias, stdio, init_timeout).await,
        Launch::Http(http) => connect_http(alias, http, init_timeout).await,
    }
}

/// Connects to server `alias`; an HTTP server authorizes as `auth` says, and either answers
/// elicitations as `auth.elicitation` says.
pub async fn connect_with(
    alias: &str,
    launch: &Launch,
    auth: &HttpAuth,
    init_timeout: std::time::Duration,
) -> Result<Connected, ConnectError> {
    match launch {
        Launch::Stdio(stdio) => {
            connect_stdio_with(alias, stdio, auth.elicitation.clone(), init_timeout).await
        }
        Launch::Http(http) => connect_http_with(alias, http, auth, init_timeout).await,
    }
}

impl ConnectError {
    /// A 401 or 403 `insufficient_scope` calyx can answer by signing in.
    pub fn needs_sign_in(&self) -> bool {
        matches!(
            self,
            ConnectError::NeedsSignIn { .. } | ConnectError::NeedsScope { .. }
        )
    }
}

/// Why a connection attempt failed, as the row shows it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConnectError {
    #[error(
        "`{command}` was not found in PATH ({path}): install it or give its full path in Edit"
    )]
    CommandNotFound { command: String, path: String },
    #[error("cannot start `{command}`: {reason}")]
    Spawn { command: String, reason: String },
    #[error("the server exited before answering initialize ({status}){}", stderr_suffix(.stderr))]
    ExitedEarly { status: String, stderr: Vec<String> },
    #[error("the server did not answer initialize within {} s{}", .after.as_secs_f64(), stderr_suffix(.stderr))]
    InitTimeout {
        after: std::time::Duration,
        stderr: Vec<String>,
    },
    #[error("initialize failed: {reason}{}", stderr_suffix(.stderr))]
    Initialize { reason: String, stderr: Vec<String> },
    #[error("tools/list failed: {reason}")]
    ListTools { reason: String },
    #[error("cannot reach {host}: {reason}")]
    Unreachable { host: String, reason: String },
    #[error("this is a legacy HTTP+SSE server: turn on Legacy HTTP+SSE in Edit")]
    LegacyServer,
    #[error("the server requires sign-in (HTTP 401), which calyx cannot do for it: add an Authorization header in Edit")]
    SignInRequired,
    #[error("{reason}")]
    Http { reason: String },
    /// The server answered `initialize` with a version calyx's client does not know.
    #[error("the server answered initialize with protocol version `{version}`, which calyx cannot speak (it speaks {known}): update the server to a current MCP version")]
    UnsupportedProtocol { version: String, known: String },
    /// A 401 on a server calyx can sign in to; `challenge` is its `WWW-Authenticate`.
    #[error("Sign-in required")]
    NeedsSignIn { challenge: Option<String> },
    /// A 403 `insufficient_scope`: signing in again with more scopes (step-up).
    #[error("Sign-in required (the server asks for more scopes)")]
    NeedsScope { challenge: String },
}

fn stderr_suffix(lines: &[String]) -> String {
    if lines.is_empty() {
        String::new()
    } else {
        format!("; its stderr ends with:\n{}", lines.join("\n"))
    }
}
