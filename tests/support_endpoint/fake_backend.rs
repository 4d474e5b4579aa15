//! A fake [`McpBackend`] with three panes and two agents, for tests, the conformance example
//! server and local experiments. It records what the acting tools were asked to do.

use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;

use calyx::mcp::backend::*;
use calyx::mcp::commands::*;

/// Surface ids the fake resolves, and the pane each belongs to.
pub const SURFACES: [(&str, &str); 3] = [
    ("surface-1", "%1"),
    ("surface-2", "%2"),
    ("surface-3", "%3"),
];

/// What the fake's acting tools were called with.
#[derive(Debug, Clone, PartialEq)]
pub enum Acted {
    Run(RunRequest),
    Keys {
        pane: String,
        keys: Vec<String>,
    },
    Seen {
        pane: String,
        kind: calyx_integrations::AgentKind,
    },
    Unread {
        pane: String,
        unread: usize,
    },
}

/// Panes `%1` (claude-code, working), `%2` (codex, idle) and `%3` (a shell whose history is
/// `%3:1` `false` (exit 1), `%3:2` `echo hi` (exit 0) and `%3:3` `sleep 100`, running). `pane_run`
/// answers by command: `deny ...` is denied, `slow ...` times out, `fail` finishes with exit
/// code 1, anything else finishes with 0 and echoes the command (or is `Sent` without await).
#[derive(Debug, Default)]
pub struct FakeBackend {
    pub acted: Mutex<Vec<Acted>>,
    next_pane: Mutex<u32>,
}

impl FakeBackend {
    pub fn new() -> Self {
        Self::default()
    }

    /// Everything recorded so far.
    pub fn acted(&self) -> Vec<Acted> {
        self.acted.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn record(&self, acted: Acted) {
        self.acted
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(acted);
    }
}

fn pane(id: &str, title: &str, kind: Option<&str>, state: Option<&str>) -> PaneSummary {
    PaneSummary {
        id: id.into(),
        session: "main".into(),
        window: 0,
        window_name: "work".into(),
        title: title.into(),
        cwd: "/tmp/project".into(),
        rows: 24,
        cols: 80,
        focused: id == "%1",
        agent_kind: kind.map(Into::into),
        agent_state: state.map(Into::into),
    }
}

fn known(id: &str) -> Result<(), String> {
    if SURFACES.iter().any(|(_, p)| *p == id) {
        Ok(())
    } else {
        Err(format!(
            "no pane {id:?}; call pane_list for the current pane ids"
        ))
    }
}

#[async_trait]
impl McpBackend for FakeBackend {
    async fn identity(&self, surface: Option<&str>, session: Option<&str>) -> Option<PaneRef> {
        SURFACES
            .iter()
            .find(|(s, _)| Some(*s) == surface || Some(*s) == session)
            .map(|(_, p)| PaneRef { pane: (*p).into() })
    }

    async fn agent_seen(&self, pane: &PaneRef, kind: calyx_integrations::AgentKind) {
        self.record(Acted::Seen {
            pane: pane.pane.clone(),
            kind,
        });
    }

    async fn pane_list(&self) -> Vec<PaneSummary> {
        vec![
            pane("%1", "claude", Some("claude-code"), Some("working")),
            pane("%2", "codex", Some("codex"), Some("idle")),
            pane("%3", "bash", None, None),
        ]
    }

    async fn pane_read(
        &self,
        _caller: Option<&PaneRef>,
        id: &str,
        lines: Option<u32>,
        scrollback: bool,
    ) -> Result<String, String> {
        known(id)?;
        if scrollback {
            // Big enough to hit the MCP layer's cap.
            return Ok("history line\n".repeat(10_000));
        }
        let screen: Vec<String> = (1..=5).map(|i| format!("{id} line {i}")).collect();
        let keep = lines.map_or(screen.len(), |n| (n as usize).min(screen.len()));
        Ok(screen[screen.len() - keep..].join("\n"))
    }

    async fn agent_list(&self) -> Vec<AgentSummary> {
        vec![
            AgentSummary {
                pane: "%1".into(),
                kind: "claude-code".into(),
                state: "working".into(),
                detail: Some("Bash".into()),
                subagents: vec![SubagentSummary {
                    name: "explore".into(),
                    state: "working".into(),
                }],
            },
            AgentSummary {
                pane: "%2".into(),
                kind: "codex".into(),
                state: "idle".into(),
                detail: None,
                subagents: vec![],
            },
        ]
    }

    async fn agent_wait(
        &self,
        id: &str,
        until: Vec<String>,
        timeout: Duration,
    ) -> Result<AgentWaitEnd, String> {
        known(id)?;
        let state = self
            .agent_list()
            .await
            .into_iter()
            .find(|a| a.pane == id)
            .map(|a| a.state)
            .ok_or_else(|| format!("no agent runs in pane {id}; agent_list shows the agents"))?;
        if until.contains(&state) {
            return Ok(AgentWaitEnd::Reached(state));
        }
        tokio::time::sleep(timeout).await;
        Ok(AgentWaitEnd::TimedOut(Some(state)))
    }

