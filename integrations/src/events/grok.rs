//! Grok CLI (unverified: not installable here; implemented from Calyx's published notes).
//! Payload keys are camelCase (`hookEventName`, `sessionId`, `toolName`), event values
//! snake_case (`pre_tool_use`); the hook file's PascalCase keys never reach us.
//!
//! A subagent has its own session: `subagent_start` carries the parent's `sessionId` and the
//! child's `subagentId`, and the child's teardown may arrive as `session_end` with the child's
//! id as `sessionId` (the agent book retires the child when that id matches).

use serde_json::Value;

use super::fields::{first_str, first_value, str_at};
use super::{EventKind, NormalizeError, NormalizedEvent};
use crate::kind::AgentKind;

/// Maps one Grok hook payload.
pub(super) fn normalize(p: &Value) -> Result<Option<NormalizedEvent>, NormalizeError> {
    let kind = AgentKind::Grok;
    let name = first_str(p, &[&["hookEventName"], &["hook_event_name"]])
        .ok_or(NormalizeError::NoEventName { kind })?;
    let reason = first_str(p, &[&["reason"], &["stopReason"]]);
    let ev_kind = match name.as_str() {
        "session_start" => EventKind::SessionStart,
        "user_prompt_submit" => EventKind::UserPromptSubmit,
        "pre_tool_use" => EventKind::PreToolUse,
        "post_tool_use" | "post_tool_use_failure" => EventKind::PostToolUse,
        // Grok fires an observe-only stop at teardown (channel_closed, shutdown): only a real
        // end of turn means idle.
        "stop" if reason.as_deref() == Some("end_turn") => EventKind::Stop,
        "stop" => return Ok(None),
        "stop_failure" | "stop_cancelled" => EventKind::Stop,
        "notification" => match str_at(p, &["notificationType"]).as_deref() {
            Some("permission_prompt") => EventKind::PermissionRequest,
            _ => return Ok(None),
        },
        "subagent_start" => EventKind::SubagentStart,
        "subagent_stop" | "subagent_end" => EventKind::SubagentStop,
        "session_end" => EventKind::SessionEnd,
        "pre_compact" | "post_compact" => EventKind::Compaction,
        _ => return Err(NormalizeError::UnknownEvent { kind, name }),
    };
    let mut ev = NormalizedEvent::new(ev_kind, name);
    ev.session_id = first_str(p, &[&["sessionId"], &["session_id"]]);
    ev.agent_id = first_str(p, &[&["subagentId"], &["agentId"]]);
    ev.agent_type = first_str(p, &[&["agentType"], &["subagentType"]]);
    ev.tool_name = str_at(p, &["toolName"]);
    ev.tool_input = first_value(p, &[&["toolInput"], &["toolArgs"]]);
    ev.cwd = str_at(p, &["cwd"]);
    ev.transcript_path = str_at(p, &["transcriptPath"]);
    ev.permission_mode = str_at(p, &["permissionMode"]);
    ev.notification_type = str_at(p, &["notificationType"]);
    ev.reason = reason;
    Ok(Some(ev))
}
