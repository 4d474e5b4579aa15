//! The calyx server: one per user, started on demand, owning every session, window and pane.
//!
//! One owner task holds [`State`]; client connections, pane reader threads and timers send it
//! [`Msg`]s. Rendering is coalesced: a change marks clients dirty and a frame is drawn at most
//! every [`FRAME_INTERVAL`], only for dirty clients, sending only changed cells. With nothing
//! changing, nothing runs.

mod actions;
mod agents_glue;
mod approval_panel;
mod approvals_glue;
mod chrome;
mod client_input;
mod clipboard;
mod commands_glue;
mod confirm_kill;
mod copy_mode;
mod echo_watch;
mod emit;
#[cfg(test)]
mod emit_props;
mod focus;
mod key_route;
mod label;
mod lifecycle;
mod mcp_approval;
mod mcp_backend;
mod mcp_glue;
mod mcp_spawn;
mod pane_text;
mod panes;
mod payload_capture;
mod prompt;
#[cfg(test)]
mod reducer_tests;
mod render;
mod requests;
mod shell_integration;
mod sidebar;
pub mod socket;
mod state;
mod target;
mod terminal;
mod tree;

use std::collections::HashMap;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::config::Config;
use crate::layout::PaneId;
use crate::protocol::{encode_message, ClientMessage, Response, ServerMessage};

pub use state::ClientId;
use state::{Client, ClientMode, State};

/// Shortest time between two frames to one client (about 60 a second).
pub const FRAME_INTERVAL: Duration = Duration::from_millis(16);
/// How long a status-line message stays.
const MESSAGE_TIME: Duration = Duration::from_secs(4);
/// Longest a synchronized update (DECSET 2026) may hold a pane's frame back.
const SYNC_HOLD: Duration = Duration::from_millis(150);

/// Everything the owner loop hears about over its channel. (It also waits on the terminals it
/// reads directly and on a keystroke's echo itself: see `run`.)
#[derive(Debug)]
pub enum Msg {
    /// A client connected; messages for it (and frames, unless the server writes its terminal
    /// directly) go to `tx`.
    Connected {
        id: ClientId,
        tx: mpsc::Sender<terminal::Outgoing>,
    },
    /// A control message from a client.
    Message { id: ClientId, msg: ClientMessage },
    /// Terminal input from an attached client (forwarded by it, or read by the owner).
    Input { id: ClientId, bytes: Vec<u8> },
    /// A client's connection closed.
    Disconnected { id: ClientId },
    /// The terminal the server reads for a client hung up or failed (from `run`).
    TerminalLost { id: ClientId },
    /// A pane parsed new output.
    PaneOutput { pane: PaneId },
    /// A pane's program exited.
    PaneExited { pane: PaneId, status: Option<u32> },
    /// A request from the agent endpoint (hook events, permission gates).
    Endpoint(crate::http::EndpointRequest),
    /// An MCP tool call that needs the live state.
    Mcp(mcp_backend::McpOp),
    /// Type into a pane (an allowed MCP action); `mark` gets the number the next command in
    /// the pane will have (when it reports commands), so `pane_run` can await it.
    PaneWrite {
        pane: PaneId,
        bytes: Vec<u8>,
        mark: tokio::sync::oneshot::Sender<Option<u64>>,
    },
    /// The hook process behind a pending approval went away.
    ApprovalWithdrawn { id: u64 },
    /// SIGTERM or SIGINT: stop cleanly.
    Shutdown,
}

/// How soon a pane whose terminal was busy is looked at again (see `look_again_soon`).
const PANE_RETRY: Duration = Duration::from_millis(2);

