//! pi (verified on 0.73.1): no MCP client and no hook config, so calyx writes an extension of
//! its own to `$PI_CODING_AGENT_DIR/extensions/calyx.ts` (default `~/.pi/agent`). It posts
//! `{event, ctx}` (session id from `ctx.sessionManager`), gates every `tool_call` through
//! `/approval-request`, and exposes one dispatcher tool `calyx` speaking JSON-RPC to `/mcp`.

use super::{owned_file, Ctx, Op, Plan, SetupError};
use crate::kind::AgentKind;

/// The extension's file name in pi's extensions directory.
pub const EXTENSION_FILE: &str = "calyx.ts";

/// The extension's text, with the endpoint file's path filled in.
pub fn extension_source(ctx: &Ctx) -> String {
    include_str!("assets/pi-extension.ts").replace(
        "__CALYX_ENDPOINT_FILE__",
        &serde_json::Value::String(ctx.endpoint_file.display().to_string()).to_string(),
    )
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
