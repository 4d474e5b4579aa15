//! Restoring a saved session on fake pane processes (`io::fake_processes`): the windows come
//! back with their numbers, split trees and ratios, zoom, focus and synchronize-panes, and each
//! pane starts what `persist::relaunch` planned (a listed program as its command, a program
//! that ran under the shell typed into it, a shell elsewhere).

use std::sync::Arc;

use tokio::sync::mpsc;

use super::io::fake_processes::{Call, FakeProcesses};
use super::io::terminal::Outgoing;
use super::messages::Msg;
use super::owner::Server;
use crate::config::Config;
use crate::layout::{Layout, SplitDir};
use crate::persist::{SavedPane, SavedSession, SavedWindow};
use crate::protocol::ClientMessage;

fn pane(id: u32, cwd: &str, command: &[&str], foreground: &[&str]) -> SavedPane {
    let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    SavedPane {
        id,
        record_id: String::new(),
        cwd: cwd.into(),
        command: words(command),
        foreground: words(foreground),
        program: words(command),
        title: String::new(),
        agent: None,
        history: None,
    }
}

fn saved(dir: &str) -> SavedSession {
    let split = |dir, ratio, a, b| Layout::Split {
        dir,
        ratio,
        first: Box::new(a),
        second: Box::new(b),
    };
    SavedSession {
        name: "work".into(),
        saved_at: 1,
        active_window: 1,
        windows: vec![
            SavedWindow {
                number: 2,
                name: "edit".into(),
                auto_name: false,
                layout: split(
                    SplitDir::Horizontal,
                    300,
                    Layout::Pane(11),
                    split(SplitDir::Vertical, 700, Layout::Pane(12), Layout::Pane(13)),
                ),
                active: 13,
                zoomed: true,
                synchronized: true,
                panes: vec![
                    SavedPane {
                        record_id: "rec-11".into(),
                        ..pane(11, dir, &["vim", "a.rs"], &[])
                    },
                    pane(12, dir, &[], &["less", "notes.txt"]),
                    pane(13, "/no/such/dir", &[], &["cargo", "build"]),
                ],
            },
            SavedWindow {
                number: 5,
                name: String::new(),
                auto_name: true,
                layout: Layout::Pane(14),
                active: 14,
                zoomed: false,
                synchronized: false,
                panes: vec![pane(14, dir, &[], &[])],
            },
        ],
    }
}

#[test]
fn an_attach_by_name_restores_windows_layouts_and_programs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = dir.path().display().to_string();
    let config = Config {
        shell_integration: false,
        ..Config::default()
    };
    let (tx, _owner_rx) = mpsc::unbounded_channel::<Msg>();
    let socket = dir.path().join("server.sock").display().to_string();
    let mut server = Server::new(config, Vec::new(), socket, tx, Default::default());
    server.prompt_history = Default::default();
    let fakes = FakeProcesses::default();
    server.state.processes = Arc::new(fakes.clone());
    server.persisted.dormant.push(saved(&cwd));
    let (client_tx, _client_rx) = mpsc::channel::<Outgoing>(64);
    server.dispatch(Msg::Connected {
        id: 1,
        tx: client_tx,
    });
    server.client_message(
        1,
        ClientMessage::Attach {
            target: Some("work".into()),
            create: None,
            create_if_missing: false,
            rows: 40,
            cols: 120,
            term: None,
            terminal: None,
            opener_env: Vec::new(),
            back_to: None,
        },
    );
    assert!(server.persisted.dormant.is_empty(), "the record was taken");
    let s = server
        .state
        .sessions
        .values()
        .find(|s| s.name == "work")
        .expect("restored session");
    assert_eq!(s.active_window, 1);
    assert!(
        server.state.panes.values().any(|p| p.record_id == "rec-11"),
        "a restored pane keeps its record id"
    );
    let numbers: Vec<usize> = s.windows.iter().map(|w| w.number).collect();
    assert_eq!(numbers, vec![2, 5]);
    let edit = &s.windows[0];
    assert_eq!((edit.name.as_str(), edit.auto_name), ("edit", false));
    assert!(edit.zoomed && edit.synchronized);
    let Layout::Split {
        dir: SplitDir::Horizontal,
        ratio: 300,
        second,
        ..
    } = &edit.layout
    else {
        panic!("the outer split: {:?}", edit.layout)
    };
    assert!(matches!(
        **second,
        Layout::Split {
            dir: SplitDir::Vertical,
            ratio: 700,
            ..
        }
    ));
    let panes = edit.layout.panes();
    assert_eq!(edit.active, panes[2], "focus on the third pane, as saved");
    // Pids are given in spawn order: vim, the shell for less, the shell for cargo, a shell.
    assert!(
        matches!(&fakes.calls(1)[0], Call::Spawned { command, .. } if command == &["vim", "a.rs"])
    );
    assert!(matches!(&fakes.calls(2)[0], Call::Spawned { command, .. } if command.is_empty()));
    assert!(fakes
        .calls(2)
        .contains(&Call::Wrote(b"less notes.txt\r".to_vec())));
    assert!(!fakes.calls(3).iter().any(|c| matches!(c, Call::Wrote(_))));
    let note = server.state.panes[&panes[2]].term().screen().contents();
    assert!(note.contains("/no/such/dir no longer exists"), "{note}");
    assert!(note.contains("`cargo build` ran here"), "{note}");
    assert_eq!(
        server.state.panes[&panes[2]].start_cwd,
        crate::paths::home_dir().display().to_string()
    );
}
