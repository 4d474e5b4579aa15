//! pi (verified on 0.73.1): no MCP client and no hook config, so calyx writes an extension of
//! its own to `$PI_CODING_AGENT_DIR/extensions/calyx.ts` (default `~/.pi/agent`). It posts
//! `{event, ctx}` (session id from `ctx.sessionManager`), gates every `tool_call` through
//! `/approval-request`, and exposes dispatcher tools speaking JSON-RPC: `calyx` to `/mcp`
//! (calyx's own tools, what `calyx-ipc` is elsewhere) and, while `[mcp] host_servers` is on,
//! `calyx_mcp` to `/mcp-hosted` (the hosted servers' tools, what `calyx-mcp` is elsewhere).

use super::{owned_file, Ctx, Op, Plan, SetupError};
use crate::kind::AgentKind;

/// The extension's file name in pi's extensions directory.
pub const EXTENSION_FILE: &str = "calyx.ts";

/// Text only an extension that registers the `calyx` tool holds.
pub(super) const IPC_TOOL_MARKER: &str = "name: \"calyx\",";
/// Text only an extension that registers the `calyx_mcp` tool holds.
pub(super) const HOSTED_TOOL_MARKER: &str = "const HOST_SERVERS = true;";

/// The extension's text, with the endpoint file's path and the hosting switch filled in.
pub fn extension_source(ctx: &Ctx) -> String {
    include_str!("assets/pi-extension.ts")
        .replace(
            "__CALYX_ENDPOINT_FILE__",
            &serde_json::Value::String(ctx.endpoint_file.display().to_string()).to_string(),
        )
        .replace("__CALYX_HOST_SERVERS__", &ctx.host_servers.to_string())
}

pub(super) fn plan(ctx: &Ctx, op: Op, plan: &mut Plan) -> Result<(), SetupError> {
    let dir = super::config_dir(AgentKind::Pi, ctx);
    owned_file(
        plan,
        &dir.join("extensions").join(EXTENSION_FILE),
        op,
        &extension_source(ctx),
        |t| t.contains("calyx's pi extension"),
    )
}
