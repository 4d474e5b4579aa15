//! The owner: the one task that holds the model (`State`) and everything around it the
//! operations need (agent rows, approvals, waiters, timers). Only the owner loop
//! (`main_loop`) touches it; connections, pane reader threads and the endpoint send it
//! [`Msg`]s.

use std::collections::HashMap;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::config::Config;
use crate::layout::PaneId;
use crate::protocol::{encode_message, Response, ServerMessage};

use super::io;
use super::messages::Msg;
use super::model::ids::ClientId;
use super::model::state::State;
use super::operations;
use super::render::frame_cache::FrameCache;

/// Shortest time between two frames to one client (about 60 a second).
pub const FRAME_INTERVAL: Duration = Duration::from_millis(16);
/// How long a status-line message stays.
pub(super) const MESSAGE_TIME: Duration = Duration::from_secs(4);
/// Longest a synchronized update (DECSET 2026) may hold a pane's frame back.
pub(super) const SYNC_HOLD: Duration = Duration::from_millis(150);

/// How soon a pane whose terminal was busy is looked at again (see `look_again_soon`).
pub(super) const PANE_RETRY: Duration = Duration::from_millis(2);

/// The owner loop's state and its timers.
///
/// Fields the operations use are visible in `crate::server` only (`pub(super)`), as when all of
/// the server was one module; the ones the endpoint and tests outside share are `pub(crate)`.
pub struct Server {
    pub(crate) state: State,
    /// The `:` prompt's commands, walked with Up and Down (shared by every client).
    pub(crate) prompt_history: crate::server::model::prompt_history::PromptHistory,
    /// Keys bound and unbound with bind-key/unbind-key, in order: they last until the server
    /// stops, a reload included.
    pub(crate) runtime_bindings: Vec<crate::server::input::bind_key::RuntimeBinding>,
    pub(crate) tx: mpsc::UnboundedSender<Msg>,
    /// What each attached client's terminal shows (see `render::frame_cache`); a client's goes
    /// when the client does (`forget_gone_frames`).
    pub(super) frames: HashMap<ClientId, FrameCache>,
    /// Connections that have not attached (one-shot requests) and attached ones alike.
    pub(super) connections: HashMap<ClientId, mpsc::Sender<io::terminal::Outgoing>>,
    pub(super) render_at: Option<Instant>,
    pub(super) last_render: Instant,
    pub(super) message_expiry: Option<Instant>,
    pub(super) sync_hold_since: Option<Instant>,
    /// A click on a live screen opened copy mode only to start a possible selection.
    pub(super) click_started_copy: Option<PaneId>,
    /// `agent_wait` calls in progress.
    pub(super) agent_waiters: Vec<operations::mcp_tools::AgentWaiter>,
    /// `terminal_await_command` calls (and awaited `pane_run`s) in progress.
    pub(super) command_waiters: Vec<operations::command_history::CommandWaiter>,
    /// Tool calls waiting for the human.
    pub(crate) approvals: crate::approvals::ApprovalQueue,
    /// What the agent in each pane is doing.
    pub(crate) agents: crate::agents::AgentBook,
    /// Decides which agent transitions ring the bell or notify the desktop.
    pub(super) notifier: crate::agents::Notifier,
    /// Panes that were just typed into: their next output (the echo) is drawn at once instead
    /// of waiting for the next frame slot, so typing feels immediate even at 60 frames a second.
    pub(super) echo_pending: std::collections::HashSet<PaneId>,
    /// Panes whose output waits for the pending frame (see `pane_events::fold_into_frame`).
    pub(super) output_held: std::collections::HashSet<PaneId>,
    /// Whether output folds into a pending frame: always, but in the test that counts what
    /// folding saves (`flood_count_tests`), which switches it off for its "before".
    pub(super) fold_output: bool,
    /// The pane typed into last, whose output the owner reads itself instead of its reader
    /// thread while that output is keys' echoes (see `io::echo_watch`).
    pub(super) owner_reads: Option<io::echo_watch::OwnerReads>,
    /// When an approval panel's answer keys wake (see `approval_panel`).
    pub(super) panel_wake: Option<Instant>,
    /// Whether `run` drives this server (only then can the owner wait for an echo).
    pub(super) owner_loop: bool,
    pub(super) render_now: bool,
    /// The panes that have focus as their programs were last told (see `focus`).
    pub(super) focused_panes: std::collections::HashSet<PaneId>,
    /// The panes whose priorities were last set (see `update_focus`).
    pub(super) prioritized_panes: std::collections::HashSet<PaneId>,
    /// When each pane with an agent row last printed something (evidence of life).
    pub(super) last_output: HashMap<PaneId, Instant>,
    /// Hook payloads recorded for the real-CLI suite (`CALYX_CAPTURE_PAYLOADS`), else None.
    pub(super) payload_capture: Option<io::payload_capture::PayloadCapture>,
    /// The MCP tools the config turns off, shared with the endpoint (a reload changes them).
    pub(crate) mcp_tools: std::sync::Arc<crate::mcp::ToolSet>,
    /// MCP peers and their inboxes, shared with the endpoint: a closed pane's are dropped.
    pub(crate) peers: std::sync::Arc<crate::mcp::PeerRegistry>,
    /// The user's hosted MCP servers (None in tests that run without them).
    pub(crate) hosting: Option<std::sync::Arc<crate::hosted::host::Hosting>>,
    /// The MCP App view server (None: it could not bind, or the server is under test).
    pub(crate) view_server: Option<crate::views::server::ViewServerHandle>,
    /// The default foreground and background the last attached terminal reported (OSC 10,
    /// OSC 11): the pages' theme follows them.
    pub(crate) terminal_colours: crate::server::io::view_server::TerminalColours,
    /// MCP App views: the hub shared with `/mcp-hosted` and the view server.
    pub(crate) views: crate::hosted::views::ViewWire,
    /// The hosted servers' published tools, for re-reading a view's resource (`r`).
    pub(crate) hosted_registry: crate::hosted::publish::Registry,
    /// Why there is no hosting (the secret store chosen by `[mcp] secret_store` is unusable).
    pub(crate) hosting_unavailable: Option<String>,
    /// Saved sessions: the writer thread, the sessions not running, when the next save is due.
    pub(crate) persisted: operations::persistence::Persisted,
    /// `calyx server-upgrade`: the descriptors to hand over, a check running, an exec due.
    pub(crate) upgrade: operations::upgrade::Upgrade,
    /// Connections that watch this machine (`ClientMessage::Watch`), each with the snapshot
    /// it was last sent (see `operations::watch`).
    pub(crate) watchers: HashMap<ClientId, Vec<u8>>,
    /// A message since the last look may have changed the snapshot.
    pub(crate) watch_due: bool,
    /// How many times the snapshot was worked out for the watchers (tests count it: typing
    /// into a pane works none out).
    pub(crate) watch_computed: u64,
    /// The input event being routed only went to panes (typed, pasted): it changes nothing a
    /// watcher is sent (see `input::route`).
    pub(crate) typed_to_pane: bool,
    /// The saved machines' links and what each last showed (see `machines::link`).
    pub(crate) machines: crate::machines::link::Machines,
    /// Tool calls from agents on other machines still running, by the connection that asked.
    pub(crate) remote_calls: operations::remote_tools::RemoteCalls,
    /// The saved machines' sessions the chooser lists, asked when it opens.
    pub(crate) chooser_machines: crate::server::model::chooser_machines::ChooserMachines,
    /// Anywhere approval rules on the links: who pushed rules here, what was pushed from here.
    pub(crate) anywhere: operations::anywhere_rules::AnywhereLinks,
}

