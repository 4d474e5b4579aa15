//! Notifications for what changed on a saved machine while its link was down (issue 20 §2):
//! the first snapshot after the link comes back is compared with the rows kept (stale) while
//! it was down, so an agent that became blocked meanwhile notifies once here; a link that
//! drops and comes back with nothing changed notifies nothing (no burst of every row).

use crate::common::{wait_until, Client};
use crate::e2e_machine_links::{linked, remote_bridges, Linked};

/// The link to build goes down (sshd stops, the live connection is cut) and is seen down here.
fn link_down(l: &mut Linked) {
    l.sshd.stop();
    for pid in remote_bridges(&l.sshd) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGTERM,
        );
    }
    wait_until("build's rows stale here", || {
        l.agent_row("build")
            .filter(|r| r["stale"] == true)
            .map(|_| ())
    });
}

/// sshd comes back; waits until the link is live again with build's agent in `state`.
fn link_up(l: &mut Linked, state: &str) {
    l.sshd.restart();
    wait_until(
        &format!("build's agent {state} and live here again"),
        || {
            l.agent_row("build")
                .filter(|r| r["stale"] == false && r["state"] == state)
                .map(|_| ())
        },
    );
}

/// How many desktop notifications for build's agents `c`'s terminal got, once everything
/// the server sent before a message shown now has arrived (same connection, in order).
fn build_notifications(l: &Linked, c: &mut Client, mark: &str) -> usize {
    l.local.ok(&["display-message", "-t", "near", mark]);
    c.wait_for(mark);
    let raw = String::from_utf8_lossy(&c.raw()).to_string();
    raw.matches("\x1b]9;build %").count()
}

#[test]
fn an_agent_blocked_while_the_link_was_down_notifies_once_when_it_comes_back() {
    let Some(mut l) = linked() else { return };
    let mut c = l.local.client(&["attach", "-t", "near"], 30, 140);
    c.wait_for("[near]");
    link_down(&mut l);
    // Meanwhile build's agent asks for permission there.
    let mut hook = l.remote_gate("make deploy");
    wait_until("build's agent blocked there", || {
        let agents = l.sshd.remote.ok(&["agents"]);
        agents.contains("blocked").then_some(())
    });
    assert_eq!(
        build_notifications(&l, &mut c, "mark-1"),
        0,
        "notified while down"
    );
    link_up(&mut l, "blocked");
    assert_eq!(
        build_notifications(&l, &mut c, "mark-2"),
        1,
        "{:?}",
        c.screen()
    );
    let raw = String::from_utf8_lossy(&c.raw()).to_string();
    assert!(
        raw.contains("needs approval"),
        "not the blocked agent's notification"
    );
    // Down and up again with nothing changed: nothing more.
    link_down(&mut l);
    link_up(&mut l, "blocked");
    assert_eq!(
        build_notifications(&l, &mut c, "mark-3"),
        1,
        "notified again on reconnect"
    );
    let _ = hook.kill();
    let _ = hook.wait();
}
