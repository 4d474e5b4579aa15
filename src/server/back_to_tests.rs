//! A client another machine's chooser attached here (`ClientMessage::Attach`'s `back_to`,
//! passed by `calyx remote-bridge --tty --back-to`): the key bound to `last-session` (`prefix
//! L`) detaches it with `protocol::BACK_MESSAGE`, which its bridge turns into the exit status
//! that sends the other machine's client back. A pasted `C-b L` is text for the pane.

use super::reducer_tests::{Harness, CLIENT};
use crate::protocol::BACK_MESSAGE;

/// What the server told the client (its messages, as JSON text).
fn told(h: &mut Harness) -> String {
    let mut got = Vec::new();
    while let Ok(out) = h.client_rx.try_recv() {
        if let super::io::terminal::Outgoing::Message(bytes) = out {
            got.extend(bytes);
        }
    }
    String::from_utf8_lossy(&got).to_string()
}

fn came_from(h: &mut Harness, session: &str) {
    h.server
        .state
        .clients
        .get_mut(&CLIENT)
        .expect("attached")
        .back_to = Some(session.to_string());
}

#[test]
fn prefix_l_sends_a_client_from_another_machine_back() {
    let mut h = Harness::new(25, 80);
    came_from(&mut h, "home");
    let _ = told(&mut h);
    h.keys(b"\x02L");
    assert!(!h.server.state.clients.contains_key(&CLIENT));
    let text = told(&mut h);
    assert!(
        text.contains("\"Exit\"") && text.contains(BACK_MESSAGE),
        "{text}"
    );
}

#[test]
fn a_pasted_prefix_l_stays_text_and_a_local_client_keeps_prefix_l() {
    let mut h = Harness::new(25, 80);
    came_from(&mut h, "home");
    h.keys(b"\x1b[200~\x02L\x1b[201~");
    assert!(
        h.server.state.clients.contains_key(&CLIENT),
        "a paste went back"
    );
    // A client of this machine: prefix L is last-session, which with one session stays put.
    let mut h = Harness::new(25, 80);
    h.keys(b"\x02L");
    assert!(h.server.state.clients.contains_key(&CLIENT));
    assert!(!told(&mut h).contains(BACK_MESSAGE));
}