/// The owner loop's state and its timers.
pub struct Server {
    pub(crate) state: State,
    pub(crate) tx: mpsc::UnboundedSender<Msg>,
    /// Connections that have not attached (one-shot requests) and attached ones alike.
    connections: HashMap<ClientId, mpsc::Sender<terminal::Outgoing>>,
    render_at: Option<Instant>,
    last_render: Instant,
    message_expiry: Option<Instant>,
    sync_hold_since: Option<Instant>,
    /// A click on a live screen opened copy mode only to start a possible selection.
    click_started_copy: Option<PaneId>,
    /// `agent_wait` calls in progress.
    agent_waiters: Vec<mcp_glue::AgentWaiter>,
    /// `terminal_await_command` calls (and awaited `pane_run`s) in progress.
    command_waiters: Vec<commands_glue::CommandWaiter>,
    /// Tool calls waiting for the human.
    pub(crate) approvals: crate::approvals::ApprovalQueue,
    /// What the agent in each pane is doing.
    pub(crate) agents: crate::agents::AgentBook,
    /// Decides which agent transitions ring the bell or notify the desktop.
    notifier: crate::agents::Notifier,
    /// Panes that were just typed into: their next output (the echo) is drawn at once instead
    /// of waiting for the next frame slot, so typing feels immediate even at 60 frames a second.
    pub(super) echo_pending: std::collections::HashSet<PaneId>,
    /// The pane whose next output the owner reads itself (see `echo_watch`).
    echo_watch: Option<echo_watch::EchoWatch>,
    /// When an approval panel's answer keys wake (see `approval_panel`).
    pub(super) panel_wake: Option<Instant>,
    /// Whether `run` drives this server (only then can the owner wait for an echo).
    owner_loop: bool,
    render_now: bool,
    /// The panes that have focus as their programs were last told (see `focus`).
    focused_panes: std::collections::HashSet<PaneId>,
    /// The panes whose priorities were last set (see `update_focus`).
    prioritized_panes: std::collections::HashSet<PaneId>,
    /// When each pane with an agent row last printed something (evidence of life).
    last_output: HashMap<PaneId, Instant>,
    /// Hook payloads recorded for the real-CLI suite (`CALYX_CAPTURE_PAYLOADS`), else None.
    payload_capture: Option<payload_capture::PayloadCapture>,
    /// The MCP tools the config turns off, shared with the endpoint (a reload changes them).
    pub(crate) mcp_tools: std::sync::Arc<crate::mcp::ToolSet>,
    /// MCP peers and their inboxes, shared with the endpoint: a closed pane's are dropped.
    pub(crate) peers: std::sync::Arc<crate::mcp::PeerRegistry>,
}

impl Server {
    /// A server with no sessions.
    pub fn new(
        config: Config,
        config_errors: Vec<String>,
        socket_path: String,
        tx: mpsc::UnboundedSender<Msg>,
        mcp_tools: std::sync::Arc<crate::mcp::ToolSet>,
    ) -> Self {
        let notify_config = crate::agents::NotifyConfig {
            bell: config.bell,
            osc9: config.osc9,
            osc777: config.osc777,
            ..Default::default()
        };
        Self {
            state: State::new(config, config_errors, socket_path),
            tx,
            connections: HashMap::new(),
            render_at: None,
            last_render: Instant::now(),
            message_expiry: None,
            sync_hold_since: None,
            click_started_copy: None,
            agents: crate::agents::AgentBook::default(),
            agent_waiters: Vec::new(),
            command_waiters: Vec::new(),
            approvals: crate::approvals::ApprovalQueue::new(Some(
                crate::paths::state_dir().join("approvals.jsonl"),
            ))
            .with_expiry(approval_expiry()),
            notifier: crate::agents::Notifier::new(notify_config),
            last_output: HashMap::new(),
            focused_panes: Default::default(),
            prioritized_panes: Default::default(),
            echo_pending: Default::default(),
            echo_watch: None,
            panel_wake: None,
            owner_loop: false,
            render_now: false,
            payload_capture: payload_capture::PayloadCapture::from_env(),
            mcp_tools,
            peers: Default::default(),
        }
    }

