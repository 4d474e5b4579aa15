//! The server's state: sessions, windows, panes and attached clients. Owned by the one owner
//! loop; nothing else touches it (pane terminals are shared with their reader threads, see
//! docs/design.md).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};

use calyx_pty::Terminal;
use ratatui::layout::Rect;
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::config::Config;
use crate::input::InputParser;
use crate::layout::{Layout, PaneId};
use crate::pane_borders::PaneBorders;
use crate::server::io::processes::{PaneProcess, Processes, Pty};

use super::copy_mode::CopyMode;

/// This process's name as /proc shows it (`calyx`).
fn own_process_name() -> &'static str {
    static NAME: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    NAME.get_or_init(|| {
        std::fs::read_to_string("/proc/self/comm")
            .map(|n| n.trim().to_string())
            .unwrap_or_default()
    })
}

pub use super::ids::{ClientId, SessionId};

/// One pane: a program in a PTY and its terminal.
pub struct Pane {
    pub id: PaneId,
    /// CALYX_SURFACE_ID: a UUID unique to this pane, for agent hooks and MCP identity.
    pub surface_id: String,
    /// CALYX_SESSION_ID: the pane's persistent record id (equal to the surface id for now).
    pub record_id: String,
    pub terminal: Arc<Mutex<Terminal>>,
    /// The terminal's title and input modes, read without its lock (`calyx_pty::glance`): a
    /// flooding pane's reader holds the lock while it parses.
    pub glance: Arc<calyx_pty::glance::Glance>,
    pub process: Box<dyn PaneProcess>,
    /// The file name of the program started (the command's, else the shell's), for labels
    /// when the process cannot tell its own name.
    pub program: String,
    /// The command the pane was started with (empty: the user's shell), saved with the
    /// session so a restore knows what the user started here.
    pub start_command: Vec<String>,
    pub start_cwd: String,
    /// Content size (inside the border).
    pub rows: u16,
    pub cols: u16,
    /// Exit status once the program ended (only kept with remain-on-exit).
    pub exited: Option<Option<u32>>,
    /// Copy mode, when the pane is in it.
    pub copy: Option<CopyMode>,
    /// The session this pane belongs to.
    pub session: SessionId,
    /// The shell integration calyx switched on for this pane, if any.
    pub shell: Option<crate::server::io::shell_integration::Shell>,
    /// The last foreground command name and when it was read (see `command_label`).
    pub label_cache: super::label::LabelCache,
}

impl Pane {
    /// The terminal if no reader thread is parsing into it right now. The owner uses this on
    /// hot paths so a background pane's reader (which runs at low priority and may be
    /// descheduled while holding the lock) can never stall rendering or typing.
    pub fn try_term(&self) -> Option<std::sync::MutexGuard<'_, Terminal>> {
        try_lock_terminal(&self.terminal)
    }

    /// Locks the terminal (a poisoned lock still holds a usable screen).
    pub fn term(&self) -> std::sync::MutexGuard<'_, Terminal> {
        self.terminal.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The foreground command's name, read at most once a second: renders ask for it every
    /// frame, and /proc reads are not free on the keystroke path (see `label`).
    pub fn command_label(&self) -> String {
        self.label_cache
            .get(Instant::now(), || self.current_command())
    }

    /// The name of the program in the foreground (tmux's pane_current_command).
    pub fn current_command(&self) -> String {
        let child = self.process.pid();
        let pid = self.process.foreground_pid().or(child);
        if let Some(name) =
            pid.and_then(|p| std::fs::read_to_string(format!("/proc/{p}/comm")).ok())
        {
            let name = name.trim();
            // Until its exec completes, the pane's process is a fork of this server with the
            // server's name; the spawn returns a moment before the kernel renames it.
            if !(pid == child && name == own_process_name()) {
                return name.to_string();
            }
        }
        self.program.clone()
    }

    /// The foreground program's working directory (falls back to where the pane started).
    pub fn cwd(&self) -> String {
        let pid = self.process.foreground_pid().or(self.process.pid());
        pid.and_then(|p| std::fs::read_link(format!("/proc/{p}/cwd")).ok())
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| self.start_cwd.clone())
    }
}

/// Locks a pane terminal, waiting (a poisoned lock still holds a usable screen).
pub fn lock_terminal(terminal: &Mutex<Terminal>) -> std::sync::MutexGuard<'_, Terminal> {
    terminal.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Locks a pane terminal to draw it: the focused pane's reader runs at normal priority, so
