//! The server's main: logging, the open-files limit, the socket, the agent endpoint and the
//! signals are set up, then the owner loop runs until the last session ends. The owner loop
//! (`Server::run`) waits on its channel, the terminals it reads itself, a keystroke's echo and
//! its timers, hands each message to the operation that handles it, and draws the frames due.

use std::os::unix::fs::DirBuilderExt;
use std::path::PathBuf;

use anyhow::Context;
use tokio::sync::mpsc;

use tokio::time::Instant;

use crate::layout::PaneId;
use crate::paths;

use super::io::socket::bind;
use super::messages::Msg;
use super::model::ids::ClientId;
use super::model::state::Client;
use super::owner::{Server, FRAME_INTERVAL, MESSAGE_TIME, SYNC_HOLD};
use super::{io, model, render, view};

/// Sends log lines to `server.log` in the state directory, rotated by size
/// ([`crate::log_file`]). The default level is `info`, with rmcp's routine per-session lines
/// (a session created, its client's whole `initialize`, "serve finished") left out: at about
/// 780 bytes a session they let any client with the token grow the log at will. calyx logs
/// session open and close itself, at debug (`CALYX_LOG=debug`).
fn init_logging() {
    let dir = paths::state_dir();
    let _ = std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir);
    let file = crate::log_file::RotatingFile::open(
        dir.join("server.log"),
        crate::log_file::max_bytes_from_env(),
    );
    if let Ok(file) = file {
        let filter = tracing_subscriber::EnvFilter::try_from_env("CALYX_LOG")
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(DEFAULT_LOG_FILTER));
        let _ = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_ansi(false)
            .with_writer(std::sync::Mutex::new(file))
            .try_init();
    }
}

/// What `server.log` gets without `CALYX_LOG`: calyx at info, rmcp's warnings and errors only.
const DEFAULT_LOG_FILTER: &str = "info,rmcp=warn";

/// Starts the agent endpoint and forwards its requests into the owner loop. A failure is
/// logged, not fatal: the multiplexer works without agent events.
async fn start_endpoint(
    tx: mpsc::UnboundedSender<Msg>,
    mcp_tools: std::sync::Arc<crate::mcp::ToolSet>,
    peers: std::sync::Arc<crate::mcp::PeerRegistry>,
    hosted: crate::hosted::route::HostedRoute,
    open_files: Option<u64>,
    inherited: Option<crate::http::InheritedListener>,
    trimmer: crate::memory::Trimmer,
) -> Option<crate::http::EndpointHandle> {
    let (sender, mut requests) = mpsc::channel(256);
    let backend = std::sync::Arc::new(super::io::mcp_backend::OwnerBackend { tx: tx.clone() });
    let defaults = crate::http::EndpointOptions::default();
    // A quarter of the descriptors at most, so panes, clients and the socket keep the rest.
    let max_connections = open_files.map_or(defaults.max_connections, |limit| {
        defaults
            .max_connections
            .min(usize::try_from(limit / 4).unwrap_or(usize::MAX))
            .max(8)
    });
    let options = crate::http::EndpointOptions {
        mcp: Some(
            crate::mcp::McpOptions::new(backend)
                .with_tools(mcp_tools)
                .with_peers(peers)
                .with_trimmer(trimmer)
                .with_limits_from_env(),
        ),
        hosted: Some(hosted),
        max_connections,
        inherited,
        ..defaults
    };
    match crate::http::start(sender, options).await {
        Ok(handle) => {
            tracing::info!("agent endpoint on 127.0.0.1:{}", handle.port());
            // Entries `calyx setup` wrote earlier must never point at a dead endpoint: bring
            // the installed ones up to date with this port, token and binary (off the loop).
            let info = crate::http::endpoint_file::EndpointInfo {
                port: handle.port(),
                token: handle.token().to_string(),
            };
            tokio::task::spawn_blocking(move || {
                let Ok(bin) = crate::setup::calyx_binary() else {
                    return;
                };
                for message in crate::setup::resync_installed(&info, &bin) {
                    tracing::info!("{message}");
                }
            });
            tokio::spawn(async move {
                while let Some(request) = requests.recv().await {
                    if tx.send(Msg::Endpoint(request)).is_err() {
                        break;
                    }
                }
            });
            Some(handle)
        }
        Err(e) => {
            tracing::error!("agent endpoint did not start: {e:#}");
            None
        }
    }
}

