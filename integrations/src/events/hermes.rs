//! Hermes 0.19 shell hooks: snake_case `hook_event_name`, common fields at top level and the
//! event-specific ones under `extra`.
//!
//! Hermes' `on_session_end` fires at the end of every conversation run (it carries `turn_id`,
//! `completed` and `interrupted`), so it ends a turn, not the session; `on_session_finalize`
//! is the teardown. Approval events send `session_id: ""` and name the session in
//! `extra.session_key`.

use serde_json::Value;

use super::fields::{first_str, first_value, str_at};
use super::{EventKind, NormalizeError, NormalizedEvent};
use crate::kind::AgentKind;

/// Maps one Hermes hook payload.
pub(super) fn normalize(p: &Value) -> Result<Option<NormalizedEvent>, NormalizeError> {
    let kind = AgentKind::Hermes;
    let name = first_str(p, &[&["hook_event_name"], &["event"]])
        .ok_or(NormalizeError::NoEventName { kind })?;
    let interrupted = p
        .get("extra")
        .and_then(|e| e.get("interrupted"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let ev_kind = match name.as_str() {
        "on_session_start" => EventKind::SessionStart,
        "pre_llm_call" => EventKind::UserPromptSubmit,
        "pre_tool_call" => EventKind::PreToolUse,
        // The approval answer ends the wait; a denied call still lets the turn go on.
        "post_tool_call" | "post_approval_response" => EventKind::PostToolUse,
        "pre_approval_request" => EventKind::PermissionRequest,
        "on_session_end" if interrupted => EventKind::Interrupt,
        "on_session_end" => EventKind::Stop,
        "on_session_finalize" => EventKind::SessionEnd,
        "subagent_start" => EventKind::SubagentStart,
        "subagent_stop" => EventKind::SubagentStop,
        "pre_api_request"
        | "post_api_request"
        | "post_llm_call"
        | "transform_llm_output"
        | "transform_terminal_output"
        | "transform_tool_result"
        | "pre_verify"
        | "api_request_error"
        | "on_session_reset"
        | "pre_gateway_dispatch" => return Ok(None),
        n if n.starts_with("kanban_task_") => return Ok(None),
        _ => return Err(NormalizeError::UnknownEvent { kind, name }),
    };
    let mut ev = NormalizedEvent::new(ev_kind, name);
    ev.session_id = first_str(p, &[&["session_id"], &["extra", "session_key"]]);
    ev.cwd = str_at(p, &["cwd"]);
    ev.tool_name = str_at(p, &["tool_name"]);
    ev.tool_input = first_value(p, &[&["tool_input"]]);
    if ev_kind == EventKind::PermissionRequest && ev.tool_name.is_none() {
        // The approval is about a shell command; present it like a terminal tool call.
        ev.tool_name = Some("terminal".to_string());
        ev.tool_input =
            str_at(p, &["extra", "command"]).map(|c| serde_json::json!({ "command": c }));
    }
    if matches!(ev_kind, EventKind::SubagentStart | EventKind::SubagentStop) {
        // Only child_session_id is present on both start and stop, so it names the child.
        ev.agent_id = str_at(p, &["extra", "child_session_id"]);
        ev.agent_type = str_at(p, &["extra", "child_role"]);
    }
    ev.reason = first_str(p, &[&["extra", "reason"], &["extra", "child_status"]]);
    Ok(Some(ev))
}