/// waiting for it is short; any other pane that is mid-parse is skipped (None) and keeps last
/// frame's cells, so a busy background pane never stalls a frame (see `Pane::try_term`).
pub fn lock_for_frame(
    terminal: &Mutex<Terminal>,
    focused: bool,
) -> Option<std::sync::MutexGuard<'_, Terminal>> {
    if focused {
        Some(lock_terminal(terminal))
    } else {
        try_lock_terminal(terminal)
    }
}

/// Locks a pane terminal unless its reader holds it right now.
pub fn try_lock_terminal(
    terminal: &Mutex<Terminal>,
) -> Option<std::sync::MutexGuard<'_, Terminal>> {
    match terminal.try_lock() {
        Ok(guard) => Some(guard),
        Err(std::sync::TryLockError::Poisoned(p)) => Some(p.into_inner()),
        Err(std::sync::TryLockError::WouldBlock) => None,
    }
}

/// A window (tab): a layout of panes.
#[derive(Debug)]
pub struct Window {
    /// The window's number, what targets (`SESSION:N`), `prefix N` and the status line use.
    /// It stays when other windows close (unless `renumber_windows`); the session keeps its
    /// windows sorted by it. Set by [`Session::insert_window`].
    pub number: usize,
    pub name: String,
    /// Whether the name follows the focused pane's command (until the user renames it).
    pub auto_name: bool,
    pub layout: Layout,
    pub active: PaneId,
    pub last_active: Option<PaneId>,
    pub zoomed: bool,
    /// A pane here rang the bell while the window was not shown.
    pub bell: bool,
    /// The preset layout last chosen here, for `prefix Space` to go on from (None: a layout
    /// made by splits).
    pub preset: Option<crate::layout_preset::Preset>,
    /// synchronize-panes: what is typed into the focused pane goes to every pane here.
    pub synchronized: bool,
}

impl Window {
    /// A window of one pane, numbered when [`Session::insert_window`] puts it in a session;
    /// `auto_name`: the name follows the pane's command until the user renames it.
    pub fn new(name: String, auto_name: bool, pane: PaneId) -> Self {
        Window {
            number: 0,
            name,
            auto_name,
            layout: Layout::Pane(pane),
            active: pane,
            last_active: None,
            zoomed: false,
            bell: false,
            preset: None,
            synchronized: false,
        }
    }

    /// Arranges the panes in `preset`'s shape, keeping their order and focus; a zoom ends.
    pub fn apply_preset(&mut self, preset: crate::layout_preset::Preset) {
        if let Some(layout) = preset.build(&self.layout.panes()) {
            self.layout = layout;
            self.preset = Some(preset);
            self.zoomed = false;
        }
    }

    /// Focuses `pane` in this window: the pane focused before becomes `last_active` (where
    /// focus returns when `pane` closes) and a zoom ends. Looking at the window clears its bell.
    pub fn focus(&mut self, pane: PaneId) {
        if self.active != pane {
            self.last_active = Some(self.active);
            self.active = pane;
            self.zoomed = false;
        }
        self.bell = false;
    }

    /// Takes `pane` out of the layout, which heals around it; focus goes back to the pane
    /// focused before (else the first one) and a zoom ends. False when `pane` is not here or
    /// was the window's last pane: the caller closes the window then.
    pub fn remove_pane(&mut self, pane: PaneId) -> bool {
        if !self.layout.remove(pane) {
            return false;
        }
        if self.active == pane {
            let fallback = self
                .last_active
                .filter(|p| *p != pane && self.layout.contains(*p));
            self.active = fallback
                .or_else(|| self.layout.panes().first().copied())
                .unwrap_or(0);
        }
        if self.last_active == Some(pane) {
            self.last_active = None;
        }
        self.zoomed = false;
        true
    }

    /// The pane after (or before) the focused one in layout order, wrapping around.
    pub fn cycle(&self, forward: bool) -> Option<PaneId> {
        self.cycle_from(self.active, forward)
    }

    /// The pane after (or before) `pane` in layout order, wrapping around.
    pub fn cycle_from(&self, pane: PaneId, forward: bool) -> Option<PaneId> {
        let panes = self.layout.panes();
        let i = panes.iter().position(|p| *p == pane)?;
        let n = panes.len();
        let next = if forward {
            (i + 1) % n
        } else {
            (i + n - 1) % n
        };
        panes.get(next).copied()
    }