    /// Re-reads the config file and applies it: keys, approval gates, notifications, MCP tools
    /// (open MCP sessions hear `tools/list_changed`), and the settings read when a pane or
    /// client starts, for the next ones. Returns a summary and the problems found; a broken
    /// file changes nothing it could not read (see [`Config::load`]).
    pub(crate) fn reload_config(&mut self) -> (String, Vec<String>) {
        let path = crate::paths::config_file();
        let (config, errors) = match Config::try_load(&path) {
            Ok(loaded) => loaded,
            // Unreadable or not TOML at all: it would load as the defaults; keep what runs.
            Err(e) => {
                return (
                    format!("{} was not reloaded", path.display()),
                    vec![format!("{e}; the running settings are unchanged")],
                )
            }
        };
        let tools_changed = self
            .mcp_tools
            .set_disabled(config.mcp_disabled_tools.clone());
        self.notifier.set_config(crate::agents::NotifyConfig {
            bell: config.bell,
            osc9: config.osc9,
            osc777: config.osc777,
            ..Default::default()
        });
        self.state.config = config;
        self.state.config_errors = errors.clone();
        for c in self.state.clients.values_mut() {
            c.dirty = true;
        }
        for e in &errors {
            tracing::warn!("{e}");
        }
        let mut text = format!("reloaded {}", path.display());
        if tools_changed {
            text.push_str("; MCP tools changed (agents were told)");
        }
        (text, errors)
    }

    /// Runs until the last session ends or the server is killed.
    pub async fn run(mut self, mut rx: mpsc::UnboundedReceiver<Msg>) {
        self.owner_loop = true;
        loop {
            // A frame that is due now is drawn now: tokio's timer has millisecond granularity,
            // and a keystroke's echo should not wait for the next tick.
            if self.render_at.is_some_and(|t| t <= Instant::now()) {
                self.on_timer();
            }
            let deadline = [
                self.render_at,
                self.message_expiry,
                self.agent_deadline(),
                self.approvals.next_expiry(),
                self.label_recheck_at(),
                self.panel_wake,
            ]
            .into_iter()
            .flatten()
            .min();
            let echo = self.echo_watch.as_ref().map(|w| w.ready());
            let watching = echo.is_some();
            let terminals = self.direct_terminals();
            tokio::select! {
                (id, input) = terminal::next_input(&terminals), if !terminals.is_empty() => {
                    self.handle(match input {
                        terminal::TerminalInput::Bytes(bytes) => Msg::Input { id, bytes },
                        terminal::TerminalInput::Lost => Msg::TerminalLost { id },
                    })
                }
                () = echo_watch::readable(echo), if watching => self.echo_ready(),
                msg = rx.recv() => match msg {
                    Some(msg) => self.handle(msg),
                    None => break,
                },
                _ = sleep_until(deadline), if deadline.is_some() => self.on_timer(),
            }
            if self.state.quit {
                break;
            }
            self.schedule_render();
        }
        self.shutdown();
    }

    fn handle(&mut self, msg: Msg) {
        // Focus and the set of panes can change with any message but pane output and endpoint
        // events (an MCP pane_split opens a pane that does not take focus).
        let focus_may_change = matches!(
            msg,
            Msg::Message { .. } | Msg::Input { .. } | Msg::PaneExited { .. } | Msg::Mcp(_)
        );
        self.dispatch(msg);
        if focus_may_change {
            self.update_focus();
        }
    }

    fn dispatch(&mut self, msg: Msg) {
        match msg {
            Msg::Connected { id, tx } => {
                self.connections.insert(id, tx);
            }
            Msg::Message { id, msg } => self.client_message(id, msg),
            Msg::Input { id, bytes } => {
                tracing::trace!("input from client {id}");
                self.client_input(id, &bytes)
            }
            Msg::TerminalLost { id } => {
                self.state.detach_client(id, "detached (lost the terminal)")
            }
            Msg::Disconnected { id } => {
                self.connections.remove(&id);
                if let Some(c) = self.state.clients.remove(&id) {
                    let session = c.session;
                    // Its frame buffers go before the memory is handed back.
                    drop(c);
                    self.state.resize_session_to_clients(session);
                    self.state.trimmer.soon();
                }
            }
            Msg::PaneOutput { pane } => {
                tracing::trace!("output from pane {pane}");
                self.pane_output(pane)
            }
            Msg::PaneExited { pane, status } => self.pane_exited(pane, status),
            Msg::Endpoint(request) => self.endpoint_request(request),
            Msg::ApprovalWithdrawn { id } => self.approval_withdrawn(id),
            Msg::Mcp(op) => self.mcp_op(op),
            Msg::PaneWrite { pane, bytes, mark } => {
                let next = self.next_command_seq(pane);
                if let Some(p) = self.state.panes.get(&pane) {
                    p.process.write(bytes);
                }
                let _ = mark.send(next);
            }
            Msg::Shutdown => self.state.quit = true,
        }
    }

