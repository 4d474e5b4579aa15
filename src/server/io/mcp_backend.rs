//! The real MCP backend: each tool call becomes an [`McpOp`] for the owner loop, which answers
//! from the live state. Acting tools (`pane_run`, `pane_send_keys`) wait in the approval queue
//! like an agent's own permission request.

use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::{mpsc, oneshot};

use crate::mcp::backend::AgentWaitEnd;
use crate::mcp::commands::command_id;
use crate::mcp::{
    AgentSummary, CommandOutput, CommandWait, McpBackend, PaneCommands, PaneRef, PaneSummary,
    RunOutcome, RunRequest, SplitRequest, WindowRequest,
};

use crate::machines::link::Route;
use crate::server::messages::{McpOp, Msg};

/// The backend the server hands to the MCP layer.
pub struct OwnerBackend {
    pub tx: mpsc::UnboundedSender<Msg>,
}

/// How long past its timeout an acting tool waits for the queue's own "timeout" answer.
const ACT_GRACE: Duration = Duration::from_secs(5);

const GONE: &str = "calyx is shutting down; try again when it is back";

/// The answer to a request that may wait for the human up to `timeout`; past it (plus the
/// grace in which the queue answers its own expiry) the request is dropped, which withdraws it.
async fn answer_within<T>(
    timeout: Duration,
    asked: impl std::future::Future<Output = Option<Result<T, String>>>,
) -> Result<T, String> {
    match tokio::time::timeout(timeout + ACT_GRACE, asked).await {
        Ok(Some(answer)) => answer,
        Ok(None) => Err(GONE.into()),
        Err(_) => Err(format!(
            "timeout: nobody approved the command within {} s",
            timeout.as_secs()
        )),
    }
}

impl OwnerBackend {
    /// Queues typing into a pane behind the human's approval, bounded by `timeout`.
    async fn act(
        &self,
        caller: Option<&PaneRef>,
        pane: String,
        bytes: Vec<u8>,
        what: String,
        timeout: Duration,
    ) -> Result<(RunOutcome, Option<u64>), String> {
        let caller = caller.cloned();
        let asked = self.ask(|reply| McpOp::Act {
            caller,
            pane,
            bytes,
            what,
            timeout,
            reply,
        });
        // The queue expires the request at `timeout` and answers "timeout" itself; this bound
        // only covers a server that stopped answering (dropping the ask withdraws it).
        match tokio::time::timeout(timeout + ACT_GRACE, asked).await {
            Ok(Some(answer)) => answer,
            Ok(None) => Err(GONE.into()),
            Err(_) => Ok((RunOutcome::TimedOut, None)),
        }
    }

    /// Waits up to `timeout` for command `seq` of `pane` (`%N`).
    async fn wait_command(
        &self,
        pane: String,
        seq: u64,
        timeout: Duration,
    ) -> Result<CommandWait, String> {
        let id = command_id(&pane, seq);
        let asked = self.ask(|reply| McpOp::CommandAwait { pane, seq, reply });
        match tokio::time::timeout(timeout, asked).await {
            Ok(Some(done)) => Ok(done),
            Ok(None) => Err(GONE.into()),
            Err(_) => Ok(CommandWait::TimedOut { command_id: id }),
        }
    }

    async fn command_target(
        &self,
        pane: &str,
        command_id: Option<&str>,
    ) -> Result<(String, u64), String> {
        let (pane, command_id) = (pane.to_string(), command_id.map(str::to_string));
        self.ask(|reply| McpOp::CommandTarget {
            pane,
            command_id,
            reply,
        })
        .await
        .unwrap_or_else(|| Err(GONE.into()))
    }

    async fn ask<T>(&self, make: impl FnOnce(oneshot::Sender<T>) -> McpOp) -> Option<T> {
        let (tx, rx) = oneshot::channel();
        self.tx.send(Msg::Mcp(make(tx))).ok()?;
        rx.await.ok()
    }
}