    async fn pane_split(
        &self,
        _caller: Option<&PaneRef>,
        request: SplitRequest,
    ) -> Result<PaneSummary, String> {
        known(&request.pane)?;
        Ok(self.new_pane(request.command.as_deref().unwrap_or("bash")))
    }

    async fn window_create(
        &self,
        _caller: Option<&PaneRef>,
        request: WindowRequest,
    ) -> Result<PaneSummary, String> {
        let mut p = self.new_pane(request.command.as_deref().unwrap_or("bash"));
        p.window = 1;
        p.window_name = request.name.unwrap_or_else(|| "bash".into());
        Ok(p)
    }

    async fn pane_run(
        &self,
        _caller: Option<&PaneRef>,
        request: RunRequest,
    ) -> Result<RunOutcome, String> {
        known(&request.pane)?;
        self.record(Acted::Run(request.clone()));
        let command = request.command.as_str();
        Ok(if command.starts_with("deny") {
            RunOutcome::Denied {
                reason: "the user said no".into(),
            }
        } else if command.starts_with("slow") {
            RunOutcome::TimedOut
        } else if !request.wait {
            RunOutcome::Sent
        } else if command == "fail" {
            RunOutcome::Finished {
                exit_code: Some(1),
                output: String::new(),
            }
        } else {
            RunOutcome::Finished {
                exit_code: Some(0),
                output: format!("ran {command}\n"),
            }
        })
    }

    async fn pane_send_keys(
        &self,
        _caller: Option<&PaneRef>,
        id: &str,
        keys: Vec<String>,
        _timeout: Duration,
    ) -> Result<RunOutcome, String> {
        known(id)?;
        self.record(Acted::Keys {
            pane: id.into(),
            keys,
        });
        Ok(RunOutcome::Sent)
    }

    async fn commands(&self, pane: &str) -> Result<PaneCommands, String> {
        known(pane)?;
        let integrated = pane == "%3";
        Ok(PaneCommands {
            integrated,
            commands: if integrated { history() } else { Vec::new() },
        })
    }

    async fn command_output(&self, id: &str) -> Result<CommandOutput, String> {
        let (pane, seq) = parse_command_id(id)?;
        known(&pane)?;
        let command = history()
            .into_iter()
            .find(|c| c.id == command_id(&pane, seq))
            .ok_or_else(|| format!("no command {id:?} in {pane}'s history (it keeps the last 200); terminal_list_commands lists them"))?;
        let output = match seq {
            2 => "hi\n".to_string(),
            3 => "still going\n".to_string(),
            _ => String::new(),
        };
        Ok(CommandOutput { command, output })
    }

    async fn command_await(
        &self,
        pane: &str,
        command_id: Option<&str>,
        timeout: Duration,
    ) -> Result<CommandWait, String> {
        known(pane)?;
        if pane != "%3" {
            return Err(format!(
                "{pane} reports no commands (no shell integration); use agent_wait or pane_read"
            ));
        }
        let id = command_id.unwrap_or("%3:3");
        let found = self.command_output(id).await?;
        if found.command.pane != pane {
            return Err(format!("{id} is not a command of {pane}"));
        }
        if found.command.state == CommandStatus::Finished {
            return Ok(CommandWait::Finished(found));
        }
        tokio::time::sleep(timeout).await;
        Ok(CommandWait::TimedOut {
            command_id: found.command.id,
        })
    }

    fn unread_changed(&self, pane: &PaneRef, unread: usize) {
        self.record(Acted::Unread {
            pane: pane.pane.clone(),
            unread,
        });
    }
}

impl FakeBackend {
    fn new_pane(&self, command: &str) -> PaneSummary {
        let mut next = self.next_pane.lock().unwrap_or_else(|e| e.into_inner());
        *next += 1;
        pane(&format!("%{}", 10 + *next), command, None, None)
    }
}

/// The fake shell pane's history.
fn history() -> Vec<CommandInfo> {
    let record = |seq: u64, command: &str, exit_code: Option<i32>| CommandInfo {
        id: command_id("%3", seq),
        pane: "%3".into(),
        command: command.into(),
        cwd: Some("/tmp/project".into()),
        state: if exit_code.is_some() {
            CommandStatus::Finished
        } else {
            CommandStatus::Running
        },
        exit_code,
        started_at_ms: 1_700_000_000_000 + seq * 1000,
        finished_at_ms: exit_code.map(|_| 1_700_000_000_500 + seq * 1000),
        output_bytes: if seq == 2 { 4 } else { 0 },
        output_truncated: false,
    };
    vec![
        record(1, "false", Some(1)),
        record(2, "echo hi", Some(0)),
        record(3, "sleep 100", None),
    ]
}
