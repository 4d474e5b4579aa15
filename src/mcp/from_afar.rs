//! Agents that talk across machines (issue 20 §4), the answering side: a tool call an agent on
//! another machine made ([`crate::protocol::Request::RemoteTool`], arriving through `calyx
//! remote-bridge` over the user's ssh) runs here exactly as this machine's own tool would:
//! through this server's backend, its peer inboxes, and, for `pane_run`, its own approval
//! queue and rules, so nothing runs here without a human here or a rule set here.
//!
//! Only the tools that take `machine` are served, and each only when this machine's config
//! has it on. A call is never passed on to a third machine. Who called is checked before it
//! is shown anywhere (the approval panel names it).

use std::sync::Arc;

use serde_json::Value;

use super::across;
use super::backend::{McpBackend, PaneRef};
use super::peers::PeerRegistry;
use super::tool_set::ToolSet;
use super::tools;
use crate::protocol::{RemoteCaller, Response};

/// Runs `tool` for `from`; the answer is `Json` of the MCP tool result (a tool error is a
/// result with `isError`), or `Error` for a call this machine refuses outright.
pub async fn serve(
    backend: Arc<dyn McpBackend>,
    peers: Arc<PeerRegistry>,
    tool_set: Arc<ToolSet>,
    tool: &str,
    args: Value,
    from: RemoteCaller,
) -> Response {
    if !across::TOOLS.contains(&tool) {
        return Response::Error(format!(
            "{} cannot be called from another machine",
            crate::remote::handshake::printable(tool)
        ));
    }
    if !tool_set.is_enabled(tool) {
        return Response::Error(format!(
            "{tool} is turned off in this machine's calyx config ([mcp] disabled_tools)"
        ));
    }
    let from = match checked(from) {
        Ok(from) => from,
        Err(why) => return Response::Error(why),
    };
    let Value::Object(mut args) = args else {
        return Response::Error(format!("invalid arguments for {tool}: not an object"));
    };
    match across::route(tool, &mut args) {
        Ok(None) => {}
        Ok(Some(_)) => {
            return Response::Error(
                "a call from another machine is not passed on to a third one".into(),
            )
        }
        Err(e) => return Response::Error(e),
    }
    let caller = PaneRef {
        pane: match &from.pane {
            Some(pane) => across::qualify_id(&from.machine, pane),
            None => from.machine.clone(),
        },
    };
    let ctx = tools::Ctx {
        backend: &backend,
        peers: &peers,
        caller: Some(&caller),
        from_afar: Some(&from),
    };
    match tools::call(ctx, tool, args).await {
        Some(result) => match serde_json::to_value(&result) {
            Ok(json) => Response::Json(json),
            Err(e) => Response::Error(format!("cannot encode the answer: {e}")),
        },
        None => Response::Error(format!("no tool named {tool}")),
    }
}

/// The caller as sent, refused unless its machine name is a plain name (1 to 32 letters,
/// digits, `-`, `_`), its pane a `%N` id and its peer name short and free of control
/// characters: each is shown on this machine.
fn checked(from: RemoteCaller) -> Result<RemoteCaller, String> {
    let machine_ok = !from.machine.is_empty()
        && from.machine.len() <= 32
        && from
            .machine
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    let pane_ok = from.pane.as_deref().is_none_or(|p| {
        p.strip_prefix('%').is_some_and(|n| {
            !n.is_empty() && n.len() <= 10 && n.chars().all(|c| c.is_ascii_digit())
        })
    });
    let name_ok = from.name.as_deref().is_none_or(|n| {
        !n.trim().is_empty() && n.chars().count() <= 64 && !n.chars().any(char::is_control)
    });
    if machine_ok && pane_ok && name_ok {
        Ok(from)
    } else {
        Err(
            "the calling machine sent a caller this calyx refuses (bad machine, pane or name)"
                .into(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caller(machine: &str, pane: Option<&str>, name: Option<&str>) -> RemoteCaller {
        RemoteCaller {
            machine: machine.into(),
            pane: pane.map(Into::into),
            name: name.map(Into::into),
        }
    }

    #[test]
    fn callers_that_would_draw_control_text_are_refused() {
        assert!(checked(caller("laptop", Some("%3"), Some("alice"))).is_ok());
        assert!(checked(caller("laptop", None, None)).is_ok());
        assert!(checked(caller("lap\u{1b}[2J", None, None)).is_err());
        assert!(checked(caller("laptop", Some("%3\u{7}"), None)).is_err());
        assert!(checked(caller("laptop", Some("3"), None)).is_err());
        assert!(checked(caller("laptop", Some("%3"), Some("a\u{1b}]52;c;x\u{7}"))).is_err());
        assert!(checked(caller("", None, None)).is_err());
    }
}
