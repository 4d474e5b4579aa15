//! Starting, closing and sizing panes, windows and sessions.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use calyx_pty::{HistoryLimits, SpawnOptions, Terminal};
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::layout::{PaneId, SplitDir};
use crate::protocol::NewSession;
use ratatui::layout::Rect;

use super::state::{
    smallest_size, Pane, Session, SessionId, State, Window, DETACHED_SIZE, ROOMY_CELLS,
};
use crate::server::io::pane_notifier::PaneNotifier;
use crate::server::messages::Msg;

/// How long a closed pane's program has after SIGHUP before it is killed.
pub const KILL_GRACE: Duration = Duration::from_millis(1000);

/// The environment a pane starts with: the session's, plus calyx's identity variables.
fn pane_env(
    session_env: &[(String, String)],
    surface: &str,
    record: &str,
    pane: PaneId,
    socket: &str,
) -> Vec<(String, String)> {
    let ours = [
        "TERM",
        "COLORTERM",
        "CALYX",
        "CALYX_SURFACE_ID",
        "CALYX_SESSION_ID",
        "CALYX_PANE_ID",
        "TMUX",
        "TMUX_PANE",
    ];
    let mut env: Vec<(String, String)> = session_env
        .iter()
        .filter(|(k, _)| !ours.contains(&k.as_str()))
        .cloned()
        .collect();
    // A `--remote` client sends only its terminal's variables (its PATH and HOME are another
    // machine's): everything else comes from this server's own environment, the remote login's.
    if !session_env.iter().any(|(k, _)| k == "PATH") {
        let given: Vec<String> = env.iter().map(|(k, _)| k.clone()).collect();
        let own = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)));
        env.extend(own.filter(|(k, _)| {
            !given.contains(k) && !ours.contains(&k.as_str()) && k != "CALYX_SOCKET"
        }));
    }
    env.push(("TERM".into(), "xterm-256color".into()));
    env.push(("COLORTERM".into(), "truecolor".into()));
    env.push(("CALYX".into(), socket.into()));
    env.push(("CALYX_SURFACE_ID".into(), surface.into()));
    env.push(("CALYX_SESSION_ID".into(), record.into()));
    env.push(("CALYX_PANE_ID".into(), format!("%{pane}")));
    env
}

impl State {
    /// A session with no windows yet, of `rows` x `cols` (at least 2x2), with the config's
    /// sidebar and borders: what a new session and a restored one start from.
    pub(crate) fn empty_session(
        &self,
        id: SessionId,
        name: String,
        env: Vec<(String, String)>,
        rows: u16,
        cols: u16,
    ) -> Session {
        Session {
            id,
            name,
            windows: Vec::new(),
            active_window: 0,
            last_window: None,
            env,
            rows: rows.max(2),
            cols: cols.max(2),
            roomy_size: if u32::from(rows) * u32::from(cols) <= ROOMY_CELLS {
                (rows.max(2), cols.max(2))
            } else {
                DETACHED_SIZE
            },
            last_used: Instant::now(),
            sidebar: self.config.sidebar,
            pane_borders: self.config.pane_borders,
        }
    }

    /// Remembers a pane's reaper thread so the server can wait for it before exiting.
    fn keep_reaper(&mut self, reaper: Option<std::thread::JoinHandle<()>>) {
        self.reapers.retain(|r| !r.is_finished());
        self.reapers.extend(reaper);
    }

    /// Starts a pane in `session` with the given content size. It is not placed in a layout.
    pub fn spawn_pane(
        &mut self,
        session: SessionId,
        cwd: Option<String>,
        command: Vec<String>,
        rows: u16,
        cols: u16,
        tx: &mpsc::UnboundedSender<Msg>,
    ) -> anyhow::Result<PaneId> {
        self.spawn_pane_as(session, None, cwd, command, (rows, cols), tx)
    }

