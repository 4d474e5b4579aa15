//! The server's reducer driven the way a client drives it, without a socket: keys go into
//! `client_input` as the bytes a terminal sends, and the tests look at the state that results
//! (layout, focus, zoom, windows, modes) and at what the panes received. The panes are real
//! programs in real PTYs (`cat -v` with echo off, so a pane shows exactly the bytes it got).
//! Frames come from the same `render_client` the server sends to clients, parsed by vt100 the
//! way the client's terminal would show them, and are kept as insta snapshots.

use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::messages::Msg;
use super::model::state::{ClientMode, PromptKind};
use super::owner::Server;
use crate::config::Config;
use crate::layout::{Layout, PaneId, SplitDir};
use crate::protocol::{ClientMessage, NewSession};

pub(super) const CLIENT: super::model::ids::ClientId = 1;

/// Every pane runs this: no echo, and control characters made visible.
fn pane_command() -> Vec<String> {
    ["sh", "-c", "stty -echo; exec cat -v"]
        .map(String::from)
        .to_vec()
}

/// A runtime on this thread, for tests that drive the owner loop's `turn` themselves.
pub(super) fn current_thread_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// A server with one attached client and one session of one pane (panes the keys start run
/// `$SHELL`, here `/bin/sh` with a `$ ` prompt).
pub(super) struct Harness {
    pub(super) server: Server,
    /// What the server sent the client (frames it sends only from its render loop, which these
    /// tests do not run; messages like Exit arrive here).
    pub(super) client_rx: mpsc::Receiver<super::io::terminal::Outgoing>,
    /// The client's terminal: frames are drawn into it one after another.
    pub(super) terminal: vt100::Parser,
    /// The owner loop's channel (pane notifications): read only by tests that drive the loop.
    pub(super) owner_rx: mpsc::UnboundedReceiver<Msg>,
    dir: tempfile::TempDir,
}