    /// Swaps the focused pane with the next (or previous) one in layout order, wrapping
    /// around; focus stays with the pane that moved (tmux's `swap-pane -D` / `-U`). False with
    /// one pane.
    pub fn swap_focused(&mut self, forward: bool) -> bool {
        let Some(other) = self.cycle(forward).filter(|p| *p != self.active) else {
            return false;
        };
        self.zoomed = false;
        self.layout.swap(self.active, other)
    }

    /// Zooms the focused pane, or unzooms; a window with one pane has nothing to zoom.
    pub fn toggle_zoom(&mut self) {
        if self.layout.panes().len() > 1 {
            self.zoomed = !self.zoomed;
        }
    }
}

/// A session: windows, the environment its panes inherit, its size.
#[derive(Debug)]
pub struct Session {
    pub id: SessionId,
    pub name: String,
    /// Sorted by [`Window::number`]. `active_window` and `last_window` are positions in it,
    /// not numbers: see `window_numbers.rs` for the mapping.
    pub windows: Vec<Window>,
    pub active_window: usize,
    pub last_window: Option<usize>,
    pub env: Vec<(String, String)>,
    pub rows: u16,
    pub cols: u16,
    /// The last size the session had that was at most [`ROOMY_CELLS`]: where it goes back to
    /// when its last client leaves while it is larger (see `resize_session_to_clients`).
    pub roomy_size: (u16, u16),
    pub last_used: Instant,
    /// Whether the agents sidebar takes the left columns.
    pub sidebar: bool,
    /// How its panes are framed: from the config, updated at reload-config.
    pub pane_borders: PaneBorders,
}

impl Session {
    pub fn window(&self) -> Option<&Window> {
        self.windows.get(self.active_window)
    }

    pub fn window_mut(&mut self) -> Option<&mut Window> {
        self.windows.get_mut(self.active_window)
    }

    /// The focused pane.
    pub fn active_pane(&self) -> Option<PaneId> {
        self.window().map(|w| w.active)
    }

    /// The cell of each pane of the active window (just the focused pane when zoomed): its
    /// content and its border or separators, as [`PaneBorders::content`] divides them.
    pub fn visible_rects(&self) -> Vec<(PaneId, Rect)> {
        let area = self.layout_area();
        match self.window() {
            Some(w) if w.zoomed => vec![(w.active, area)],
            Some(w) => w.layout.rects(area),
            None => Vec::new(),
        }
    }

    /// Makes window `index` the active one, remembering the one it replaces for last-window.
    pub fn select_window(&mut self, index: usize) {
        if self.active_window != index && index < self.windows.len() {
            self.last_window = Some(self.active_window);
            self.active_window = index;
        }
    }

    /// Moves the active window's focused pane into a window of its own (numbered as a new
    /// window is, from `base_index`), and shows it (tmux's break-pane). False when that window
    /// has only this pane.
    pub fn break_pane(&mut self, base_index: usize) -> bool {
        let Some(w) = self.window_mut() else {
            return false;
        };
        let pane = w.active;
        if !w.remove_pane(pane) {
            return false;
        }
        let at = self.insert_window(Window::new(String::new(), true, pane), base_index);
        self.select_window(at);
        true
    }

    /// The window position after (or before) the active one, wrapping around.
    pub fn cycle_window(&self, forward: bool) -> usize {
        let n = self.windows.len().max(1);
        let i = self.active_window;
        if forward {
            (i + 1) % n
        } else {
            (i + n - 1) % n
        }
    }

    /// Takes window `index` out; the active window stays the same one where it can, else the
    /// one before it; last-window is forgotten (its index may have moved).
    pub fn take_window(&mut self, index: usize) -> Option<Window> {
        if index >= self.windows.len() {
            return None;
        }
        let w = self.windows.remove(index);
        if self.active_window >= index && self.active_window > 0 {
            self.active_window -= 1;
        }
        self.last_window = None;
        Some(w)
    }

    /// The content size (rows, cols) each pane of every window gets in the window area. A
    /// zoomed window's focused pane gets the whole area; its other panes keep their layout
    /// size, so unzooming does not resize them twice.
    pub fn pane_sizes(&self) -> Vec<(PaneId, u16, u16)> {
        let area = self.layout_area();
        let mut sizes = Vec::new();
        for w in &self.windows {
            for (p, r) in w.layout.rects(area) {
                let cell = if w.zoomed && p == w.active { area } else { r };
                let (rows, cols) = self.pane_borders.content_size(cell);
                sizes.push((p, rows, cols));
            }
        }
        sizes
    }

