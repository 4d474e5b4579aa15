//! OpenCode (measured on 1.18.33), as posted by calyx's own plugin: a plugin hook arrives as
//! `{input, output}` (optionally with a `hook` name the plugin adds), a bus event as the bus
//! event itself (`{type, properties}`).
//!
//! The session id hides under four spellings (`sessionID`, `session_id`, `sessionId`,
//! `info.id`), at top level, under `properties`, `properties.info` or `input`. A relevant event
//! whose session cannot be resolved is an error ([`NormalizeError::NoSession`]), never a
//! guess: a guess could land on another pane's row. A session created with a `parentID` is a
//! subagent (OpenCode's task tool runs children as sessions).

use serde_json::Value;

use super::fields::{first_str, first_value, has, str_at};
use super::{EventKind, NormalizeError, NormalizedEvent};
use crate::kind::AgentKind;

const KIND: AgentKind = AgentKind::OpenCode;

/// Maps one OpenCode plugin hook or bus event.
pub(super) fn normalize(p: &Value) -> Result<Option<NormalizedEvent>, NormalizeError> {
    if let Some(t) = str_at(p, &["type"]) {
        return bus_event(&t, p);
    }
    let name = plugin_hook_name(p).ok_or(NormalizeError::NoEventName { kind: KIND })?;
    let ev_kind = match name.as_str() {
        "chat.message" => EventKind::UserPromptSubmit,
        "tool.execute.before" => EventKind::PreToolUse,
        "tool.execute.after" => EventKind::PostToolUse,
        "chat.params"
        | "chat.headers"
        | "shell.env"
        | "plugin.init"
        | "respond_permission"
        | "permission.ask"
        | "command.execute.before"
        | "experimental.chat.system.transform" => return Ok(None),
        _ => return Err(NormalizeError::UnknownEvent { kind: KIND, name }),
    };
    let mut ev = NormalizedEvent::new(ev_kind, name.clone());
    ev.session_id = Some(session_id(p).ok_or(NormalizeError::NoSession { kind: KIND, name })?);
    ev.tool_name = str_at(p, &["input", "tool"]);
    ev.tool_input = first_value(p, &[&["output", "args"], &["input", "args"]]);
    ev.cwd = first_str(p, &[&["directory"], &["input", "cwd"]]);
    Ok(Some(ev))
}

/// A plugin hook's name: explicit (`hook`/`event`, set by calyx's plugin) or inferred from the
/// `{input, output}` shape.
fn plugin_hook_name(p: &Value) -> Option<String> {
    if let Some(n) = first_str(p, &[&["hook"], &["event"], &["name"]]) {
        return Some(n);
    }
    let input = p.get("input");
    let output = p.get("output");
    let in_has = |k: &str| input.is_some_and(|i| has(i, k));
    let out_has = |k: &str| output.is_some_and(|o| has(o, k));
    let name = if in_has("tool") && (out_has("title") || out_has("output") || in_has("args")) {
        "tool.execute.after"
    } else if in_has("tool") {
        "tool.execute.before"
    } else if out_has("parts") || (out_has("message") && !in_has("model")) {
        "chat.message"
    } else if out_has("headers") {
        "chat.headers"
    } else if in_has("model") {
        "chat.params"
    } else if in_has("cwd") {
        "shell.env"
    } else if has(p, "worktree") && has(p, "directory") {
        "plugin.init"
    } else if has(p, "want") && has(p, "results") {
        "respond_permission"
    } else {
        return None;
    };
    Some(name.to_string())
}

/// Maps a bus event by its `type`.
fn bus_event(t: &str, p: &Value) -> Result<Option<NormalizedEvent>, NormalizeError> {
    let props = p.get("properties").unwrap_or(&Value::Null);
    let parent = str_at(props, &["info", "parentID"]);
    let ev_kind = match t {
        "session.created" if parent.is_some() => EventKind::SubagentStart,
        "session.created" => EventKind::SessionStart,
        "session.deleted" if parent.is_some() => EventKind::SubagentStop,
        "session.deleted" => EventKind::SessionEnd,
        "session.status" => match str_at(props, &["status", "type"]).as_deref() {
            Some("busy") | Some("retry") => EventKind::Activity,
            _ => return Ok(None),
        },
        "session.idle" => EventKind::Stop,
        "session.compacted" => EventKind::Compaction,
        "permission.asked" | "permission.updated" => EventKind::PermissionRequest,
        // The dialog was answered: the wait is over (a reject ends the turn; session.idle follows).
        "permission.replied" => EventKind::PostToolUse,
        "session.updated"
        | "session.diff"
        | "session.error"
        | "message.updated"
        | "message.removed"
        | "message.part.updated"
        | "message.part.delta"
        | "message.part.removed"
        | "plugin.added"
        | "catalog.updated"
        | "reference.updated"
        | "integration.updated"
        | "file.edited"
        | "file.watcher.updated"
        | "lsp.updated"
        | "lsp.client.diagnostics"
        | "installation.updated"
        | "server.connected"
        | "todo.updated"
        | "command.executed"
        | "storage.write"
        | "ide.installed"
        | "vcs.branch.updated"
        | "tui.toast.show"
        | "tui.prompt.append"
        | "tui.command.execute"
        | "project.updated"
        | "config.updated" => return Ok(None),
        _ => {
            return Err(NormalizeError::UnknownEvent {
                kind: KIND,
                name: t.to_string(),
            })
        }
    };
    let mut ev = NormalizedEvent::new(ev_kind, t);
    let sid = session_id(p).ok_or_else(|| NormalizeError::NoSession {
        kind: KIND,
        name: t.to_string(),
    })?;
    if let (Some(parent), EventKind::SubagentStart | EventKind::SubagentStop) = (&parent, ev_kind) {
        ev.session_id = Some(parent.clone());
        ev.agent_id = Some(sid);
        ev.agent_type = str_at(props, &["info", "title"]);
    } else {
        ev.session_id = Some(sid);
    }
    ev.cwd = str_at(props, &["info", "directory"]);
    if ev_kind == EventKind::PermissionRequest {
        ev.tool_name = first_str(props, &[&["permission"], &["type"]]);
        ev.tool_input = first_value(props, &[&["metadata"], &["patterns"]]);
    }
    Ok(Some(ev))
}

/// The session id under any of its spellings and nestings. `info.id` is only a session id when
/// `info` is a session (it has `projectID`/`slug`); on `message.*` it is a message id.
fn session_id(p: &Value) -> Option<String> {
    const SPELLINGS: [&str; 3] = ["sessionID", "session_id", "sessionId"];
    for base in [
        &[][..],
        &["properties"][..],
        &["properties", "info"][..],
        &["input"][..],
    ] {
        for key in SPELLINGS {
            let path: Vec<&str> = base.iter().copied().chain([key]).collect();
            if let Some(s) = str_at(p, &path) {
                return Some(s);
            }
        }
    }
    [&["properties", "info"][..], &["info"][..]]
        .into_iter()
        .filter_map(|path| {
            let mut cur = p;
            for k in path {
                cur = cur.get(k)?;
            }
            Some(cur)
        })
        .find(|info| has(info, "projectID") || has(info, "slug"))
        .and_then(|info| str_at(info, &["id"]))
}
