//! The socket protocol between `calyx` clients and the server.
//!
//! A frame is a 4-byte big-endian length, a 1-byte tag and a payload. Tag 0 carries raw terminal
//! bytes (keyboard input up, screen output down) with no encoding cost on the hot path; tag 1
//! carries a JSON control message.

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncRead, AsyncReadExt};

use crate::layout::PaneId;

/// Largest frame accepted; a peer sending more is cut off rather than buffered.
pub const MAX_FRAME: usize = 64 << 20;

const TAG_RAW: u8 = 0;
pub(crate) const TAG_JSON: u8 = 1;

/// A decoded frame.
#[derive(Debug)]
pub enum Frame<T> {
    Raw(Vec<u8>),
    Message(T),
}

/// Encodes raw terminal bytes as a frame.
pub fn encode_raw(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + 5);
    out.extend_from_slice(&(bytes.len() as u32 + 1).to_be_bytes());
    out.push(TAG_RAW);
    out.extend_from_slice(bytes);
    out
}

/// Encodes a control message as a frame.
pub fn encode_message<T: Serialize>(msg: &T) -> Vec<u8> {
    let body = serde_json::to_vec(msg).unwrap_or_else(|_| b"null".to_vec());
    let mut out = Vec::with_capacity(body.len() + 5);
    out.extend_from_slice(&(body.len() as u32 + 1).to_be_bytes());
    out.push(TAG_JSON);
    out.extend_from_slice(&body);
    out
}

/// Errors reading a frame.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("connection closed")]
    Closed,
    #[error("frame of {0} bytes is too large")]
    TooLarge(usize),
    #[error("bad frame: {0}")]
    Bad(String),
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
}

/// Reads one frame.
pub async fn read_frame<R, T>(reader: &mut R) -> Result<Frame<T>, FrameError>
where
    R: AsyncRead + Unpin,
    T: for<'de> Deserialize<'de>,
{
    let mut len = [0u8; 4];
    match reader.read_exact(&mut len).await {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Err(FrameError::Closed),
        Err(e) => return Err(e.into()),
    }
    let len = u32::from_be_bytes(len) as usize;
    if len == 0 {
        return Err(FrameError::Bad("empty frame".into()));
    }
    if len > MAX_FRAME {
        return Err(FrameError::TooLarge(len));
    }
    let mut body = vec![0u8; len];
    reader.read_exact(&mut body).await?;
    let tag = body[0];
    body.remove(0);
    match tag {
        TAG_RAW => Ok(Frame::Raw(body)),
        TAG_JSON => serde_json::from_slice(&body)
            .map(Frame::Message)
            .map_err(|e| FrameError::Bad(e.to_string())),
        other => Err(FrameError::Bad(format!("unknown tag {other}"))),
    }
}

/// How to start a new session.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct NewSession {
    pub name: Option<String>,
    pub cwd: Option<String>,
    pub command: Vec<String>,
    /// The creating client's environment: the session's panes inherit it.
    pub env: Vec<(String, String)>,
}

/// A client's terminal device: its path, and the file it is, so that the server opening that
/// path can check it reached the same device (a client in a container may name a path that is
/// another terminal, or nothing, in the server's view).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct TerminalDevice {
    pub path: String,
    /// `st_dev` and `st_ino` of the device file as the client sees it.
    pub dev: u64,
    pub ino: u64,
}

/// Why a client attached with `back_to` was detached by `prefix L`: its bridge turns it into
/// the exit status `remote::switch::BACK_CODE`, and the machine it came from attaches back.
pub const BACK_MESSAGE: &str = "back to the local session";

