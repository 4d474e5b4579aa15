//! How the endpoint binds and which limits it enforces. Production uses [`EndpointOptions::default`];
//! tests override the port, the endpoint-file path and the timeouts so they never depend on the
//! fixed port range being free or on waiting ten real seconds.

use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::time::Duration;

/// The fixed ports tried in order before a kernel-assigned one. Fixed ports make the URLs written
/// into agent CLI configs (MCP entries hold the port literally) stable across restarts.
pub const DEFAULT_PORTS: RangeInclusive<u16> = 41830..=41839;

/// Largest request head (request line plus headers) accepted; hyper answers 431 beyond it.
pub const MAX_HEADER_BYTES: usize = 8 * 1024;

/// Largest request body accepted; larger bodies get 413.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// How long a client may take to send a request's body.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a connection may wait for its next request head: a slow head, and an idle
/// keep-alive connection alike (hyper times both with one timer). Long, because agent CLIs keep
/// their MCP connections in a pool and reuse one after seconds of quiet: Gemini CLI 0.61.0 spends
/// ~10 s between MCP discovery and its first turn, and a socket calyx had closed at 10 s
/// failed that turn's request ("other side closed"), after which Gemini drops the server and
/// its tools. Loopback and bearer token keep this window harmless.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(75);

/// When the server stops waiting for a human on `/approval-request` and answers "no decision".
/// It must stay below the hook's own 585 s deadline, which stays below the CLI's 600 s hook
/// timeout, so each inner layer gives up before the layer outside it.
pub const APPROVAL_TIMEOUT: Duration = Duration::from_secs(575);

/// Most connections the endpoint serves at once. Beyond it new connections wait in the
/// kernel's backlog: a flood of idle connections (anyone local can open them, no token needed)
/// must not use up the server's file descriptors, which its panes and its socket need.
pub const MAX_CONNECTIONS: usize = 512;

/// How long a new connection has to send a request with the right token before it is closed.
/// Agents send theirs at once; an idle connection without one is only someone holding a slot.
pub const UNAUTHENTICATED_DEADLINE: Duration = Duration::from_secs(5);

/// How long a graceful shutdown waits for in-flight requests before dropping them.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// Which port to listen on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PortChoice {
    /// The port remembered in the endpoint file if it is free, then [`DEFAULT_PORTS`] in order,
    /// then a kernel-assigned port.
    #[default]
    Default,
    /// Exactly this port (0: kernel-assigned). A remembered token is reused only when the
    /// remembered port is this one (or, for 0, any free remembered port).
    Fixed(u16),
}

/// Everything [`super::start`] needs besides the owner channel.
#[derive(Debug, Clone)]
pub struct EndpointOptions {
    /// Port selection; see [`PortChoice`].
    pub port: PortChoice,
    /// Where `{"port":N,"token":"..."}` is written (default: `paths::endpoint_file()`).
    pub endpoint_file: PathBuf,
    /// Time allowed for the request body (408 / connection closed).
    pub request_timeout: Duration,
    /// Time a connection may wait for a request head, idle keep-alive included (closed after).
    pub head_timeout: Duration,
    /// Time an approval request may wait for the owner before answering "no decision".
    pub approval_timeout: Duration,
    /// Body size limit in bytes (413 beyond it).
    pub max_body_bytes: usize,
    /// Request head size limit in bytes (431 beyond it). Must be at least 8192 (hyper's floor).
    pub max_header_bytes: usize,
    /// How long `shutdown()` waits for in-flight requests.
    pub shutdown_grace: Duration,
    /// Most connections served at once (see [`MAX_CONNECTIONS`]).
    pub max_connections: usize,
    /// Time a connection has to send an authorized request (see [`UNAUTHENTICATED_DEADLINE`]).
    pub unauthenticated_deadline: Duration,
    /// The MCP server behind `/mcp`; `None` answers 501 there.
    pub mcp: Option<crate::mcp::McpOptions>,
    /// The user's hosted MCP servers behind `/mcp-hosted`; `None` answers 404 there.
    pub hosted: Option<crate::hosted::route::HostedRoute>,
    /// A listening socket and token inherited from the server this process replaced
    /// (`calyx server-upgrade`): served as they are instead of binding (same port, same token).
    pub inherited: Option<InheritedListener>,
}

/// The endpoint's listener handed over by an in-place upgrade.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InheritedListener {
    /// The descriptor number (open in this process since the exec).
    pub fd: i32,
    pub token: String,
}

impl Default for EndpointOptions {
    fn default() -> Self {
        Self {
            port: PortChoice::Default,
            endpoint_file: crate::paths::endpoint_file(),
            request_timeout: REQUEST_TIMEOUT,
            head_timeout: HEAD_TIMEOUT,
            approval_timeout: APPROVAL_TIMEOUT,
            max_body_bytes: MAX_BODY_BYTES,
            max_header_bytes: MAX_HEADER_BYTES,
            shutdown_grace: SHUTDOWN_GRACE,
            max_connections: MAX_CONNECTIONS,
            unauthenticated_deadline: UNAUTHENTICATED_DEADLINE,
            mcp: None,
            hosted: None,
            inherited: None,
        }
    }
}

impl EndpointOptions {
    /// Options for tests and tools: a kernel-assigned port and the given endpoint file, with the
    /// production limits.
    pub fn ephemeral(endpoint_file: impl Into<PathBuf>) -> Self {
        Self {
            port: PortChoice::Fixed(0),
            endpoint_file: endpoint_file.into(),
            ..Self::default()
        }
    }
}
