//! The owner loop's side of the MCP tools: answers from the live state, agent waits woken on
//! every transition, and acting tools queued for the human like any permission request.

use serde_json::json;
use tokio::sync::oneshot;
use tokio::time::Instant;

use crate::agents::AgentState;
use crate::approvals::{summarize, Asker, Schema};
use crate::http::EndpointReply;
use crate::layout::{PaneId, SplitDir};
use crate::mcp::{AgentSummary, PaneRef, PaneSummary, RunOutcome, SplitDirection, SubagentSummary};

use super::mcp_backend::McpOp;
use super::{Msg, Server};

/// An `agent_wait` in progress: the pane, the states that end it, and where the answer goes.
pub struct AgentWaiter {
    pub pane: PaneId,
    pub until: Vec<String>,
    pub reply: oneshot::Sender<Result<String, String>>,
}

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

fn pane_id(text: &str) -> Option<PaneId> {
    text.trim().trim_start_matches('%').parse().ok()
}

impl Server {
    /// An MCP client said which agent CLI runs in `pane`: the book decides whether that makes
    /// or renews a row ([`crate::agents::AgentBook::mcp_connected`]).
    fn agent_seen(&mut self, pane: &str, kind: &str) {
        let (Ok(target), Ok(kind)) = (
            self.state.resolve(Some(pane)),
            <calyx_integrations::AgentKind as std::str::FromStr>::from_str(kind),
        ) else {
            return;
        };
        let now = Instant::now();
        let transitions = self.agents.mcp_connected(u64::from(target.pane), kind, now);
        self.after_agent_change(target.pane, &transitions, now);
    }

    pub(super) fn mcp_op(&mut self, op: McpOp) {
        match op {
            McpOp::AgentSeen { pane, kind } => self.agent_seen(&pane, &kind),
            McpOp::Unread { pane, unread } => {
                if let Ok(t) = self.state.resolve(Some(&pane)) {
                    if unread == 0 {
                        self.state.unread.remove(&t.pane);
                    } else {
                        self.state.unread.insert(t.pane, unread);
                    }
                    self.state.mark_pane_dirty(t.pane);
                    self.mark_sidebars_dirty();
                }
            }
            McpOp::Identity {
                surface,
                session,
                reply,
            } => {
                let identity = crate::http::Identity {
                    session_id: session,
                    surface_id: surface,
                    agent_kind: None,
                };
                let pane = self.pane_for_identity(&identity).map(|p| PaneRef {
                    pane: format!("%{p}"),
                });
                let _ = reply.send(pane);
            }
            McpOp::PaneList { reply } => {
                let _ = reply.send(self.pane_summaries());
            }
            McpOp::PaneRead {
                pane,
                lines,
                scrollback,
                reply,
            } => {
                let _ = reply.send(self.pane_read(&pane, lines, scrollback));
            }
            McpOp::AgentList { reply } => {
                let _ = reply.send(self.agent_summaries());
            }
            McpOp::AgentState { pane, reply } => {
                let now = self.state.resolve(Some(&pane)).ok();
                let _ = reply.send(now.and_then(|t| self.agent_state_name(t.pane)));
            }
            McpOp::AgentWait { pane, until, reply } => match self.state.resolve(Some(&pane)) {
                Ok(t) => {
                    let now = self.agent_state_name(t.pane);
                    if until.iter().any(|u| Some(u.as_str()) == now.as_deref()) {
                        let _ = reply.send(Ok(now.unwrap_or_default()));
                    } else {
                        self.agent_waiters.push(AgentWaiter {
                            pane: t.pane,
                            until,
                            reply,
                        });
                    }
                }
                Err(e) => {
                    let _ = reply.send(Err(format!("{e}; pane_list shows the panes")));
                }
            },
            McpOp::Split {
                caller: _,
                request,
                reply,
            } => {
                let target = self
                    .state
                    .resolve(Some(&request.pane))
                    .map_err(|e| format!("{e}; pane_list shows the panes"));
                let cwd = existing_dir(request.cwd);
                let result = target.and_then(|t| {
                    let cwd = cwd?;
                    let dir = match request.direction {
                        SplitDirection::Right => SplitDir::Horizontal,
                        SplitDirection::Down => SplitDir::Vertical,
                    };
                    let command = request
                        .command
                        .map(|c| vec!["sh".to_string(), "-c".to_string(), c])
                        .unwrap_or_default();
                    self.state
                        .split_pane(t.pane, dir, true, cwd, command, &self.tx)
                        .map_err(|e| e.to_string())
                });
                let _ = reply.send(result.and_then(|p| self.pane_summary(p)));
            }
            McpOp::Window {
                caller,
                request,
                reply,
            } => {
                let session = caller
                    .and_then(|c| pane_id(&c.pane))
                    .and_then(|p| self.state.locate(p))
                    .map(|(s, _)| s)
                    .or_else(|| self.state.latest_session());
                let result = match (session, existing_dir(request.cwd)) {
                    (_, Err(e)) => Err(e),
                    (Some(s), Ok(cwd)) => {
                        let command = request
                            .command
                            .map(|c| vec!["sh".to_string(), "-c".to_string(), c])
                            .unwrap_or_default();
                        self.state
                            .add_window(s, request.name, cwd, command, true, &self.tx)
                            .map_err(|e| e.to_string())
                    }
                    (None, Ok(_)) => Err("no session to add a window to".to_string()),
                };
                let _ = reply.send(result.and_then(|p| self.pane_summary(p)));
            }
            McpOp::Act {
                caller,
                pane,
                bytes,
                what,
                timeout,
                reply,
            } => self.mcp_act(caller, &pane, bytes, &what, timeout, reply),
            McpOp::Commands { pane, reply } => {
                let _ = reply.send(self.pane_commands(&pane));
            }
            McpOp::CommandOutput { command_id, reply } => {
                let _ = reply.send(self.command_output(&command_id));
            }
            McpOp::CommandTarget {
                pane,
                command_id,
                reply,
            } => {
                let _ = reply.send(self.command_target(&pane, command_id.as_deref()));
            }
            McpOp::CommandAwait { pane, seq, reply } => self.command_await(&pane, seq, reply),
        }
    }

