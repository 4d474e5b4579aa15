//! Kimi (verified with kimi-cli 1.52.0 from PyPI, run offline by tests/realcli): hooks as
//! `[[hooks]]` tables in `config.toml`, kept in calyx's comment-delimited block because an
//! array of tables has no name to find calyx's element by; the MCP entry in `mcp.json` beside
//! it. Both live in Kimi's share directory: `$KIMI_SHARE_DIR` (what kimi-cli 1.52.0 reads,
//! `kimi_cli/share.py`), else `$KIMI_CODE_HOME` (Kimi Code's name for it in its published
//! notes; 1.52.0 does not read it), else `~/.kimi`.
//!
//! Kimi validates the whole config.toml with pydantic at start, and `HookDef.event` is a
//! `Literal` of exactly these events (`kimi_cli/hooks/config.py`): PreToolUse, PostToolUse,
//! PostToolUseFailure, UserPromptSubmit, Stop, StopFailure, SessionStart, SessionEnd,
//! SubagentStart, SubagentStop, PreCompact, PostCompact, Notification. One other name (calyx
//! once wrote PermissionRequest) makes Kimi refuse the whole file and not start; so only those
//! are written, and setup asks the installed Kimi to load the result first (`cli_check`).
//! `timeout` must be 1..=600 s.
//!
//! Kimi has no event for its own approval panel, so its row cannot show blocked while that
//! panel asks (it stays working). PreToolUse can deny, checked with the real CLI: a
//! `hookSpecificOutput.permissionDecision: "deny"` answer (or exit 2 with the reason on stderr)
//! stops the call and the reason reaches the model; an allow is ignored and Kimi's own panel
//! still asks; a failing or timed-out hook counts as allow. So PreToolUse goes through
//! `calyx hook kimi --approval`, and calyx holds it only where the user opted in
//! (`[approvals] deny_gates = ["kimi"]`); otherwise the gate answers at once, as a ping. MCP
//! headers are sent as written (Kimi's MCP client, fastmcp, expands no environment variables),
//! so the entry carries the token and the agent kind but no pane identity headers.

use super::codex::toml_str;
use super::hooks::{edit_mcp_entries, gate, ping, Ev};
use super::{edit_file, Ctx, Op, Plan, SetupError};
use crate::config_edit::toml_block::{self, Header};
use crate::config_edit::{is_calyx_command, JsonDoc, J};
use crate::kind::AgentKind;

const KIND: AgentKind = AgentKind::Kimi;

/// Every name here must be in the installed Kimi's `HookEventType` (see the module comment).
const EVENTS: [Ev; 10] = [
    ping("SessionStart", 5),
    ping("UserPromptSubmit", 5),
    gate("PreToolUse", 600),
    ping("PostToolUse", 5),
    ping("PostToolUseFailure", 5),
    ping("Stop", 5),
    ping("StopFailure", 5),
    ping("SubagentStart", 5),
    ping("SubagentStop", 5),
    ping("SessionEnd", 5),
];

/// kimi-cli 1.52.0's `HookEventType`, for the test below.
#[cfg(test)]
const KIMI_HOOK_EVENT_TYPES: [&str; 13] = [
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "UserPromptSubmit",
    "Stop",
    "StopFailure",
    "SessionStart",
    "SessionEnd",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "PostCompact",
    "Notification",
];

fn block(ctx: &Ctx) -> String {
    EVENTS
        .iter()
        .map(|ev| {
            format!(
                "[[hooks]]\nevent = \"{}\"\ncommand = {}\ntimeout = {}\n",
                ev.name,
                toml_str(&ctx.hook_command(KIND, ev.gate)),
                ev.timeout
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_ours(h: &Header, text: &str) -> bool {
    h.array
        && h.path == ["hooks"]
        && text.lines().any(|l| {
            l.split_once('=').is_some_and(|(k, v)| {
                k.trim() == "command"
                    && serde_json::from_str::<String>(v.trim()).is_ok_and(|c| is_calyx_command(&c))
            })
        })
}

/// Kimi's share directory: `$KIMI_SHARE_DIR`, else `$KIMI_CODE_HOME`, else `~/.kimi`.
pub(super) fn config_dir(ctx: &Ctx) -> std::path::PathBuf {
    ctx.var("KIMI_SHARE_DIR")
        .or_else(|| ctx.var("KIMI_CODE_HOME"))
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| ctx.home.join(".kimi"))
}

pub(super) fn plan(ctx: &Ctx, op: Op, plan: &mut Plan) -> Result<(), SetupError> {
    let dir = super::config_dir(KIND, ctx);
    let body = block(ctx);
    edit_file(plan, &dir.join("config.toml"), 0o644, op, |text| match op {
        Op::Install => toml_block::install(text, &body, &is_ours, &|_| false),
        Op::Uninstall => toml_block::uninstall(text, &is_ours),
    })?;
    let entry = |url: &str| {
        J::obj([
            ("url", J::s(url)),
            ("transport", J::s("http")),
            (
                "headers",
                J::obj([
                    ("Authorization", J::s(ctx.bearer())),
                    ("X-Calyx-Agent-Kind", J::s("kimi")),
                ]),
            ),
        ])
    };
    edit_file(plan, &dir.join("mcp.json"), 0o600, op, |text| {
        let mut doc = JsonDoc::parse(text)?;
        edit_mcp_entries(&mut doc, "mcpServers", ctx, op, entry)?;
        Ok(doc.text())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_only_events_kimi_accepts_within_its_timeout_range() {
        for ev in EVENTS {
            assert!(
                KIMI_HOOK_EVENT_TYPES.contains(&ev.name),
                "{} is not an event kimi-cli 1.52.0 accepts",
                ev.name
            );
            assert!((1..=600).contains(&ev.timeout), "{}", ev.name);
        }
    }
}