    /// Sends a protocol message over a connection (attached or not).
    fn send_to(&self, id: ClientId, message: &ServerMessage) {
        if let Some(tx) = self.connections.get(&id) {
            let _ = tx.try_send(terminal::Outgoing::Message(encode_message(message)));
        }
    }

    fn reply(&self, id: ClientId, response: Response) {
        self.send_to(id, &ServerMessage::Response(response));
    }

    fn client_message(&mut self, id: ClientId, msg: ClientMessage) {
        match msg {
            ClientMessage::Request(request) => {
                let response = self.request(request);
                self.reply(id, response);
            }
            ClientMessage::Resize { rows, cols } => {
                // A client's size is its word, not a fact: clamped (calyx_pty::limits).
                let (rows, cols) = calyx_pty::limits::clamp_size(rows, cols);
                if let Some(c) = self.state.clients.get_mut(&id) {
                    c.rows = rows;
                    c.cols = cols;
                    c.shown = None;
                    c.dirty = true;
                    let session = c.session;
                    self.state.resize_session_to_clients(session);
                }
            }
            ClientMessage::Detach { message } => self.state.detach_client(id, &message),
            ClientMessage::Attach {
                target,
                create,
                create_if_missing,
                rows,
                cols,
                term,
                terminal,
            } => {
                let (rows, cols) = calyx_pty::limits::clamp_size(rows, cols);
                let existing = self
                    .state
                    .resolve(target.as_deref())
                    .ok()
                    .map(|t| t.session);
                let session = match (existing, create) {
                    (Some(s), Some(_)) if create_if_missing => Ok(s),
                    (Some(s), None) => Ok(s),
                    (_, Some(spec)) => self
                        .state
                        .create_session(spec, rows, cols, &self.tx)
                        .map(|(s, _)| s)
                        .map_err(|e| e.to_string()),
                    (None, None) => Err(match target {
                        Some(t) => format!("can't find session: {t}"),
                        None => "no sessions".to_string(),
                    }),
                };
                let session = match session {
                    Ok(s) => s,
                    Err(message) => {
                        self.send_to(id, &ServerMessage::Exit { message });
                        return;
                    }
                };
                let Some(tx) = self.connections.get(&id).cloned() else {
                    return;
                };
                let direct = terminal.and_then(|device| self.use_terminal(id, &device, &tx));
                self.send_to(
                    id,
                    &ServerMessage::Attached {
                        direct: direct.is_some(),
                    },
                );
                self.state.clients.insert(
                    id,
                    Client {
                        id,
                        tx,
                        session,
                        rows,
                        cols,
                        mode: ClientMode::Normal,
                        repeat_until: None,
                        input: Default::default(),
                        shown: None,
                        shown_links: Default::default(),
                        spare: None,
                        shown_panes: Vec::new(),
                        shown_chrome: None,
                        dirty: true,
                        message: None,
                        drag: None,
                        selecting: None,
                        last_session: None,
                        last_key_at: None,
                        cursor_style: None,
                        hyperlinks: self.state.config.hyperlinks.allowed_for(term.as_deref()),
                        any_motion: false,
                        panel: Default::default(),
                        direct,
                    },
                );
                if let Some(s) = self.state.sessions.get_mut(&session) {
                    s.last_used = Instant::now();
                }
                self.state.resize_session_to_clients(session);
                if !self.state.config_errors.is_empty() {
                    let text = self.state.config_errors.join("; ");
                    self.message(id, text);
                }
            }
        }
    }

    /// The terminals the server reads itself, with their clients (read in the owner loop).
    fn direct_terminals(&self) -> Vec<(ClientId, terminal::DirectTerminal)> {
        self.state
            .clients
            .values()
            .filter_map(|c| c.direct.clone().map(|t| (c.id, t)))
            .collect()
    }

