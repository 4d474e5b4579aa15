//! Claude Code (verified on 2.1.197): the MCP entries in `~/.claude.json`, hooks in
//! `~/.claude/settings.json`. `CLAUDE_CONFIG_DIR` moves both into that directory.
//!
//! The identity headers use `${VAR:-}`: Claude Code fails the parse of the whole ~/.claude.json
//! on an undefined `${VAR}`, which would break MCP in every terminal. No X-Calyx-Agent-Kind:
//! the endpoint defaults hook routes to claude-code.

use std::path::PathBuf;

use super::hooks::{by_event, edit_hooks, edit_mcp_entries, gate, ping, waits, Ev};
use super::{edit_file, Ctx, Op, Plan, SetupError};
use crate::config_edit::{JsonDoc, J};
use crate::kind::AgentKind;

const KIND: AgentKind = AgentKind::ClaudeCode;

/// Every lifecycle event the server normalizes; PermissionRequest gets a state ping (async)
/// and the gate (600 s, no async: Claude waits for its answer).
const EVENTS: [Ev; 15] = [
    ping("SessionStart", 5),
    ping("UserPromptSubmit", 5),
    tool(ping("PreToolUse", 5)),
    tool(ping("PostToolUse", 5)),
    tool(ping("PostToolUseFailure", 5)),
    tool(ping("PermissionRequest", 5)),
    tool(gate("PermissionRequest", 600)),
    ping("Notification", 5),
    ping("Stop", 5),
    ping("StopFailure", 5),
    ping("SubagentStart", 5),
    ping("SubagentStop", 5),
    ping("PreCompact", 5),
    ping("PostCompact", 5),
    waits(ping("SessionEnd", 5)),
];

const fn tool(mut ev: Ev) -> Ev {
    ev.matcher = Some("*");
    ev
}

pub(super) fn config_dir(ctx: &Ctx) -> PathBuf {
    ctx.var("CLAUDE_CONFIG_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| ctx.home.join(".claude"))
}

pub(super) fn mcp_file(ctx: &Ctx) -> PathBuf {
    match ctx.var("CLAUDE_CONFIG_DIR") {
        Some(dir) => PathBuf::from(dir).join(".claude.json"),
        None => ctx.home.join(".claude.json"),
    }
}

fn mcp_entry(ctx: &Ctx, url: &str) -> J {
    J::obj([
        ("type", J::s("http")),
        ("url", J::s(url)),
        ("headers", ctx.mcp_headers(|v| format!("${{{v}:-}}"), None)),
    ])
}

/// A Claude-style matcher group: `{matcher?, hooks: [{type, command, timeout, async?}]}`.
pub(super) fn group(ctx: &Ctx, kind: AgentKind, ev: &Ev, async_ping: bool) -> J {
    let mut hook = vec![
        ("type", J::s("command")),
        ("command", J::s(ctx.hook_command(kind, ev.gate))),
        ("timeout", J::Int(ev.timeout as i64)),
    ];
    if async_ping && !ev.waits {
        hook.push(("async", J::Bool(true)));
    }
    let mut g = Vec::new();
    if let Some(m) = ev.matcher {
        g.push(("matcher", J::s(m)));
    }
    g.push(("hooks", J::Arr(vec![J::obj(hook)])));
    J::obj(g)
}

pub(super) fn plan(ctx: &Ctx, op: Op, plan: &mut Plan) -> Result<(), SetupError> {
    let install = op == Op::Install;
    edit_file(plan, &mcp_file(ctx), 0o600, op, |text| {
        let mut doc = JsonDoc::parse(text)?;
        edit_mcp_entries(&mut doc, "mcpServers", ctx, op, |url| mcp_entry(ctx, url))?;
        Ok(doc.text())
    })?;
    let events = by_event(&EVENTS, |ev| group(ctx, KIND, ev, true));
    let mut notes = Vec::new();
    edit_file(
        plan,
        &config_dir(ctx).join("settings.json"),
        0o644,
        op,
        |text| {
            let mut doc = JsonDoc::parse(text)?;
            edit_hooks(&mut doc, &["hooks"], &events, install, &mut notes)?;
            Ok(doc.text())
        },
    )?;
    plan.notes.extend(notes);
    Ok(())
}