/// Starts the hosted servers of `mcp-servers.json` in the background. The secret store is not
/// chosen here: `[mcp] secret_store` decides at the first secret read or write
/// ([`crate::hosted::secrets::LazyChoice`]), so a hanging Secret Service never delays the
/// server's start. The tools cache is read on a blocking thread (a small file).
async fn start_hosting(
    route: crate::hosted::route::HostedRoute,
    setting: crate::hosted::secrets::SecretStoreSetting,
    client_metadata_url: String,
) -> Result<std::sync::Arc<crate::hosted::host::Hosting>, String> {
    use crate::hosted::host::Hosting;
    use crate::hosted::secrets::LazyChoice;
    use crate::hosted::tools_cache::ToolsCache;
    let hosting = tokio::task::spawn_blocking(move || {
        Hosting::new(
            route,
            LazyChoice::here(setting),
            crate::hosted::server_list::servers_file(),
        )
        .with_tools_cache(ToolsCache::open(ToolsCache::default_path()))
    })
    .await
    .map_err(|e| format!("starting hosted MCP servers failed: {e}"))?;
    let hosting = std::sync::Arc::new(hosting);
    hosting
        .supervisor()
        .sign_ins()
        .set_client_metadata_url(&client_metadata_url);
    let starting = hosting.clone();
    tokio::task::spawn_blocking(move || {
        if let Err(e) = starting.start() {
            tracing::warn!("hosted MCP servers: {e}");
        }
    });
    Ok(hosting)
}

/// How a server starts: binding its socket, or taking over from the server this process
/// replaced in place (`calyx server-upgrade`).
pub enum Start {
    Fresh(PathBuf),
    Adopt(Box<crate::upgrade::handover::Handover>),
}

/// Runs the server on `socket` until it exits. Blocks the calling thread.
pub fn serve(socket: PathBuf) -> anyhow::Result<()> {
    serve_from(Start::Fresh(socket), 0)
}

/// Runs the server taking over what the server this process replaced handed over in the
/// memfd `state_fd` (`calyx server --adopt N`). Blocks the calling thread.
pub fn serve_adopted(state_fd: i32) -> anyhow::Result<()> {
    let fd = crate::upgrade::inherit::inherited_fd(state_fd, nix::sys::stat::SFlag::S_IFREG)?;
    let handover = crate::upgrade::handover::Handover::read_from(std::fs::File::from(fd))?;
    // Before this process starts children of its own (the hosted MCP servers), so that only
    // the old server's are reaped here.
    let panes: Vec<u32> = handover.panes.iter().map(|p| p.pid).collect();
    let orphans = crate::upgrade::orphans::reap_all_but(&panes);
    serve_from(Start::Adopt(Box::new(handover)), orphans)
}