    fn agent_state_name(&self, pane: PaneId) -> Option<String> {
        self.agents
            .row(u64::from(pane))
            .map(|r| r.state.as_str().to_string())
    }

    /// Wakes `agent_wait` calls whose pane reached one of their states (or closed).
    pub(super) fn wake_agent_waiters(&mut self) {
        let waiters = std::mem::take(&mut self.agent_waiters);
        for w in waiters {
            if w.reply.is_closed() {
                continue;
            }
            let state = if self.state.panes.contains_key(&w.pane) {
                self.agent_state_name(w.pane)
            } else {
                Some(AgentState::Done.as_str().to_string())
            };
            match state {
                Some(s) if w.until.contains(&s) => {
                    let _ = w.reply.send(Ok(s));
                }
                _ if !self.state.panes.contains_key(&w.pane) => {
                    let _ = w.reply.send(Ok("done".into()));
                }
                _ => self.agent_waiters.push(w),
            }
        }
    }

    fn pane_summary(&self, pane: PaneId) -> Result<PaneSummary, String> {
        self.pane_summaries()
            .into_iter()
            .find(|p| p.id == format!("%{pane}"))
            .ok_or_else(|| format!("pane %{pane} is gone"))
    }

    fn pane_summaries(&self) -> Vec<PaneSummary> {
        let mut out = Vec::new();
        for s in self.state.sessions.values() {
            for (wi, w) in s.windows.iter().enumerate() {
                for id in w.layout.panes() {
                    let Some(p) = self.state.panes.get(&id) else {
                        continue;
                    };
                    let row = self.agents.row(u64::from(id));
                    out.push(PaneSummary {
                        id: format!("%{id}"),
                        session: s.name.clone(),
                        window: wi as u32,
                        window_name: self.state.window_name(w),
                        // Waits for a busy pane's reader: a skipped lock would report the
                        // command's name instead of the title the program set.
                        title: p
                            .term()
                            .title()
                            .map(str::to_string)
                            .unwrap_or_else(|| p.command_label()),
                        cwd: p.cwd(),
                        rows: p.rows,
                        cols: p.cols,
                        focused: s.active_window == wi && w.active == id,
                        agent_kind: row.map(|r| r.kind.as_str().to_string()),
                        agent_state: row.map(|r| r.state.as_str().to_string()),
                    });
                }
            }
        }
        out
    }

