//! Shared pieces for CLIs whose hooks live in JSON: the entry shapes, how calyx recognises its
//! own entries, and the install/uninstall walk over `hooks.<Event>` arrays.

use serde_json::Value;

use crate::config_edit::json::EntriesOutcome;
use crate::config_edit::{is_calyx_command, EditError, JsonDoc, NodeKind, J};

/// Whether a hook entry is calyx's: a flat entry whose `command` (or Copilot's `bash`) runs
/// calyx's `hook` verb, or a matcher group whose every hook is such an entry. A group mixing
/// calyx's command with the user's is not calyx's and is left alone.
pub(super) fn is_ours(v: &Value) -> bool {
    if let Some(hooks) = v.get("hooks") {
        return hooks
            .as_array()
            .is_some_and(|a| !a.is_empty() && a.iter().all(is_flat_ours));
    }
    is_flat_ours(v)
}

fn is_flat_ours(v: &Value) -> bool {
    ["command", "bash"].iter().any(|k| {
        v.get(k)
            .and_then(Value::as_str)
            .is_some_and(is_calyx_command)
    })
}

/// One CLI event calyx registers.
#[derive(Debug, Clone, Copy)]
pub(super) struct Ev {
    pub name: &'static str,
    /// A permission gate: runs with `--approval` and the long timeout.
    pub gate: bool,
    /// Timeout in the CLI's unit (seconds; milliseconds for Gemini).
    pub timeout: u64,
    pub matcher: Option<&'static str>,
    /// The CLI must wait for this ping even where pings run async (see [`waits`]).
    pub waits: bool,
}

/// A ping the CLI waits for: Claude Code does not wait for async hooks at `/exit` and closes
/// their stdin unwritten, so its SessionEnd would reach calyx empty.
pub(super) const fn waits(mut ev: Ev) -> Ev {
    ev.waits = true;
    ev
}

/// A state ping on `name`.
pub(super) const fn ping(name: &'static str, timeout: u64) -> Ev {
    Ev {
        name,
        gate: false,
        timeout,
        matcher: None,
        waits: false,
    }
}

/// A permission gate on `name`.
pub(super) const fn gate(name: &'static str, timeout: u64) -> Ev {
    Ev {
        name,
        gate: true,
        timeout,
        matcher: None,
        waits: true,
    }
}

/// Groups events by name, keeping the order they are listed in (a state ping listed before a
/// gate on the same event runs first).
pub(super) fn by_event(evs: &[Ev], entry: impl Fn(&Ev) -> J) -> Vec<(String, Vec<J>)> {
    let mut out: Vec<(String, Vec<J>)> = Vec::new();
    for ev in evs {
        let e = entry(ev);
        match out.iter_mut().find(|(n, _)| n == ev.name) {
            Some((_, list)) => list.push(e),
            None => out.push((ev.name.to_string(), vec![e])),
        }
    }
    out
}

/// Makes calyx's entries under `prefix.<Event>` exactly `events` (install) or removes them all
/// (uninstall). Entries of other programs stay; calyx's entries on events no longer in the list
/// are removed; an event whose value is not an array is skipped with a note.
pub(super) fn edit_hooks(
    doc: &mut JsonDoc,
    prefix: &[&str],
    events: &[(String, Vec<J>)],
    install: bool,
    notes: &mut Vec<String>,
) -> Result<(), EditError> {
    let present: Vec<String> = match doc.root().get(prefix).map(|n| &n.kind) {
        Some(NodeKind::Object(members)) => members.iter().map(|m| m.key.clone()).collect(),
        Some(_) => {
            return Err(EditError::new(format!(
                "\"{}\" is not an object",
                prefix.join(".")
            )))
        }
        None => Vec::new(),
    };
    for name in &present {
        if install && events.iter().any(|(n, _)| n == name) {
            continue;
        }
        let path: Vec<&str> = prefix.iter().copied().chain([name.as_str()]).collect();
        doc.remove_entries(&path, &is_ours, prefix.len() + 1)?;
    }
    if !install {
        return Ok(());
    }
    for (name, entries) in events {
        let path: Vec<&str> = prefix.iter().copied().chain([name.as_str()]).collect();
        if doc.set_entries(&path, entries, &is_ours)? == EntriesOutcome::SkippedShape {
            notes.push(format!(
                "{}.{name} is not a list: calyx's hook for it was not added",
                prefix.join(".")
            ));
        }
    }
    Ok(())
}

/// Sets (`Some`) or removes (`None`) one MCP entry at `path` (the last parent is pruned when
/// left empty).
fn edit_member(doc: &mut JsonDoc, path: &[&str], value: Option<&J>) -> Result<(), EditError> {
    match value {
        Some(value) => doc.set(path, value)?,
        None => doc.remove(path, 1)?,
    };
    Ok(())
}

/// Makes calyx's MCP entries under `parent` what [`super::mcp_entries::wanted`] says: each
/// one written with `entry(url)` in order, or removed.
pub(super) fn edit_mcp_entries(
    doc: &mut JsonDoc,
    parent: &str,
    ctx: &super::Ctx,
    op: super::Op,
    entry: impl Fn(&str) -> J,
) -> Result<(), EditError> {
    for (name, url) in super::mcp_entries::wanted(ctx, op) {
        let value = url.map(|url| entry(&url));
        edit_member(doc, &[parent, name], value.as_ref())?;
    }
    Ok(())
}

/// Whether a JSON file calyx owns by name really is calyx's: some string in it is a calyx
/// hook command. A file that does not parse, or names no calyx command, is someone else's.
pub(super) fn names_calyx(text: &str) -> bool {
    fn walk(v: &Value) -> bool {
        match v {
            Value::String(s) => is_calyx_command(s),
            Value::Array(a) => a.iter().any(walk),
            Value::Object(m) => m.values().any(walk),
            _ => false,
        }
    }
    serde_json::from_str::<Value>(crate::config_edit::split_bom(text).1).is_ok_and(|v| walk(&v))
}
