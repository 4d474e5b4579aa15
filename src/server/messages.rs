//! What the owner loop hears: [`Msg`] over its channel, and [`McpOp`], an MCP tool call that
//! needs the live state. Kept apart from the owner and the operations so that everything that
//! sends (connections, pane reader threads, the endpoint, the MCP backend) depends on this
//! vocabulary alone.

use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

use crate::mcp::{
    AgentSummary, CommandOutput, CommandWait, PaneCommands, PaneRef, PaneSummary, RunOutcome,
    SplitRequest, WindowRequest,
};

use crate::layout::PaneId;
use crate::protocol::ClientMessage;

use super::io::terminal::Outgoing;
use super::model::ids::ClientId;

/// Everything the owner loop hears about over its channel. (It also waits on the terminals it
/// reads directly and on a keystroke's echo itself: see `run`.)
#[derive(Debug)]
pub enum Msg {
    /// A client connected; messages for it (and frames, unless the server writes its terminal
    /// directly) go to `tx`.
    Connected {
        id: ClientId,
        tx: mpsc::Sender<Outgoing>,
    },
    /// A control message from a client.
    Message { id: ClientId, msg: ClientMessage },
    /// Terminal input from an attached client (forwarded by it, or read by the owner).
    Input { id: ClientId, bytes: Vec<u8> },
    /// A client's connection closed.
    Disconnected { id: ClientId },
    /// The socket file was removed and bound again: `fd` is the listener an in-place upgrade
    /// hands over from now on.
    SocketRebound { fd: std::os::fd::RawFd },
    /// The terminal the server reads for a client hung up or failed (from `run`).
    TerminalLost { id: ClientId },
    /// A pane parsed new output.
    PaneOutput { pane: PaneId },
    /// A pane's program exited.
    PaneExited { pane: PaneId, status: Option<u32> },
    /// A request from the agent endpoint (hook events, permission gates).
    Endpoint(crate::http::EndpointRequest),
    /// An MCP tool call that needs the live state.
    Mcp(McpOp),
    /// Type into a pane (an allowed MCP action); `mark` gets the number the next command in
    /// the pane will have (when it reports commands), so `pane_run` can await it.
    PaneWrite {
        pane: PaneId,
        bytes: Vec<u8>,
        mark: tokio::sync::oneshot::Sender<Option<u64>>,
    },
    /// The hook process behind a pending approval went away.
    ApprovalWithdrawn { id: u64 },
    /// An MCP App view's request for the user, or its page giving up on one.
    App(crate::approvals::app::AppMsg),
    /// The answer to a client's request that was worked out off the loop (`calyx mcp ...`).
    Reply {
        id: ClientId,
        response: crate::protocol::Response,
    },
    /// The answer to a client's tagged request (`ClientMessage::Tagged`), worked out off the
    /// loop.
    TaggedReply {
        id: ClientId,
        tag: u64,
        response: crate::protocol::Response,
    },
    /// SIGTERM or SIGINT: stop cleanly.
    Shutdown,
    /// A saved machine's link changed state or brought a snapshot (see `machines::link`).
    Machine(crate::machines::link::LinkEvent),
    /// An MCP App view was created, changed or removed (see `operations::views`).
    Views(crate::views::hub::HubEvent),
    /// The servers overlay's work, done off the loop (see `view::servers`).
    Servers(ServersDone),
    /// The calls waiting for a hosted server's sign-in changed (see `view::sign_in_prompt`).
    SignInPrompts,
    /// The hosted servers' elicitations waiting for the user changed (see
    /// `view::elicit_panel`).
    Elicitations,
    /// How far the sign-in started from a prompt got.
    SignInStep {
        alias: String,
        step: crate::server::model::sign_in_prompt::SignInStep,
    },
    /// A sign-in failed; the sentence says why (see `view::sign_in_prompt`).
    SignInFailed { alias: String, sentence: String },
    /// `calyx server-upgrade`'s check of the new binary finished (its `--version` line, or why
    /// it cannot take over); `client` asked (None: the `:` prompt).
    UpgradeChecked {
        client: Option<ClientId>,
        binary: std::path::PathBuf,
        result: Result<String, String>,
    },
    /// A saved machine answered the chooser's asking for its sessions (`view::tree_machines`).
    ChooserMachine(crate::server::model::chooser_machines::MachineAnswer),
    /// A saved machine made the rule of the human's `e`/`E` on its request `shown`: set here
    /// as an anywhere rule when it is the one shown (`operations::anywhere_rules`).
    AnywhereMade {
        machine: String,
        shown: crate::protocol::SnapshotApproval,
        key: char,
        rule: crate::approvals::anywhere::SharedRule,
    },
}