/// Messages from a client to the server.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum ClientMessage {
    /// Attach this connection to a session; `create` makes a new one first.
    Attach {
        target: Option<String>,
        create: Option<NewSession>,
        /// Create the default session when there is none to attach to.
        create_if_missing: bool,
        rows: u16,
        cols: u16,
        /// The client's `TERM`, for what its terminal can show (OSC 8 hyperlinks).
        #[serde(default)]
        term: Option<String>,
        /// The client's terminal device, when the server may read and write it itself (see
        /// `server::terminal`); None keeps every byte going through the client.
        #[serde(default)]
        terminal: Option<TerminalDevice>,
        /// The client's variables that decide how a sign-in page opens (`SSH_CONNECTION`,
        /// `DISPLAY`, `WAYLAND_DISPLAY`, `BROWSER`, `USER`): see `hosted::oauth::open`.
        #[serde(default)]
        opener_env: Vec<(String, String)>,
        /// The session of another machine's calyx this attach came from (its chooser switched
        /// here through `calyx --remote`): the key bound to `last-session` (`prefix L`)
        /// detaches this client with [`BACK_MESSAGE`] instead, and the other machine's client
        /// attaches to that session again (`remote::switch`).
        #[serde(default)]
        back_to: Option<String>,
    },
    /// Detach this client (it is closing): the server answers with `Exit` once nothing more
    /// will be written to the client's terminal.
    Detach { message: String },
    /// The client's terminal changed size.
    Resize { rows: u16, cols: u16 },
    /// A one-shot command (`calyx ls`, `split`, `send-keys` ...).
    Request(Request),
    /// Subscribe this connection to [`ServerMessage::Snapshot`]: the server pushes one at once
    /// and then one each time the snapshot changes, nothing while nothing changes. Requests
    /// still work on the same connection (their answers are [`ServerMessage::Response`], in
    /// order), which is how a saved machine's link carries answers back (issue 20 §2, §3).
    Watch,
    /// A request whose answer comes as [`ServerMessage::Tagged`] with the same `tag`, when it
    /// is ready rather than in order: how a link carries an agent's tool call
    /// ([`Request::RemoteTool`], answered off the server's loop) next to the requests it
    /// answers in order. Only tool calls are served this way.
    Tagged { tag: u64, request: Request },
    /// The caller of [`ClientMessage::Tagged`] `tag` gave up waiting: the call stops and is
    /// forgotten (an approval it queued is withdrawn); no answer comes.
    CancelTagged { tag: u64 },
    /// From `calyx remote-bridge`: it hands this server its SSH channel (its stdin and stdout,
    /// passed as two descriptors in the byte right after this frame) so the server reads and
    /// writes the channel itself and no relay hop sits on each keystroke. The server answers
    /// [`ServerMessage::Adopted`] on this connection and keeps it open until the channel's
    /// connection ends; a server that answers anything else (or closes) did not take it.
    AdoptChannel,
}

