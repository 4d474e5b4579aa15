//! A tagged tool call from another machine that its caller gave up on
//! (`ClientMessage::CancelTagged`), on a server with fake panes: a `pane_run` waiting for this
//! machine's human has its request withdrawn from the panel, so nothing types for a caller
//! that no longer waits.

use std::time::Duration;

use tokio::sync::mpsc;

use super::messages::Msg;
use super::on_fakes::{connect, quiet_config, server_on_fakes, session};
use super::owner::Server;
use crate::protocol::{ClientMessage, RemoteCaller, Request};

const LINK: u64 = 9;

/// Handles the owner's messages until `done` holds (at most 10 s).
async fn pump(
    server: &mut Server,
    rx: &mut mpsc::UnboundedReceiver<Msg>,
    what: &str,
    done: impl Fn(&Server) -> bool,
) {
    let until = tokio::time::Instant::now() + Duration::from_secs(10);
    while !done(server) {
        assert!(tokio::time::Instant::now() < until, "timed out: {what}");
        tokio::select! {
            Some(msg) = rx.recv() => server.handle(msg),
            () = tokio::time::sleep(Duration::from_millis(10)) => {}
        }
    }
}

#[tokio::test]
async fn a_cancelled_pane_run_from_another_machine_withdraws_its_request() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut server, mut rx) = server_on_fakes(&dir, quiet_config());
    let _link_rx = connect(&mut server, LINK, 64);
    server.handle(Msg::Message {
        id: LINK,
        msg: ClientMessage::Request(Request::NewSession {
            spec: session(&dir, "work", "sh"),
            rows: 24,
            cols: 80,
        }),
    });
    let pane = *server.state.panes.keys().next().expect("a pane");
    server.handle(Msg::Message {
        id: LINK,
        msg: ClientMessage::Tagged {
            tag: 5,
            request: Request::RemoteTool {
                tool: "pane_run".into(),
                args: serde_json::json!({ "pane": format!("%{pane}"), "command": "make deploy" }),
                from: RemoteCaller {
                    machine: "laptop".into(),
                    pane: None,
                    name: None,
                },
            },
        },
    });
    pump(&mut server, &mut rx, "the pane_run request queued", |s| {
        s.approvals.pending().len() == 1
    })
    .await;
    server.handle(Msg::Message {
        id: LINK,
        msg: ClientMessage::CancelTagged { tag: 5 },
    });
    pump(&mut server, &mut rx, "the request withdrawn", |s| {
        s.approvals.pending().is_empty()
    })
    .await;
    let record = server.approvals.recent().last().expect("a record");
    assert_eq!(record.outcome, "withdrawn");
}
