//! Antigravity CLI `agy` (unverified: from a 1.1.11 capability note): named hooks in
//! `~/.gemini/config/hooks.json`. Only `PreInvocation` and `Stop` are registered: agy's
//! PreToolUse/PostToolUse contract answers permission decisions, and a state ping must never
//! be mistaken for one. There is no waiting signal, so blocked prompts do not show in calyx.
//! No MCP entry: where agy reads MCP servers is not documented. Wired only with
//! `--agent antigravity`.

use super::gemini::group;
use super::hooks::{by_event, edit_hooks, ping, Ev};
use super::{edit_file, Ctx, Op, Plan, SetupError};
use crate::config_edit::JsonDoc;
use crate::kind::AgentKind;

const KIND: AgentKind = AgentKind::Antigravity;

/// Gemini lineage: timeouts in milliseconds.
const EVENTS: [Ev; 2] = [ping("PreInvocation", 5000), ping("Stop", 5000)];

pub(super) fn plan(ctx: &Ctx, op: Op, plan: &mut Plan) -> Result<(), SetupError> {
    let events = by_event(&EVENTS, |ev| group(ctx, KIND, ev));
    let mut notes = Vec::new();
    let path = super::config_dir(KIND, ctx).join("hooks.json");
    edit_file(plan, &path, 0o644, op, |text| {
        let mut doc = JsonDoc::parse(text)?;
        edit_hooks(&mut doc, &["hooks"], &events, op == Op::Install, &mut notes)?;
        Ok(doc.text())
    })?;
    plan.notes.extend(notes);
    Ok(())
}
