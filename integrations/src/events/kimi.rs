//! Kimi Code (unverified: not installable here; implemented from HexoKit's notes on 0.41.0):
//! `[[hooks]]` in config.toml, Claude-style snake_case payloads with `session_id`.
//! TurnStarted/PreToolUse mean working, PermissionRequest blocked, Stop idle, SessionStart
//! stamps the session.

use serde_json::Value;

use super::fields::{first_str, snake_case_event};
use super::{EventKind, NormalizeError, NormalizedEvent};
use crate::kind::AgentKind;

/// Maps one Kimi Code hook payload.
pub(super) fn normalize(p: &Value) -> Result<Option<NormalizedEvent>, NormalizeError> {
    let kind = AgentKind::Kimi;
    let name = first_str(p, &[&["hook_event_name"], &["event"], &["hookEventName"]])
        .ok_or(NormalizeError::NoEventName { kind })?;
    let ev_kind = match name.as_str() {
        "SessionStart" => EventKind::SessionStart,
        "TurnStarted" | "UserPromptSubmit" => EventKind::UserPromptSubmit,
        "PreToolUse" => EventKind::PreToolUse,
        "PostToolUse" | "PostToolUseFailure" => EventKind::PostToolUse,
        "PermissionRequest" => EventKind::PermissionRequest,
        "Notification" => super::claude::notification_kind(p),
        "Stop" | "TurnEnded" => EventKind::Stop,
        "SessionEnd" => EventKind::SessionEnd,
        "SubagentStart" => EventKind::SubagentStart,
        "SubagentStop" => EventKind::SubagentStop,
        "PreCompact" | "PostCompact" => EventKind::Compaction,
        _ => return Err(NormalizeError::UnknownEvent { kind, name }),
    };
    Ok(Some(snake_case_event(ev_kind, &name, p)))
}