impl Harness {
    pub(super) fn new(rows: u16, cols: u16) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = Config {
            shell_integration: false,
            // The kill keys act at once here (their question is tested end to end).
            confirm_kill: false,
            ..Config::default()
        };
        let (tx, owner_rx) = mpsc::unbounded_channel();
        let socket = dir.path().join("server.sock").display().to_string();
        let mut server = Server::new(config, Vec::new(), socket, tx, Default::default());
        // The prompt's history in memory: a test never writes the user's own file.
        server.prompt_history = Default::default();
        let (client_tx, client_rx) = mpsc::channel(1024);
        server.dispatch(Msg::Connected {
            id: CLIENT,
            tx: client_tx,
        });
        let env = vec![
            (
                "PATH".to_string(),
                std::env::var("PATH").unwrap_or_default(),
            ),
            ("SHELL".to_string(), "/bin/sh".to_string()),
            ("HOME".to_string(), dir.path().display().to_string()),
            ("LANG".to_string(), "C.UTF-8".to_string()),
            ("PS1".to_string(), "$ ".to_string()),
            ("ENV".to_string(), String::new()),
        ];
        server.client_message(
            CLIENT,
            ClientMessage::Attach {
                target: None,
                create: Some(NewSession {
                    name: Some("unit".into()),
                    cwd: Some(dir.path().display().to_string()),
                    command: pane_command(),
                    env,
                }),
                create_if_missing: true,
                rows,
                cols,
                term: None,
                terminal: None,
                opener_env: Vec::new(),
                back_to: None,
            },
        );
        let nz = |n: u16| std::num::NonZeroU16::new(n).expect("size");
        let mut h = Self {
            server,
            terminal: vt100::Parser::new(nz(rows), nz(cols), 0),
            client_rx,
            owner_rx,
            dir,
        };
        h.wait_ready();
        h
    }

    /// Types bytes as the client's terminal would send them.
    pub(super) fn keys(&mut self, bytes: &[u8]) {
        self.server.client_input(CLIENT, bytes);
    }

    fn session(&self) -> &super::model::state::Session {
        let id = self.server.client_session(CLIENT).expect("client attached");
        self.server.state.sessions.get(&id).expect("session")
    }

    fn window(&self) -> &super::model::state::Window {
        self.session().window().expect("active window")
    }

    pub(super) fn active(&self) -> PaneId {
        self.window().active
    }

    fn mode(&self) -> ClientMode {
        self.server.state.clients[&CLIENT].mode.clone()
    }

    fn cols_of(&self, pane: PaneId) -> u16 {
        self.server.state.panes[&pane].cols
    }

    /// Waits until every pane runs its program: `cat`, or `sh` in panes the keys started (so
    /// labels and input handling are settled).
    pub(super) fn wait_ready(&mut self) {
        wait("every pane running its program", || {
            // The session's first pane runs the harness's command (`sh -c ... exec cat`); the
            // panes the keys start run the shell.
            let first = self.server.state.panes.keys().min().copied();
            self.server
                .state
                .panes
                .values()
                .all(|p| {
                    let expected = if Some(p.id) == first { "cat" } else { "sh" };
                    p.current_command() == expected
                })
                .then_some(())
        });
    }

    /// Splits off a shell pane beside the first (which runs `cat` with echo off) and waits
    /// for its prompt: a pane whose typed keys its terminal echoes. Returns it (it has focus).
    pub(super) fn shell_pane(&mut self) -> PaneId {
        self.keys(b"\x02%");
        let pane = self.active();
        self.wait_pane(pane, "$ ");
        pane
    }

    /// Types `x` and runs the owner loop's turns until the owner itself reads an echo (one
    /// that beats the owner's first take goes to the reader thread, as it may on a loaded
    /// machine: then the next key's echo is awaited). For tests that drive the loop
    /// (`server.owner_loop`).
    pub(super) async fn type_until_the_owner_reads_an_echo(&mut self, deadline: Instant) {
        loop {
            assert!(Instant::now() < deadline, "the owner never read an echo");
            self.keys(b"x");
            assert!(
                self.server
                    .owner_reads
                    .as_ref()
                    .is_some_and(|r| r.awaiting_echo()),
                "a typed key's echo is awaited"
            );
            let _ =
                tokio::time::timeout(Duration::from_secs(1), self.server.turn(&mut self.owner_rx))
                    .await;
            if self
                .server
                .owner_reads
                .as_ref()
                .is_some_and(|r| !r.awaiting_echo())
            {
                return;
            }
        }
    }

    /// What `pane` shows now.
    pub(super) fn pane_text(&self, pane: PaneId) -> String {
        self.server.state.panes[&pane].term().screen().contents()
    }

    /// Waits until `pane` shows `needle`; returns its screen text.
    pub(super) fn wait_pane(&self, pane: PaneId, needle: &str) -> String {
        wait(&format!("{needle:?} in pane {pane}"), || {
            let text = self.server.state.panes[&pane].term().screen().contents();
            text.contains(needle).then_some(text)
        })
    }

    /// The sidebar's agents as a frame draws them now.
    pub(super) fn agents(&self) -> super::view::sidebar::AgentsView {
        super::view::sidebar::AgentsView::build(
            &self.server.state,
            &self.server.agents,
            &self.server.approvals,
        )
    }

    /// Renders the client's next frame (only what changed, as the server sends it) into the
    /// client's terminal and returns its bytes.
    pub(super) fn frame_bytes(&mut self) -> Vec<u8> {
        let agents = self.agents();
        let tree = self.server.tree_data(CLIENT);
        let cache = self.server.frames.entry(CLIENT).or_default();
        let bytes = super::render::render_client(
            &mut self.server.state,
            &agents,
            None,
            tree,
            CLIENT,
            cache,
        )
        .map(|r| r.bytes)
        .unwrap_or_default();
        self.terminal.process(&bytes);
        bytes
    }

    /// Renders the client's next frame into the client's terminal and returns what that
    /// terminal shows.
    pub(super) fn frame(&mut self) -> String {
        self.frame_bytes();
        let screen = self.terminal.screen();
        let (_, cols) = screen.size();
        screen
            .rows(0, cols.get())
            .map(|r| r.trim_end().to_string())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        for p in self.server.state.panes.values_mut() {
            p.process.hangup();
        }
        let _ = &self.dir;
    }
}