    /// The area a window's layout tree divides into pane cells (the window area, grown by the
    /// separators that fall outside it; see [`PaneBorders::layout_area`]).
    pub fn layout_area(&self) -> Rect {
        self.pane_borders.layout_area(self.window_area())
    }

    /// The area windows are laid out in: everything but the status line and the sidebar.
    pub fn window_area(&self) -> Rect {
        let sidebar = if self.sidebar {
            SIDEBAR_WIDTH.min(self.cols / 3)
        } else {
            0
        };
        Rect::new(
            sidebar,
            0,
            self.cols.saturating_sub(sidebar),
            self.rows.saturating_sub(1),
        )
    }
}

/// The size a session takes from its clients' terminals: the smallest of each dimension, as in
/// tmux (at least 2x2: one row for a pane and one for the status line). None without clients.
pub fn smallest_size(sizes: impl IntoIterator<Item = (u16, u16)>) -> Option<(u16, u16)> {
    sizes
        .into_iter()
        .reduce(|(r0, c0), (r1, c1)| (r0.min(r1), c0.min(c1)))
        .map(|(rows, cols)| (rows.max(2), cols.max(2)))
}

/// Sessions up to this many cells keep their size when their last client leaves, as in tmux;
/// larger ones (only a client of more than that, 500x500, makes one) go back to the last size
/// they had within it, so a huge client that came and went does not leave every pane of the
/// session holding its memory. The largest real terminals (a 4K display at a small font, about
/// 770x216 = 166,000 cells) stay under it.
pub const ROOMY_CELLS: u32 = 250_000;
/// Where a session created larger than [`ROOMY_CELLS`] goes when its last client leaves.
pub const DETACHED_SIZE: (u16, u16) = (24, 80);

/// Columns the agents sidebar takes.
pub const SIDEBAR_WIDTH: u16 = 32;

/// What the client's keyboard is doing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientMode {
    Normal,
    /// The prefix was pressed; the next key is a command. `from_sidebar`: the sidebar had the
    /// keyboard, so the sidebar key hides it (rather than giving it the keyboard again).
    Prefix {
        from_sidebar: bool,
    },
    /// The key help overlay is open.
    Help {
        scroll: u16,
    },
    /// `prefix q`: each pane shows its number; a digit focuses that pane, any other key ends it.
    DisplayPanes,
    /// The message log (`prefix ~`) is open.
    Messages {
        scroll: u16,
    },
    /// The agents sidebar has the keyboard: up/down choose, Enter jumps to the agent's pane.
    Sidebar {
        selected: usize,
    },
    /// The session and window chooser is open, on row `selected` (see `tree`); the sessions in
    /// `expanded` list their windows (`prefix s` opens with none, `prefix w` with every one).
    Tree {
        selected: usize,
        expanded: Vec<SessionId>,
    },
    /// A line prompt on the status line.
    Prompt {
        kind: PromptKind,
        text: String,
    },
    /// The hosted MCP servers overlay (`prefix M`), with the rows it shows.
    Servers(Box<calyx_tui::ServersOverlay>),
    /// `prefix v`: the view card of `pane` has the keyboard; `note` is what its last key said
    /// (why `o` did not open a browser, that `c` copied).
    ViewCard {
        pane: PaneId,
        note: Option<String>,
    },
    /// `prefix V`: every view of the server, on row `selected`; Enter goes to its pane.
    ViewList {
        selected: usize,
    },
}

/// What a prompt's text is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptKind {
    Command,
    RenameWindow,
    RenameSession,
    SearchForward,
    SearchBackward,
    /// `kill-pane %N? (y/n)`: `y` closes the pane, any other key keeps it.
    ConfirmKillPane(crate::layout::PaneId),
    /// `kill-window N? (y/n)`: the window numbered N in the session.
    ConfirmKillWindow(SessionId, usize),
    /// `kill-session NAME? (y/n)` (`x` in the chooser on a session's row).
    ConfirmKillSession(SessionId),
}

/// A border being dragged with the mouse.
#[derive(Debug, Clone)]
pub struct Drag {
    pub path: Vec<bool>,
}

