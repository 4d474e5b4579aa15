//! Small helpers for pulling optional fields out of loosely shaped JSON.

use serde_json::Value;

use super::{EventKind, NormalizedEvent};

/// The non-empty string at `path` (object keys), if any. Empty strings count as absent because
/// several CLIs send `""` for "not known" (Hermes' approval events send `session_id: ""`).
pub(super) fn str_at(v: &Value, path: &[&str]) -> Option<String> {
    let mut cur = v;
    for key in path {
        cur = cur.get(key)?;
    }
    match cur.as_str() {
        Some(s) if !s.is_empty() => Some(s.to_string()),
        _ => None,
    }
}

/// The first non-empty string among several candidate paths.
pub(super) fn first_str(v: &Value, paths: &[&[&str]]) -> Option<String> {
    paths.iter().find_map(|p| str_at(v, p))
}

/// The non-null value at `path`, cloned.
pub(super) fn value_at(v: &Value, path: &[&str]) -> Option<Value> {
    let mut cur = v;
    for key in path {
        cur = cur.get(key)?;
    }
    if cur.is_null() {
        None
    } else {
        Some(cur.clone())
    }
}

/// The first non-null value among several candidate paths.
pub(super) fn first_value(v: &Value, paths: &[&[&str]]) -> Option<Value> {
    paths.iter().find_map(|p| value_at(v, p))
}

/// True when the object has `key` at top level.
pub(super) fn has(v: &Value, key: &str) -> bool {
    v.get(key).is_some()
}

/// Fills the fields that Claude-style payloads (Claude, Codex, Gemini, Kimi, and the snake_case
/// parts of others) put at top level under the same snake_case names.
pub(super) fn snake_case_event(kind: EventKind, name: &str, p: &Value) -> NormalizedEvent {
    let mut ev = NormalizedEvent::new(kind, name);
    ev.session_id = str_at(p, &["session_id"]);
    ev.agent_id = str_at(p, &["agent_id"]);
    ev.agent_type = str_at(p, &["agent_type"]);
    ev.tool_name = str_at(p, &["tool_name"]);
    ev.tool_input = value_at(p, &["tool_input"]);
    ev.cwd = str_at(p, &["cwd"]);
    ev.transcript_path = str_at(p, &["transcript_path"]);
    ev.permission_mode = str_at(p, &["permission_mode"]);
    ev.notification_type = str_at(p, &["notification_type"]);
    ev.reason = first_str(p, &[&["reason"], &["source"], &["trigger"]]);
    ev
}
