//! `calyx server-upgrade` on the running server's side: the new binary is checked off the
//! loop against a snapshot of the state (`crate::upgrade::check`); when it passes, attached
//! clients are told to reconnect, their queues are flushed (see `main_loop`), every pane's
//! terminal is locked (no reader thread reads a byte this server would not hand over), the
//! state is written into a memfd and the process execs the new binary in place
//! (`crate::upgrade::exec`). A check or an exec that fails leaves this server serving, and the
//! one who asked is told why.

use std::os::fd::RawFd;
use std::path::PathBuf;

use crate::protocol::{Response, ServerMessage};
use crate::server::messages::Msg;
use crate::server::model::ids::ClientId;
use crate::server::owner::Server;
use crate::upgrade::handover::{
    HandedEndpoint, HandedPane, HandedSession, HandedWindow, Handover, HANDOVER_VERSION,
};

/// Longest the exec waits for the clients' queues to empty.
const FLUSH_TIME: std::time::Duration = std::time::Duration::from_millis(100);

/// The owner's side of an upgrade.
#[derive(Debug, Default)]
pub struct Upgrade {
    /// The listening descriptors this server hands over (set at start).
    pub socket_fd: Option<RawFd>,
    pub endpoint: Option<HandedEndpoint>,
    /// A check is running (one upgrade at a time).
    checking: bool,
    /// Checked and due: the binary to exec once the clients' queues are flushed, and who asked.
    pub due: Option<(PathBuf, Option<ClientId>)>,
}

impl Server {
    /// Starts an upgrade to `binary` (None: the installed calyx). `client` hears the outcome
    /// when it fails (on success its connection closes with the exec); without one (the `:`
    /// prompt) a failure is shown on every attached client's status line.
    pub(crate) fn server_upgrade(&mut self, client: Option<ClientId>, binary: Option<String>) {
        if self.upgrade.checking || self.upgrade.due.is_some() {
            self.upgrade_failed(client, "an upgrade is already under way".into());
            return;
        }
        let binary = match binary {
            Some(path) => PathBuf::from(path),
            None => match crate::upgrade::installed_binary() {
                Ok(path) => path,
                Err(e) => return self.upgrade_failed(client, format!("{e:#}")),
            },
        };
        let preview = match serde_json::to_vec(&self.handover(&mut |_| None)) {
            Ok(preview) => preview,
            Err(e) => return self.upgrade_failed(client, format!("the state did not encode: {e}")),
        };
        self.upgrade.checking = true;
        tracing::info!("server-upgrade: checking {}", binary.display());
        let tx = self.tx.clone();
        tokio::task::spawn_blocking(move || {
            let result = crate::upgrade::check::check_binary(&binary, &preview);
            let _ = tx.send(Msg::UpgradeChecked {
                client,
                binary,
                result,
            });
        });
    }

    /// The check's outcome: on success the clients are told and the exec is due.
    pub(crate) fn upgrade_checked(
        &mut self,
        client: Option<ClientId>,
        binary: PathBuf,
        result: Result<String, String>,
    ) {
        self.upgrade.checking = false;
        match result {
            Err(why) => self.upgrade_failed(client, why),
            Ok(version) => {
                tracing::info!(
                    "server-upgrade: handing over to {version} ({})",
                    binary.display()
                );
                let attached: Vec<(ClientId, String)> = self
                    .state
                    .clients
                    .values()
                    .filter_map(|c| {
                        let session = self.state.sessions.get(&c.session)?;
                        Some((c.id, session.name.clone()))
                    })
                    .collect();
                for (id, session) in attached {
                    self.send_to(id, &ServerMessage::Upgrading { session });
                }
                self.upgrade.due = Some((binary, client));
            }
        }
    }

    /// Waits (at most [`FLUSH_TIME`]) until every connection's writer took what was queued
    /// for it (the `Upgrading` notices), so the exec does not cut them off.
    pub(crate) async fn flush_connections(&self) {
        let deadline = tokio::time::Instant::now() + FLUSH_TIME;
        while tokio::time::Instant::now() < deadline
            && self
                .connections
                .values()
                .any(|tx| tx.capacity() < tx.max_capacity())
        {
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        }
        // One more turn for the writers to finish the write they took.
        tokio::task::yield_now().await;
    }

    /// Rebuilds what the server this process replaced handed over (`serve_adopted`): the
    /// sessions and panes; the saved records of those sessions are not "not running" any more.
    pub(crate) fn adopt(&mut self, handover: &Handover) {
        self.state.adopt(handover, &self.tx);
        let now = tokio::time::Instant::now();
        let adopted: Vec<_> = handover
            .agents
            .iter()
            .filter(|row| {
                u32::try_from(row.pane).is_ok_and(|pane| self.state.panes.contains_key(&pane))
            })
            .cloned()
            .collect();
        self.agents.carry_in(&adopted, now);
        self.approvals.carry_in_rules(&handover.approval_rules);
        self.peers.carry_in(handover.peers.clone());
        let names: Vec<String> = self
            .state
            .sessions
            .values()
            .map(|s| s.name.clone())
            .collect();
        self.persisted.dormant.retain(|d| !names.contains(&d.name));
        tracing::info!(
            "server-upgrade: took over {} sessions and {} panes",
            self.state.sessions.len(),
            self.state.panes.len()
        );
    }

