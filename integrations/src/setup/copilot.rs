//! Copilot CLI (verified on 1.0.102): hooks in a file of calyx's own,
//! `$COPILOT_HOME/hooks/calyx.json` (default `~/.copilot`), as
//! `{"version":1,"hooks":{event:[{"type":"command","bash":...,"timeoutSec":N}]}}`; the MCP
//! entry in `$COPILOT_HOME/mcp-config.json`. Copilot answers `permissionRequest` with a flat
//! `{"behavior": ...}`, which the server produces for kind copilot.

use super::hooks::{by_event, edit_mcp_entries, gate, names_calyx, ping, Ev};
use super::{edit_file, owned_file, Ctx, Op, Plan, SetupError};
use crate::config_edit::{JsonDoc, J};
use crate::kind::AgentKind;

const KIND: AgentKind = AgentKind::Copilot;

const EVENTS: [Ev; 13] = [
    ping("sessionStart", 5),
    ping("userPromptSubmitted", 5),
    ping("preToolUse", 5),
    ping("permissionRequest", 5),
    gate("permissionRequest", 600),
    ping("postToolUse", 5),
    ping("postToolUseFailure", 5),
    ping("notification", 5),
    ping("agentStop", 5),
    ping("subagentStart", 5),
    ping("subagentStop", 5),
    ping("preCompact", 5),
    ping("sessionEnd", 5),
];

fn hooks_file(ctx: &Ctx) -> String {
    let events = by_event(&EVENTS, |ev| {
        J::obj([
            ("type", J::s("command")),
            ("bash", J::s(ctx.hook_command(KIND, ev.gate))),
            ("timeoutSec", J::Int(ev.timeout as i64)),
        ])
    });
    let hooks = J::Obj(events.into_iter().map(|(n, e)| (n, J::Arr(e))).collect());
    let file = J::obj([("version", J::Int(1)), ("hooks", hooks)]);
    format!("{}\n", file.render("  ", "", "\n"))
}

fn mcp_entry(ctx: &Ctx, url: &str) -> J {
    J::obj([
        ("type", J::s("http")),
        ("url", J::s(url)),
        (
            "headers",
            ctx.mcp_headers(|v| format!("${{{v}}}"), Some(KIND)),
        ),
        ("tools", J::Arr(vec![J::s("*")])),
    ])
}

pub(super) fn plan(ctx: &Ctx, op: Op, plan: &mut Plan) -> Result<(), SetupError> {
    let dir = super::config_dir(KIND, ctx);
    owned_file(
        plan,
        &dir.join("hooks/calyx.json"),
        op,
        &hooks_file(ctx),
        names_calyx,
    )?;
    edit_file(plan, &dir.join("mcp-config.json"), 0o600, op, |text| {
        let mut doc = JsonDoc::parse(text)?;
        edit_mcp_entries(&mut doc, "mcpServers", ctx, op, |url| mcp_entry(ctx, url))?;
        Ok(doc.text())
    })
}
