//! Gemini CLI (measured on 0.61.0): its own PascalCase names, Claude-style snake_case fields.

use serde_json::Value;

use super::fields::{snake_case_event, str_at};
use super::{EventKind, NormalizeError, NormalizedEvent};
use crate::kind::AgentKind;

/// Maps one Gemini CLI hook payload.
pub(super) fn normalize(p: &Value) -> Result<Option<NormalizedEvent>, NormalizeError> {
    let kind = AgentKind::Gemini;
    let name = str_at(p, &["hook_event_name"]).ok_or(NormalizeError::NoEventName { kind })?;
    let ev_kind = match name.as_str() {
        "SessionStart" => EventKind::SessionStart,
        "BeforeAgent" => EventKind::UserPromptSubmit,
        "BeforeTool" => EventKind::PreToolUse,
        "AfterTool" => EventKind::PostToolUse,
        // AfterAgent fires once per turn, when the model has answered.
        "AfterAgent" => EventKind::Stop,
        "SessionEnd" => EventKind::SessionEnd,
        "PreCompress" => EventKind::Compaction,
        // Gemini has no permission event; the observe-only Notification is the only signal.
        "Notification" => match str_at(p, &["notification_type"]).as_deref() {
            Some("ToolPermission") => EventKind::PermissionRequest,
            _ => EventKind::Notification,
        },
        "BeforeModel" | "AfterModel" | "BeforeToolSelection" => return Ok(None),
        _ => return Err(NormalizeError::UnknownEvent { kind, name }),
    };
    let mut ev = snake_case_event(ev_kind, &name, p);
    if ev.tool_name.is_none() && ev_kind == EventKind::PermissionRequest {
        ev.tool_name = str_at(p, &["details", "title"]);
        ev.tool_input = p.get("details").cloned();
    }
    Ok(Some(ev))
}