#[async_trait]
impl McpBackend for OwnerBackend {
    async fn identity(
        &self,
        surface_id: Option<&str>,
        session_id: Option<&str>,
    ) -> Option<PaneRef> {
        let (surface, session) = (
            surface_id.map(str::to_string),
            session_id.map(str::to_string),
        );
        self.ask(|reply| McpOp::Identity {
            surface,
            session,
            reply,
        })
        .await
        .flatten()
    }

    async fn agent_seen(&self, pane: &PaneRef, kind: calyx_integrations::AgentKind) {
        let _ = self.tx.send(Msg::Mcp(McpOp::AgentSeen {
            pane: pane.pane.clone(),
            kind,
        }));
    }

    async fn ask_machine(
        &self,
        machine: &str,
        tool: &str,
        args: serde_json::Value,
        from: crate::protocol::RemoteCaller,
        within: Duration,
    ) -> Result<serde_json::Value, String> {
        use crate::protocol::{Request, Response};
        let request = Request::RemoteTool {
            tool: tool.to_string(),
            args,
            from,
        };
        let printable = crate::remote::handshake::printable_line;
        let answer = if waits(tool) {
            own_connection(machine, request, within).await
        } else {
            let name = machine.to_string();
            let routed = self
                .ask(|reply| McpOp::AskMachine {
                    machine: name,
                    request,
                    reply,
                })
                .await
                .ok_or_else(|| GONE.to_string())?;
            match routed {
                Route::Link(answer) => match tokio::time::timeout(within, answer).await {
                    Ok(Ok(answer)) => answer,
                    Ok(Err(_)) => Err(format!("the link to {machine} stopped")),
                    Err(_) => Err(format!(
                        "unreachable: {machine} (its server did not answer within {} s)",
                        within.as_secs()
                    )),
                },
                Route::Refused(why) => Err(why),
                Route::OwnConnection(request) => own_connection(machine, *request, within).await,
            }
        };
        match answer {
            Ok(Response::Json(value)) => Ok(value),
            Ok(Response::Error(e)) => Err(format!("{machine}: {}", printable(&e))),
            Ok(_) => Err(format!("{machine} gave an answer this calyx cannot read")),
            Err(why) => Err(why),
        }
    }

    fn saved_machines(&self) -> Result<Vec<String>, String> {
        crate::machines::ask_one::names().map_err(|e| e.to_string())
    }

    fn unread_changed(&self, pane: &PaneRef, unread: usize) {
        let _ = self.tx.send(Msg::Mcp(McpOp::Unread {
            pane: pane.pane.clone(),
            unread,
        }));
    }

    async fn pane_list(&self) -> Vec<PaneSummary> {
        self.ask(|reply| McpOp::PaneList { reply })
            .await
            .unwrap_or_default()
    }

    async fn pane_read(
        &self,
        _caller: Option<&PaneRef>,
        pane: &str,
        lines: Option<u32>,
        scrollback: bool,
    ) -> Result<String, String> {
        let pane = pane.to_string();
        self.ask(|reply| McpOp::PaneRead {
            pane,
            lines,
            scrollback,
            reply,
        })
        .await
        .unwrap_or_else(|| Err(GONE.into()))
    }

    async fn agent_list(&self) -> Vec<AgentSummary> {
        self.ask(|reply| McpOp::AgentList { reply })
            .await
            .unwrap_or_default()
    }

    async fn agent_wait(
        &self,
        pane: &str,
        until: Vec<String>,
        timeout: Duration,
    ) -> Result<AgentWaitEnd, String> {
        let asked = pane.to_string();
        match tokio::time::timeout(
            timeout,
            self.ask(|reply| McpOp::AgentWait {
                pane: asked,
                until,
                reply,
            }),
        )
        .await
        {
            Ok(Some(answer)) => answer.map(AgentWaitEnd::Reached),
            Ok(None) => Err(GONE.into()),
            Err(_) => {
                let pane = pane.to_string();
                let now = self.ask(|reply| McpOp::AgentState { pane, reply }).await;
                Ok(AgentWaitEnd::TimedOut(now.flatten()))
            }
        }
    }

    async fn pane_split(
        &self,
        caller: Option<&PaneRef>,
        request: SplitRequest,
    ) -> Result<PaneSummary, String> {
        let caller = caller.cloned();
        let timeout = request.timeout;
        let asked = self.ask(|reply| McpOp::Split {
            caller,
            request,
            approved: false,
            reply,
        });
        answer_within(timeout, asked).await
    }

