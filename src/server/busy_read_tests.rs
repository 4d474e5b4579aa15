//! A `calyx capture` of a pane whose terminal is locked (its reader mid-parse, or descheduled
//! while holding the lock) must not hold up the owner loop: typing into another pane goes on,
//! and the capture is answered once the lock is free (issue 19, `operations::busy_reads`).
//! Real panes in real PTYs (the reducer tests' harness); the lock is held by a thread here.

use std::sync::atomic::Ordering;

use tokio::sync::mpsc;

use super::io::terminal::Outgoing;
use super::locked_pane_tests::hold_lock;
use super::messages::Msg;
use super::reducer_tests::{wait, Harness};
use crate::layout::PaneId;
use crate::protocol::{ClientMessage, Request};

/// The connection the capture comes over (a one-shot `calyx capture`, not the attached client).
const ASKER: super::model::ids::ClientId = 2;

/// What the server sent over `rx` so far, as text.
fn received(rx: &mut mpsc::Receiver<Outgoing>) -> String {
    let mut got = Vec::new();
    while let Ok(out) = rx.try_recv() {
        if let Outgoing::Message(bytes) = out {
            got.extend(bytes);
        }
    }
    String::from_utf8_lossy(&got).into_owned()
}

/// A client `ASKER` connects and asks for a capture of `pane`; what it is sent comes on the
/// returned channel.
fn ask_capture(h: &mut Harness, pane: PaneId) -> mpsc::Receiver<Outgoing> {
    let (asker_tx, asker_rx) = mpsc::channel(16);
    h.server.dispatch(Msg::Connected {
        id: ASKER,
        tx: asker_tx,
    });
    h.server.client_message(
        ASKER,
        ClientMessage::Request(Request::Capture {
            target: Some(format!("%{pane}")),
            scrollback: false,
            ansi: false,
        }),
    );
    asker_rx
}

#[test]
fn a_capture_of_a_locked_pane_does_not_stall_typing_into_another() {
    let mut h = Harness::new(25, 80);
    let busy = h.active();
    h.keys(b"alpha\r");
    h.wait_pane(busy, "alpha");
    let quiet = h.shell_pane();
    assert_ne!(busy, quiet);

    // A thread holds the busy pane's terminal until told to let go (or for 30 s, so that a
    // capture that waits on the loop makes this test fail rather than hang).
    let (release_tx, released) = hold_lock(&h, busy);

    let mut asker_rx = ask_capture(&mut h, busy);
    // The loop is free again: the keys reach the quiet pane while the lock is still held.
    h.keys(b"typed-meanwhile");
    h.wait_pane(quiet, "typed-meanwhile");
    assert!(
        !released.load(Ordering::SeqCst),
        "the capture held up the loop until the busy pane's lock was let go"
    );
    assert!(
        !received(&mut asker_rx).contains("alpha"),
        "the capture cannot have read the locked screen yet"
    );

    // Once the reader lets go, the capture is answered with the pane's screen.
    let _ = release_tx.send(());
    let mut answer = String::new();
    wait("the capture's answer", || {
        answer.push_str(&received(&mut asker_rx));
        answer.contains("alpha").then_some(())
    });
    assert!(answer.contains("Response"), "{answer}");
}

#[test]
fn a_capture_of_a_free_pane_is_answered_at_once() {
    let mut h = Harness::new(25, 80);
    let pane = h.active();
    h.keys(b"bravo\r");
    h.wait_pane(pane, "bravo");
    let mut asker_rx = ask_capture(&mut h, pane);
    // No thread and no loop turn in between: the answer is already on its way.
    let answer = received(&mut asker_rx);
    assert!(answer.contains("bravo"), "{answer}");
}
