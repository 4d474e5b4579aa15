//! The per-event rules for a main agent row: which state an event leads to, given the row.

use calyx_integrations::{EventKind, NormalizedEvent};
use serde_json::Value;
use std::time::Duration;

use tokio::time::Instant;

use super::state::{AgentRow, AgentState, PendingTool, Rule};

/// How long after a row became blocked a PreToolUse is assumed to predate the dialog. Hooks
/// are delivered asynchronously, so the PreToolUse of the very call that asks for permission
/// can arrive after the PermissionRequest.
pub const BLOCKED_GRACE: Duration = Duration::from_millis(1500);

/// Events that move a session forward. Only these may replace a row with a new session: a
/// Stop or SessionEnd of the old session can trail in after the new one started.
pub(super) fn is_forward_moving(kind: EventKind) -> bool {
    matches!(
        kind,
        EventKind::SessionStart
            | EventKind::UserPromptSubmit
            | EventKind::PreToolUse
            | EventKind::PostToolUse
            | EventKind::PermissionRequest
            | EventKind::Activity
            | EventKind::SubagentStart
    )
}

/// The state `ev` puts the main row in and the rule that says so. The state may equal the
/// current one (the rule is still recorded).
pub(super) fn main_target(
    row: &AgentRow,
    ev: &NormalizedEvent,
    now: Instant,
) -> (AgentState, Rule) {
    let current = row.state;
    if current == AgentState::Done && !is_forward_moving(ev.kind) {
        return (current, Rule::StaleAfterDone);
    }
    match ev.kind {
        EventKind::SessionStart => (AgentState::Idle, Rule::SessionStarted),
        EventKind::UserPromptSubmit => (AgentState::Working, Rule::PromptSubmitted),
        EventKind::PreToolUse => {
            if current == AgentState::Blocked && now.duration_since(row.since) < BLOCKED_GRACE {
                (AgentState::Blocked, Rule::BlockedGrace)
            } else {
                (AgentState::Working, Rule::ToolActivity)
            }
        }
        EventKind::PostToolUse => {
            if current == AgentState::Blocked && !answers_pending(row.pending.as_ref(), ev) {
                (AgentState::Blocked, Rule::UnrelatedToolWhileBlocked)
            } else {
                (AgentState::Working, Rule::ToolActivity)
            }
        }
        EventKind::PermissionRequest => (AgentState::Blocked, Rule::PermissionAsked),
        EventKind::Notification => (current, Rule::NotificationOnly),
        EventKind::Stop => (AgentState::Idle, Rule::TurnEnded),
        EventKind::Interrupt => (AgentState::Idle, Rule::Interrupted),
        EventKind::Compaction => (current, Rule::CompactionKeepsState),
        EventKind::Activity => match current {
            AgentState::Blocked | AgentState::Done => (current, Rule::ActivityWhileBlocked),
            _ => (AgentState::Working, Rule::ActivityObserved),
        },
        EventKind::SessionEnd => (AgentState::Done, Rule::SessionEnded),
        // Subagent lifecycle events reach the main row only when they lack an agent id; a
        // subagent starting means the parent's turn is running.
        EventKind::SubagentStart => match current {
            AgentState::Idle | AgentState::Unknown => (AgentState::Working, Rule::SubagentEvent),
            _ => (current, Rule::SubagentEvent),
        },
        EventKind::SubagentStop => (current, Rule::SubagentEvent),
    }
}

/// Does this PostToolUse finish the call that waits for approval? Same tool name and, when
/// both carry a `command`, the same command (CLIs add fields such as `description` to the
/// permission payload, so whole inputs are not compared). Missing information on either side
/// counts as a match: it is better to clear blocked once too often than to stick forever.
fn answers_pending(pending: Option<&PendingTool>, ev: &NormalizedEvent) -> bool {
    let Some(pending) = pending else {
        return true;
    };
    let (Some(want), Some(got)) = (&pending.tool_name, &ev.tool_name) else {
        return true;
    };
    if !want.eq_ignore_ascii_case(got) {
        return false;
    }
    let command = |v: &Option<Value>| {
        v.as_ref()
            .and_then(|v| v.get("command"))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    match (command(&pending.tool_input), command(&ev.tool_input)) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    }
}
