//! `ClientMessage::Watch` on a server with fake panes: the watcher gets one snapshot at once,
//! nothing for messages that change nothing in it (an idle machine pushes no frame), and a
//! new one when something in it changes. Frames are counted, not timed.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::io::fake_processes::FakeProcesses;
use super::io::terminal::Outgoing;
use super::messages::Msg;
use super::owner::Server;
use crate::config::Config;
use crate::protocol::{ClientMessage, NewSession, Request, ServerMessage};

const WATCHER: u64 = 9;
const OTHER: u64 = 10;

/// The snapshots waiting in `rx`.
fn pushed(rx: &mut mpsc::Receiver<Outgoing>) -> Vec<crate::protocol::MachineSnapshot> {
    let mut out = Vec::new();
    while let Ok(outgoing) = rx.try_recv() {
        let Outgoing::Message(bytes) = outgoing else {
            continue;
        };
        // A frame: 4 bytes of length, 1 of tag, then JSON.
        let message: ServerMessage = serde_json::from_slice(&bytes[5..]).expect("json message");
        if let ServerMessage::Snapshot(snapshot) = message {
            out.push(snapshot);
        }
    }
    out
}

#[tokio::test]
async fn a_watcher_gets_a_snapshot_only_when_it_changes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = Config {
        shell_integration: false,
        ..Config::default()
    };
    let (tx, _owner_rx) = mpsc::unbounded_channel();
    let socket = dir.path().join("server.sock").display().to_string();
    let mut server = Server::new(config, Vec::new(), socket, tx, Default::default());
    server.prompt_history = Default::default();
    server.state.processes = Arc::new(FakeProcesses::default());
    let (watch_tx, mut watch_rx) = mpsc::channel(64);
    let (other_tx, mut other_rx) = mpsc::channel(64);
    server.handle(Msg::Connected {
        id: WATCHER,
        tx: watch_tx,
    });
    server.handle(Msg::Connected {
        id: OTHER,
        tx: other_tx,
    });
    // Nobody watches: no snapshot is worked out at all.
    assert_eq!(server.push_watch(), 0);

    server.handle(Msg::Message {
        id: WATCHER,
        msg: ClientMessage::Watch,
    });
    let first = pushed(&mut watch_rx);
    assert_eq!(first.len(), 1, "one snapshot at once");
    assert!(first[0].sessions.is_empty());
    assert_eq!(first[0].version, env!("CARGO_PKG_VERSION"));

    // Messages that change nothing in the snapshot: a listing, a pane's output; then the
    // owner's look after them pushes nothing, however often it looks.
    for _ in 0..3 {
        server.handle(Msg::Message {
            id: OTHER,
            msg: ClientMessage::Request(Request::ListSessions),
        });
        assert_eq!(server.push_watch(), 0);
    }
    assert!(pushed(&mut watch_rx).is_empty(), "an idle machine pushed");
    assert!(
        pushed(&mut other_rx).is_empty(),
        "a plain client got a snapshot"
    );

    // A new session is a change: exactly one snapshot, with it.
    server.handle(Msg::Message {
        id: OTHER,
        msg: ClientMessage::Request(Request::NewSession {
            spec: NewSession {
                name: Some("work".into()),
                cwd: Some(dir.path().display().to_string()),
                command: vec!["agent".into()],
                env: Vec::new(),
            },
            rows: 24,
            cols: 80,
        }),
    });
    assert_eq!(server.push_watch(), 1);
    assert_eq!(server.push_watch(), 0);
    let next = pushed(&mut watch_rx);
    assert_eq!(next.len(), 1, "{next:?}");
    assert_eq!(next[0].sessions[0].name, "work");

    // A watcher that went away is forgotten.
    server.handle(Msg::Disconnected { id: WATCHER });
    assert!(server.watchers.is_empty());
}