/// One-shot commands.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Request {
    NewSession {
        spec: NewSession,
        rows: u16,
        cols: u16,
    },
    ListSessions,
    KillSession {
        target: Option<String>,
    },
    KillPane {
        target: Option<String>,
    },
    KillWindow {
        target: Option<String>,
    },
    KillServer,
    /// Re-read the config file; answered with what changed and any problems.
    ReloadConfig,
    Split {
        target: Option<String>,
        horizontal: bool,
        detached: bool,
        cwd: Option<String>,
        command: Vec<String>,
    },
    NewWindow {
        target: Option<String>,
        name: Option<String>,
        cwd: Option<String>,
        detached: bool,
        command: Vec<String>,
    },
    SendKeys {
        target: Option<String>,
        keys: Vec<String>,
        literal: bool,
    },
    Capture {
        target: Option<String>,
        scrollback: bool,
        ansi: bool,
    },
    ListPanes {
        target: Option<String>,
    },
    /// tmux's set-window-option for the options calyx has (`synchronize-panes`); `value` None
    /// toggles a switch.
    SetWindowOption {
        target: Option<String>,
        option: String,
        value: Option<String>,
    },
    /// tmux's select-layout: `layout` by name, or the next preset (`next`), or every pane
    /// equal (`even`), in the target's window.
    SelectLayout {
        target: Option<String>,
        layout: Option<String>,
        next: bool,
        even: bool,
    },
    /// tmux's resize-pane: `zoom` toggles the window's zoom onto the pane; else the border in
    /// `direction` moves `cells`, and `width` / `height` set the pane's size.
    ResizePane {
        target: Option<String>,
        direction: Option<crate::layout::Direction>,
        cells: u16,
        width: Option<crate::layout_size::Size>,
        height: Option<crate::layout_size::Size>,
        zoom: bool,
    },
    /// tmux's swap-pane: `source` and `target` change places; with `neighbour` (`-D`: true,
    /// `-U`: false) the target changes places with the next or previous pane of its window.
    SwapPane {
        source: Option<String>,
        target: Option<String>,
        neighbour: Option<bool>,
        detached: bool,
    },
    /// tmux's join-pane / move-pane: `source` moves beside `target`.
    JoinPane {
        source: Option<String>,
        target: Option<String>,
        horizontal: bool,
        before: bool,
        size: Option<crate::layout_size::Size>,
        detached: bool,
    },
    /// tmux's break-pane: `source` into a new window of its own; answered with `Created`.
    BreakPane {
        source: Option<String>,
        name: Option<String>,
        detached: bool,
    },
    /// tmux's display-message: `message` (a `-F` format) expanded for the target pane, printed
    /// (`print`) or shown in the status line of the clients on its session.
    DisplayMessage {
        target: Option<String>,
        message: String,
        print: bool,
    },
    Select {
        target: Option<String>,
    },
    Rename {
        target: Option<String>,
        window: bool,
        name: String,
    },
    Approvals {
        pending_only: bool,
    },
    Decide {
        id: u64,
        allow: bool,
        message: Option<String>,
        /// The saved machine whose request this is (`calyx approve build:7`): the local
        /// server forwards the answer over that machine's link. None: this server's own.
        #[serde(default)]
        machine: Option<String>,
        /// The machine the human answered from, when the answer came over a link: recorded
        /// in the audit log of the machine that asked.
        #[serde(default)]
        answered_from: Option<String>,
        /// Allow and set the "always" rule the approval panel's key makes (`a`, `A`, `p`,
        /// `P`) on the machine that asked (a rule is that machine's).
        #[serde(default)]
        always: Option<char>,
    },
    /// The "anywhere" approval rules of the human's server on machine `from` (the whole set,
    /// replacing what it pushed before), sent over its link to this machine; held while that
    /// connection lasts (see `approvals::anywhere`).
    AnywhereRules {
        from: String,
        rules: Vec<crate::approvals::anywhere::SharedRule>,
    },
    /// The saved machines and their links' states (answered with `Json`); `reload`: read
    /// `machines.toml` again first (after `calyx machine add|remove`).
    Machines {
        reload: bool,
    },
    Agents,
    AgentsExplain {
        pane: String,
    },
    /// tmux's set-option: one setting changed (`unset`: back to its default; no `value`: a
    /// switch flips); `target` names a session, though every setting is global.
    SetOption {
        target: Option<String>,
        name: String,
        value: Option<String>,
        unset: bool,
    },
    /// tmux's show-options: every setting, or the one named (`value_only`: without names).
    ShowOptions {
        name: Option<String>,
        value_only: bool,
    },
    /// tmux's source-file: this config file applied as reload-config applies the usual one.
    SourceFile {
        path: String,
    },
    /// tmux's list-keys: every binding as a `bind-key` line.
    ListKeys,
    /// tmux's bind-key: `key` (after the prefix, or without it when `root`) runs `command`.
    BindKey {
        key: String,
        root: bool,
        repeat: bool,
        command: Vec<String>,
    },
    /// tmux's unbind-key.
    UnbindKey {
        key: String,
        root: bool,
    },
    /// `calyx mcp ...`: the user's hosted MCP servers, answered with [`Response::Json`] of a
    /// [`crate::hosted::host::McpAnswer`].
    Mcp(crate::hosted::wire::McpRequest),
    /// The saved sessions that are not running (answered with `Json`: a list of records).
    SavedSessions,
    /// `kill-server --forget`: stop the server and forget every saved session.
    KillServerForget,
    /// `calyx server-upgrade`: hand everything to `binary` (None: the installed calyx) in
    /// place. Answered with an error when the binary fails its checks; on success the
    /// connection closes as the server execs.
    ServerUpgrade {
        binary: Option<String>,
    },
    /// The server's version, protocol and pid (answered with `Json`).
    ServerVersion,
    /// One of calyx's MCP tools called by an agent on another machine (issue 20 §4): run here
    /// as this machine's own tool would run (acting tools behind this machine's approval
    /// queue), answered with `Json` of the MCP tool result. See `mcp::from_afar`.
    RemoteTool {
        tool: String,
        args: serde_json::Value,
        from: RemoteCaller,
    },
}

