//! Agents that talk across machines (issue 20 §4), the calling side: a tool call whose
//! `machine` argument names a saved machine, or whose pane or peer id is machine-qualified
//! (`build/%3`), is asked of that machine's calyx server over the user's ssh (the backend's
//! [`McpBackend::ask_machine`], `machines::ask_one` in the server) and run there by its own tools ([`super::from_afar`]); the
//! answer comes back with that machine's ids qualified (`build/%3`), so they can be passed
//! to the next call as they are.
//!
//! What comes back is another machine's text: it goes to the agent as data (a tool result),
//! and nothing of it is drawn on this machine's screen.

use std::time::Duration;

use rmcp::model::{CallToolResult, ContentBlock as Content, JsonObject};
use serde_json::Value;

use super::backend::McpBackend;
use crate::protocol::RemoteCaller;

/// The tools that take a `machine` argument.
pub(crate) const TOOLS: [&str; 7] = [
    "pane_list",
    "agent_list",
    "agent_wait",
    "pane_read",
    "pane_run",
    "send_message",
    "list_peers",
];

/// What `machine` may say for this machine.
const LOCAL: &str = "local";

/// The argument holding a pane or peer id that may be machine-qualified.
fn id_key(tool: &str) -> Option<&'static str> {
    match tool {
        "pane_read" | "agent_wait" | "pane_run" => Some("pane"),
        "send_message" => Some("to"),
        _ => None,
    }
}

/// Splits `build/%3` into `("build", "%3")`; None for an id of this machine.
pub(crate) fn split_id(id: &str) -> Option<(&str, &str)> {
    id.split_once('/')
}

/// `machine/id` (an id already qualified stays as it is).
pub(crate) fn qualify_id(machine: &str, id: &str) -> String {
    if id.contains('/') {
        id.to_string()
    } else {
        format!("{machine}/{id}")
    }
}

/// The machine a call of `tool` goes to, None for this one. Takes `machine` out of `args` and
/// unqualifies a qualified id in them; a `machine` and an id that disagree are refused.
pub(crate) fn route(tool: &str, args: &mut JsonObject) -> Result<Option<String>, String> {
    if !TOOLS.contains(&tool) {
        return Ok(None);
    }
    let mut machine = match args.remove("machine") {
        None | Some(Value::Null) => None,
        Some(Value::String(m)) if m.is_empty() || m == LOCAL => Some(LOCAL.to_string()),
        Some(Value::String(m)) => Some(m),
        Some(_) => {
            return Err(format!(
                "invalid arguments for {tool}: `machine` is a string"
            ))
        }
    };
    if let Some(key) = id_key(tool) {
        if let Some(Value::String(id)) = args.get(key) {
            if let Some((named, rest)) = split_id(id) {
                if machine.as_deref().is_some_and(|m| m != named) {
                    return Err(format!(
                        "`{key}` {id:?} is on machine {named:?} but `machine` says {:?}; leave \
                         `machine` out when the id names its machine",
                        machine.as_deref().unwrap_or_default()
                    ));
                }
                let rest = rest.to_string();
                machine = Some(named.to_string());
                args.insert(key.to_string(), Value::String(rest));
            }
        }
    }
    Ok(machine.filter(|m| m != LOCAL))
}

/// Runs `tool` with `args` on saved machine `machine` as `from`, waiting at most `within` for
/// its answer (a wait for a human or an agent passes its own timeout plus a margin).
pub(crate) async fn forward(
    backend: &dyn McpBackend,
    machine: &str,
    tool: &str,
    args: JsonObject,
    from: RemoteCaller,
    within: Duration,
) -> Result<CallToolResult, String> {
    let value = backend
        .ask_machine(machine, tool, Value::Object(args), from, within)
        .await?;
    let mut result: CallToolResult = serde_json::from_value(value)
        .map_err(|e| format!("{machine} gave an answer this calyx cannot read: {e}"))?;
    qualify(machine, tool, &mut result);
    Ok(result)
}

