//! End to end: the owner's registration of a pane's PTY for keystroke echoes, kept from key to
//! key (src/server/io/echo_watch.rs) instead of made and dropped per key. A thousand keys leak
//! no descriptor, a closed pane's PTY is not held open by it, and typing goes on in the pane
//! left, in a real client.

use crate::common::{open_files, wait_until, Client, Env};

/// The server's descriptors of PTY masters (each pane holds some; so does a kept watch).
fn pty_masters(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| {
                    std::fs::read_link(e.path()).is_ok_and(|l| l.as_os_str() == "/dev/ptmx")
                })
                .count()
        })
        .unwrap_or(0)
}

/// Types `count` keys `key`, one write each, in groups of ten, waiting after each group until
/// the client's screen shows `seen + count` of them (echoed by the pane's terminal).
fn type_echoed(c: &mut Client, key: char, seen: usize, count: usize) {
    let mut typed = 0;
    while typed < count {
        let group = (count - typed).min(10);
        for _ in 0..group {
            c.send(key.to_string());
        }
        typed += group;
        let want = seen + typed;
        wait_until(&format!("{want} echoed {key:?}"), || {
            (c.screen().matches(key).count() >= want).then_some(())
        });
    }
}

#[test]
fn a_thousand_echoes_leak_nothing_and_a_closed_pane_is_let_go() {
    let env = Env::new();
    // `cat` in a canonical-mode PTY: a key's only output is the terminal's echo of it.
    let mut c = env.client(
        &["new", "-s", "w", "--", "sh", "-c", "echo READY; exec cat"],
        40,
        100,
    );
    c.wait_for("READY");
    let pid = env.server_pid();
    type_echoed(&mut c, '=', 0, 10);
    let before = open_files(pid);
    type_echoed(&mut c, '=', 10, 1000);
    // A command connection closing may still be under way: wait, a leak would never get here.
    let after = wait_until("the descriptors of before the thousand keys", || {
        let now = open_files(pid);
        (now <= before).then_some(now)
    });
    eprintln!("server descriptors: {before} before 1000 keys, {after} after");

    // A second pane, typed into (its echoes watched), then closed: its PTY must go.
    let masters = pty_masters(pid);
    let second = env.split_running("w", "echo TWO; exec cat");
    c.wait_for("TWO");
    let focused = crate::common::gates::focused_pane(&env, "w");
    assert_eq!(
        focused.as_deref(),
        Some(second.as_str()),
        "the new pane has focus"
    );
    let typed_in_second = c.screen().matches('+').count();
    type_echoed(&mut c, '+', typed_in_second, 20);
    env.ok(&["kill-pane", "-t", &second]);
    wait_until("the closed pane's PTY let go", || {
        (pty_masters(pid) <= masters).then_some(())
    });

    // Typing goes on in the pane left (a new registration for it).
    let seen = c.screen().matches('~').count();
    type_echoed(&mut c, '~', seen, 20);
}
