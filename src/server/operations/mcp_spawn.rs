//! `pane_split` and `window_create`: a new pane for an MCP caller. A new pane running the
//! user's shell is made at once; one running a `command` waits for the human first (see
//! [`super::mcp_approval`]), and its target and directory are checked again after the allow,
//! since the layout may have changed while the human read the request.

use serde_json::json;
use tokio::sync::oneshot;

use crate::approvals::summarize;
use crate::layout::SplitDir;
use crate::mcp::{PaneRef, PaneSummary, SplitDirection, SplitRequest, WindowRequest};

use super::mcp_approval::{human_answer, HumanAnswer, ToolAsk};
use super::mcp_tools::pane_id;
use crate::server::messages::McpOp;
use crate::server::messages::Msg;
use crate::server::owner::Server;

type Reply = oneshot::Sender<Result<PaneSummary, String>>;

/// An agent's `cwd` for a new pane: an existing directory, given as an absolute path. (A pane
/// started from the CLI falls back to the home directory instead; an agent that named a
/// directory must learn that it is not there rather than run its command somewhere else.)
fn existing_dir(cwd: Option<String>) -> Result<Option<String>, String> {
    match cwd {
        Some(dir) if !std::path::Path::new(&dir).is_absolute() => Err(format!(
            "cwd {dir:?} is not an absolute path; pane_list shows each pane's cwd"
        )),
        Some(dir) if !std::path::Path::new(&dir).is_dir() => {
            Err(format!("cwd {dir:?} is not an existing directory"))
        }
        cwd => Ok(cwd),
    }
}

/// The argv a `command` runs as (empty: the user's shell).
fn argv(command: Option<&str>) -> Vec<String> {
    command
        .map(|c| vec!["sh".to_string(), "-c".to_string(), c.to_string()])
        .unwrap_or_default()
}

/// What the panel shows for a command a new pane would run.
fn new_pane_summary(command: &str, cwd: Option<&str>, place: String) -> crate::approvals::Summary {
    let mut input = json!({ "command": command, "new pane": place });
    if let Some(cwd) = cwd {
        input["cwd"] = json!(cwd);
    }
    summarize("Bash", &input)
}

impl Server {
    pub(crate) fn mcp_split(
        &mut self,
        caller: Option<PaneRef>,
        request: SplitRequest,
        approved: bool,
        reply: Reply,
    ) {
        let checked = self
            .state
            .resolve(Some(&request.pane))
            .map_err(|e| format!("{e}; pane_list shows the panes"))
            .and_then(|t| Ok((t.pane, existing_dir(request.cwd.clone())?)));
        let (target, cwd) = match checked {
            Ok(checked) => checked,
            Err(e) => {
                let _ = reply.send(Err(e));
                return;
            }
        };
        if let (Some(command), false) = (request.command.as_deref(), approved) {
            let direction = match request.direction {
                SplitDirection::Right => "right",
                SplitDirection::Down => "down",
            };
            let summary = new_pane_summary(
                command,
                cwd.as_deref(),
                format!("split %{target} {direction}"),
            );
            let ask = ToolAsk {
                pane: target,
                caller: caller.clone(),
                verb: Some("pane_split"),
                summary,
                timeout: request.timeout,
            };
            self.when_allowed(ask, reply, move |reply| McpOp::Split {
                caller,
                request,
                approved: true,
                reply,
            });
            return;
        }
        let dir = match request.direction {
            SplitDirection::Right => SplitDir::Horizontal,
            SplitDirection::Down => SplitDir::Vertical,
        };
        let result = self
            .state
            .split_pane(
                target,
                dir,
                true,
                cwd,
                argv(request.command.as_deref()),
                &self.tx,
            )
            .map_err(|e| e.to_string());
        let _ = reply.send(result.and_then(|p| self.pane_summary(p)));
    }

    pub(crate) fn mcp_window(
        &mut self,
        caller: Option<PaneRef>,
        request: WindowRequest,
        approved: bool,
        reply: Reply,
    ) {
        let caller_pane = caller.as_ref().and_then(|c| pane_id(&c.pane));
        let session = caller_pane
            .and_then(|p| self.state.locate(p))
            .map(|(s, _)| s)
            .or_else(|| self.state.latest_session());
        let checked = session
            .ok_or_else(|| "no session to add a window to".to_string())
            .and_then(|s| Ok((s, existing_dir(request.cwd.clone())?)));
        let (session, cwd) = match checked {
            Ok(checked) => checked,
            Err(e) => {
                let _ = reply.send(Err(e));
                return;
            }
        };
        if let (Some(command), false) = (request.command.as_deref(), approved) {
            // The request is shown against the caller's pane, else the session's active one.
            let shown = self
                .state
                .sessions
                .get(&session)
                .and_then(|s| Some((caller_pane.or(s.active_pane())?, s.name.clone())));
            let Some((pane, name)) = shown else {
                let _ = reply.send(Err("no session to add a window to".to_string()));
                return;
            };
            let summary = new_pane_summary(
                command,
                cwd.as_deref(),
                format!("new window in session {name}"),
            );
            let ask = ToolAsk {
                pane,
                caller: caller.clone(),
                verb: Some("window_create"),
                summary,
                timeout: request.timeout,
            };
            self.when_allowed(ask, reply, move |reply| McpOp::Window {
                caller,
                request,
                approved: true,
                reply,
            });
            return;
        }
        let result = self
            .state
            .add_window(
                session,
                request.name,
                cwd,
                argv(request.command.as_deref()),
                true,
                &self.tx,
            )
            .map_err(|e| e.to_string());
        let _ = reply.send(result.and_then(|p| self.pane_summary(p)));
    }

    /// Queues `ask`; on an allow, sends the owner `approved(reply)` to act, else answers the
    /// caller with the denial or the timeout.
    fn when_allowed(
        &mut self,
        ask: ToolAsk<'_>,
        reply: Reply,
        approved: impl FnOnce(Reply) -> McpOp + Send + 'static,
    ) {
        let (id, answer) = self.ask_human(ask);
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let mut reply = reply;
            let Some(answer) = human_answer(id, answer, &mut reply, &tx).await else {
                return;
            };
            let refusal = match answer {
                HumanAnswer::Allow => {
                    let _ = tx.send(Msg::Mcp(approved(reply)));
                    return;
                }
                HumanAnswer::Expired => "timeout: nobody approved the command in time".to_string(),
                HumanAnswer::Deny(reason) => format!("denied: {reason}"),
            };
            let _ = reply.send(Err(refusal));
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_runs_through_sh_and_none_means_the_shell() {
        assert_eq!(argv(Some("id")), ["sh", "-c", "id"]);
        assert!(argv(None).is_empty());
    }

    #[test]
    fn the_panel_names_the_command_and_where_it_runs() {
        let s = new_pane_summary("id > /tmp/x", Some("/tmp"), "split %1 right".into());
        let all = format!("{} {}", s.headline, s.lines.join("\n"));
        assert!(all.contains("id > /tmp/x"), "{all}");
        assert!(all.contains("split %1 right"), "{all}");
        assert!(all.contains("/tmp"), "{all}");
    }

    #[test]
    fn a_relative_or_missing_cwd_is_refused() {
        assert!(existing_dir(Some("rel".into())).is_err());
        assert!(existing_dir(Some("/no/such/dir/calyx".into())).is_err());
        assert_eq!(existing_dir(None), Ok(None));
    }
}