/// Polls `check` for up to 15 s.
pub(super) fn wait<T>(what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        if let Some(v) = check() {
            return v;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn prefix_split_keys_split_the_focused_pane_and_focus_the_new_one() {
    let mut h = Harness::new(25, 80);
    let first = h.active();
    h.keys(b"\x02%");
    let second = h.active();
    assert_ne!(first, second);
    assert_eq!(
        h.window().layout,
        Layout::Split {
            dir: SplitDir::Horizontal,
            ratio: 500,
            first: Box::new(Layout::Pane(first)),
            second: Box::new(Layout::Pane(second)),
        }
    );
    assert_eq!(h.window().last_active, Some(first));
    h.keys(b"\x02\"");
    let third = h.active();
    assert_eq!(h.window().layout.panes(), vec![first, second, third]);
    // Each pane was resized to its place: 80 columns split in two, the right half in two rows.
    let pane = |id: PaneId| {
        let p = &h.server.state.panes[&id];
        (p.rows, p.cols)
    };
    assert_eq!(pane(first), (22, 38));
    assert_eq!(pane(second), (10, 38));
    assert_eq!(pane(third), (10, 38));
    assert_eq!(h.mode(), ClientMode::Normal);
}

#[test]
fn focus_moves_by_direction_and_in_order_and_zoom_follows_focus() {
    let mut h = Harness::new(25, 80);
    let left = h.active();
    h.keys(b"\x02%");
    let right = h.active();
    // prefix Left (a cursor key in normal mode).
    h.keys(b"\x02\x1b[D");
    assert_eq!(h.active(), left);
    h.keys(b"\x02o");
    assert_eq!(h.active(), right);
    h.keys(b"\x02;");
    assert_eq!(h.active(), left);
    h.keys(b"\x02z");
    assert!(h.window().zoomed);
    assert_eq!(h.session().visible_rects().len(), 1);
    assert_eq!(
        h.server.state.panes[&left].cols, 78,
        "the zoomed pane fills the width"
    );
    // Moving focus unzooms, as in tmux.
    h.keys(b"\x02o");
    assert!(!h.window().zoomed);
    assert_eq!(h.server.state.panes[&left].cols, 38);
}

#[test]
fn closing_a_pane_heals_the_layout_and_refocuses() {
    let mut h = Harness::new(25, 80);
    let first = h.active();
    h.keys(b"\x02%");
    let second = h.active();
    h.keys(b"\x02\"");
    let third = h.active();
    h.keys(b"\x02z\x02x");
    assert!(!h.server.state.panes.contains_key(&third));
    assert_eq!(h.window().layout.panes(), vec![first, second]);
    assert_eq!(
        h.active(),
        second,
        "focus returns to the pane focused before"
    );
    assert!(!h.window().zoomed);
    // The survivor takes the freed rows.
    assert_eq!(h.server.state.panes[&second].rows, 22);
    h.keys(b"\x02x\x02x");
    assert!(
        h.server.state.sessions.is_empty(),
        "closing the last pane ends the session"
    );
    assert!(h.server.state.quit, "and with no session left, the server");
    assert!(!h.server.state.clients.contains_key(&CLIENT));
    let _ = first;
}

#[test]
fn the_prefix_pressed_twice_reaches_the_pane_once() {
    let mut h = Harness::new(25, 80);
    let pane = h.active();
    h.keys(b"\x02\x02first\r");
    let text = h.wait_pane(pane, "first");
    assert_eq!(text.trim_end(), "^Bfirst");
    assert_eq!(h.mode(), ClientMode::Normal);
}

#[test]
fn an_unbound_key_after_the_prefix_is_dropped_and_typing_goes_on() {
    let mut h = Harness::new(25, 80);
    let pane = h.active();
    h.keys(b"\x02Q");
    assert_eq!(h.mode(), ClientMode::Normal);
    assert_eq!(h.window().layout.panes(), vec![pane]);
    // Keys that are bindings after the prefix are plain keys without it.
    h.keys(b"%x\"zQ\r");
    let text = h.wait_pane(pane, "%x\"zQ");
    assert_eq!(
        text.trim_end(),
        "%x\"zQ",
        "the Q after the prefix never arrived"
    );
    assert_eq!(h.window().layout.panes(), vec![pane]);
}

#[tokio::test(start_paused = true)]
async fn resize_keys_repeat_without_the_prefix_until_the_repeat_time_passes() {
    let mut h = Harness::new(25, 80);
    let left = h.active();
    h.keys(b"\x02%\x02\x1b[D");
    assert_eq!(h.active(), left);
    assert_eq!(h.cols_of(left), 38);
    // prefix C-Right, then C-Right and M-Right again without the prefix: +4 columns each.
    h.keys(b"\x02\x1b[1;5C");
    assert_eq!(h.cols_of(left), 42);
    h.keys(b"\x1b[1;5C\x1b[1;3C");
    assert_eq!(h.cols_of(left), 50);
    // Any other key ends the repeat and reaches the pane; a resize key after it is a plain key.
    h.keys(b"a\x1b[1;5C\r");
    assert_eq!(h.cols_of(left), 50);
    h.wait_pane(left, "a^[[1;5C");
    // The repeat also ends when the repeat time has passed (the clock is tokio's, paused).
    h.keys(b"\x02\x1b[1;5D");
    assert_eq!(h.cols_of(left), 46);
    tokio::time::advance(super::input::key_route::REPEAT_TIME).await;
    h.keys(b"\x1b[1;5D");
    assert_eq!(h.cols_of(left), 46);
    // Non-repeatable bindings never repeat: a second z after prefix z goes to the pane.
    h.keys(b"\x02zz\r");
    assert!(h.window().zoomed);
    h.wait_pane(left, "^[[1;5Dz");
}

#[test]
fn windows_are_created_cycled_selected_and_renamed() {
    let mut h = Harness::new(25, 80);
    h.keys(b"\x02c\x02c");
    assert_eq!(h.session().windows.len(), 3);
    assert_eq!(h.session().active_window, 2);
    h.keys(b"\x02n");
    assert_eq!(h.session().active_window, 0, "next wraps around");
    h.keys(b"\x02p");
    assert_eq!(h.session().active_window, 2, "previous wraps around");
    h.keys(b"\x021");
    assert_eq!(h.session().active_window, 1);
    h.keys(b"\x02l");
    assert_eq!(h.session().active_window, 2, "last window");
    // prefix , opens the prompt with the current name; C-u clears it; Enter renames.
    h.keys(b"\x02,");
    assert!(matches!(
        h.mode(),
        ClientMode::Prompt {
            kind: PromptKind::RenameWindow,
            ..
        }
    ));
    h.keys(b"\x15logs\r");
    assert_eq!(h.mode(), ClientMode::Normal);
    assert_eq!(h.window().name, "logs");
    assert!(!h.window().auto_name);
    // A window that does not exist: a message, nothing moves.
    h.keys(b"\x029");
    assert_eq!(h.session().active_window, 2);
    let message = h.server.state.clients[&CLIENT].message.clone();
    assert_eq!(message.map(|m| m.0), Some("no window 9".to_string()));
    // prefix & closes the window and its panes.
    h.keys(b"\x02&");
    assert_eq!(h.session().windows.len(), 2);
}

#[test]
fn the_command_prompt_runs_commands_and_reports_unknown_ones() {
    let mut h = Harness::new(25, 80);
    h.keys(b"\x02:");
    assert_eq!(
        h.mode(),
        ClientMode::Prompt {
            kind: PromptKind::Command,
            text: String::new()
        }
    );
    h.keys(b"split-window -h\r");
    assert_eq!(h.window().layout.panes().len(), 2);
    h.keys(b"\x02:rename-window build\r");
    assert_eq!(h.window().name, "build");
    h.keys(b"\x02:rename-session dev\r");
    assert_eq!(h.session().name, "dev");
    h.keys(b"\x02:frobnicate\r");
    let message = h.server.state.clients[&CLIENT].message.clone();
    assert_eq!(
        message.map(|m| m.0),
        Some("unknown command: frobnicate (prefix ? lists them)".to_string())
    );
    // C-g leaves the prompt without running what was typed.
    h.keys(b"\x02:kill-pane\x07");
    assert_eq!(h.mode(), ClientMode::Normal);
    assert_eq!(h.window().layout.panes().len(), 2);
    h.keys(b"\x02:kill-pane\r");
    assert_eq!(h.window().layout.panes().len(), 1);
}

#[test]
fn detach_removes_the_client_and_tells_it_why() {
    let mut h = Harness::new(25, 80);
    let pane = h.active();
    h.keys(b"\x02d");
    assert!(!h.server.state.clients.contains_key(&CLIENT));
    assert!(
        h.server.state.panes.contains_key(&pane),
        "panes keep running"
    );
    let mut got = Vec::new();
    while let Ok(out) = h.client_rx.try_recv() {
        if let super::io::terminal::Outgoing::Message(bytes) = out {
            got.extend(bytes);
        }
    }
    let text = String::from_utf8_lossy(&got);
    assert!(
        text.contains("\"Exit\"") && text.contains("detached"),
        "{text}"
    );
}

#[test]
fn frames_show_the_layout_borders_and_status_line() {
    let mut h = Harness::new(16, 60);
    h.keys(b"\x02%\x02\"");
    h.wait_ready();
    let panes = h.window().layout.panes();
    for shell in &panes[1..] {
        h.wait_pane(*shell, "$");
    }
    h.keys(b"\x02:rename-window code\r");
    insta::assert_snapshot!("three_panes_after_keys", h.frame());
    h.keys(b"\x02z");
    insta::assert_snapshot!("zoomed_after_keys", h.frame());
    // The help overlay is drawn over the panes (its contents are snapshot in snapshots_ui).
    h.keys(b"\x02?");
    assert!(h.frame().contains("split-window -h"));
    h.keys(b"q");
    assert_eq!(h.mode(), ClientMode::Normal);
}

#[test]
fn the_sidebar_key_shows_focuses_and_hides_the_sidebar() {
    let mut h = Harness::new(25, 100);
    let shown = |h: &Harness| h.session().sidebar;
    // Hidden -> shown with the keyboard.
    h.keys(b"\x02a");
    assert!(shown(&h));
    assert_eq!(h.mode(), ClientMode::Sidebar { selected: 0 });
    // With the keyboard: the same key (after the prefix) hides it.
    h.keys(b"\x02a");
    assert!(!shown(&h));
    assert_eq!(h.mode(), ClientMode::Normal);
    // Shown without the keyboard (Esc gave it back): the key focuses it, again hides it.
    h.keys(b"\x02a\x1b");
    assert!(shown(&h));
    assert_eq!(h.mode(), ClientMode::Normal);
    h.keys(b"\x02a");
    assert_eq!(h.mode(), ClientMode::Sidebar { selected: 0 });
    h.keys(b"\x02a");
    assert!(!shown(&h));
    // Another binding after the prefix still works from the sidebar.
    h.keys(b"\x02a\x02%");
    assert_eq!(h.window().layout.panes().len(), 2);
}

#[test]
fn the_help_scrolls_to_its_last_command_and_no_further() {
    let mut h = Harness::new(25, 100);
    h.keys(b"\x02?");
    for _ in 0..20 {
        h.keys(b" ");
    }
    let rows = h.session().rows;
    let entries = crate::commands::help_entries(&crate::config::Config::default().keymap).len();
    let want = u16::try_from(entries)
        .expect("rows")
        .saturating_sub(rows - 3);
    assert_eq!(h.mode(), ClientMode::Help { scroll: want });
    assert!(
        h.frame().contains("send-prefix"),
        "the last command is on screen"
    );
    assert!(
        h.frame().contains("break-pane -s PANE -n NAME"),
        "the last unbound command is on screen"
    );
}

/// What a pane holds outside its layout, seeded before a close (issue 14: one pane lifecycle).
struct Held {
    pane: PaneId,
    agent_wait: tokio::sync::oneshot::Receiver<Result<String, String>>,
    command_wait: tokio::sync::oneshot::Receiver<crate::mcp::CommandWait>,
    approval: tokio::sync::oneshot::Receiver<crate::approvals::Outcome>,
}

impl Harness {
    /// Gives `pane` an agent row, an agent waiter, a command waiter, a pending approval, a
    /// peer inbox with a message in it and an unread count.
    fn hold(&mut self, pane: PaneId) -> Held {
        use crate::approvals::{summarize, Asker, NewRequest, Schema};
        use calyx_integrations::AgentKind;
        let now = tokio::time::Instant::now();
        let s = &mut self.server;
        s.agents
            .mcp_connected(u64::from(pane), AgentKind::ClaudeCode, now);
        assert!(s.agents.row(u64::from(pane)).is_some());
        let name = format!("%{pane}");
        let (tx, agent_wait) = tokio::sync::oneshot::channel();
        s.mcp_op(super::messages::McpOp::AgentWait {
            pane: name.clone(),
            until: vec!["blocked".into()],
            reply: tx,
        });
        let (tx, command_wait) = tokio::sync::oneshot::channel();
        s.mcp_op(super::messages::McpOp::CommandAwait {
            pane: name.clone(),
            seq: 1,
            reply: tx,
        });
        let (tx, approval) = tokio::sync::oneshot::channel();
        s.approvals.add(
            NewRequest {
                pane,
                asker: Asker::Hook(AgentKind::ClaudeCode),
                schema: Schema::Claude,
                tool: "Bash".into(),
                summary: summarize("Bash", &serde_json::json!({"command": "true"})),
                suggestions: Vec::new(),
                input: None,
                agent_id: None,
                wait: None,
                app: None,
                answer: tx,
            },
            now,
        );
        let me = crate::mcp::PaneRef { pane: name };
        let other = crate::mcp::PaneRef {
            pane: "%999".into(),
        };
        s.peers.register(&me, "held", None).expect("peer");
        s.peers.register(&other, "sender", None).expect("peer");
        s.peers.send(&other, &me.pane, "hello").expect("message");
        s.state.unread.insert(pane, 1);
        Held {
            pane,
            agent_wait,
            command_wait,
            approval,
        }
    }

    /// Nothing of `held`'s pane is left, and every waiter heard that it closed.
    fn assert_retired(&mut self, mut held: Held) {
        let pane = held.pane;
        let s = &self.server;
        assert!(!s.state.panes.contains_key(&pane), "pane {pane} still open");
        assert!(s.agents.row(u64::from(pane)).is_none(), "agent row left");
        assert!(
            s.approvals.pending().iter().all(|p| p.pane != pane),
            "pending approval left"
        );
        assert!(!s.state.unread.contains_key(&pane), "unread count left");
        assert!(
            s.peers
                .list()
                .iter()
                .all(|p| p.peer_id != format!("%{pane}")),
            "peer inbox left"
        );
        assert!(
            s.agent_waiters.iter().all(|w| w.pane != pane),
            "agent waiter left"
        );
        assert!(
            s.command_waiters.iter().all(|w| w.pane != pane),
            "command waiter left"
        );
        assert_eq!(
            held.agent_wait.try_recv().ok(),
            Some(Ok("done".to_string()))
        );
        assert!(matches!(
            held.command_wait.try_recv(),
            Ok(crate::mcp::CommandWait::PaneClosed { .. })
        ));
        // The hook's request was answered (withdrawn), not left hanging.
        assert!(held.approval.try_recv().is_ok(), "approval not answered");
    }

    /// Opens a second window (so closing one leaves the session) and waits for its shell.
    fn second_window(&mut self) -> PaneId {
        self.keys(b"\x02c");
        self.wait_ready();
        self.active()
    }
}

#[test]
fn every_close_path_retires_what_its_panes_held() {
    use crate::protocol::Request;
    // prefix x, prefix &, the prompt's kill-pane, kill-window and kill-session, the CLI's
    // kill-pane, kill-window and kill (session), and the pane's program exiting.
    type Path = fn(&mut Harness, PaneId);
    let paths: [(&str, Path); 9] = [
        ("prefix x", |h, _| h.keys(b"\x02x")),
        ("prefix &", |h, _| h.keys(b"\x02&")),
        (":kill-pane", |h, _| h.keys(b"\x02:kill-pane\r")),
        (":kill-window", |h, _| h.keys(b"\x02:kill-window\r")),
        (":kill-session", |h, _| h.keys(b"\x02:kill-session\r")),
        ("calyx kill-pane", |h, p| {
            h.server.request(Request::KillPane {
                target: Some(format!("%{p}")),
            });
        }),
        ("calyx kill-window", |h, p| {
            h.server.request(Request::KillWindow {
                target: Some(format!("%{p}")),
            });
        }),
        ("calyx kill", |h, p| {
            h.server.request(Request::KillSession {
                target: Some(format!("%{p}")),
            });
        }),
        ("program exit", |h, p| {
            h.server.dispatch(Msg::PaneExited {
                pane: p,
                status: Some(0),
            });
        }),
    ];
    for (name, close) in paths {
        let mut h = Harness::new(25, 80);
        let pane = h.second_window();
        let held = h.hold(pane);
        close(&mut h, pane);
        eprintln!("{name}");
        h.assert_retired(held);
    }
}

#[test]
fn open_browser_local_opens_a_new_view_in_a_local_clients_browser_once() {
    use crate::views::hub::{HubEvent, ViewPorts};
    use crate::views::registry::NewView;
    let mut h = Harness::new(24, 120);
    let pane = h.active();
    let opened = h.dir.path().join("opened");
    let browser = format!("sh -c 'printf \"%s\\n\" \"$0\" >> {}'", opened.display());
    h.server.state.config.mcp_apps.open_browser = crate::config::mcp_apps::OpenBrowser::Local;
    if let Some(c) = h.server.state.clients.get_mut(&CLIENT) {
        c.opener_env = vec![("DISPLAY".into(), ":0".into()), ("BROWSER".into(), browser)];
    }
    let hub = h.server.views.hub.clone();
    hub.set_ports(ViewPorts {
        host: 41880,
        sandbox: 41881,
    });
    let origin = NewView {
        pane: Some(pane),
        alias: "vanilla".into(),
        published_tool: "vanilla-get-time".into(),
        original_tool: "get-time".into(),
        agent: None,
        conversation: None,
    };
    let id = hub
        .create(origin, serde_json::json!({}), serde_json::json!({}))
        .expect("created")
        .id;
    h.server.views_event(HubEvent::Created(id));
    let url = hub.page_url(id).expect("a URL");
    let text = wait("the browser run with the URL", || {
        std::fs::read_to_string(&opened)
            .ok()
            .filter(|t| t.ends_with('\n'))
    });
    assert_eq!(text, format!("{url}\n"), "opened once, with the page's URL");
    // The dock took 40% of the pane's width.
    assert!(h.server.state.docks.contains_key(&pane));
    assert_eq!(h.cols_of(pane), 118 - 118 * 40 / 100);
    // With "never", a new view waits for `o`.
    h.server.state.config.mcp_apps.open_browser = crate::config::mcp_apps::OpenBrowser::Never;
    let create = |h: &mut Harness| {
        let origin = NewView {
            pane: Some(pane),
            alias: "vanilla".into(),
            published_tool: "vanilla-get-time".into(),
            original_tool: "get-time".into(),
            agent: None,
            conversation: None,
        };
        let id = hub
            .create(origin, serde_json::json!({}), serde_json::json!({}))
            .expect("created")
            .id;
        h.server.views_event(HubEvent::Created(id));
        hub.page_url(id).expect("a URL")
    };
    let quiet = create(&mut h);
    // Back to "local": the next view opens; the one created under "never" never did (the
    // browser runs in creation order, so it would have written first).
    h.server.state.config.mcp_apps.open_browser = crate::config::mcp_apps::OpenBrowser::Local;
    let third = create(&mut h);
    let text = wait("the second browser run", || {
        std::fs::read_to_string(&opened)
            .ok()
            .filter(|t| t.lines().count() >= 2)
    });
    assert_eq!(text, format!("{url}\n{third}\n"), "not {quiet}");
}

#[test]
fn the_terminals_colour_answers_are_kept_and_never_reach_the_pane() {
    let mut h = Harness::new(24, 80);
    let pane = h.active();
    h.keys(b"\x1b]11;rgb:ffff/ffff/ffff\x1b\\\x1b]10;rgb:0000/0000/0000\x07abc\r");
    let text = h.wait_pane(pane, "abc");
    assert!(
        !text.contains("rgb"),
        "the answer reached the pane: {text:?}"
    );
    let colours = h.server.terminal_colours;
    assert_eq!(
        colours.background,
        Some(crate::views::protocol::Rgb(255, 255, 255))
    );
    assert_eq!(
        colours.foreground,
        Some(crate::views::protocol::Rgb(0, 0, 0))
    );
    // A light background makes the pages' theme light.
    let look = crate::server::io::view_server::look(&h.server.state.config.mcp_apps, colours);
    assert_eq!(look.theme, "light", "{look:?}");
}

/// The usual frame draws a pane's changed rows from a copy taken under the terminal lock
/// (`render::in_place`, `calyx_tui::CopiedRows`): frame after frame, as a shell beside another
/// pane prints lines and scrolls, the client's terminal shows every line the pane's screen holds,
/// on the same row.
#[test]
fn frames_drawn_from_row_copies_show_what_the_pane_shows() {
    let mut h = Harness::new(12, 60);
    h.keys(b"\x02%");
    h.wait_ready();
    let shell = h.window().active;
    h.wait_pane(shell, "$");
    h.frame();
    for i in 0..20 {
        h.keys(format!("echo row{i}x\r").as_bytes());
        h.wait_pane(shell, &format!("\nrow{i}x"));
        let shown: Vec<String> = h.frame().lines().map(str::to_string).collect();
        let pane = h.server.state.panes[&shell].term();
        let screen = pane.screen();
        let (rows, cols) = screen.size();
        let lines: Vec<String> = screen
            .rows(0, cols.get())
            .take(usize::from(rows.get()))
            .map(|r| r.trim_end().to_string())
            .collect();
        drop(pane);
        // The pane's rows are drawn on consecutive frame rows from its top; find that top by
        // the line the shell just printed.
        let last = format!("row{i}x");
        let at_pane = lines.iter().rposition(|l| *l == last).expect("in the pane");
        let at_frame = shown
            .iter()
            .rposition(|l| l.ends_with(&last) || l.contains(&format!("{last} ")))
            .expect("on the client's terminal");
        let top = at_frame
            .checked_sub(at_pane)
            .expect("the pane's top is on screen");
        for (r, line) in lines.iter().enumerate().filter(|(_, l)| !l.is_empty()) {
            let frame_line = shown.get(top + r).map(String::as_str).unwrap_or_default();
            assert!(
                frame_line.contains(line.as_str()),
                "frame {i}: pane row {r} {line:?} is not on frame row {}: {frame_line:?}\n{shown:#?}",
                top + r
            );
        }
    }
}
