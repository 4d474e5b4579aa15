//! The reducer on fake pane processes (`io::fake_processes`): requests, keys' actions and
//! client messages change the model as they do with real programs, and the fakes record what
//! the processes were asked (started, resized, typed into, closed). No PTY, thread or child
//! process runs, so these take microseconds; `reducer_tests` keeps the ones that need real
//! programs (what a pane shows, keys typed through to a program).

use std::sync::Arc;

use tokio::sync::mpsc;

use super::io::fake_processes::{Call, FakeProcesses};
use super::io::terminal::Outgoing;
use super::messages::Msg;
use super::model::ids::ClientId;
use super::owner::Server;
use crate::commands::Action;
use crate::config::Config;
use crate::layout::{Direction, PaneId, SplitDir};
use crate::protocol::{ClientMessage, NewSession, Request, Response};

const CLIENT: ClientId = 7;

/// A server whose panes are fakes, with one client attached to a new session of one pane
/// (pane 1, fake pid 1) in a `rows` x `cols` terminal.
struct Fixture {
    server: Server,
    fakes: FakeProcesses,
    _client_rx: mpsc::Receiver<Outgoing>,
    _owner_rx: mpsc::UnboundedReceiver<Msg>,
    _dir: tempfile::TempDir,
}

impl Fixture {
    fn new(rows: u16, cols: u16) -> Self {
        Self::configured(rows, cols, |_| {})
    }

