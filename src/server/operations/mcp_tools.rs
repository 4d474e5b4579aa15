//! The owner loop's side of the MCP tools: answers from the live state, agent waits woken on
//! every transition, and acting tools queued for the human like any permission request.

use serde_json::json;
use tokio::sync::oneshot;
use tokio::time::Instant;

use crate::agents::AgentState;
use crate::approvals::summarize;
use crate::layout::PaneId;
use crate::mcp::{AgentSummary, PaneRef, PaneSummary, RunOutcome, SubagentSummary};

use super::mcp_approval::{human_answer, HumanAnswer, ToolAsk};
use crate::server::messages::McpOp;
use crate::server::messages::Msg;
use crate::server::owner::Server;

/// An `agent_wait` in progress: the pane, the states that end it, and where the answer goes.
pub struct AgentWaiter {
    pub pane: PaneId,
    pub until: Vec<String>,
    pub reply: oneshot::Sender<Result<String, String>>,
}

pub(crate) fn pane_id(text: &str) -> Option<PaneId> {
    text.trim().trim_start_matches('%').parse().ok()
}

impl Server {
    /// An MCP client said which agent CLI runs in `pane`: the book decides whether that makes
    /// or renews a row ([`crate::agents::AgentBook::mcp_connected`]).
    fn agent_seen(&mut self, pane: &str, kind: calyx_integrations::AgentKind) {
        let Ok(target) = self.state.resolve(Some(pane)) else {
            return;
        };
        let now = Instant::now();
        let transitions = self.agents.mcp_connected(u64::from(target.pane), kind, now);
        self.after_agent_change(target.pane, &transitions, now);
    }

    pub(crate) fn mcp_op(&mut self, op: McpOp) {
        match op {
            McpOp::AgentSeen { pane, kind } => self.agent_seen(&pane, kind),
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
            McpOp::ViewCaller { caller, reply } => {
                let _ = reply.send(self.view_caller(caller));
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
                self.pane_read(&pane, lines, scrollback, reply);
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
                caller,
                request,
                approved,
                reply,
            } => self.mcp_split(caller, request, approved, reply),
            McpOp::Window {
                caller,
                request,
                approved,
                reply,
            } => self.mcp_window(caller, request, approved, reply),
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
    pub(crate) fn wake_agent_waiters(&mut self) {
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

    pub(crate) fn pane_summary(&self, pane: PaneId) -> Result<PaneSummary, String> {
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
                        window: u32::try_from(w.number).unwrap_or(u32::MAX),
                        window_name: self.state.window_name(w),
                        // From the glance: the title the program set as of the reader's last
                        // parse, without waiting for a flooding pane's reader.
                        title: p
                            .glance
                            .title()
                            .map(|t| t.to_string())
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

    /// `pane_read`: answered now, or from a thread once a busy pane's reader lets go of its
    /// terminal (see `busy_reads`), so an agent reading a flooding pane never stalls the loop.
    fn pane_read(
        &self,
        pane: &str,
        lines: Option<u32>,
        scrollback: bool,
        reply: tokio::sync::oneshot::Sender<Result<String, String>>,
    ) {
        let p = match self.state.resolve(Some(pane)) {
            Ok(t) => match self.state.panes.get(&t.pane) {
                Some(p) => p,
                None => {
                    let _ = reply.send(Err("that pane is gone".into()));
                    return;
                }
            },
            Err(e) => {
                let _ = reply.send(Err(format!("{e}; pane_list shows the panes")));
                return;
            }
        };
        let (rows, cols) = (p.rows, p.cols);
        super::busy_reads::read_then_answer(
            &p.terminal,
            move |term| pane_text(term, rows, cols, lines, scrollback),
            move |text| {
                let _ = reply.send(Ok(text));
            },
        );
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
        let (id, answer) = self.ask_human(ToolAsk {
            pane: target,
            caller,
            verb: None,
            summary: summarize("Bash", &json!({ "command": what })),
            timeout,
        });
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let mut reply = reply;
            let Some(answer) = human_answer(id, answer, &mut reply, &tx).await else {
                return;
            };
            let outcome = match answer {
                HumanAnswer::Allow => {
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
                HumanAnswer::Expired => RunOutcome::TimedOut,
                HumanAnswer::Deny(reason) => RunOutcome::Denied { reason },
            };
            let _ = reply.send(Ok((outcome, None)));
        });
    }
}

/// What `pane_read` answers: the pane's last `lines` whole lines (wrapped rows joined, so a
/// secret the pane's edge cuts is still found), redacted.
fn pane_text(
    term: &calyx_pty::Terminal,
    rows: u16,
    cols: u16,
    lines: Option<u32>,
    scrollback: bool,
) -> String {
    let text =
        crate::server::model::pane_text::logical_lines(term, rows, cols, scrollback).join("\n");
    let text = crate::approvals::redact::redact(&text);
    let all: Vec<&str> = text.lines().collect();
    let keep = lines.map_or(all.len(), |n| n as usize);
    let mut out = all[all.len().saturating_sub(keep)..].join("\n");
    out.push('\n');
    out
}
