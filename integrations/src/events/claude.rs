//! Claude Code (measured on 2.1.197): PascalCase `hook_event_name`, snake_case fields.

use serde_json::Value;

use super::fields::{snake_case_event, str_at};
use super::{EventKind, NormalizeError, NormalizedEvent};
use crate::kind::AgentKind;

/// Maps one Claude Code hook payload.
pub(super) fn normalize(p: &Value) -> Result<Option<NormalizedEvent>, NormalizeError> {
    let kind = AgentKind::ClaudeCode;
    let name = str_at(p, &["hook_event_name"]).ok_or(NormalizeError::NoEventName { kind })?;
    let ev_kind = match name.as_str() {
        // `source: "compact"` is the session re-opening after compaction, mid-turn: stamping
        // idle there would lie, so it counts as compaction.
        "SessionStart" if str_at(p, &["source"]).as_deref() == Some("compact") => {
            EventKind::Compaction
        }
        "SessionStart" => EventKind::SessionStart,
        "UserPromptSubmit" | "UserPromptExpansion" => EventKind::UserPromptSubmit,
        "PreToolUse" => EventKind::PreToolUse,
        // A failed or denied call still means the turn runs on; the dialog being answered
        // (elicitation result) also ends the wait.
        "PostToolUse" | "PostToolUseFailure" | "PermissionDenied" | "ElicitationResult" => {
            EventKind::PostToolUse
        }
        "PermissionRequest" | "Elicitation" => EventKind::PermissionRequest,
        "Notification" => notification_kind(p),
        "Stop" | "StopFailure" => EventKind::Stop,
        "SessionEnd" => EventKind::SessionEnd,
        "SubagentStart" => EventKind::SubagentStart,
        "SubagentStop" => EventKind::SubagentStop,
        "PreCompact" | "PostCompact" => EventKind::Compaction,
        // Known events that say nothing about whether the agent waits for someone.
        "PostToolBatch" | "MessageDisplay" | "FileChanged" | "Setup" | "TeammateIdle"
        | "TaskCreated" | "TaskCompleted" | "ConfigChange" | "InstructionsLoaded"
        | "CwdChanged" | "WorktreeCreate" | "WorktreeRemove" => return Ok(None),
        _ => return Err(NormalizeError::UnknownEvent { kind, name }),
    };
    Ok(Some(snake_case_event(ev_kind, &name, p)))
}

/// `permission_prompt` notifications mean the pane waits for a human (they arrive ~6 s after
/// the dialog, PermissionRequest is the prompt signal, this is the backstop).
pub(super) fn notification_kind(p: &Value) -> EventKind {
    match str_at(p, &["notification_type"]).as_deref() {
        Some("permission_prompt") => EventKind::PermissionRequest,
        _ => EventKind::Notification,
    }
}
