//! Antigravity CLI `agy` (unverified: not installable here; implemented from HexoKit's notes on
//! 1.1.11). Identity is `conversationId`. There is no session-start event: identity lands on
//! the first `PreInvocation`. `Stop` means idle only when the payload reports `fullyIdle`
//! (otherwise background tasks still run). There is no waiting signal: permission prompts are
//! invisible to hooks.

use serde_json::Value;

use super::fields::{first_str, first_value};
use super::{EventKind, NormalizeError, NormalizedEvent};
use crate::kind::AgentKind;

/// Maps one Antigravity hook payload.
pub(super) fn normalize(p: &Value) -> Result<Option<NormalizedEvent>, NormalizeError> {
    let kind = AgentKind::Antigravity;
    let name = first_str(p, &[&["hookEventName"], &["hook_event_name"], &["event"]])
        .ok_or(NormalizeError::NoEventName { kind })?;
    let fully_idle = ["fullyIdle", "fully_idle"]
        .iter()
        .find_map(|k| p.get(k).and_then(Value::as_bool))
        .unwrap_or(false);
    let ev_kind = match name.as_str() {
        "PreInvocation" => EventKind::UserPromptSubmit,
        "PostInvocation" => return Ok(None),
        "Stop" if fully_idle => EventKind::Stop,
        "Stop" => return Ok(None),
        "PreToolUse" => EventKind::PreToolUse,
        "PostToolUse" => EventKind::PostToolUse,
        "SessionEnd" => EventKind::SessionEnd,
        _ => return Err(NormalizeError::UnknownEvent { kind, name }),
    };
    let mut ev = NormalizedEvent::new(ev_kind, name);
    ev.session_id = first_str(
        p,
        &[
            &["conversationId"],
            &["conversation_id"],
            &["sessionId"],
            &["session_id"],
        ],
    );
    ev.cwd = first_str(p, &[&["cwd"], &["workspaceRoot"], &["workspace_root"]]);
    ev.tool_name = first_str(p, &[&["toolName"], &["tool_name"]]);
    ev.tool_input = first_value(p, &[&["toolInput"], &["tool_input"]]);
    ev.transcript_path = first_str(p, &[&["transcriptPath"], &["transcript_path"]]);
    Ok(Some(ev))
}