/// An attached client.
pub struct Client {
    pub id: ClientId,
    pub tx: mpsc::Sender<crate::server::io::terminal::Outgoing>,
    pub session: SessionId,
    pub rows: u16,
    pub cols: u16,
    pub mode: ClientMode,
    /// Until when a repeatable binding (a resize key) works without the prefix again.
    pub repeat_until: Option<Instant>,
    pub input: InputParser,
    pub dirty: bool,
    pub message: Option<(String, Instant)>,
    pub drag: Option<Drag>,
    /// A copy-mode mouse selection in progress: the pane it started in.
    pub selecting: Option<PaneId>,
    /// The session this client showed before its current one (`prefix L`).
    pub last_session: Option<SessionId>,
    /// When this client last pressed a key (the approval panel tells typing from answering).
    pub last_key_at: Option<Instant>,
    pub cursor_style: Option<u8>,
    /// Whether panes' OSC 8 hyperlinks are passed on to this client's terminal (the
    /// `hyperlinks` setting applied to the client's TERM).
    pub hyperlinks: bool,
    /// Whether this client's terminal was told to report all mouse motion (mode 1003).
    pub any_motion: bool,
    /// The approval panel as this client sees it.
    pub panel: super::panel::PanelState,
    /// The client's terminal, when the server reads and writes it directly.
    pub direct: Option<crate::server::io::terminal::DirectTerminal>,
    /// What the `:` prompt remembers between keys (Tab's cycle, the history walk).
    pub prompt_aid: PromptAid,
    /// The client's variables that decide how a sign-in page opens (see
    /// `hosted::oauth::open::OPENER_VARS`): the servers overlay opens it in the client's
    /// browser, or shows how to come back over SSH.
    pub opener_env: Vec<(String, String)>,
    /// The session of another machine this client came from (`ClientMessage::Attach`'s
    /// `back_to`): `prefix L` detaches it back there instead of switching sessions here.
    pub back_to: Option<String>,
}

/// What an open `:` prompt remembers between keys: the candidates Tab is cycling through and
/// shows on the status line, and where Up and Down are in the history. Reset when the prompt
/// opens or closes.
#[derive(Debug, Default, Clone)]
pub struct PromptAid {
    pub tab: Option<crate::server::input::prompt_tab::TabCycle>,
    /// The candidates, shown after the prompt's text.
    pub hint: Option<String>,
    pub walk: super::prompt_history::HistoryWalk,
}

impl Client {
    /// Sends bytes for the client's terminal (see [`crate::server::io::terminal::send_to_terminal`]).
    /// Err when the client is too far behind to take more.
    pub fn send_terminal(&self, bytes: Vec<u8>) -> Result<(), ()> {
        crate::server::io::terminal::send_to_terminal(&self.tx, self.direct.as_ref(), bytes)
    }
}

/// Everything the server owns.
pub struct State {
    /// Unread MCP messages per pane (peers' inboxes), shown on borders and in the sidebar.
    pub unread: HashMap<PaneId, usize>,
    /// The view docks of the panes that have MCP App views (see `dock`).
    pub docks: HashMap<PaneId, super::dock::Dock>,
    /// Every view of the server (standalone ones too), for `prefix V`.
    pub view_rows: Vec<super::dock::ViewRow>,
    /// Hands memory back to the system a moment after a big client or screen let go of it.
    pub trimmer: crate::memory::Trimmer,
    pub config: Config,
    pub config_errors: Vec<String>,
    /// Every status-line message of this run, for `prefix ~`.
    pub messages: super::message_log::MessageLog,
    pub sessions: BTreeMap<SessionId, Session>,
    pub panes: HashMap<PaneId, Pane>,
    pub clients: HashMap<ClientId, Client>,
    /// Each pane's output notifier, re-armed when its notification is handled.
    pub notifiers: HashMap<PaneId, Arc<crate::server::io::pane_notifier::PaneNotifier>>,
    /// What pane output costs the owner (notifications, frames, terminal locks), counted.
    pub counts: Arc<super::owner_counts::OwnerCounts>,
    pub next_pane: PaneId,
    pub next_session: SessionId,
    /// The last copied text, pasted by `prefix ]`.
    pub paste_buffer: Option<Vec<u8>>,
    pub socket_path: String,
    /// Which socket file at `socket_path` is this server's (removed at exit only if so).
    pub socket_bound: crate::server::io::socket_keeper::BoundSocket,
    /// Threads that SIGKILL closed panes' programs which ignore SIGHUP; joined at exit.
    pub reapers: Vec<std::thread::JoinHandle<()>>,
    /// The shell integration scripts, when switched on and written.
    pub shell_integration: Option<crate::server::io::shell_integration::ShellIntegration>,
    /// Set when the server should stop.
    pub quit: bool,
    /// Where pane programs start: real PTYs, or fakes in the state tests.
    pub processes: Arc<dyn Processes>,
    /// The sign-in prompts every client shows (agents' calls waiting for a hosted server's
    /// sign-in); the first is drawn.
    pub sign_in_prompts: Vec<super::sign_in_prompt::SignInPrompt>,
    /// The elicitation panels every client shows (hosted servers' questions waiting for the
    /// user); the first is drawn.
    pub elicit_panels: Vec<super::elicit_panel::ElicitPanel>,
}