    fn pane_read(
        &self,
        pane: &str,
        lines: Option<u32>,
        scrollback: bool,
    ) -> Result<String, String> {
        let t = self
            .state
            .resolve(Some(pane))
            .map_err(|e| format!("{e}; pane_list shows the panes"))?;
        let p = self.state.panes.get(&t.pane).ok_or("that pane is gone")?;
        // Whole lines (wrapped rows joined), so a secret the pane's edge cuts is still found.
        let text =
            super::pane_text::logical_lines(&p.term(), p.rows, p.cols, scrollback).join("\n");
        let text = crate::approvals::redact::redact(&text);
        let all: Vec<&str> = text.lines().collect();
        let keep = lines.map_or(all.len(), |n| n as usize);
        let mut out = all[all.len().saturating_sub(keep)..].join("\n");
        out.push('\n');
        Ok(out)
    }

    fn agent_summaries(&self) -> Vec<AgentSummary> {
        self.agents
            .rows(Instant::now())
            .into_iter()
            .map(|r| AgentSummary {
                pane: format!("%{}", r.pane),
                kind: r.kind.as_str().to_string(),
                state: r.state.as_str().to_string(),
                detail: r.last_tool.clone().map(|t| format!("last tool {t}")),
                subagents: r
                    .subagents
                    .iter()
                    .map(|s| SubagentSummary {
                        name: s.agent_type.clone().unwrap_or_else(|| s.agent_id.clone()),
                        state: "working".into(),
                    })
                    .collect(),
            })
            .collect()
    }

    /// Queues an acting tool call for the human; types into the pane only on an allow.
    fn mcp_act(
        &mut self,
        caller: Option<PaneRef>,
        pane: &str,
        bytes: Vec<u8>,
        what: &str,
        timeout: std::time::Duration,
        reply: oneshot::Sender<Result<(RunOutcome, Option<u64>), String>>,
    ) {
        let target = match self.state.resolve(Some(pane)) {
            Ok(t) => t.pane,
            Err(e) => {
                let _ = reply.send(Err(format!("{e}; pane_list shows the panes")));
                return;
            }
        };
        let caller_pane = caller.as_ref().and_then(|c| pane_id(&c.pane));
        let caller_kind = caller_pane.and_then(|p| self.agents.row(u64::from(p)).map(|r| r.kind));
        let from = caller
            .map(|c| format!(" from {}", c.pane))
            .unwrap_or_default();
        let (answer_tx, answer_rx) = oneshot::channel();
        let request = crate::approvals::NewRequest {
            pane: target,
            asker: Asker::Tool(caller_kind),
            schema: Schema::DecisionFlat,
            tool: format!("calyx-ipc{from}"),
            summary: summarize("Bash", &json!({ "command": what })),
            suggestions: Vec::new(),
            input: None,
            agent_id: None,
            wait: Some(timeout),
            answer: answer_tx,
        };
        let (id, _) = self.approvals.add(request, Instant::now());
        for c in self.state.clients.values_mut() {
            c.panel.hidden = false;
            c.dirty = true;
        }
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let mut reply = reply;
            let answer = tokio::select! {
                answer = answer_rx => answer.ok(),
                _ = reply.closed() => {
                    let _ = tx.send(Msg::ApprovalWithdrawn { id });
                    return;
                }
            };
            let outcome = match answer {
                // The tool call went away (cancelled, or its client gave up) as the human
                // allowed: nobody waits for the result, so nothing is typed.
                Some(EndpointReply::Json(_)) if reply.is_closed() => return,
                Some(EndpointReply::Json(v))
                    if v.get("decision").and_then(|d| d.as_str()) == Some("allow") =>
                {
                    let (mark, marked) = oneshot::channel();
                    let _ = tx.send(Msg::PaneWrite {
                        pane: target,
                        bytes,
                        mark,
                    });
                    let _ = reply.send(Ok((RunOutcome::Sent, marked.await.ok().flatten())));
                    return;
                }
                // The queue's expiry at the tool's timeout: a timeout, not a human's deny.
                Some(EndpointReply::Json(v))
                    if v.get("reason").and_then(|r| r.as_str())
                        == Some(crate::approvals::answer::EXPIRED_REASON) =>
                {
                    RunOutcome::TimedOut
                }
                Some(EndpointReply::Json(v)) => RunOutcome::Denied {
                    reason: v
                        .get("reason")
                        .and_then(|r| r.as_str())
                        .unwrap_or("denied")
                        .to_string(),
                },
                _ => RunOutcome::Denied {
                    reason: "no decision was made in calyx".into(),
                },
            };
            let _ = reply.send(Ok((outcome, None)));
        });
    }
}
