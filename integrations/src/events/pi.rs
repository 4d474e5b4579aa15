//! pi (measured on 0.73.1), as posted by calyx's own extension: `{event, ctx}` where `event.type`
//! names the event and `ctx` holds `cwd` (and the session id when the extension adds it from
//! `ctx.sessionManager.getSessionId()`; pi's own events carry none). pi's session id is
//! optional: the pane identifies the agent, and a missing id is not a reason to drop an event.

use serde_json::Value;

use super::fields::{first_str, first_value, str_at};
use super::{EventKind, NormalizeError, NormalizedEvent};
use crate::kind::AgentKind;

/// Maps one pi extension event.
pub(super) fn normalize(p: &Value) -> Result<Option<NormalizedEvent>, NormalizeError> {
    let kind = AgentKind::Pi;
    // The gate shape scripts and other extensions post, the same as Calyx's:
    // `{"hook_event_name":"PermissionRequest","tool_name":...,"tool_input":{...},...}`.
    if let Some(name) = str_at(p, &["hook_event_name"]) {
        if name != "PermissionRequest" {
            return Err(NormalizeError::UnknownEvent { kind, name });
        }
        let mut ev = NormalizedEvent::new(EventKind::PermissionRequest, name);
        ev.session_id = first_str(p, &[&["session_id"], &["sessionId"]]);
        ev.cwd = str_at(p, &["cwd"]);
        ev.tool_name = str_at(p, &["tool_name"]);
        ev.tool_input = first_value(p, &[&["tool_input"]]);
        return Ok(Some(ev));
    }
    let event = p.get("event").unwrap_or(p);
    let name = str_at(event, &["type"]).ok_or(NormalizeError::NoEventName { kind })?;
    let ev_kind = match name.as_str() {
        "session_start" => EventKind::SessionStart,
        "input" => EventKind::UserPromptSubmit,
        "agent_start" | "turn_start" => EventKind::Activity,
        // tool_call is the gate, fired before execution; tool_execution_end after it.
        "tool_call" => EventKind::PreToolUse,
        "tool_execution_end" => EventKind::PostToolUse,
        "agent_end" => EventKind::Stop,
        "session_shutdown" => EventKind::SessionEnd,
        "session_compact" | "session_before_compact" => EventKind::Compaction,
        "resources_discover"
        | "before_agent_start"
        | "context"
        | "before_provider_request"
        | "after_provider_response"
        | "message_start"
        | "message_update"
        | "message_end"
        | "tool_execution_start"
        | "tool_execution_update"
        | "tool_result"
        | "turn_end"
        | "session_switch"
        | "session_before_switch"
        | "session_fork"
        | "model_select"
        | "user_bash" => return Ok(None),
        _ => return Err(NormalizeError::UnknownEvent { kind, name }),
    };
    let mut ev = NormalizedEvent::new(ev_kind, name);
    ev.session_id = first_str(
        p,
        &[
            &["ctx", "sessionId"],
            &["ctx", "session_id"],
            &["sessionId"],
            &["session_id"],
            &["event", "sessionId"],
        ],
    );
    ev.cwd = first_str(p, &[&["ctx", "cwd"], &["event", "cwd"]]);
    ev.tool_name = str_at(event, &["toolName"]);
    ev.tool_input = first_value(event, &[&["input"], &["args"]]);
    ev.reason = str_at(event, &["reason"]);
    Ok(Some(ev))
}
