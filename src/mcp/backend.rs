//! What the MCP tools need from calyx, as one trait the server's owner loop implements.
//!
//! The MCP layer owns no pane or agent state: every tool that looks at or changes panes goes
//! through [`McpBackend`], so the owner loop stays the single writer of calyx's state and the MCP
//! code can be tested against a fake. Peers and their message queues are the exception: they
//! live in [`super::PeerRegistry`], which needs nothing from the owner.

use std::time::Duration;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::commands::{CommandOutput, CommandWait, PaneCommands};

/// The pane an MCP session belongs to, resolved from its identity headers.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct PaneRef {
    /// The pane id as `calyx list-panes` prints it (for example `%3`).
    pub pane: String,
}

/// One pane, as `pane_list` reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PaneSummary {
    /// Pane id (for example `%3`): what every other tool takes as `pane`.
    pub id: String,
    /// Session name.
    pub session: String,
    /// The window's number in its session (as `SESSION:N` and the status line have it).
    pub window: u32,
    /// Window name.
    pub window_name: String,
    /// The pane's title (set by the program, else its command).
    pub title: String,
    /// Current working directory, when known.
    pub cwd: String,
    pub rows: u16,
    pub cols: u16,
    /// Whether this is the focused pane of its window.
    pub focused: bool,
    /// Agent CLI running in the pane (`claude-code`, `codex`, ...), if any.
    pub agent_kind: Option<String>,
    /// That agent's state: `working`, `blocked`, `idle`, `done` or `unknown`.
    pub agent_state: Option<String>,
}

/// A subagent of an agent row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SubagentSummary {
    pub name: String,
    pub state: String,
}

/// One agent row, as `agent_list` reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AgentSummary {
    /// The pane the agent runs in.
    pub pane: String,
    /// Which CLI (`claude-code`, `codex`, ...).
    pub kind: String,
    /// `working`, `blocked`, `idle`, `done` or `unknown`.
    pub state: String,
    /// What the row says about the state (the last tool, the question asked, ...).
    pub detail: Option<String>,
    pub subagents: Vec<SubagentSummary>,
}

/// How an `agent_wait` ended. A timeout is a normal answer that still says where the agent is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentWaitEnd {
    /// The agent is in this awaited state (`done` also when its pane closed).
    Reached(String),
    /// The timeout passed first; the agent's state then (`None`: no agent row in the pane).
    TimedOut(Option<String>),
}

/// Where `pane_split` puts the new pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SplitDirection {
    /// Side by side (a vertical divider).
    Right,
    /// Stacked (a horizontal divider).
    Down,
}

/// A `pane_split` request.
#[derive(Debug, Clone, PartialEq)]
pub struct SplitRequest {
    pub pane: String,
    pub direction: SplitDirection,
    pub command: Option<String>,
    pub cwd: Option<String>,
    /// How long the human has to approve `command` (a pane with a shell needs no approval).
    pub timeout: Duration,
}

/// A `window_create` request.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowRequest {
    pub name: Option<String>,
    pub cwd: Option<String>,
    pub command: Option<String>,
    /// How long the human has to approve `command`.
    pub timeout: Duration,
}

/// A `pane_run` request: type `command` and Enter into `pane`.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRequest {
    pub pane: String,
    pub command: String,
    /// Wait for the shell to report the command finished (exit code and output).
    pub wait: bool,
    /// How long to wait (approval plus command) before answering [`RunOutcome::TimedOut`].
    pub timeout: Duration,
}

/// How an acting tool ended. Denial and timeout are answers the agent plans around, so they are
/// normal results rather than tool errors.
#[derive(Debug, Clone, PartialEq)]
pub enum RunOutcome {
    /// Approved and typed; not awaited.
    Sent,
    /// Approved, typed, and the shell reported it finished.
    Finished {
        exit_code: Option<i32>,
        output: String,
    },
    /// The human (or a rule) said no.
    Denied { reason: String },
    /// No decision, or no finish, before the timeout.
    TimedOut,
}

