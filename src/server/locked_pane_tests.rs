//! `list-panes` and `send-keys` must not wait for a pane's terminal lock: a flooding pane's
//! reader holds it while it parses each read, and on a loaded machine it can lose its core
//! while holding it, which held up the owner loop and every keystroke behind it (issue 19).
//! They read the pane's glance (title, input modes) instead. Real panes in real PTYs; the lock
//! is held by a thread here, as in `busy_read_tests`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc as std_mpsc, Arc};
use std::time::Duration;

use super::model::state::lock_terminal;
use super::reducer_tests::Harness;
use crate::layout::PaneId;
use crate::protocol::{Request, Response};

/// Holds `pane`'s terminal lock on a thread until the returned sender says so (or 30 s pass, so
/// that a request that waits for the lock fails the test rather than hanging it). The flag
/// turns true once the lock is let go.
pub(super) fn hold_lock(h: &Harness, pane: PaneId) -> (std_mpsc::Sender<()>, Arc<AtomicBool>) {
    let terminal = Arc::clone(&h.server.state.panes[&pane].terminal);
    let released = Arc::new(AtomicBool::new(false));
    let (held_tx, held_rx) = std_mpsc::channel();
    let (release_tx, release_rx) = std_mpsc::channel::<()>();
    {
        let released = Arc::clone(&released);
        std::thread::spawn(move || {
            let guard = lock_terminal(&terminal);
            let _ = held_tx.send(());
            let _ = release_rx.recv_timeout(Duration::from_secs(30));
            released.store(true, Ordering::SeqCst);
            drop(guard);
        });
    }
    held_rx
        .recv_timeout(Duration::from_secs(15))
        .expect("the holder took the lock");
    (release_tx, released)
}

#[test]
fn list_panes_and_send_keys_do_not_wait_for_a_locked_pane() {
    let mut h = Harness::new(25, 80);
    let busy = h.shell_pane();
    // The program asks for application cursor keys and sets a title, then the lock is taken.
    h.keys(b"printf '\\033[?1h\\033]2;flooding-title\\007'; echo re''ady\r");
    h.wait_pane(busy, "ready");
    wait_for_glance(&h, busy);
    let (release, released) = hold_lock(&h, busy);

    let listed = h.server.request(Request::ListPanes { target: None });
    let sent = h.server.request(Request::SendKeys {
        target: Some(format!("%{busy}")),
        keys: vec!["Up".into()],
        literal: false,
    });
    assert!(
        !released.load(Ordering::SeqCst),
        "list-panes or send-keys waited until the pane's lock was let go"
    );
    let Response::Panes(panes) = listed else {
        panic!("list-panes answered {listed:?}");
    };
    let info = panes
        .iter()
        .find(|p| p.pane_id == busy)
        .expect("the busy pane is listed");
    assert_eq!(info.title, "flooding-title");
    assert!(matches!(sent, Response::Ok), "{sent:?}");

    // Once the lock is free, the pane shows the key encoded for its cursor mode (the tty's
    // echo shows ESC O A as ^[OA; the normal mode's ESC [ A would be ^[[A).
    let _ = release.send(());
    h.wait_pane(busy, "^[OA");
}

/// Waits until the glance shows what the program asked for (published after the parse that
/// `wait_pane` saw, under the same lock, so this is at once in practice).
fn wait_for_glance(h: &Harness, pane: PaneId) {
    let glance = Arc::clone(&h.server.state.panes[&pane].glance);
    super::reducer_tests::wait("the glance", || {
        (glance.application_cursor() && glance.title().is_some()).then_some(())
    });
}