impl State {
    /// A window's name as users see it everywhere (status line, `list-panes`, MCP, the rename
    /// prompt): an unrenamed window is named after what its focused pane runs now, as tmux
    /// does; the name stored when it was created may predate the program's start.
    pub fn window_name(&self, w: &Window) -> String {
        if w.auto_name {
            if let Some(p) = self.panes.get(&w.active) {
                return super::label::sanitize_title(&p.command_label());
            }
        }
        w.name.clone()
    }

    pub fn new(config: Config, config_errors: Vec<String>, socket_path: String) -> Self {
        let shell_integration = config
            .shell_integration
            .then(|| shell_integration_dir(&socket_path))
            .and_then(
                |dir| match crate::server::io::shell_integration::ShellIntegration::install(&dir) {
                    Ok(si) => Some(si),
                    Err(e) => {
                        tracing::warn!(
                            "shell integration off: cannot write {}: {e}",
                            dir.display()
                        );
                        None
                    }
                },
            );
        Self {
            unread: HashMap::new(),
            docks: HashMap::new(),
            view_rows: Vec::new(),
            trimmer: Default::default(),
            shell_integration,
            config,
            config_errors,
            messages: Default::default(),
            sessions: BTreeMap::new(),
            panes: HashMap::new(),
            clients: HashMap::new(),
            notifiers: HashMap::new(),
            counts: Default::default(),
            next_pane: 1,
            next_session: 0,
            paste_buffer: None,
            socket_path,
            socket_bound: Default::default(),
            quit: false,
            reapers: Vec::new(),
            processes: Arc::new(Pty),
            sign_in_prompts: Vec::new(),
            elicit_panels: Vec::new(),
        }
    }

    /// The session and window index holding `pane`.
    pub fn locate(&self, pane: PaneId) -> Option<(SessionId, usize)> {
        let session = self.panes.get(&pane)?.session;
        let s = self.sessions.get(&session)?;
        let w = s.windows.iter().position(|w| w.layout.contains(pane))?;
        Some((session, w))
    }

    /// Marks every client of `session` for a redraw.
    pub fn mark_session_dirty(&mut self, session: SessionId) {
        for c in self.clients.values_mut() {
            if c.session == session {
                c.dirty = true;
            }
        }
    }

    /// Marks clients that show `pane` right now, and those with the chooser open (its preview
    /// may show any pane).
    pub fn mark_pane_dirty(&mut self, pane: PaneId) {
        for c in self.clients.values_mut() {
            if matches!(c.mode, ClientMode::Tree { .. }) {
                c.dirty = true;
            }
        }
        let Some((session, window)) = self.locate(pane) else {
            return;
        };
        let visible = self
            .sessions
            .get(&session)
            .is_some_and(|s| s.active_window == window);
        if visible {
            self.mark_session_dirty(session);
        }
    }

    /// Detaches a client: it is told why, restores its terminal and exits; the session's size
    /// is reconciled with the clients that remain.
    pub fn detach_client(&mut self, client: ClientId, why: &str) {
        if let Some(c) = self.clients.remove(&client) {
            let exit = crate::protocol::ServerMessage::Exit {
                message: why.to_string(),
            };
            let _ =
                c.tx.try_send(crate::server::io::terminal::Outgoing::Message(
                    crate::protocol::encode_message(&exit),
                ));
            let session = c.session;
            // Its frame buffers go before the memory is handed back.
            drop(c);
            self.resize_session_to_clients(session);
            self.trimmer.soon();
        }
    }

    /// The most recently used session.
    pub fn latest_session(&self) -> Option<SessionId> {
        self.sessions
            .values()
            .max_by_key(|s| s.last_used)
            .map(|s| s.id)
    }
}

/// The scripts live next to the server's socket (a private directory), one set per server.
fn shell_integration_dir(socket_path: &str) -> std::path::PathBuf {
    let socket = std::path::Path::new(socket_path);
    let name = socket
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    socket
        .parent()
        .unwrap_or_else(|| std::path::Path::new("/tmp"))
        .join(format!("{name}.shell"))
}

#[cfg(test)]
#[path = "state_tests.rs"]
mod tests;
