//! Codex (measured on 0.171.0): Claude-style payloads plus its own `Interrupt` event. Older
//! versions sent lowercase names (`stop`), so names are matched case-insensitively.

use serde_json::Value;

use super::fields::{snake_case_event, str_at};
use super::{EventKind, NormalizeError, NormalizedEvent};
use crate::kind::AgentKind;

/// Maps one Codex hook payload.
pub(super) fn normalize(p: &Value) -> Result<Option<NormalizedEvent>, NormalizeError> {
    let kind = AgentKind::Codex;
    let name = str_at(p, &["hook_event_name"]).ok_or(NormalizeError::NoEventName { kind })?;
    let ev_kind = match name.to_ascii_lowercase().as_str() {
        "sessionstart" => EventKind::SessionStart,
        "userpromptsubmit" => EventKind::UserPromptSubmit,
        "pretooluse" => EventKind::PreToolUse,
        "posttooluse" | "posttoolusefailure" => EventKind::PostToolUse,
        "permissionrequest" => EventKind::PermissionRequest,
        "notification" => super::claude::notification_kind(p),
        "stop" => EventKind::Stop,
        "interrupt" => EventKind::Interrupt,
        "sessionend" => EventKind::SessionEnd,
        "subagentstart" => EventKind::SubagentStart,
        "subagentstop" => EventKind::SubagentStop,
        "precompact" | "postcompact" => EventKind::Compaction,
        _ => return Err(NormalizeError::UnknownEvent { kind, name }),
    };
    Ok(Some(snake_case_event(ev_kind, &name, p)))
}
