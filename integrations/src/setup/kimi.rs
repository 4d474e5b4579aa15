//! Kimi Code (unverified: from a 0.41.0 capability note): hooks as `[[hooks]]` tables in
//! `$KIMI_CODE_HOME/config.toml` (default `~/.kimi`), kept in calyx's comment-delimited
//! block because an array of tables has no name to find calyx's element by; the MCP entry in
//! `mcp.json` beside it. Kimi's MCP config has no documented environment interpolation, so
//! the entry carries no pane identity headers. Wired only with `--agent kimi`.
//!
//! Kimi fires PermissionRequest and forgets it (nothing a hook prints is read), so it is a ping
//! that marks the row blocked. Its PreToolUse can deny (`hookSpecificOutput.permissionDecision`)
//! but not allow past Kimi's own approval panel: it goes through `calyx hook kimi --approval`,
//! and calyx holds it only where the user opted in (`[approvals] deny_gates = ["kimi"]`).

use super::codex::toml_str;
use super::hooks::{edit_member, gate, ping, Ev};
use super::{edit_file, Ctx, Op, Plan, SetupError};
use crate::config_edit::toml_block::{self, Header};
use crate::config_edit::{is_calyx_command, JsonDoc, J};
use crate::kind::AgentKind;

const KIND: AgentKind = AgentKind::Kimi;

const EVENTS: [Ev; 9] = [
    ping("SessionStart", 5),
    ping("UserPromptSubmit", 5),
    gate("PreToolUse", 600),
    ping("PermissionRequest", 5),
    ping("PostToolUse", 5),
    ping("Stop", 5),
    ping("SubagentStart", 5),
    ping("SubagentStop", 5),
    ping("SessionEnd", 5),
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

pub(super) fn plan(ctx: &Ctx, op: Op, plan: &mut Plan) -> Result<(), SetupError> {
    let dir = super::config_dir(KIND, ctx);
    let body = block(ctx);
    edit_file(plan, &dir.join("config.toml"), 0o644, op, |text| match op {
        Op::Install => toml_block::install(text, &body, &is_ours, &|_| false),
        Op::Uninstall => toml_block::uninstall(text, &is_ours),
    })?;
    let entry = J::obj([
        ("url", J::s(ctx.mcp_url())),
        ("transport", J::s("http")),
        (
            "headers",
            J::obj([
                ("Authorization", J::s(ctx.bearer())),
                ("X-Calyx-Agent-Kind", J::s("kimi")),
            ]),
        ),
    ]);
    edit_file(plan, &dir.join("mcp.json"), 0o600, op, |text| {
        let mut doc = JsonDoc::parse(text)?;
        edit_member(
            &mut doc,
            &["mcpServers", "calyx-ipc"],
            &entry,
            op == Op::Install,
        )?;
        Ok(doc.text())
    })
}