    async fn window_create(
        &self,
        caller: Option<&PaneRef>,
        request: WindowRequest,
    ) -> Result<PaneSummary, String> {
        let caller = caller.cloned();
        let timeout = request.timeout;
        let asked = self.ask(|reply| McpOp::Window {
            caller,
            request,
            approved: false,
            reply,
        });
        answer_within(timeout, asked).await
    }

    async fn pane_run(
        &self,
        caller: Option<&PaneRef>,
        request: RunRequest,
    ) -> Result<RunOutcome, String> {
        let started = tokio::time::Instant::now();
        let mut bytes = request.command.clone().into_bytes();
        bytes.push(b'\r');
        let (outcome, mark) = self
            .act(
                caller,
                request.pane.clone(),
                bytes,
                request.command,
                request.timeout,
            )
            .await?;
        let (true, RunOutcome::Sent, Some(seq)) = (request.wait, &outcome, mark) else {
            return Ok(outcome);
        };
        let left = request.timeout.saturating_sub(started.elapsed());
        let pane = match self.command_target(&request.pane, None).await {
            Ok((pane, _)) => pane,
            Err(_) => request.pane,
        };
        match self.wait_command(pane, seq, left).await? {
            CommandWait::Finished(found) => Ok(RunOutcome::Finished {
                exit_code: found.command.exit_code,
                output: found.output,
            }),
            CommandWait::TimedOut { .. } => Ok(RunOutcome::TimedOut),
            CommandWait::PaneClosed { command_id } => Err(format!(
                "the pane's program exited before {command_id} finished"
            )),
        }
    }

    async fn pane_send_keys(
        &self,
        caller: Option<&PaneRef>,
        pane: &str,
        keys: Vec<String>,
        timeout: Duration,
    ) -> Result<RunOutcome, String> {
        let bytes = crate::keys::send_keys_bytes(&keys, false, false);
        let what = format!("send keys: {}", keys.join(" "));
        self.act(caller, pane.to_string(), bytes, what, timeout)
            .await
            .map(|(outcome, _)| outcome)
    }

    async fn commands(&self, pane: &str) -> Result<PaneCommands, String> {
        let pane = pane.to_string();
        self.ask(|reply| McpOp::Commands { pane, reply })
            .await
            .unwrap_or_else(|| Err(GONE.into()))
    }

    async fn command_output(&self, command_id: &str) -> Result<CommandOutput, String> {
        let command_id = command_id.to_string();
        self.ask(|reply| McpOp::CommandOutput { command_id, reply })
            .await
            .unwrap_or_else(|| Err(GONE.into()))
    }

    async fn command_await(
        &self,
        pane: &str,
        command_id: Option<&str>,
        timeout: Duration,
    ) -> Result<CommandWait, String> {
        let (pane, seq) = self.command_target(pane, command_id).await?;
        self.wait_command(pane, seq, timeout).await
    }
}

#[async_trait]
impl crate::hosted::views::PaneLookup for OwnerBackend {
    async fn caller_pane(
        &self,
        caller: crate::hosted::publish::Caller,
    ) -> crate::hosted::views::CallerPane {
        self.ask(|reply| McpOp::ViewCaller { caller, reply })
            .await
            .unwrap_or_default()
    }
}

/// Whether `tool` may wait long on the far side (for an agent, or for a human to approve a
/// `pane_run` there): such a call gets a connection of its own, so closing it withdraws
/// whatever it queued there when the caller gives up, and nothing it waits for is left
/// running on the link.
fn waits(tool: &str) -> bool {
    matches!(tool, "agent_wait" | "pane_run")
}

/// Asks `machine` over a connection of its own (`machines::ask_one`).
async fn own_connection(
    machine: &str,
    request: crate::protocol::Request,
    within: Duration,
) -> Result<crate::protocol::Response, String> {
    crate::machines::ask_one::ask_one(machine, request, within)
        .await
        .map_err(|failure| failure.to_string())
}