    /// Opens a client's terminal to read and write it directly (see `terminal`); None leaves
    /// the client forwarding input and frames.
    fn use_terminal(
        &self,
        id: ClientId,
        device: &crate::protocol::TerminalDevice,
        tx: &mpsc::Sender<terminal::Outgoing>,
    ) -> Option<terminal::DirectTerminal> {
        match terminal::DirectTerminal::open(device) {
            Ok(t) => {
                tracing::info!("client {id}: the server reads and writes {}", device.path);
                tx.try_send(terminal::Outgoing::UseTerminal(t.clone()))
                    .ok()?;
                Some(t)
            }
            Err(e) => {
                tracing::info!("client {id}: frames go through the client ({e})");
                None
            }
        }
    }

    fn pane_output(&mut self, pane: PaneId) {
        if let Some(n) = self.state.notifiers.get(&pane) {
            n.rearm();
        }
        self.note_pane_output(pane);
        self.wake_command_waiters(Some(pane));
        if self.echo_pending.remove(&pane) {
            self.render_now = true;
        }
        let Some(p) = self.state.panes.get(&pane) else {
            return;
        };
        // A busy reader holds the terminal for a moment; its events (bells, clipboard writes)
        // wait in the terminal till they are taken.
        let Some((bells, clipboard)) = p.try_term().map(|mut t| t.take_events()) else {
            self.state.mark_pane_dirty(pane);
            self.look_again_soon(pane);
            return;
        };
        let session = p.session;
        if bells > 0 || !clipboard.is_empty() {
            let visible = self
                .state
                .locate(pane)
                .and_then(|(s, w)| self.state.sessions.get(&s).map(|s| s.active_window == w))
                .unwrap_or(false);
            if bells > 0 && !visible {
                if let Some((s, w)) = self.state.locate(pane) {
                    if let Some(win) = self
                        .state
                        .sessions
                        .get_mut(&s)
                        .and_then(|s| s.windows.get_mut(w))
                    {
                        win.bell = true;
                    }
                }
            }
            if bells > 0 && self.state.config.bell {
                for c in self.state.clients.values().filter(|c| c.session == session) {
                    let _ = c.send_terminal(vec![0x07]);
                }
            }
            if !clipboard.is_empty() {
                self.pane_clipboard(pane, clipboard);
            }
            self.state.mark_session_dirty(session);
        }
        self.state.mark_pane_dirty(pane);
    }