/// calyx's side of the MCP tools. Implemented by the server (through its owner loop) and by
/// `FakeBackend` (tests/support_endpoint/fake_backend.rs). `Err(message)` becomes an `isError` tool result, so messages
/// should tell the model what to do next ("no pane %9; call pane_list").
#[async_trait]
pub trait McpBackend: Send + Sync + 'static {
    /// The pane whose `CALYX_SURFACE_ID` / `CALYX_SESSION_ID` these are; `None` when neither
    /// resolves (a client outside calyx: it may list and read but is not a peer).
    async fn identity(&self, surface_id: Option<&str>, session_id: Option<&str>)
        -> Option<PaneRef>;
    /// An MCP client in `pane` says it is agent CLI `kind` (`X-Calyx-Agent-Kind`): create or
    /// refresh that pane's agent row.
    async fn agent_seen(&self, pane: &PaneRef, kind: calyx_integrations::AgentKind);
    /// Every pane.
    async fn pane_list(&self) -> Vec<PaneSummary>;
    /// The last `lines` lines of the screen (or of the scrollback with `scrollback`). The MCP
    /// layer caps the size; the backend redacts secrets.
    async fn pane_read(
        &self,
        caller: Option<&PaneRef>,
        pane: &str,
        lines: Option<u32>,
        scrollback: bool,
    ) -> Result<String, String>;
    /// Every agent row.
    async fn agent_list(&self) -> Vec<AgentSummary>;
    /// Waits until `pane`'s agent is in one of `until` (state names) or `timeout` passes. Must
    /// wake on every transition, including ones caused by focus or the pane exiting.
    async fn agent_wait(
        &self,
        pane: &str,
        until: Vec<String>,
        timeout: Duration,
    ) -> Result<AgentWaitEnd, String>;
    /// Splits a pane; returns the new one.
    async fn pane_split(
        &self,
        caller: Option<&PaneRef>,
        request: SplitRequest,
    ) -> Result<PaneSummary, String>;
    /// Creates a window (in the caller's session when there is a caller); returns its pane.
    async fn window_create(
        &self,
        caller: Option<&PaneRef>,
        request: WindowRequest,
    ) -> Result<PaneSummary, String>;
    /// Types a command and Enter, behind the approval queue.
    async fn pane_run(
        &self,
        caller: Option<&PaneRef>,
        request: RunRequest,
    ) -> Result<RunOutcome, String>;
    /// Sends keys (tmux `send-keys` syntax), behind the approval queue. Never `Finished`.
    async fn pane_send_keys(
        &self,
        caller: Option<&PaneRef>,
        pane: &str,
        keys: Vec<String>,
        timeout: Duration,
    ) -> Result<RunOutcome, String>;
    /// `pane`'s command history (`Err` for an unknown pane).
    async fn commands(&self, pane: &str) -> Result<PaneCommands, String>;
    /// One command and its output (the output so far while it runs).
    async fn command_output(&self, command_id: &str) -> Result<CommandOutput, String>;
    /// Waits until command `command_id` of `pane` finishes (without an id: the running one, else
    /// the next one to start), or `timeout` passes. `Err` when the pane reports no commands.
    async fn command_await(
        &self,
        pane: &str,
        command_id: Option<&str>,
        timeout: Duration,
    ) -> Result<CommandWait, String>;
    /// A peer's unread count changed: redraw its pane border and sidebar row.
    fn unread_changed(&self, _pane: &PaneRef, _unread: usize) {}
    /// Runs `tool` with `args` on saved machine `machine` for `from`, its answer (the MCP tool
    /// result as JSON) due within `within` (issue 20 §4). `Err`: a sentence saying why not
    /// (not saved, unreachable, needs the user). Without saved machines: none is known.
    async fn ask_machine(
        &self,
        machine: &str,
        _tool: &str,
        _args: serde_json::Value,
        _from: crate::protocol::RemoteCaller,
        _within: Duration,
    ) -> Result<serde_json::Value, String> {
        Err(format!("no saved machine named {machine}"))
    }
    /// The enabled saved machines' names (for `list_peers`).
    fn saved_machines(&self) -> Result<Vec<String>, String> {
        Ok(Vec::new())
    }
}
