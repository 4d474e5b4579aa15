//! `ClientMessage::Watch` on a server with fake panes: the watcher gets one snapshot at once,
//! nothing for messages that change nothing in it (an idle machine pushes no frame), and a
//! new one when something in it changes. Frames are counted, not timed.

use tokio::sync::mpsc;

use super::io::terminal::Outgoing;
use super::messages::Msg;
use super::on_fakes::{attach_creating, connect, quiet_config, server_on_fakes, session};
use crate::config::Config;
use crate::protocol::{ClientMessage, Request, ServerMessage};

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
    let (mut server, _owner_rx) = server_on_fakes(&dir, quiet_config());
    let mut watch_rx = connect(&mut server, WATCHER, 64);
    let mut other_rx = connect(&mut server, OTHER, 64);
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
            spec: session(&dir, "work", "agent"),
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

/// Whether `text` holds a raw escape or bell.
fn raw(text: &str) -> bool {
    text.contains('\u{1b}') || text.contains('\u{7}')
}

/// Every string in a JSON answer, keys and values.
fn strings(response: &crate::protocol::Response) -> Vec<String> {
    fn walk(value: &serde_json::Value, out: &mut Vec<String>) {
        match value {
            serde_json::Value::String(s) => out.push(s.clone()),
            serde_json::Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            serde_json::Value::Object(fields) => fields.iter().for_each(|(k, v)| {
                out.push(k.clone());
                walk(v, out);
            }),
            _ => {}
        }
    }
    let mut out = Vec::new();
    if let crate::protocol::Response::Json(value) = response {
        walk(value, &mut out);
    }
    out
}

/// A snapshot from a hostile machine: escape sequences in every text it sends.
fn hostile_snapshot() -> crate::protocol::MachineSnapshot {
    let evil = "\u{1b}]52;c;ZXZpbA==\u{7}\u{1b}[2J";
    crate::protocol::MachineSnapshot {
        version: format!("9.9{evil}"),
        sessions: Vec::new(),
        agents: vec![crate::protocol::SnapshotAgent {
            pane: format!("%3{evil}"),
            agent: "claude".into(),
            agent_name: format!("Claude{evil}"),
            state: "blocked".into(),
            cwd: Some(format!("/src/{evil}")),
            last_tool: Some(format!("Bash{evil}")),
        }],
        approvals: vec![crate::protocol::SnapshotApproval {
            id: 4,
            pane: format!("%3{evil}"),
            cli: format!("claude{evil}"),
            tool: format!("Bash{evil}"),
            summary: format!("rm -rf /{evil}"),
            choices: format!("a/A always{evil}"),
        }],
    }
}

#[tokio::test]
async fn nothing_a_remote_snapshot_says_reaches_output_raw() {
    use crate::machines::link::LinkState;
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut server, _owner_rx) = server_on_fakes(&dir, Config::default());
    server.machines.insert_for_test(
        crate::machines::Machine {
            name: "build".into(),
            target: "me@build".into(),
            enabled: true,
        },
        LinkState::Live,
        hostile_snapshot(),
    );
    let agents = strings(&server.agents_response());
    assert!(!agents.iter().any(|t| raw(t)), "{agents:?}");
    assert!(agents.iter().any(|t| t == "build"), "{agents:?}");
    let approvals = strings(&server.approvals_response(true));
    assert!(!approvals.iter().any(|t| raw(t)), "{approvals:?}");
    assert!(approvals.iter().any(|t| t == "build:4"), "{approvals:?}");
    let machines = strings(&server.machines_response(false));
    assert!(!machines.iter().any(|t| raw(t)), "{machines:?}");
    let view = super::view::sidebar::AgentsView::default().with_machines(&server.machines);
    assert_eq!(view.blocked, 1, "a live remote blocked agent counts");
    assert_eq!(view.approvals, 1);
    for row in &view.remote_rows {
        for text in [&row.pane_label, &row.agent_name, &row.title, &row.cwd_name] {
            assert!(!raw(text), "{text:?}");
        }
    }
    // The panel: attach a client, then its data for the remote request.
    let _client_rx = connect(&mut server, WATCHER, 64);
    attach_creating(&mut server, WATCHER, session(&dir, "near", "agent"));
    let id = server
        .panel_request(WATCHER)
        .expect("the remote request shown");
    let panel = server.panel_data_of(WATCHER, id).expect("panel data");
    for text in [
        &panel.cli,
        &panel.pane,
        &panel.tool,
        &panel.headline,
        &panel.choices,
    ]
    .into_iter()
    .chain(&panel.lines)
    {
        assert!(!raw(text), "{text:?}");
    }
    assert!(panel.pane.starts_with("build:%3"), "{:?}", panel.pane);

    // Unreachable: the rows stay (stale) but count for nothing, and the request is not
    // answerable here (not in the panel, listed as unreachable).
    server
        .machines
        .apply(crate::machines::link::LinkEvent::State {
            name: "build".into(),
            state: LinkState::Unreachable("gone".into()),
        });
    let view = super::view::sidebar::AgentsView::default().with_machines(&server.machines);
    assert_eq!((view.blocked, view.approvals), (0, 0));
    assert!(server.panel_request(WATCHER).is_none());
    let approvals = strings(&server.approvals_response(true));
    assert!(
        approvals.iter().any(|t| t == "unreachable"),
        "{approvals:?}"
    );
    let refused = server.decide_remote(None, "build", 4, true, None, None);
    assert!(
        matches!(&refused, crate::protocol::Response::Error(e) if e.starts_with("unreachable: build")),
        "{refused:?}"
    );
}

#[tokio::test]
async fn typing_into_a_pane_of_a_watched_server_works_out_no_snapshot() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut server, _owner_rx) = server_on_fakes(&dir, quiet_config());
    let mut watch_rx = connect(&mut server, WATCHER, 64);
    let _client_rx = connect(&mut server, OTHER, 1024);
    attach_creating(&mut server, OTHER, session(&dir, "work", "agent"));
    server.handle(Msg::Message {
        id: WATCHER,
        msg: ClientMessage::Watch,
    });
    assert_eq!(pushed(&mut watch_rx).len(), 1, "one snapshot at once");
    let computed = server.watch_computed;
    // Keys typed into the pane: no snapshot sent, none worked out.
    for key in [&b"h"[..], b"e", b"l", b"l", b"o", b"\r"] {
        server.handle(Msg::Input {
            id: OTHER,
            bytes: key.to_vec(),
        });
        assert_eq!(server.push_watch(), 0);
    }
    assert_eq!(server.watch_computed, computed, "worked out per key");
    assert!(pushed(&mut watch_rx).is_empty());
    // A key that does something else (the prefix, then `c` for a new window) is looked at:
    // the window count changed.
    server.handle(Msg::Input {
        id: OTHER,
        bytes: b"\x02c".to_vec(),
    });
    assert_eq!(server.push_watch(), 1);
    assert_eq!(server.watch_computed, computed + 1);
    let next = pushed(&mut watch_rx);
    assert_eq!(next[0].sessions[0].windows, 2, "{next:?}");
}