/// Qualifies the ids of `machine`'s answer to `tool` and names the machine in it.
pub(crate) fn qualify(machine: &str, tool: &str, result: &mut CallToolResult) {
    if let Some(Value::Object(out)) = result.structured_content.as_mut() {
        let at = |v: &mut Value| {
            if let Some(id) = v.as_str() {
                *v = Value::String(qualify_id(machine, id));
            }
        };
        let each = |list: Option<&mut Value>, key: &str| {
            if let Some(Value::Array(items)) = list {
                for item in items {
                    if let Some(v) = item.get_mut(key) {
                        at(v);
                    }
                }
            }
        };
        match tool {
            "pane_list" => each(out.get_mut("panes"), "id"),
            "agent_list" => each(out.get_mut("agents"), "pane"),
            "list_peers" => {
                each(out.get_mut("peers"), "peer_id");
                each(out.get_mut("peers"), "pane");
            }
            "send_message" => {
                for key in ["delivered_to", "overflowed"] {
                    if let Some(Value::Array(ids)) = out.get_mut(key) {
                        ids.iter_mut().for_each(at);
                    }
                }
            }
            _ => {
                if let Some(v) = out.get_mut("pane") {
                    at(v);
                }
            }
        }
        out.insert("machine".into(), Value::String(machine.to_string()));
    }
    let text: Vec<String> = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect();
    result.content = vec![Content::text(format!(
        "on machine {machine} (its pane ids are {machine}/%N):\n{}",
        text.join("\n")
    ))];
}

/// This machine's name for other machines: its host name's first label, in the characters a
/// saved machine's name may have (so the other side can save it under that name and answer).
pub(crate) fn this_machine() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname NUL-terminates what fits.
    let ok = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } == 0;
    let raw = if ok {
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        String::from_utf8_lossy(&buf[..end]).to_string()
    } else {
        String::new()
    };
    let name: String = raw
        .split('.')
        .next()
        .unwrap_or_default()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .take(32)
        .collect();
    if name.is_empty() {
        "unnamed-host".into()
    } else {
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> JsonObject {
        match v {
            Value::Object(m) => m,
            _ => JsonObject::new(),
        }
    }

    #[test]
    fn routes_by_machine_or_by_qualified_id() {
        let mut a = obj(json!({"machine": "build"}));
        assert_eq!(route("agent_list", &mut a), Ok(Some("build".into())));
        assert!(a.is_empty());
        let mut a = obj(json!({"pane": "build/%3"}));
        assert_eq!(route("pane_read", &mut a), Ok(Some("build".into())));
        assert_eq!(a["pane"], "%3");
        let mut a = obj(json!({"to": "gpu-1/%7", "content": "hi"}));
        assert_eq!(route("send_message", &mut a), Ok(Some("gpu-1".into())));
        assert_eq!(a["to"], "%7");
        let mut a = obj(json!({"pane": "%3", "machine": "local"}));
        assert_eq!(route("pane_run", &mut a), Ok(None));
        assert!(!a.contains_key("machine"));
        let mut a = obj(json!({"pane": "build/%3", "machine": "gpu"}));
        assert!(route("pane_read", &mut a).is_err());
        let mut a = obj(json!({"machine": 3}));
        assert!(route("pane_list", &mut a).is_err());
        // Tools without `machine` keep their arguments untouched.
        let mut a = obj(json!({"pane": "build/%3"}));
        assert_eq!(route("pane_split", &mut a), Ok(None));
        assert_eq!(a["pane"], "build/%3");
    }

    #[test]
    fn answers_get_qualified_ids_and_their_machine() {
        let mut r =
            CallToolResult::structured(json!({"agents": [{"pane": "%3", "state": "blocked"}]}));
        r.content = vec![Content::text("1 agent(s)\n%3 claude-code blocked")];
        qualify("build", "agent_list", &mut r);
        let out = r.structured_content.clone().unwrap_or_default();
        assert_eq!(out["agents"][0]["pane"], "build/%3");
        assert_eq!(out["machine"], "build");
        let text = r.content[0]
            .as_text()
            .map(|t| t.text.clone())
            .unwrap_or_default();
        assert!(text.starts_with("on machine build"), "{text}");
        let mut r = CallToolResult::structured(json!({"delivered_to": ["%2"], "overflowed": []}));
        qualify("build", "send_message", &mut r);
        assert_eq!(
            r.structured_content.unwrap_or_default()["delivered_to"][0],
            "build/%2"
        );
    }

    #[test]
    fn this_machine_is_a_valid_machine_name() {
        let name = this_machine();
        assert!(
            crate::machines::store::check_name(&name).is_ok() || name == "local",
            "{name}"
        );
    }
}
