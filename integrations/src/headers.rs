//! The identity headers every MCP and hook entry `calyx setup` writes sends with each request,
//! so calyx knows which pane (and which CLI) is calling. Lower-case, as HTTP header maps keep
//! them; the CLIs' configs spell them `X-Calyx-Surface-ID` and so on.

/// `X-Calyx-Session-ID`: the pane's persistent record id.
pub const SESSION_HEADER: &str = "x-calyx-session-id";
/// `X-Calyx-Surface-ID`: the pane's surface UUID.
pub const SURFACE_HEADER: &str = "x-calyx-surface-id";
/// `X-Calyx-Agent-Kind`: which CLI is calling.
pub const KIND_HEADER: &str = "x-calyx-agent-kind";