    /// [`State::spawn_pane`] keeping the record id (CALYX_SESSION_ID) `record` when no pane
    /// holds it (a restored pane keeps the one it had); else a new one.
    pub fn spawn_pane_as(
        &mut self,
        session: SessionId,
        record: Option<String>,
        cwd: Option<String>,
        command: Vec<String>,
        (rows, cols): (u16, u16),
        tx: &mpsc::UnboundedSender<Msg>,
    ) -> anyhow::Result<PaneId> {
        let env = self
            .sessions
            .get(&session)
            .map(|s| s.env.clone())
            .unwrap_or_default();
        let id = self.next_pane;
        self.next_pane += 1;
        let surface = uuid::Uuid::new_v4().to_string();
        let record = record
            .filter(|r| !r.is_empty() && !self.panes.values().any(|p| &p.record_id == r))
            .unwrap_or_else(|| surface.clone());
        let limits = HistoryLimits {
            lines: self.config.scrollback_lines,
            bytes: self.config.scrollback_bytes,
        };
        let terminal = Terminal::new(rows, cols, limits);
        let glance = terminal.glance();
        let terminal = Arc::new(Mutex::new(terminal));
        let notifier = Arc::new(PaneNotifier::new(id, tx.clone()));
        let cwd = cwd.or_else(|| env.iter().find(|(k, _)| k == "PWD").map(|(_, v)| v.clone()));
        let mut env = pane_env(&env, &surface, &record, id, &self.socket_path);
        // PWD follows the pane's directory, as in tmux: programs that trust $PWD over getcwd
        // (OpenCode does) would otherwise work in the client's directory, not the pane's.
        if let Some(dir) = &cwd {
            env.retain(|(k, _)| k != "PWD");
            env.push(("PWD".into(), dir.clone()));
        }
        let program = command
            .first()
            .cloned()
            .or_else(|| {
                env.iter()
                    .find(|(k, _)| k == "SHELL")
                    .map(|(_, v)| v.clone())
            })
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| "/bin/sh".to_string());
        let program = program.rsplit('/').next().unwrap_or(&program).to_string();
        let (shell, start) = match self
            .shell_integration
            .as_ref()
            .and_then(|si| si.activate(&command, &mut env))
        {
            Some((shell, start)) => (Some(shell), start),
            None => (None, command.clone()),
        };
        let options = SpawnOptions {
            command: start,
            cwd: cwd.clone(),
            env,
            rows,
            cols,
        };
        let process = self
            .processes
            .spawn(&options, terminal.clone(), notifier.clone())?;
        self.notifiers.insert(id, notifier);
        self.panes.insert(
            id,
            Pane {
                id,
                surface_id: surface,
                record_id: record,
                glance,
                terminal,
                process,
                program,
                start_command: command,
                start_cwd: cwd.unwrap_or_default(),
                rows,
                cols,
                exited: None,
                copy: None,
                session,
                shell,
                label_cache: Default::default(),
            },
        );
        Ok(id)
    }

    /// Creates a session with one window and one pane.
    pub fn create_session(
        &mut self,
        spec: NewSession,
        rows: u16,
        cols: u16,
        tx: &mpsc::UnboundedSender<Msg>,
    ) -> anyhow::Result<(SessionId, PaneId)> {
        let NewSession {
            name,
            cwd,
            command,
            env,
        } = spec;
        let (rows, cols) = calyx_pty::limits::clamp_size(rows, cols);
        let id = self.next_session;
        let name = match name {
            Some(n) if self.sessions.values().any(|s| s.name == n) => {
                anyhow::bail!("duplicate session: {n}")
            }
            Some(n) if n.is_empty() || n.contains(':') || n.contains('.') => {
                anyhow::bail!("bad session name {n:?}: it may not be empty or contain ':' or '.'")
            }
            Some(n) => n,
            None => {
                let mut n = id;
                while self.sessions.values().any(|s| s.name == n.to_string()) {
                    n += 1;
                }
                n.to_string()
            }
        };
        self.next_session += 1;
        let session = self.empty_session(id, name, env, rows, cols);
        self.sessions.insert(id, session);
        match self.add_window(id, None, cwd, command, false, tx) {
            Ok(pane) => Ok((id, pane)),
            Err(e) => {
                self.sessions.remove(&id);
                Err(e)
            }
        }
    }

    /// Adds a window with one pane to a session and (unless `detached`) selects it.
    pub fn add_window(
        &mut self,
        session: SessionId,
        name: Option<String>,
        cwd: Option<String>,
        command: Vec<String>,
        detached: bool,
        tx: &mpsc::UnboundedSender<Msg>,
    ) -> anyhow::Result<PaneId> {
        let (rows, cols) = self
            .sessions
            .get(&session)
            .map(|s| s.pane_borders.content_size(s.layout_area()))
            .ok_or_else(|| anyhow::anyhow!("no such session"))?;
        let cwd = start_dir(cwd)?;
        let pane = self.spawn_pane(session, cwd, command, rows, cols, tx)?;
        let auto_name = name.is_none();
        let label = name.unwrap_or_else(|| {
            self.panes
                .get(&pane)
                .map(|p| p.current_command())
                .unwrap_or_default()
        });
        let base_index = self.config.base_index;
        if let Some(s) = self.sessions.get_mut(&session) {
            let at = s.insert_window(Window::new(label, auto_name, pane), base_index);
            if !detached || s.windows.len() == 1 {
                s.last_window = Some(s.active_window);
                s.active_window = at;
            }
        }
        self.mark_session_dirty(session);
        Ok(pane)
    }

    /// Splits `target`, starting a new pane beside or below it (in `cwd`, else in the target
    /// pane's directory).
    pub fn split_pane(
        &mut self,
        target: PaneId,
        dir: SplitDir,
        detached: bool,
        cwd: Option<String>,
        command: Vec<String>,
        tx: &mpsc::UnboundedSender<Msg>,
    ) -> anyhow::Result<PaneId> {
        let (session, window) = self
            .locate(target)
            .ok_or_else(|| anyhow::anyhow!("no such pane"))?;
        let cwd = start_dir(cwd)?.or_else(|| self.panes.get(&target).map(|p| p.cwd()));
        let (rows, cols) = self
            .panes
            .get(&target)
            .map(|p| (p.rows, p.cols))
            .unwrap_or((24, 80));
        // Each half needs its border and at least one cell; like tmux, refuse rather than
        // squeeze a pane to nothing.
        let frame = self
            .sessions
            .get(&session)
            .map_or(2, |s| s.pane_borders.frame_cells());
        let room = match dir {
            SplitDir::Horizontal => cols + frame >= 6,
            SplitDir::Vertical => rows + frame >= 6,
        };
        if !room {
            anyhow::bail!("no space for new pane");
        }
        let (rows, cols) = match dir {
            SplitDir::Horizontal => (rows, (cols / 2).max(1)),
            SplitDir::Vertical => ((rows / 2).max(1), cols),
        };
        let pane = self.spawn_pane(session, cwd, command, rows, cols, tx)?;
        if let Some(w) = self
            .sessions
            .get_mut(&session)
            .and_then(|s| s.windows.get_mut(window))
        {
            w.layout.split(target, pane, dir);
            w.zoomed = false;
            if !detached {
                w.last_active = Some(w.active);
                w.active = pane;
            }
        }
        self.relayout(session);
        Ok(pane)
    }

    /// Removes a pane from its window (closing the window, and the session, when it was the
    /// last). Its program gets SIGHUP; one that ignores it is killed.
    pub fn close_pane(&mut self, pane: PaneId) {
        let located = self.locate(pane);
        if let Some(mut p) = self.panes.remove(&pane) {
            if p.exited.is_none() {
                let reaper = p.process.terminate(KILL_GRACE);
                self.keep_reaper(reaper);
            }
        }
        self.notifiers.remove(&pane);
        let Some((session, window)) = located else {
            return;
        };
        let mut window_gone = false;
        if let Some(s) = self.sessions.get_mut(&session) {
            if let Some(w) = s.windows.get_mut(window) {
                window_gone = !w.remove_pane(pane);
            }
        }
        if window_gone {
            self.remove_window(session, window);
        } else {
            self.relayout(session);
        }
    }

    /// Removes the window at position `window` whose panes are gone (or kills them first). The
    /// other windows keep their numbers unless `renumber_windows` is on.
    pub fn remove_window(&mut self, session: SessionId, window: usize) {
        let Some(s) = self.sessions.get_mut(&session) else {
            return;
        };
        let Some(w) = s.take_window(window) else {
            return;
        };
        if self.config.renumber_windows {
            s.renumber_windows(self.config.base_index);
        }
        let empty = s.windows.is_empty();
        for pane in w.layout.panes() {
            if let Some(mut p) = self.panes.remove(&pane) {
                let reaper = p.process.terminate(KILL_GRACE);
                self.keep_reaper(reaper);
            }
            self.notifiers.remove(&pane);
        }
        if empty {
            self.remove_session(session, "session ended");
        } else {
            self.relayout(session);
        }
    }

    /// Kills a session: its panes, and detaches its clients.
    pub fn remove_session(&mut self, session: SessionId, why: &str) {
        let Some(s) = self.sessions.remove(&session) else {
            return;
        };
        for w in &s.windows {
            for pane in w.layout.panes() {
                if let Some(mut p) = self.panes.remove(&pane) {
                    let reaper = p.process.terminate(KILL_GRACE);
                    self.keep_reaper(reaper);
                }
                self.notifiers.remove(&pane);
            }
        }
        let gone: Vec<_> = self
            .clients
            .values()
            .filter(|c| c.session == session)
            .map(|c| c.id)
            .collect();
        for id in gone {
            self.detach_client(id, why);
        }
        if self.sessions.is_empty() {
            self.quit = true;
        }
    }

    /// Recomputes a session's size from its clients (the smallest wins, as in tmux) and lays out
    /// every window again. With no client left, the session keeps its size unless it is over
    /// [`ROOMY_CELLS`]; then it goes back to its last size within that. When the session
    /// shrinks, the memory its panes freed is handed back to the system.
    pub fn resize_session_to_clients(&mut self, session: SessionId) {
        let sizes = self
            .clients
            .values()
            .filter(|c| c.session == session)
            .map(|c| (c.rows, c.cols));
        let Some(s) = self.sessions.get_mut(&session) else {
            return;
        };
        let cells = |(rows, cols): (u16, u16)| u32::from(rows) * u32::from(cols);
        let before = cells((s.rows, s.cols));
        let (rows, cols) = match smallest_size(sizes) {
            Some(size) => size,
            None if before > ROOMY_CELLS => s.roomy_size,
            None => return,
        };
        s.rows = rows;
        s.cols = cols;
        if cells((rows, cols)) <= ROOMY_CELLS {
            s.roomy_size = (rows, cols);
        }
        self.relayout(session);
        if cells((rows, cols)) < before {
            self.trimmer.soon();
        }
    }

    /// Frames every session's panes as `borders` says (reload-config), resizing the panes of
    /// the sessions that change.
    pub fn set_pane_borders(&mut self, borders: crate::pane_borders::PaneBorders) {
        let changed: Vec<SessionId> = self
            .sessions
            .values_mut()
            .filter(|s| s.pane_borders != borders)
            .map(|s| {
                s.pane_borders = borders;
                s.id
            })
            .collect();
        for session in changed {
            self.relayout(session);
        }
    }

    /// Resizes every pane of a session to its place in the layout.
    pub fn relayout(&mut self, session: SessionId) {
        let Some(s) = self.sessions.get(&session) else {
            return;
        };
        for (pane, rows, cols) in s.pane_sizes() {
            // A dock takes its share of the pane's content area (see `dock`).
            let (rows, cols) = match self.docks.get(&pane) {
                Some(dock) => {
                    let area = super::dock::split(Rect::new(0, 0, cols, rows), dock.percent);
                    let pane = area.pane();
                    (pane.height.max(1), pane.width.max(1))
                }
                None => (rows, cols),
            };
            if let Some(p) = self.panes.get_mut(&pane) {
                if (p.rows, p.cols) != (rows, cols) {
                    p.rows = rows;
                    p.cols = cols;
                    p.term().resize(rows, cols);
                    p.process.resize(rows, cols);
                    if p.copy.is_some() {
                        p.copy = None;
                    }
                }
            }
        }
        self.mark_session_dirty(session);
    }
}

/// Checks a directory a new pane was asked to start in (`-c DIR`, an MCP `cwd`): it must be an
/// absolute path to a directory, else the request fails with a clear error instead of the pane
/// quietly starting somewhere else. (Clients make relative paths absolute against their own
/// directory: the server's is unrelated to theirs.)
pub fn start_dir(cwd: Option<String>) -> anyhow::Result<Option<String>> {
    let Some(dir) = cwd else {
        return Ok(None);
    };
    let path = std::path::Path::new(&dir);
    if !path.is_absolute() {
        anyhow::bail!("start directory {dir:?} is not an absolute path");
    }
    if !path.is_dir() {
        anyhow::bail!("no such directory: {dir}");
    }
    Ok(Some(dir))
}