/// What the overlay's work off the loop brings back.
#[derive(Debug)]
pub enum ServersDone {
    /// Some server's state changed: the open overlays fetch their rows again.
    StatesChanged,
    /// The rows, fetched for every open overlay.
    Rows(Result<Vec<calyx_tui::ServerRow>, String>),
    /// A page to show to `client` (a server's details, an import's preview).
    Page {
        client: ClientId,
        page: calyx_tui::ServersPage,
    },
    /// A change was made (or refused) for `client`.
    Answer {
        client: ClientId,
        answer: crate::hosted::host::McpAnswer,
    },
    /// A sign-in `client` started (`s`): the answer carries its authorization URL.
    SignIn {
        client: ClientId,
        alias: String,
        name: String,
        answer: crate::hosted::host::McpAnswer,
    },
    /// Something `client` asked for could not be done.
    Failed { client: ClientId, why: String },
}

/// One request from the MCP layer to the owner loop.
#[derive(Debug)]
pub enum McpOp {
    /// An agent's tool call for a saved machine: where it goes (`Machines::route`).
    AskMachine {
        machine: String,
        request: crate::protocol::Request,
        reply: oneshot::Sender<crate::machines::link::Route>,
    },
    /// The pane (and its agent row) behind a calyx-mcp caller's identity headers, for a view.
    ViewCaller {
        caller: crate::hosted::publish::Caller,
        reply: oneshot::Sender<crate::hosted::views::CallerPane>,
    },
    /// An MCP client in this pane named its agent CLI (`X-Calyx-Agent-Kind`).
    AgentSeen {
        pane: String,
        kind: calyx_integrations::AgentKind,
    },
    /// A peer's unread message count changed.
    Unread { pane: String, unread: usize },
    Identity {
        surface: Option<String>,
        session: Option<String>,
        reply: oneshot::Sender<Option<PaneRef>>,
    },
    PaneList {
        reply: oneshot::Sender<Vec<PaneSummary>>,
    },
    PaneRead {
        pane: String,
        lines: Option<u32>,
        scrollback: bool,
        reply: oneshot::Sender<Result<String, String>>,
    },
    AgentList {
        reply: oneshot::Sender<Vec<AgentSummary>>,
    },
    AgentWait {
        pane: String,
        until: Vec<String>,
        reply: oneshot::Sender<Result<String, String>>,
    },
    /// The state of `pane`'s agent row now (`None`: no row), for a wait that timed out.
    AgentState {
        pane: String,
        reply: oneshot::Sender<Option<String>>,
    },
    /// `approved`: the human already allowed its command (the owner sends this to itself).
    Split {
        caller: Option<PaneRef>,
        request: SplitRequest,
        approved: bool,
        reply: oneshot::Sender<Result<PaneSummary, String>>,
    },
    Window {
        caller: Option<PaneRef>,
        request: WindowRequest,
        approved: bool,
        reply: oneshot::Sender<Result<PaneSummary, String>>,
    },
    /// Type into a pane once the human allows it; a `Sent` comes with the number the typed
    /// command will get in the pane's history (when the pane reports commands).
    Act {
        caller: Option<PaneRef>,
        pane: String,
        bytes: Vec<u8>,
        what: String,
        /// How long the human has: the approval request expires then, answered "timeout".
        timeout: Duration,
        reply: oneshot::Sender<Result<(RunOutcome, Option<u64>), String>>,
    },
    Commands {
        pane: String,
        reply: oneshot::Sender<Result<PaneCommands, String>>,
    },
    CommandOutput {
        command_id: String,
        reply: oneshot::Sender<Result<CommandOutput, String>>,
    },
    /// Which command to wait for: the pane's `%N` name and the command's number.
    CommandTarget {
        pane: String,
        command_id: Option<String>,
        reply: oneshot::Sender<Result<(String, u64), String>>,
    },
    /// Answered when command `seq` of `pane` (`%N`) finishes or the pane exits.
    CommandAwait {
        pane: String,
        seq: u64,
        reply: oneshot::Sender<CommandWait>,
    },
}
