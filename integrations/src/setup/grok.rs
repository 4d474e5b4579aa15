//! Grok (unverified here; shapes from Calyx's Grok integration, seed 000): the MCP entry in
//! `$GROK_HOME/config.toml` (default `~/.grok`) with headers in a sub-table, which Grok expands
//! `${VAR:-}` in; hooks in a file of calyx's own in Grok's hooks directory, which Grok merges
//! and auto-trusts, under a name no user file would have.
//!
//! TOML rules: a `[mcp_servers.calyx-ipc.headers]` (or `calyx-mcp`) table is always calyx's,
//! even with no parent in scope, because two definitions of one table are a parse error that
//! costs the user every MCP server; a hand-written `[mcp_servers.calyx-ipc]` (or `calyx-mcp`)
//! is adopted, not duplicated.
//!
//! Hooks: Grok has no permission event; PreToolUse is its only blocking one and runs handlers
//! in order until one denies, so the state ping comes first and the gate (600 s; Grok's default
//! is 5 s, which would fail open) second. The server gates only under bypassPermissions. Stop
//! and SubagentStop default to 600 s in Grok; calyx's pings there are pinned to 10 s.

use super::claude::group;
use super::codex::toml_str;
use super::hooks::{by_event, gate, names_calyx, ping, Ev};
use super::{edit_file, mcp_entries, owned_file, Ctx, Op, Plan, SetupError};
use crate::config_edit::toml_block::{self, Header};
use crate::config_edit::J;
use crate::kind::AgentKind;

const KIND: AgentKind = AgentKind::Grok;

/// The hook file's name: calyx's, and unlike any name a user would pick.
pub const HOOK_FILE: &str = "calyx-agent-hooks.json";

const EVENTS: [Ev; 12] = [
    ping("SessionStart", 5),
    ping("UserPromptSubmit", 5),
    ping("PreToolUse", 5),
    gate("PreToolUse", 600),
    ping("PostToolUse", 5),
    ping("PostToolUseFailure", 5),
    ping("Notification", 5),
    ping("Stop", 10),
    ping("SubagentStart", 5),
    ping("SubagentStop", 10),
    ping("PreCompact", 5),
    ping("SessionEnd", 5),
];

/// calyx's MCP tables (`calyx-ipc`, and `calyx-mcp` while hosting is on), one blank line
/// apart.
fn block(ctx: &Ctx) -> String {
    mcp_entries::wanted(ctx, Op::Install)
        .into_iter()
        .filter_map(|(name, url)| Some(tables(ctx, name, &url?)))
        .collect::<Vec<_>>()
        .join("\n")
}

fn tables(ctx: &Ctx, name: &str, url: &str) -> String {
    format!(
        "[mcp_servers.{name}]\nurl = {}\n\n[mcp_servers.{name}.headers]\nAuthorization = {}\nX-Calyx-Agent-Kind = \"grok\"\nX-Calyx-Session-ID = \"${{CALYX_SESSION_ID:-}}\"\nX-Calyx-Surface-ID = \"${{CALYX_SURFACE_ID:-}}\"\n",
        toml_str(url),
        toml_str(&ctx.bearer())
    )
}

fn ours(h: &Header, _: &str) -> bool {
    super::codex::is_entry(h)
}

fn hooks_file(ctx: &Ctx) -> String {
    let events = by_event(&EVENTS, |ev| group(ctx, KIND, ev, false));
    let hooks = J::Obj(events.into_iter().map(|(n, e)| (n, J::Arr(e))).collect());
    format!("{}\n", J::obj([("hooks", hooks)]).render("  ", "", "\n"))
}

pub(super) fn plan(ctx: &Ctx, op: Op, plan: &mut Plan) -> Result<(), SetupError> {
    let dir = super::config_dir(KIND, ctx);
    let body = block(ctx);
    edit_file(plan, &dir.join("config.toml"), 0o600, op, |text| match op {
        Op::Install => toml_block::install(text, &body, &ours, &|h| ours(h, "")),
        Op::Uninstall => toml_block::uninstall(text, &ours),
    })?;
    owned_file(
        plan,
        &dir.join("hooks").join(HOOK_FILE),
        op,
        &hooks_file(ctx),
        names_calyx,
    )
}
