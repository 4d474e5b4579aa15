//! A fake [`McpBackend`] with three panes and two agents, for tests, the conformance example
//! server and local experiments. It records what the acting tools were asked to do.

use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;

use super::backend::*;

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
    Keys { pane: String, keys: Vec<String> },
    Seen { pane: String, kind: String },
    Unread { pane: String, unread: usize },
}

/// Panes `%1` (claude-code, working), `%2` (codex, idle) and `%3` (a shell). `pane_run`
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

    async fn agent_seen(&self, pane: &PaneRef, kind: &str) {
        self.record(Acted::Seen {
            pane: pane.pane.clone(),
            kind: kind.into(),
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
    ) -> Result<String, String> {
        known(id)?;
        let state = self
            .agent_list()
            .await
            .into_iter()
            .find(|a| a.pane == id)
            .map(|a| a.state)
            .ok_or_else(|| format!("no agent runs in pane {id}; agent_list shows the agents"))?;
        if until.contains(&state) {
            return Ok(state);
        }
        tokio::time::sleep(timeout).await;
        Ok("timeout".into())
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