    fn upgrade_failed(&mut self, client: Option<ClientId>, why: String) {
        tracing::warn!("server-upgrade: {why}");
        let text = format!("server-upgrade: {why}; this server keeps running");
        match client {
            Some(id) => self.reply(id, Response::Error(text)),
            None => {
                let now = tokio::time::Instant::now();
                for c in self.state.clients.values_mut() {
                    c.message = Some((text.clone(), now));
                    c.dirty = true;
                }
                self.schedule_message_expiry();
            }
        }
    }

    /// Hands over and execs `binary`: returns only when that failed (the server goes on).
    pub(crate) fn exec_upgrade(&mut self, binary: &std::path::Path, client: Option<ClientId>) {
        // Every terminal stays locked from its snapshot to the exec, so no reader thread reads
        // output the snapshot does not hold (reads happen under the lock, see `read_gate`).
        let terminals: Vec<_> = self
            .state
            .panes
            .values()
            .map(|p| (p.id, p.terminal.clone()))
            .collect();
        let mut guards = Vec::new();
        let mut histories = std::collections::HashMap::new();
        for (id, terminal) in &terminals {
            let guard = crate::server::model::state::lock_terminal(terminal);
            histories.insert(*id, guard.history_pieces());
            guards.push(guard);
        }
        let handover = self.handover(&mut |pane| histories.remove(&pane));
        let mut keep: Vec<RawFd> = handover.panes.iter().map(|p| p.master_fd).collect();
        if handover.socket_fd >= 0 {
            keep.push(handover.socket_fd);
        }
        keep.extend(handover.endpoint.as_ref().map(|e| e.fd));
        let error: anyhow::Error = match handover.to_memfd() {
            Ok(state) => crate::upgrade::exec::exec_in_place(binary, &state, &keep).into(),
            Err(e) => e,
        };
        drop(guards);
        self.upgrade_failed(
            client,
            format!("{} did not start: {error:#}", binary.display()),
        );
    }

    /// The state to hand over; `history` gives each pane's history (None: empty, as in the
    /// preview the dry run reads).
    fn handover(
        &self,
        history: &mut dyn FnMut(crate::layout::PaneId) -> Option<calyx_pty::HistoryPieces>,
    ) -> Handover {
        let sessions = self
            .state
            .sessions
            .values()
            .map(|s| HandedSession {
                id: s.id,
                name: s.name.clone(),
                env: s.env.clone(),
                rows: s.rows,
                cols: s.cols,
                roomy_size: s.roomy_size,
                active_window: s.active_window,
                last_window: s.last_window,
                sidebar: s.sidebar,
                windows: s
                    .windows
                    .iter()
                    .map(|w| HandedWindow {
                        number: w.number,
                        name: w.name.clone(),
                        auto_name: w.auto_name,
                        layout: w.layout.clone(),
                        active: w.active,
                        last_active: w.last_active,
                        zoomed: w.zoomed,
                        synchronized: w.synchronized,
                    })
                    .collect(),
            })
            .collect();
        let panes = self
            .state
            .panes
            .values()
            .filter_map(|p| {
                let pid = p.process.pid()?;
                let master_fd = p.process.master_fd()?;
                let pieces = history(p.id).unwrap_or_default();
                Some(HandedPane {
                    id: p.id,
                    session: p.session,
                    surface_id: p.surface_id.clone(),
                    record_id: p.record_id.clone(),
                    program: p.program.clone(),
                    start_command: p.start_command.clone(),
                    start_cwd: p.start_cwd.clone(),
                    rows: p.rows,
                    cols: p.cols,
                    master_fd,
                    pid,
                    shell: p.shell.map(|s| format!("{s:?}").to_lowercase()),
                    history_start: pieces.start,
                    history: HandedPane::encode_history(&pieces),
                })
            })
            .collect();
        Handover {
            version: HANDOVER_VERSION,
            socket_path: self.state.socket_path.clone(),
            socket_fd: self.upgrade.socket_fd.unwrap_or(-1),
            endpoint: self.upgrade.endpoint.clone(),
            next_pane: self.state.next_pane,
            next_session: self.state.next_session,
            sessions,
            panes,
            agents: self.agents.carry_out(),
            approval_rules: self.approvals.carry_out_rules(),
            peers: self.peers.carry_out(),
        }
    }
}