    /// [`Fixture::new`] with the config changed by `change` first.
    fn configured(rows: u16, cols: u16, change: impl FnOnce(&mut Config)) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        // Kill keys close at once here; asking first is e2e_confirm_kill's subject.
        let mut config = Config {
            shell_integration: false,
            confirm_kill: false,
            ..Config::default()
        };
        change(&mut config);
        let (tx, owner_rx) = mpsc::unbounded_channel();
        let socket = dir.path().join("server.sock").display().to_string();
        let mut server = Server::new(config, Vec::new(), socket, tx, Default::default());
        // The prompt's history in memory: a test never writes the user's own file.
        server.prompt_history = Default::default();
        let fakes = FakeProcesses::default();
        server.state.processes = Arc::new(fakes.clone());
        let (client_tx, client_rx) = mpsc::channel(64);
        server.dispatch(Msg::Connected {
            id: CLIENT,
            tx: client_tx,
        });
        server.client_message(
            CLIENT,
            ClientMessage::Attach {
                target: None,
                create: Some(NewSession {
                    name: Some("fake".into()),
                    cwd: Some(dir.path().display().to_string()),
                    command: vec!["agent".into()],
                    env: Vec::new(),
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
        Fixture {
            server,
            fakes,
            _client_rx: client_rx,
            _owner_rx: owner_rx,
            _dir: dir,
        }
    }

    /// The panes of the client's session's active window, and the focused one.
    fn window(&self) -> (Vec<PaneId>, PaneId) {
        let session = self
            .server
            .state
            .clients
            .get(&CLIENT)
            .map(|c| c.session)
            .expect("client attached");
        let s = self.server.state.sessions.get(&session).expect("session");
        let w = s.window().expect("window");
        (w.layout.panes(), w.active)
    }

    fn windows(&self) -> usize {
        self.server
            .state
            .sessions
            .values()
            .map(|s| s.windows.len())
            .sum()
    }

    /// The numbers of the session's windows, each with its focused pane, in order.
    fn window_numbers(&self) -> Vec<(usize, PaneId)> {
        self.server
            .state
            .sessions
            .values()
            .flat_map(|s| s.windows.iter().map(|w| (w.number, w.active)))
            .collect()
    }

    /// `kill-window -t TARGET` through the CLI's request.
    fn kill_window(&mut self, target: &str) {
        let response = self.server.request(Request::KillWindow {
            target: Some(target.into()),
        });
        assert!(matches!(response, Response::Ok), "{target}: {response:?}");
    }

    fn size_of(&self, pane: PaneId) -> (u16, u16) {
        let p = self.server.state.panes.get(&pane).expect("pane");
        (p.rows, p.cols)
    }
}

#[test]
fn attaching_starts_one_fake_process_at_the_windows_size() {
    let f = Fixture::new(24, 80);
    assert_eq!(f.fakes.spawned(), 1);
    let (panes, active) = f.window();
    assert_eq!((panes, active), (vec![1], 1));
    // 24 rows less the status line, less the pane's border.
    let (rows, cols) = f.size_of(1);
    assert_eq!(
        f.fakes.calls(1).first(),
        Some(&Call::Spawned {
            command: vec!["agent".into()],
            rows,
            cols,
        })
    );
    assert_eq!((rows, cols), (21, 78));
}

#[test]
fn a_split_starts_a_pane_that_takes_the_focus_and_half_the_width() {
    let mut f = Fixture::new(24, 80);
    f.server
        .perform(CLIENT, Action::Split(SplitDir::Horizontal));
    let (panes, active) = f.window();
    assert_eq!(panes, vec![1, 2]);
    assert_eq!(active, 2);
    assert_eq!(f.fakes.spawned(), 2);
    let (_, left) = f.size_of(1);
    let (_, right) = f.size_of(2);
    assert!(
        left + right + 4 <= 80 && left + right + 4 >= 79,
        "{left} + {right}"
    );
    // The first pane was told its narrower size.
    assert!(f.fakes.calls(1).contains(&Call::Resized {
        rows: 21,
        cols: left
    }));
}

#[test]
fn closing_a_pane_terminates_its_process_and_gives_its_room_back() {
    let mut f = Fixture::new(24, 80);
    f.server.perform(CLIENT, Action::Split(SplitDir::Vertical));
    assert_eq!(f.window().0, vec![1, 2]);
    let response = f.server.request(Request::KillPane {
        target: Some("%2".into()),
    });
    assert!(matches!(response, Response::Ok), "{response:?}");
    assert_eq!(f.window(), (vec![1], 1));
    assert!(!f.server.state.panes.contains_key(&2));
    assert_eq!(f.fakes.calls(2).last(), Some(&Call::Terminated));
    assert!(!f.fakes.calls(1).contains(&Call::Terminated));
    assert_eq!(f.size_of(1), (21, 78));
}

#[test]
fn killing_a_window_terminates_every_process_in_it_and_only_those() {
    let mut f = Fixture::new(24, 80);
    f.server.perform(CLIENT, Action::NewWindow);
    f.server
        .perform(CLIENT, Action::Split(SplitDir::Horizontal));
    assert_eq!(f.windows(), 2);
    assert_eq!(f.window().0, vec![2, 3]);
    f.server.perform(CLIENT, Action::KillWindow);
    assert_eq!(f.windows(), 1);
    assert_eq!(f.window(), (vec![1], 1));
    for pid in [2, 3] {
        assert!(f.fakes.calls(pid).contains(&Call::Terminated), "pane {pid}");
    }
    assert!(!f.fakes.calls(1).contains(&Call::Terminated));
}

#[test]
fn a_client_resize_resizes_every_pane_of_its_session() {
    let mut f = Fixture::new(24, 80);
    f.server
        .perform(CLIENT, Action::Split(SplitDir::Horizontal));
    f.server.client_message(
        CLIENT,
        ClientMessage::Resize {
            rows: 40,
            cols: 120,
        },
    );
    let (_, left) = f.size_of(1);
    let (_, right) = f.size_of(2);
    assert!(left + right + 4 >= 119, "{left} + {right} fill 120 columns");
    for pane in [1, 2] {
        let (rows, cols) = f.size_of(pane);
        assert_eq!(rows, 37);
        assert_eq!(
            f.fakes.calls(pane).last(),
            Some(&Call::Resized { rows, cols }),
            "pane {pane} was told its new size last"
        );
    }
}

#[test]
fn focus_follows_selection_by_direction_and_by_target() {
    let mut f = Fixture::new(24, 80);
    f.server
        .perform(CLIENT, Action::Split(SplitDir::Horizontal));
    assert_eq!(f.window().1, 2);
    f.server
        .perform(CLIENT, Action::SelectPane(Direction::Left));
    assert_eq!(f.window().1, 1);
    f.server
        .perform(CLIENT, Action::SelectPane(Direction::Left));
    assert_eq!(f.window().1, 1, "nothing further left: the focus stays");
    let response = f.server.request(Request::Select {
        target: Some("%2".into()),
    });
    assert!(matches!(response, Response::Ok), "{response:?}");
    assert_eq!(f.window().1, 2);
    f.server.perform(CLIENT, Action::NextPane);
    assert_eq!(f.window().1, 1);
}

#[test]
fn a_pane_whose_program_exits_closes_and_the_last_one_ends_the_server() {
    let mut f = Fixture::new(24, 80);
    f.server
        .perform(CLIENT, Action::Split(SplitDir::Horizontal));
    f.server.dispatch(Msg::PaneExited {
        pane: 2,
        status: Some(0),
    });
    assert_eq!(f.window(), (vec![1], 1));
    // An exited program is not signalled again.
    assert!(!f.fakes.calls(2).contains(&Call::Terminated));
    f.server.dispatch(Msg::PaneExited {
        pane: 1,
        status: Some(0),
    });
    assert!(f.server.state.sessions.is_empty());
    assert!(f.server.state.quit);
}

#[test]
fn window_numbers_stay_when_a_window_closes_and_a_new_one_fills_the_gap() {
    let mut f = Fixture::new(24, 80);
    f.server.perform(CLIENT, Action::NewWindow);
    f.server.perform(CLIENT, Action::NewWindow);
    assert_eq!(f.window_numbers(), vec![(0, 1), (1, 2), (2, 3)]);
    f.kill_window("fake:1");
    assert_eq!(f.window_numbers(), vec![(0, 1), (2, 3)]);
    // Targets, `prefix N` and the numbers users see all mean the window numbered so.
    let response = f.server.request(Request::Select {
        target: Some("fake:0".into()),
    });
    assert!(matches!(response, Response::Ok), "{response:?}");
    assert_eq!(f.window().1, 1);
    f.server.perform(CLIENT, Action::SelectWindow(2));
    assert_eq!(f.window().1, 3);
    f.server.perform(CLIENT, Action::SelectWindow(1));
    assert_eq!(f.window().1, 3, "no window 1: the focus stays");
    // A new window takes the lowest free number, and shows.
    f.server.perform(CLIENT, Action::NewWindow);
    assert_eq!(f.window_numbers(), vec![(0, 1), (1, 4), (2, 3)]);
    assert_eq!(f.window().1, 4);
    f.kill_window("fake:2");
    assert_eq!(f.window_numbers(), vec![(0, 1), (1, 4)]);
    assert!(f.fakes.calls(3).contains(&Call::Terminated));
}

#[test]
fn renumber_windows_closes_the_gap_a_closed_window_leaves() {
    let mut f = Fixture::configured(24, 80, |c| c.renumber_windows = true);
    f.server.perform(CLIENT, Action::NewWindow);
    f.server.perform(CLIENT, Action::NewWindow);
    f.kill_window("fake:1");
    assert_eq!(f.window_numbers(), vec![(0, 1), (1, 3)]);
    f.server.perform(CLIENT, Action::SelectWindow(1));
    assert_eq!(f.window().1, 3);
}

#[test]
fn base_index_numbers_the_first_window_and_the_lowest_free_one() {
    let mut f = Fixture::configured(24, 80, |c| c.base_index = 1);
    f.server.perform(CLIENT, Action::NewWindow);
    f.server.perform(CLIENT, Action::NewWindow);
    assert_eq!(f.window_numbers(), vec![(1, 1), (2, 2), (3, 3)]);
    f.kill_window("fake:1");
    f.server.perform(CLIENT, Action::NewWindow);
    assert_eq!(f.window_numbers(), vec![(1, 4), (2, 2), (3, 3)]);
    // Renumbering counts from the base too.
    let mut f = Fixture::configured(24, 80, |c| {
        c.base_index = 1;
        c.renumber_windows = true;
    });
    f.server.perform(CLIENT, Action::NewWindow);
    f.server.perform(CLIENT, Action::NewWindow);
    f.kill_window("fake:2");
    assert_eq!(f.window_numbers(), vec![(1, 1), (2, 3)]);
}

#[test]
fn the_status_line_and_the_window_chooser_show_window_numbers() {
    let mut f = Fixture::new(24, 80);
    f.server.perform(CLIENT, Action::NewWindow);
    f.server.perform(CLIENT, Action::NewWindow);
    f.kill_window("fake:1");
    f.server.perform(CLIENT, Action::ChooseWindow);
    let chooser: Vec<String> = f
        .server
        .tree_data(CLIENT)
        .expect("the chooser is open")
        .into_iter()
        .filter(|row| row.window)
        .map(|row| row.label)
        .collect();
    let numbers: Vec<&str> = chooser
        .iter()
        .filter_map(|label| label.split(':').next())
        .collect();
    assert_eq!(numbers, ["0", "2"], "{chooser:?}");
    let agents = super::view::sidebar::AgentsView::build(
        &f.server.state,
        &f.server.agents,
        &f.server.approvals,
    );
    let cache = f.server.frames.entry(CLIENT).or_default();
    let rendered =
        super::render::render_client(&mut f.server.state, &agents, None, None, CLIENT, cache)
            .expect("a frame");
    let size = |n: u16| std::num::NonZeroU16::new(n).expect("size");
    let mut terminal = vt100::Parser::new(size(24), size(80), 0);
    terminal.process(&rendered.bytes);
    let status = terminal.screen().rows(0, 80).last().unwrap_or_default();
    let tabs: Vec<&str> = status
        .split_whitespace()
        .filter(|word| word.contains(':'))
        .collect();
    assert!(
        tabs.iter().any(|t| t.starts_with("0:")) && tabs.iter().any(|t| t.starts_with("2:")),
        "{status}"
    );
    assert!(!tabs.iter().any(|t| t.starts_with("1:")), "{status}");
}

/// join-pane out of a session's last window: the session ends (its client is told and
/// detached) while the moved pane's program keeps running, only resized, in the other session.
#[test]
fn joining_a_session_s_last_pane_elsewhere_ends_the_session_not_the_program() {
    let mut f = Fixture::new(24, 80);
    let spec = NewSession {
        name: Some("other".into()),
        cwd: None,
        command: vec!["agent".into()],
        env: Vec::new(),
    };
    let made = f.server.request(Request::NewSession {
        spec,
        rows: 24,
        cols: 80,
    });
    assert!(
        matches!(made, Response::Created { pane: 2, .. }),
        "{made:?}"
    );
    let joined = f.server.request(Request::JoinPane {
        source: Some("%1".into()),
        target: Some("%2".into()),
        horizontal: true,
        before: false,
        size: None,
        detached: false,
    });
    assert!(matches!(joined, Response::Ok), "{joined:?}");
    let state = &f.server.state;
    assert!(state.sessions.values().all(|s| s.name == "other"));
    assert!(
        !state.clients.contains_key(&CLIENT),
        "the client was detached"
    );
    let (session, window) = state.locate(1).expect("pane 1 still exists");
    let s = state.sessions.get(&session).expect("session");
    assert_eq!(s.windows[window].layout.panes(), vec![2, 1]);
    assert_eq!(s.windows[window].active, 1, "the moved pane is focused");
    assert_eq!(state.panes.get(&1).map(|p| p.session), Some(session));
    let calls = f.fakes.calls(1);
    assert!(!calls.contains(&Call::Terminated) && !calls.contains(&Call::HungUp));
    let (rows, cols) = f.size_of(1);
    assert!(cols < 78, "narrower beside pane 2: {cols}");
    assert_eq!(calls.last(), Some(&Call::Resized { rows, cols }));
}
