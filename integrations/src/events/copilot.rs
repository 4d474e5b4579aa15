//! GitHub Copilot CLI (measured on 1.0.102): camelCase payloads that mostly carry **no event
//! name** (only `permissionRequest` has `hookName`, only `notification` has
//! `hook_event_name`), so the name is inferred from which keys are present.

use serde_json::Value;

use super::fields::{first_str, first_value, has, str_at};
use super::{EventKind, NormalizeError, NormalizedEvent};
use crate::kind::AgentKind;

/// Maps one Copilot CLI hook payload.
pub(super) fn normalize(p: &Value) -> Result<Option<NormalizedEvent>, NormalizeError> {
    let kind = AgentKind::Copilot;
    let name = event_name(p).ok_or(NormalizeError::NoEventName { kind })?;
    let ev_kind = match name.as_str() {
        "sessionStart" => EventKind::SessionStart,
        "userPromptSubmitted" => EventKind::UserPromptSubmit,
        "preToolUse" => EventKind::PreToolUse,
        // postToolUseFailure is a schema-invalid call; the turn goes on either way.
        "postToolUse" | "postToolUseFailure" => EventKind::PostToolUse,
        "permissionRequest" => EventKind::PermissionRequest,
        "notification" | "Notification" => match str_at(p, &["notification_type"]).as_deref() {
            Some("permission_prompt") => EventKind::PermissionRequest,
            Some("agent_idle") => EventKind::Stop,
            _ => EventKind::Notification,
        },
        "agentStop" => EventKind::Stop,
        "subagentStart" => EventKind::SubagentStart,
        "subagentStop" => EventKind::SubagentStop,
        "sessionEnd" => EventKind::SessionEnd,
        "preCompact" => EventKind::Compaction,
        "errorOccurred" => return Ok(None),
        _ => return Err(NormalizeError::UnknownEvent { kind, name }),
    };
    let mut ev = NormalizedEvent::new(ev_kind, name);
    ev.session_id = first_str(p, &[&["sessionId"], &["session_id"]]);
    ev.agent_id = str_at(p, &["agentId"]);
    ev.agent_type = first_str(p, &[&["agentType"], &["agentName"]]);
    ev.tool_name = str_at(p, &["toolName"]);
    ev.tool_input = first_value(p, &[&["toolArgs"], &["toolInput"]]);
    ev.cwd = str_at(p, &["cwd"]);
    ev.transcript_path = str_at(p, &["transcriptPath"]);
    ev.notification_type = str_at(p, &["notification_type"]);
    ev.reason = first_str(p, &[&["stopReason"], &["reason"], &["source"]]);
    Ok(Some(ev))
}

/// The event name: explicit when the payload has one, otherwise inferred from key presence.
/// The order matters: subagent stops also carry `stopReason`, tool failures also `toolName`.
fn event_name(p: &Value) -> Option<String> {
    if let Some(n) = first_str(
        p,
        &[&["hookName"], &["hook_event_name"], &["hookEventName"]],
    ) {
        return Some(n);
    }
    let name = if has(p, "agentId") {
        if has(p, "stopReason") || has(p, "response") {
            "subagentStop"
        } else {
            "subagentStart"
        }
    } else if has(p, "stopReason") {
        "agentStop"
    } else if has(p, "toolName") {
        if has(p, "toolResult") {
            "postToolUse"
        } else if has(p, "error") {
            "postToolUseFailure"
        } else if has(p, "permissionSuggestions") || has(p, "toolInput") {
            "permissionRequest"
        } else {
            "preToolUse"
        }
    } else if has(p, "initialPrompt") || has(p, "source") {
        "sessionStart"
    } else if has(p, "prompt") {
        "userPromptSubmitted"
    } else if has(p, "error") {
        "errorOccurred"
    } else if has(p, "trigger") {
        "preCompact"
    } else if has(p, "reason") {
        "sessionEnd"
    } else {
        return None;
    };
    Some(name.to_string())
}
