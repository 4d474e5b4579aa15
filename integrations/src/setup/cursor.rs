//! Cursor Agent (unverified: from Cursor's published notes, 3.11): hooks in
//! `~/.cursor/hooks.json` as `{"version":1,"hooks":{event:[{"command":...,"timeout":N}]}}`
//! (seconds; a gate gets 600, so a held request outlives calyx's own 570 s), MCP servers in
//! `~/.cursor/mcp.json` with `${env:VAR}` interpolation. `beforeShellExecution` and
//! `beforeMCPExecution` go through `calyx hook cursor --approval`: they take
//! `{"permission":"allow"|"deny"|"ask"}`, and calyx holds them for a human only where the user
//! opted in (`[approvals] deny_gates = ["cursor"]`), because they fire for every command,
//! including those Cursor runs unasked; otherwise they are answered at once with nothing, as a
//! ping is. Wired only with `--agent cursor`.

use super::hooks::{by_event, edit_hooks, edit_mcp_entries, gate, ping, Ev};
use super::{edit_file, Ctx, Op, Plan, SetupError};
use crate::config_edit::{JsonDoc, J};
use crate::kind::AgentKind;

const KIND: AgentKind = AgentKind::Cursor;

const EVENTS: [Ev; 8] = [
    ping("beforeSubmitPrompt", 5),
    gate("beforeShellExecution", 600),
    gate("beforeMCPExecution", 600),
    ping("afterShellExecution", 5),
    ping("afterMCPExecution", 5),
    ping("afterFileEdit", 5),
    ping("preCompact", 5),
    ping("stop", 5),
];

fn mcp_entry(ctx: &Ctx, url: &str) -> J {
    J::obj([
        ("url", J::s(url)),
        (
            "headers",
            ctx.mcp_headers(|v| format!("${{env:{v}}}"), Some(KIND)),
        ),
    ])
}

pub(super) fn plan(ctx: &Ctx, op: Op, plan: &mut Plan) -> Result<(), SetupError> {
    let install = op == Op::Install;
    let dir = super::config_dir(KIND, ctx);
    let events = by_event(&EVENTS, |ev| {
        J::obj([
            ("command", J::s(ctx.hook_command(KIND, ev.gate))),
            ("timeout", J::Int(ev.timeout as i64)),
        ])
    });
    let mut notes = Vec::new();
    edit_file(plan, &dir.join("hooks.json"), 0o644, op, |text| {
        let mut doc = JsonDoc::parse(text)?;
        if install && doc.root().get(&["version"]).is_none() {
            doc.set(&["version"], &J::Int(1))?;
        }
        edit_hooks(&mut doc, &["hooks"], &events, install, &mut notes)?;
        Ok(doc.text())
    })?;
    plan.notes.extend(notes);
    edit_file(plan, &dir.join("mcp.json"), 0o600, op, |text| {
        let mut doc = JsonDoc::parse(text)?;
        edit_mcp_entries(&mut doc, "mcpServers", ctx, op, |url| mcp_entry(ctx, url))?;
        Ok(doc.text())
    })
}