/// Runs the server until it exits (`orphans`: children of the replaced server being reaped,
/// for the log). Blocks the calling thread.
fn serve_from(start: Start, orphans: usize) -> anyhow::Result<()> {
    init_logging();
    if orphans > 0 {
        tracing::info!("server-upgrade: reaping {orphans} children of the old server");
    }
    let socket = match &start {
        Start::Fresh(socket) => socket.clone(),
        Start::Adopt(handover) => PathBuf::from(&handover.socket_path),
    };
    let open_files = match crate::accept_backoff::raise_open_files_limit() {
        Ok(limit) => {
            tracing::info!("open files limit: {limit}");
            Some(limit)
        }
        Err(e) => {
            tracing::warn!("could not raise the open files limit: {e}");
            None
        }
    };
    // One thread for the owner, the connections, the HTTP endpoint and the hosted servers' and
    // views' traffic: they do little work each (parsing happens on pane reader threads), and
    // keeping them together saves a cross-thread wake-up on every hop of the keystroke-to-echo
    // path. A second, multi-threaded runtime for the endpoint and hosted calls was measured
    // (docs/performance.md, hosting benchmark): on two cores it lowered hosted throughput from
    // 56% to 40% of a direct server and added 0.14 ms to a call's p50, since the benchmark's own
    // client and server already fill both cores and the extra wake-ups cost more than they win.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("failed to start the async runtime")?;
    runtime.block_on(async move {
        let listener = match &start {
            Start::Fresh(socket) => bind(socket).await?,
            Start::Adopt(handover) => super::io::socket::inherited(handover.socket_fd)?,
        };
        let socket_fd = std::os::fd::AsRawFd::as_raw_fd(&listener);
        let inherited_endpoint = match &start {
            Start::Adopt(handover) => {
                handover
                    .endpoint
                    .as_ref()
                    .map(|e| crate::http::InheritedListener {
                        fd: e.fd,
                        token: e.token.clone(),
                    })
            }
            Start::Fresh(_) => None,
        };
        let (config, errors) = crate::config::Config::load(&paths::config_file());
        for e in &errors {
            tracing::warn!("{e}");
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let bound = super::io::socket_keeper::BoundSocket::at(&socket);
        tokio::spawn(super::io::socket_keeper::serve(
            listener,
            socket.clone(),
            bound.clone(),
            tx.clone(),
        ));
        let peers = std::sync::Arc::new(crate::mcp::PeerRegistry::new());
        let mcp_tools = std::sync::Arc::new(crate::mcp::ToolSet::with_disabled(
            config.mcp_disabled_tools.clone(),
        ));
        let mut hosted_route = crate::hosted::route::HostedRoute::new(config.mcp_host_servers);
        // One hub of views per server, shared by `/mcp-hosted` (which creates them), the
        // owner (cards, lifetimes, `calyx mcp views`) and the view server.
        let lookup = std::sync::Arc::new(super::io::mcp_backend::OwnerBackend { tx: tx.clone() });
        hosted_route.views =
            crate::hosted::views::ViewWire::new(config.mcp_apps.views, Some(lookup));
        let views = hosted_route.views.clone();
        let app_tools = hosted_route.apps.clone();
        let hosted_registry = hosted_route.registry.clone();
        let trimmer = crate::memory::Trimmer::default();
        let endpoint = start_endpoint(
            tx.clone(),
            mcp_tools.clone(),
            peers.clone(),
            hosted_route.clone(),
            open_files,
            inherited_endpoint,
            trimmer.clone(),
        )
        .await;
        let hosting = start_hosting(
            hosted_route,
            config.mcp_secret_store,
            config.mcp_client_metadata_url.clone(),
        )
        .await;
        let signal_tx = tx.clone();
        tokio::spawn(async move {
            use tokio::signal::unix::{signal, SignalKind};
            let (Ok(mut term), Ok(mut int), Ok(mut hup)) = (
                signal(SignalKind::terminate()),
                signal(SignalKind::interrupt()),
                signal(SignalKind::hangup()),
            ) else {
                return;
            };
            loop {
                tokio::select! {
                    _ = term.recv() => break,
                    _ = int.recv() => break,
                    // The server has no terminal of its own: a hangup means nothing to it.
                    _ = hup.recv() => continue,
                }
            }
            let _ = signal_tx.send(Msg::Shutdown);
        });
        tracing::info!(
            "calyx server {} listening on {}",
            env!("CARGO_PKG_VERSION"),
            socket.display()
        );
        let mut server = Server::new(config, errors, socket.display().to_string(), tx, mcp_tools);
        // One trim schedule for the whole server: MCP sessions closing trim on it too.
        server.state.trimmer = trimmer;
        server.peers = peers;
        let app_requests = crate::views::app_requests::AppRequests::new(server.tx.clone());
        app_requests.follow_removals(&views.hub);
        match crate::server::io::view_server::start(
            views.hub.clone(),
            hosted_registry.clone(),
            // A view's Open Link and Send Message wait for the user in the approval panel;
            // the tools its page registers are published to its pane's agents.
            crate::server::io::view_server::with_app_tools(
                app_tools.clone(),
                views.hub.clone(),
                crate::server::io::view_server::app_actions(views.hub.clone(), app_requests),
            ),
            &server.state.config.mcp_apps,
        )
        .await
        {
            Ok(handle) => {
                app_tools.set_apps(handle.apps());
                let ports = handle.ports();
                tracing::info!(
                    "MCP App views on 127.0.0.1:{} (sandbox {})",
                    ports.host,
                    ports.sandbox
                );
                server.view_server = Some(handle);
            }
            Err(e) => tracing::warn!("the MCP App view server did not start: {e:#}"),
        }
        server.views = views;
        server.hosted_registry = hosted_registry;
        server.watch_views();
        match hosting {
            Ok(hosting) => server.hosting = Some(hosting),
            Err(why) => server.hosting_unavailable = Some(why),
        }
        server.watch_server_states();
        server.watch_sign_in_prompts();
        server.watch_elicitations();
        server.upgrade.socket_fd = Some(socket_fd);
        server.upgrade.endpoint =
            endpoint
                .as_ref()
                .map(|handle| crate::upgrade::handover::HandedEndpoint {
                    fd: handle.listener_fd(),
                    port: handle.port(),
                    token: handle.token().to_string(),
                });
        server.persisted = crate::server::operations::persistence::Persisted::start();
        server.state.socket_bound = bound.clone();
        match &start {
            Start::Fresh(_) => {
                server.apply_saved_rules_at_start();
                server.restore_at_start();
            }
            // The rules came with the handover, in force as they were.
            Start::Adopt(handover) => server.adopt(handover),
        }
        // The saved machines' links (none, and no task, without saved machines).
        if let Err(e) = server.follow_machines() {
            tracing::warn!("saved machines: {e}");
        }
        // Start-up ran code a quiet server never runs again (the command line's parser, the
        // MCP tool schemas, the endpoints' set-up): a trim once the first client's request is
        // done hands its mapped pages back (src/code_pages.rs).
        server.state.trimmer.soon();
        server.run(rx).await;
        if let Some(handle) = endpoint {
            if let Err(e) = handle.shutdown().await {
                tracing::warn!("agent endpoint shutdown: {e:#}");
            }
        }
        bound.remove(&socket);
        tracing::info!("calyx server exiting");
        Ok::<(), anyhow::Error>(())
    })?;
    // Give writer tasks no chance to linger: the runtime is dropped here.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    Ok(())
}

impl Server {
    /// Runs until the last session ends or the server is killed.
    pub async fn run(mut self, mut rx: mpsc::UnboundedReceiver<Msg>) {
        self.owner_loop = true;
        while self.turn(&mut rx).await {}
        // The last save is written before the socket goes, so a server started right after
        // this one reads it; the socket goes before the panes' programs are stopped (which may
        // take a second), so a client started meanwhile starts a new server instead of
        // attaching to this one as it exits.
        self.save_at_shutdown();
        let socket_bound = self.state.socket_bound.clone();
        socket_bound.remove(std::path::Path::new(&self.state.socket_path));
        self.shutdown();
    }

    /// One turn of the owner loop: the frame due, then the next message, input, echo or timer,
    /// and the next frame scheduled. False when the loop is to end. (Tests drive a server with
    /// it turn by turn, where `run` would own it.)
    pub(crate) async fn turn(&mut self, rx: &mut mpsc::UnboundedReceiver<Msg>) -> bool {
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
            self.persisted.due(),
        ]
        .into_iter()
        .flatten()
        .min();
        let owner_read = self.owner_reads.as_ref().map(|r| r.ready());
        let reading = owner_read.is_some();
        let terminals = self.direct_terminals();
        tokio::select! {
            (id, input) = io::terminal::next_input(&terminals), if !terminals.is_empty() => {
                self.handle(match input {
                    io::terminal::TerminalInput::Bytes(bytes) => Msg::Input { id, bytes },
                    io::terminal::TerminalInput::Lost => Msg::TerminalLost { id },
                })
            }
            () = io::echo_watch::readable(owner_read), if reading => self.owner_output(),
            msg = rx.recv() => match msg {
                Some(msg) => self.handle(msg),
                None => return false,
            },
            _ = sleep_until(deadline), if deadline.is_some() => self.on_timer(),
        }
        if self.state.quit {
            return false;
        }
        self.state
            .trimmer
            .set_attached(!self.state.clients.is_empty());
        self.schedule_render();
        self.push_watch();
        if let Some((binary, client)) = self.upgrade.due.take() {
            self.flush_connections().await;
            self.exec_upgrade(&binary, client);
        }
        true
    }

    pub(crate) fn handle(&mut self, msg: Msg) {
        // Focus and the set of panes can change with any message but pane output and endpoint
        // events (an MCP pane_split opens a pane that does not take focus).
        let focus_may_change = matches!(
            msg,
            Msg::Message { .. } | Msg::Input { .. } | Msg::PaneExited { .. } | Msg::Mcp(_)
        );
        // Pane output changes nothing a watcher is sent (see `operations::watch`); a client's
        // input marks it due itself unless it only went to panes (`input::route`), so typing
        // into a pane of a watched server works no snapshot out per key.
        if !matches!(msg, Msg::PaneOutput { .. } | Msg::Input { .. }) {
            self.watch_due = true;
        }
        self.dispatch(msg);
        self.persisted.changed(Instant::now());
        if focus_may_change {
            self.update_focus();
        }
        self.forget_gone_frames();
    }

    /// Drops the frames of clients that are gone (detached, disconnected, their session
    /// killed), in the same turn, before the trimmer hands their memory back.
    pub(crate) fn forget_gone_frames(&mut self) {
        if self.frames.len() > self.state.clients.len() {
            let clients = &self.state.clients;
            self.frames.retain(|id, _| clients.contains_key(id));
        }
    }

    pub(crate) fn dispatch(&mut self, msg: Msg) {
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
                self.watchers.remove(&id);
                self.remote_calls.end(id);
                self.anywhere_link_closed(id);
                self.frames.remove(&id);
                let was_attached = if let Some(c) = self.state.clients.remove(&id) {
                    let session = c.session;
                    // Its frame buffers go before the memory is handed back.
                    drop(c);
                    self.state.resize_session_to_clients(session);
                    true
                } else {
                    false
                };
                // A connection closing ends a burst of work (an attached client's, or one
                // command's: a capture's text, a listing): the heap it freed and the code it
                // ran are handed back a little later, once per burst (src/memory.rs). Not after
                // a command while someone is attached: handing back the code pages then would
                // make the next keystrokes' code fault back in, on the echo's path.
                if was_attached || self.state.clients.is_empty() {
                    self.state.trimmer.soon();
                }
            }
            Msg::PaneOutput { pane } => {
                tracing::trace!("output from pane {pane}");
                self.untaken_output(pane);
                self.pane_output(pane)
            }
            Msg::PaneExited { pane, status } => self.pane_exited(pane, status),
            Msg::Endpoint(request) => self.endpoint_request(request),
            Msg::ApprovalWithdrawn { id } => self.approval_withdrawn(id),
            Msg::SocketRebound { fd } => {
                self.upgrade.socket_fd = Some(fd);
                // A removed runtime directory took the shell integration's scripts with it.
                if let Some(scripts) = &self.state.shell_integration {
                    if let Err(e) = scripts.reinstall() {
                        tracing::warn!("shell integration: writing its scripts again: {e}");
                    }
                }
            }
            Msg::App(msg) => self.app_message(msg),
            Msg::Mcp(op) => self.mcp_op(op),
            Msg::PaneWrite { pane, bytes, mark } => {
                let next = self.next_command_seq(pane);
                if let Some(p) = self.state.panes.get(&pane) {
                    p.process.write(bytes);
                }
                let _ = mark.send(next);
            }
            Msg::Reply { id, response } => self.reply(id, response),
            Msg::TaggedReply { id, tag, response } => self.send_to(
                id,
                &crate::protocol::ServerMessage::Tagged { tag, response },
            ),
            Msg::Shutdown => self.state.quit = true,
            Msg::Machine(event) => self.machine_event(event),
            Msg::Views(event) => self.views_event(event),
            Msg::Servers(done) => self.servers_done(done),
            Msg::ChooserMachine(done) => self.chooser_machine_answered(done),
            Msg::AnywhereMade {
                machine,
                shown,
                key,
                rule,
            } => self.anywhere_adopt(&machine, &shown, key, &rule),
            Msg::SignInPrompts => self.sign_in_prompts_changed(),
            Msg::Elicitations => self.elicitations_changed(),
            Msg::SignInStep { alias, step } => self.sign_in_step(&alias, step),
            Msg::SignInFailed { alias, sentence } => self.sign_in_failed(&alias, sentence),
            Msg::UpgradeChecked {
                client,
                binary,
                result,
            } => self.upgrade_checked(client, binary, result),
        }
    }

    /// The terminals the server reads itself, with their clients (read in the owner loop).
    pub(crate) fn direct_terminals(&self) -> Vec<(ClientId, io::terminal::DirectTerminal)> {
        self.state
            .clients
            .values()
            .filter_map(|c| c.direct.clone().map(|t| (c.id, t)))
            .collect()
    }

    /// Sets the render timer when a client needs a frame: now if the last frame is old enough,
    /// else at the next frame slot.
    pub(crate) fn schedule_render(&mut self) {
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

    pub(crate) fn schedule_message_expiry(&mut self) {
        let next = self
            .state
            .clients
            .values()
            .filter_map(|c| c.message.as_ref().map(|m| m.1 + MESSAGE_TIME))
            .min();
        self.message_expiry = next;
    }

    pub(crate) fn on_timer(&mut self) {
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
            self.watch_due = true;
        }
        if self.agent_deadline().is_some_and(|t| t <= now) {
            self.agent_timer(now);
            self.watch_due = true;
        }
        self.panel_keys_woke(now);
        if self.label_recheck_at().is_some_and(|t| t <= now) {
            self.recheck_labels(now);
        }
        self.save_if_due(now);
        if self.render_at.is_some_and(|t| t <= now) {
            self.render_at = None;
            self.take_held_output();
            self.render_all();
        }
    }

    /// When a pane name shown from the cache should be read again (see `label`).
    pub(crate) fn label_recheck_at(&self) -> Option<Instant> {
        self.state
            .panes
            .values()
            .filter_map(|p| p.label_cache.recheck_at())
            .min()
    }

    /// Reads again the pane names shown from the cache; redraws where one changed.
    pub(crate) fn recheck_labels(&mut self, now: Instant) {
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
    pub(crate) fn holding_for_sync(&self, client: &Client) -> bool {
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
                .is_some_and(|p| p.glance.synchronized_output())
        })
    }

    pub(crate) fn render_all(&mut self) {
        self.forget_gone_frames();
        let now = Instant::now();
        let dirty: Vec<ClientId> = self
            .state
            .clients
            .values()
            .filter(|c| c.dirty)
            .map(|c| c.id)
            .collect();
        let mut held = false;
        let mut due = Vec::with_capacity(dirty.len());
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
            due.push(id);
        }
        // Pane contents first, in the chrome last drawn: an echo is on its way before the
        // rest of the frame is looked at (see `render::render_early`).
        for &id in &due {
            let cache = self.frames.entry(id).or_default();
            if let Some(frame) = render::render_early(&mut self.state, id, cache) {
                self.send_frame(id, frame);
            }
        }
        let agents = view::sidebar::AgentsView::build(&self.state, &self.agents, &self.approvals)
            .with_machines(&self.machines);
        for id in due {
            let started = std::time::Instant::now();
            let shown = self.panel_request(id);
            self.panel_drawn(id, shown);
            let panel = shown.and_then(|request| self.panel_data_of(id, request));
            let tree = self.tree_data(id);
            let cache = self.frames.entry(id).or_default();
            let rendered =
                render::render_client(&mut self.state, &agents, panel.as_ref(), tree, id, cache);
            tracing::trace!("frame for client {id} in {:?}", started.elapsed());
            if let Some(frame) = rendered {
                self.send_frame(id, frame);
            }
        }
        if !held {
            self.sync_hold_since = None;
        }
        self.last_render = now;
    }

    /// Sends a frame to its client's terminal (none when it has no bytes: nothing changed).
    fn send_frame(&mut self, id: ClientId, frame: render::Rendered) {
        if frame.bytes.is_empty() {
            return;
        }
        self.state.counts.frame();
        let Some(c) = self.state.clients.get_mut(&id) else {
            return;
        };
        if c.send_terminal(frame.bytes).is_err() {
            // The client is behind: redraw it whole next time instead of queueing.
            if let Some(cache) = self.frames.get_mut(&id) {
                cache.redraw_whole();
            }
            c.dirty = true;
        }
    }

    pub(crate) fn shutdown(&mut self) {
        self.save_at_shutdown();
        let ids: Vec<ClientId> = self.state.clients.keys().copied().collect();
        for id in ids {
            self.state.detach_client(id, "server exited");
        }
        let mut reapers = std::mem::take(&mut self.state.reapers);
        for p in self.state.panes.values_mut() {
            reapers.extend(p.process.terminate(model::panes::KILL_GRACE));
        }
        self.connections.clear();
        // Programs that ignore SIGHUP are killed before the server goes away.
        for r in reapers {
            let _ = r.join();
        }
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(t) => tokio::time::sleep_until(t).await,
        None => std::future::pending().await,
    }
}
