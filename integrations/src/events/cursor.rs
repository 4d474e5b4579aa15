//! Cursor Agent (unverified: not installable here; implemented from the cross-CLI hook notes on
//! 3.11): camelCase event names (`beforeSubmitPrompt`, `beforeShellExecution`, `afterFileEdit`,
//! `stop` ...), snake_case fields with `conversation_id` as the session. The event name is
//! normally in `hook_event_name`; when it is missing it is inferred from the keys present.

use serde_json::Value;

use super::fields::{first_str, first_value, has, str_at};
use super::{EventKind, NormalizeError, NormalizedEvent};
use crate::kind::AgentKind;

/// Maps one Cursor Agent hook payload.
pub(super) fn normalize(p: &Value) -> Result<Option<NormalizedEvent>, NormalizeError> {
    let kind = AgentKind::Cursor;
    let name = event_name(p).ok_or(NormalizeError::NoEventName { kind })?;
    let status = str_at(p, &["status"]);
    let (ev_kind, tool) = match name.as_str() {
        "sessionStart" => (EventKind::SessionStart, None),
        "beforeSubmitPrompt" => (EventKind::UserPromptSubmit, None),
        "beforeShellExecution" => (EventKind::PreToolUse, Some("Shell")),
        "beforeMCPExecution" => (EventKind::PreToolUse, Some("MCP")),
        "beforeReadFile" => (EventKind::PreToolUse, Some("Read")),
        "preToolUse" => (EventKind::PreToolUse, None),
        "afterShellExecution" => (EventKind::PostToolUse, Some("Shell")),
        "afterMCPExecution" => (EventKind::PostToolUse, Some("MCP")),
        "afterFileEdit" => (EventKind::PostToolUse, Some("Edit")),
        "postToolUse" | "postToolUseFailure" => (EventKind::PostToolUse, None),
        "stop" if status.as_deref() == Some("aborted") => (EventKind::Interrupt, None),
        "stop" => (EventKind::Stop, None),
        "sessionEnd" => (EventKind::SessionEnd, None),
        "subagentStart" => (EventKind::SubagentStart, None),
        "subagentStop" => (EventKind::SubagentStop, None),
        "preCompact" => (EventKind::Compaction, None),
        "afterAgentResponse" | "afterAgentThought" | "beforeTabFileRead" | "afterTabFileEdit" => {
            return Ok(None)
        }
        _ => return Err(NormalizeError::UnknownEvent { kind, name }),
    };
    let mut ev = NormalizedEvent::new(ev_kind, name);
    ev.session_id = first_str(p, &[&["conversation_id"], &["session_id"]]);
    ev.agent_id = first_str(p, &[&["subagent_id"], &["agent_id"]]);
    ev.agent_type = first_str(p, &[&["subagent_type"], &["agent_type"]]);
    ev.tool_name = str_at(p, &["tool_name"]).or(tool.map(str::to_string));
    // Cursor puts a shell command or a file path at the top level: kept as a
    // `{"command": ...}` / `{"file_path": ...}` object, the shape summaries read.
    ev.tool_input = first_value(p, &[&["tool_input"]]).or_else(|| {
        ["command", "file_path"].iter().find_map(|key| {
            p.get(*key)
                .map(|v| Value::Object([(key.to_string(), v.clone())].into_iter().collect()))
        })
    });
    ev.cwd = first_str(p, &[&["cwd"]]).or_else(|| {
        p.get("workspace_roots")
            .and_then(|r| r.get(0))
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    ev.transcript_path = str_at(p, &["transcript_path"]);
    ev.reason = status;
    Ok(Some(ev))
}

/// The event name, explicit or inferred from the keys present.
fn event_name(p: &Value) -> Option<String> {
    if let Some(n) = first_str(p, &[&["hook_event_name"], &["hookEventName"]]) {
        return Some(n);
    }
    let name = if has(p, "status") && has(p, "loop_count") {
        "stop"
    } else if has(p, "prompt") {
        "beforeSubmitPrompt"
    } else if has(p, "edits") {
        "afterFileEdit"
    } else if has(p, "command") && has(p, "output") {
        "afterShellExecution"
    } else if has(p, "command") {
        "beforeShellExecution"
    } else if has(p, "status") {
        "stop"
    } else {
        return None;
    };
    Some(name.to_string())
}
