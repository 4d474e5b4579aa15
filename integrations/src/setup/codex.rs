//! Codex (verified on 0.171.0): the MCP entries in `$CODEX_HOME/config.toml` (default
//! `~/.codex`), hooks in `$CODEX_HOME/hooks.json`, which is where 0.171 reads them (seed notes
//! for 0.148 describe `[[hooks.<Event>]]` tables in config.toml; calyx no longer writes those,
//! but uninstall still removes such tables from an old calyx block).
//!
//! Codex takes environment variable *names* for headers (`env_http_headers`) beside literal
//! ones, and omits a header whose variable is unset (measured on 0.148). SessionEnd must be
//! registered or a session never settles as finished. Codex runs new hooks only after the user
//! trusts them in `/hooks`; doctor says so.

use super::claude::group;
use super::hooks::{by_event, edit_hooks, gate, ping, Ev};
use super::{edit_file, mcp_entries, Ctx, Op, Plan, SetupError};
use crate::config_edit::toml_block::{self, Header};
use crate::config_edit::{is_calyx_command, JsonDoc};
use crate::kind::AgentKind;

const KIND: AgentKind = AgentKind::Codex;

/// Codex clamps SessionEnd and Interrupt hooks to 3 s.
const EVENTS: [Ev; 13] = [
    ping("SessionStart", 5),
    ping("UserPromptSubmit", 5),
    ping("PreToolUse", 5),
    ping("PermissionRequest", 5),
    gate("PermissionRequest", 600),
    ping("PostToolUse", 5),
    ping("Stop", 5),
    ping("SubagentStart", 5),
    ping("SubagentStop", 5),
    ping("PreCompact", 5),
    ping("PostCompact", 5),
    ping("Interrupt", 3),
    ping("SessionEnd", 3),
];

/// TOML basic string literal.
pub(super) fn toml_str(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

/// calyx's MCP tables (`calyx-ipc`, and `calyx-mcp` while hosting is on), one blank line
/// apart.
fn block(ctx: &Ctx) -> String {
    mcp_entries::wanted(ctx, Op::Install)
        .into_iter()
        .filter_map(|(name, url)| Some(table(ctx, name, &url?)))
        .collect::<Vec<_>>()
        .join("\n")
}

fn table(ctx: &Ctx, name: &str, url: &str) -> String {
    format!(
        "[mcp_servers.{name}]\nurl = {}\nhttp_headers = {{ \"Authorization\" = {}, \"X-Calyx-Agent-Kind\" = \"codex\" }}\nenv_http_headers = {{ \"X-Calyx-Surface-ID\" = \"CALYX_SURFACE_ID\", \"X-Calyx-Session-ID\" = \"CALYX_SESSION_ID\" }}\n",
        toml_str(url),
        toml_str(&ctx.bearer())
    )
}

/// Whether a table is (under) one of calyx's MCP entries.
pub(super) fn is_entry(h: &Header) -> bool {
    mcp_entries::ENTRIES
        .iter()
        .any(|name| h.starts_with(&["mcp_servers", name]))
}

/// calyx's tables: its MCP entry, and (from older calyx versions) hook tables whose command
/// runs calyx. Anything else inside the block, such as Codex's own trust records, is not.
pub(super) fn is_ours(h: &Header, text: &str) -> bool {
    if is_entry(h) {
        return true;
    }
    h.array
        && h.path.first().is_some_and(|p| p == "hooks")
        && text.lines().any(|l| {
            l.trim_start().starts_with("command")
                && l.split_once('=').is_some_and(|(_, v)| {
                    let v = v.trim().trim_matches('\'');
                    is_calyx_command(v.trim_matches('"'))
                        || is_calyx_command(v)
                        || v.contains("calyx\" hook ")
                })
        })
}

pub(super) fn plan(ctx: &Ctx, op: Op, plan: &mut Plan) -> Result<(), SetupError> {
    let dir = super::config_dir(KIND, ctx);
    let body = block(ctx);
    edit_file(plan, &dir.join("config.toml"), 0o600, op, |text| match op {
        Op::Install => toml_block::install(text, &body, &is_ours, &is_entry),
        Op::Uninstall => toml_block::uninstall(text, &is_ours),
    })?;
    let events = by_event(&EVENTS, |ev| group(ctx, KIND, ev, false));
    let mut notes = Vec::new();
    edit_file(plan, &dir.join("hooks.json"), 0o644, op, |text| {
        let mut doc = JsonDoc::parse(text)?;
        edit_hooks(&mut doc, &["hooks"], &events, op == Op::Install, &mut notes)?;
        Ok(doc.text())
    })?;
    plan.notes.extend(notes);
    Ok(())
}
