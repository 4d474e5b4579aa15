//! Kimi (verified with kimi-cli 1.52.0: fixtures/payloads/kimi-1.52.0-*, tests/realcli):
//! `[[hooks]]` in config.toml, Claude-style snake_case payloads with `session_id`.
//! UserPromptSubmit/PreToolUse mean working, Stop and StopFailure idle, SessionStart stamps the
//! session. Kimi 1.52.0 has no PermissionRequest event (its approval panel fires no hook), so
//! its row shows blocked only while calyx holds its PreToolUse gate (opt-in); the names from
//! the older notes (TurnStarted, PermissionRequest, TurnEnded) are still read if they come.

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
        "Stop" | "StopFailure" | "TurnEnded" => EventKind::Stop,
        "SessionEnd" => EventKind::SessionEnd,
        "SubagentStart" => EventKind::SubagentStart,
        "SubagentStop" => EventKind::SubagentStop,
        "PreCompact" | "PostCompact" => EventKind::Compaction,
        _ => return Err(NormalizeError::UnknownEvent { kind, name }),
    };
    Ok(Some(snake_case_event(ev_kind, &name, p)))
}