/// Who calls a tool from another machine: that machine's own name for itself, and the
/// caller's pane and peer name there when it is a registered peer. Checked before use: it
/// names the caller in this machine's approval panel and peer inboxes.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct RemoteCaller {
    pub machine: String,
    pub pane: Option<String>,
    pub name: Option<String>,
}

/// A session as `calyx ls` shows it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SessionInfo {
    pub id: u32,
    pub name: String,
    pub windows: usize,
    pub panes: usize,
    pub attached: usize,
    pub rows: u16,
    pub cols: u16,
}

/// A pane as `calyx list-panes` shows it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PaneInfo {
    pub id: String,
    pub pane_id: PaneId,
    pub session: String,
    /// The window's number (`#{window_index}`, `SESSION:N`), not its place in the list.
    pub window: usize,
    pub window_name: String,
    pub index: usize,
    pub rows: u16,
    pub cols: u16,
    pub command: String,
    pub pid: Option<u32>,
    pub title: String,
    pub cwd: String,
    pub focused: bool,
    pub surface_id: String,
    /// CALYX_SESSION_ID of the pane.
    pub record_id: String,
    pub dead: bool,
}

/// Answers to requests.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Response {
    Ok,
    Error(String),
    Text(String),
    Sessions(Vec<SessionInfo>),
    Panes(Vec<PaneInfo>),
    Created { session: String, pane: PaneId },
    Json(serde_json::Value),
}

/// Messages from the server to a client.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum ServerMessage {
    Response(Response),
    /// The client is attached. `direct`: the server reads and writes the client's terminal
    /// itself, so the client must not read its input; else the client forwards input and
    /// draws the frames it receives.
    Attached {
        direct: bool,
    },
    /// The client is detached (or its session ended): restore the terminal and exit.
    Exit {
        message: String,
    },
    /// The server is replacing itself (`calyx server-upgrade`): the connection will close;
    /// reconnect and attach to `session` again.
    Upgrading {
        session: String,
    },
    /// The user chose a saved machine's session in the chooser (`prefix s`): the client
    /// attaches there through `--remote` (this server detaches it next, and keeps `back`, the
    /// session it left, for `prefix L` to come back to).
    SwitchRemote {
        machine: String,
        session: String,
        back: String,
    },
    /// What this machine looks like now, pushed to a connection that sent
    /// [`ClientMessage::Watch`].
    Snapshot(MachineSnapshot),
    /// The answer to [`ClientMessage::Tagged`] `tag`.
    Tagged {
        tag: u64,
        response: Response,
    },
    /// The server took the channel of a [`ClientMessage::AdoptChannel`].
    Adopted,
}

/// A compact picture of one machine for the servers that link to it: its sessions, agent rows
/// and pending approval requests. It holds no clock (no "seconds in state"), so an idle
/// machine's snapshot does not change and nothing is pushed. Everything in it is the remote
/// machine's word: whoever draws it sanitizes it first.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
pub struct MachineSnapshot {
    /// The remote calyx's version.
    pub version: String,
    pub sessions: Vec<SessionInfo>,
    pub agents: Vec<SnapshotAgent>,
    pub approvals: Vec<SnapshotApproval>,
}

/// One agent row, as `calyx agents --json` has it, without its clocks.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
pub struct SnapshotAgent {
    /// `%N`.
    pub pane: String,
    /// The CLI's short name (`claude`) and its display name (`Claude Code`).
    pub agent: String,
    pub agent_name: String,
    /// `working`, `blocked`, `done`, `idle` ...
    pub state: String,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub last_tool: Option<String>,
}

/// One pending approval request: what the panel and `calyx approvals` show of it.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
pub struct SnapshotApproval {
    pub id: u64,
    /// `%N`, or `view N` for a view's request.
    pub pane: String,
    pub cli: String,
    pub tool: String,
    /// The request's one-line summary, redacted.
    pub summary: String,
    /// Which "always" rule each key would make on that machine (`a/A always ...`); empty when
    /// none can be made (an MCP App's request).
    #[serde(default)]
    pub choices: String,
}