    /// Handles `pane`'s output again in a moment. The reader notifies and then takes the lock
    /// once more for its next read, which may find nothing: a try in that moment used to leave
    /// the chunk's events untaken until the pane printed again, which may be never (a clipboard
    /// write or a bell lost; tests/e2e_clipboard.rs failed about one run in three).
    fn look_again_soon(&self, pane: PaneId) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let tx = self.tx.clone();
        runtime.spawn(async move {
            tokio::time::sleep(PANE_RETRY).await;
            let _ = tx.send(Msg::PaneOutput { pane });
        });
    }

    fn pane_exited(&mut self, pane: PaneId, status: Option<u32>) {
        let Some(p) = self.state.panes.get_mut(&pane) else {
            return;
        };
        p.exited = Some(status);
        if self.state.config.remain_on_exit {
            self.state.mark_pane_dirty(pane);
            self.retire_pane(pane);
        } else {
            self.close(lifecycle::Close::Pane(pane), "session ended");
        }
    }

    /// Sets the render timer when a client needs a frame: now if the last frame is old enough,
    /// else at the next frame slot.
    fn schedule_render(&mut self) {
        if !self.state.clients.values().any(|c| c.dirty) {
            return;
        }
        if std::mem::take(&mut self.render_now) {
            self.render_at = Some(Instant::now());
            return;
        }
        if self.render_at.is_some() {
            return;
        }
        self.render_at = Some((self.last_render + FRAME_INTERVAL).max(Instant::now()));
    }

    pub(super) fn schedule_message_expiry(&mut self) {
        let next = self
            .state
            .clients
            .values()
            .filter_map(|c| c.message.as_ref().map(|m| m.1 + MESSAGE_TIME))
            .min();
        self.message_expiry = next;
    }

    fn on_timer(&mut self) {
        let now = Instant::now();
        if self.message_expiry.is_some_and(|t| t <= now) {
            for c in self.state.clients.values_mut() {
                if c.message
                    .as_ref()
                    .is_some_and(|m| m.1 + MESSAGE_TIME <= now)
                {
                    c.message = None;
                    c.dirty = true;
                }
            }
            self.schedule_message_expiry();
        }
        if self.approvals.next_expiry().is_some_and(|t| t <= now) {
            self.approvals_expire(now);
        }
        if self.agent_deadline().is_some_and(|t| t <= now) {
            self.agent_timer(now);
        }
        self.panel_keys_woke(now);
        if self.label_recheck_at().is_some_and(|t| t <= now) {
            self.recheck_labels(now);
        }
        if self.render_at.is_some_and(|t| t <= now) {
            self.render_at = None;
            self.render_all();
        }
    }

    /// When a pane name shown from the cache should be read again (see `label`).
    fn label_recheck_at(&self) -> Option<Instant> {
        self.state
            .panes
            .values()
            .filter_map(|p| p.label_cache.recheck_at())
            .min()
    }

    /// Reads again the pane names shown from the cache; redraws where one changed.
    fn recheck_labels(&mut self, now: Instant) {
        let changed: Vec<PaneId> = self
            .state
            .panes
            .values()
            .filter(|p| p.label_cache.recheck(now, || p.current_command()))
            .map(|p| p.id)
            .collect();
        for pane in changed {
            if let Some((session, _)) = self.state.locate(pane) {
                self.state.mark_session_dirty(session);
            }
        }
    }

    /// Whether a client's visible panes are mid-synchronized-update.
    fn holding_for_sync(&self, client: &Client) -> bool {
        let Some(w) = self
            .state
            .sessions
            .get(&client.session)
            .and_then(|s| s.window())
        else {
            return false;
        };
        w.layout.panes().iter().any(|p| {
            self.state
                .panes
                .get(p)
                .is_some_and(|p| p.try_term().is_some_and(|t| t.synchronized_output()))
        })
    }

    fn render_all(&mut self) {
        let now = Instant::now();
        let dirty: Vec<ClientId> = self
            .state
            .clients
            .values()
            .filter(|c| c.dirty)
            .map(|c| c.id)
            .collect();
        let mut held = false;
        let agents = sidebar::AgentsView::build(self);
        for id in dirty {
            let hold = self
                .state
                .clients
                .get(&id)
                .is_some_and(|c| self.holding_for_sync(c));
            if hold {
                let since = *self.sync_hold_since.get_or_insert(now);
                if now.duration_since(since) < SYNC_HOLD {
                    held = true;
                    continue;
                }
            }
            let started = std::time::Instant::now();
            let shown = self.panel_request(id);
            self.panel_drawn(id, shown);
            let panel = shown.and_then(|request| self.panel_data_of(id, request));
            let tree = self.tree_data(id);
            let rendered =
                render::render_client(&mut self.state, &agents, panel.as_ref(), tree, id);
            tracing::trace!("frame for client {id} in {:?}", started.elapsed());
            if let Some(frame) = rendered {
                if let Some(c) = self.state.clients.get_mut(&id) {
                    if c.send_terminal(frame.bytes).is_err() {
                        // The client is behind: redraw it whole next time instead of queueing.
                        c.shown = None;
                        c.dirty = true;
                    }
                }
            }
        }
        if !held {
            self.sync_hold_since = None;
        }
        self.last_render = now;
    }

    fn shutdown(&mut self) {
        let ids: Vec<ClientId> = self.state.clients.keys().copied().collect();
        for id in ids {
            self.state.detach_client(id, "server exited");
        }
        let mut reapers = std::mem::take(&mut self.state.reapers);
        for p in self.state.panes.values_mut() {
            reapers.extend(p.process.terminate(panes::KILL_GRACE));
        }
        self.connections.clear();
        // Programs that ignore SIGHUP are killed before the server goes away.
        for r in reapers {
            let _ = r.join();
        }
    }
}

/// How long approval requests wait: 570 s, or less with `CALYX_APPROVAL_EXPIRY_SECS` (for
/// end-to-end tests of expiry; it can only shorten the wait).
fn approval_expiry() -> Duration {
    std::env::var("CALYX_APPROVAL_EXPIRY_SECS")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .map(Duration::from_secs)
        .unwrap_or(crate::approvals::EXPIRY)
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(t) => tokio::time::sleep_until(t).await,
        None => std::future::pending().await,
    }
}