impl Server {
    /// A terminal answered the colour query with `colour` for OSC `slot` (10 foreground, 11
    /// background): open pages get the new look when it changes it.
    pub(crate) fn terminal_colour(&mut self, slot: u8, colour: &str) {
        let Some(rgb) = crate::views::protocol::parse_terminal_colour(colour) else {
            return;
        };
        let before = self.terminal_colours;
        match slot {
            10 => self.terminal_colours.foreground = Some(rgb),
            _ => self.terminal_colours.background = Some(rgb),
        }
        if self.terminal_colours == before {
            return;
        }
        if let Some(view_server) = &self.view_server {
            view_server.set_look(crate::server::io::view_server::look(
                &self.state.config.mcp_apps,
                self.terminal_colours,
            ));
        }
    }

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
            prompt_history: crate::server::model::prompt_history::PromptHistory::load(
                crate::paths::state_dir().join("prompt-history"),
            ),
            runtime_bindings: Vec::new(),
            tx,
            frames: HashMap::new(),
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
            output_held: Default::default(),
            fold_output: true,
            owner_reads: None,
            panel_wake: None,
            owner_loop: false,
            render_now: false,
            payload_capture: io::payload_capture::PayloadCapture::from_env(),
            mcp_tools,
            peers: Default::default(),
            hosting: None,
            view_server: None,
            terminal_colours: Default::default(),
            views: Default::default(),
            hosted_registry: Default::default(),
            hosting_unavailable: None,
            persisted: Default::default(),
            upgrade: Default::default(),
            watchers: HashMap::new(),
            watch_due: false,
            watch_computed: 0,
            typed_to_pane: false,
            machines: Default::default(),
            remote_calls: Default::default(),
            chooser_machines: Default::default(),
            anywhere: Default::default(),
        }
    }

    /// Re-reads the config file and applies it: keys, approval gates, notifications, MCP tools
    /// (open MCP sessions hear `tools/list_changed`), and the settings read when a pane or
    /// client starts, for the next ones. Returns a summary and the problems found; a broken
    /// file changes nothing it could not read (see [`Config::load`]).
    pub(crate) fn reload_config(&mut self) -> (String, Vec<String>) {
        let path = crate::paths::config_file();
        // No file is the defaults, which is worth saying: "reloaded" would suggest a file was read.
        let read = if path.exists() {
            format!("reloaded {}", path.display())
        } else {
            format!(
                "no config file at {}: the defaults are in force",
                path.display()
            )
        };
        self.apply_config_file(&path, read)
    }

    /// Reads the config file at `path` (a missing one: the defaults) and applies it as
    /// [`Server::reload_config`] describes (`source-file PATH` checks first that it exists).
    /// `read` begins the summary.
    pub(crate) fn apply_config_file(
        &mut self,
        path: &std::path::Path,
        read: String,
    ) -> (String, Vec<String>) {
        let (mut config, errors) = match Config::try_load(path) {
            Ok(loaded) => loaded,
            // Unreadable or not TOML at all: it would load as the defaults; keep what runs.
            Err(e) => {
                return (
                    format!("{} was not reloaded", path.display()),
                    vec![format!("{e}; the running settings are unchanged")],
                )
            }
        };
        // Keys bound with bind-key outlast the reload, but for those the file binds itself.
        crate::server::input::bind_key::reapply(&mut config.keymap, &self.runtime_bindings);
        let applied = self.apply_config(config);
        let mut errors = errors;
        errors.extend(applied.hosting_error);
        let tools_changed = applied.tools_changed;
        self.state.config_errors = errors.clone();
        for e in &errors {
            tracing::warn!("{e}");
        }
        let mut text = read;
        if tools_changed {
            text.push_str("; MCP tools changed (agents were told)");
        }
        (text, errors)
    }

    /// Puts `config` in force, as a reload does (`set-option` changes one setting this way):
    /// notifications, MCP tools and the hosted servers' switch now, every client redrawn.
    pub(crate) fn apply_config(&mut self, config: Config) -> ConfigApplied {
        let tools_changed = self
            .mcp_tools
            .set_disabled(config.mcp_disabled_tools.clone());
        // The hosted servers follow the switch and a hand-edited mcp-servers.json.
        let mut hosting_error = None;
        if let Some(hosting) = &self.hosting {
            hosting
                .supervisor()
                .sign_ins()
                .set_client_metadata_url(&config.mcp_client_metadata_url);
            if let Err(e) = hosting.set_enabled(config.mcp_host_servers) {
                hosting_error = Some(e.to_string());
            }
        }
        self.notifier.set_config(crate::agents::NotifyConfig {
            bell: config.bell,
            osc9: config.osc9,
            osc777: config.osc777,
            ..Default::default()
        });
        self.views.set_enabled(config.mcp_apps.views);
        if let Some(view_server) = &self.view_server {
            // Open pages get host-context-changed with what changed.
            view_server.set_look(crate::server::io::view_server::look(
                &config.mcp_apps,
                self.terminal_colours,
            ));
        }
        let borders = config.pane_borders;
        self.state.config = config;
        self.state.set_pane_borders(borders);
        for c in self.state.clients.values_mut() {
            c.dirty = true;
        }
        ConfigApplied {
            tools_changed,
            hosting_error,
        }
    }

    /// Sends a protocol message over a connection (attached or not).
    pub(crate) fn send_to(&self, id: ClientId, message: &ServerMessage) {
        if let Some(tx) = self.connections.get(&id) {
            let _ = tx.try_send(io::terminal::Outgoing::Message(encode_message(message)));
        }
    }

    pub(crate) fn reply(&self, id: ClientId, response: Response) {
        self.send_to(id, &ServerMessage::Response(response));
    }
}

/// What putting a config in force did, for the summary a reload prints.
pub(crate) struct ConfigApplied {
    /// The MCP tools changed (agents were told).
    pub tools_changed: bool,
    /// The hosted servers could not follow `[mcp] host_servers` (why).
    pub hosting_error: Option<String>,
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
