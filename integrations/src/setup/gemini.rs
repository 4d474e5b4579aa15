//! Gemini CLI (verified on 0.61.0): MCP entry and hooks in `~/.gemini/settings.json`. Hook
//! timeouts are milliseconds. Gemini has no permission event: `BeforeTool` fires for every call
//! and its `allow` does not skip the dialog, but its deny blocks. So `BeforeTool` goes to calyx's
//! approval route with the 600 s timeout: the server answers at once with nothing unless the
//! user opted in to a deny gate (`[approvals] deny_gates` in calyx's config.toml), and then
//! holds only the tools Gemini would ask about.

use super::hooks::{by_event, edit_hooks, edit_mcp_entries, gate, ping, Ev};
use super::{edit_file, Ctx, Op, Plan, SetupError};
use crate::config_edit::{JsonDoc, J};
use crate::kind::AgentKind;

const KIND: AgentKind = AgentKind::Gemini;

const fn tool(mut ev: Ev) -> Ev {
    ev.matcher = Some(".*");
    ev
}

const EVENTS: [Ev; 8] = [
    ping("SessionStart", 5000),
    ping("BeforeAgent", 5000),
    tool(gate("BeforeTool", 600_000)),
    tool(ping("AfterTool", 5000)),
    ping("Notification", 5000),
    ping("AfterAgent", 5000),
    ping("PreCompress", 5000),
    ping("SessionEnd", 5000),
];

/// A Gemini-style group: `{matcher?, hooks: [{type, name, command, timeout(ms)}]}`.
pub(super) fn group(ctx: &Ctx, kind: AgentKind, ev: &Ev) -> J {
    let hook = J::obj([
        ("type", J::s("command")),
        ("name", J::s("calyx")),
        ("command", J::s(ctx.hook_command(kind, ev.gate))),
        ("timeout", J::Int(ev.timeout as i64)),
    ]);
    let mut g = Vec::new();
    if let Some(m) = ev.matcher {
        g.push(("matcher", J::s(m)));
    }
    g.push(("hooks", J::Arr(vec![hook])));
    J::obj(g)
}

fn mcp_entry(ctx: &Ctx, url: &str) -> J {
    J::obj([
        ("httpUrl", J::s(url)),
        (
            "headers",
            ctx.mcp_headers(|v| format!("${{{v}}}"), Some(KIND)),
        ),
    ])
}

pub(super) fn plan(ctx: &Ctx, op: Op, plan: &mut Plan) -> Result<(), SetupError> {
    let install = op == Op::Install;
    let events = by_event(&EVENTS, |ev| group(ctx, KIND, ev));
    let mut notes = Vec::new();
    edit_file(
        plan,
        &super::config_dir(KIND, ctx).join("settings.json"),
        0o600,
        op,
        |text| {
            let mut doc = JsonDoc::parse(text)?;
            edit_mcp_entries(&mut doc, "mcpServers", ctx, op, |url| mcp_entry(ctx, url))?;
            edit_hooks(&mut doc, &["hooks"], &events, install, &mut notes)?;
            if install
                && doc.value_at(&["hooksConfig", "enabled"]) == Some(serde_json::Value::Bool(false))
            {
                notes.push("hooksConfig.enabled is false in ~/.gemini/settings.json: Gemini will not run calyx's hooks until it is turned on".into());
            }
            Ok(doc.text())
        },
    )?;
    plan.notes.extend(notes);
    Ok(())
}
