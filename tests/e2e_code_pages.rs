//! End to end: the server hands back the mappings of its own code that it ran and no longer
//! runs (src/code_pages.rs: once after start-up, and a little after a client leaves), and goes
//! on working on pages it maps again from the page cache.

use crate::common::{wait_until, Env};

/// The server's resident KiB mapped from its own executable that a release may drop.
fn releasable_kib(pid: u32) -> u64 {
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap_or_default();
    let smaps = std::fs::read_to_string(format!("/proc/{pid}/smaps")).unwrap_or_default();
    calyx::code_pages::droppable(&smaps, &exe.to_string_lossy())
        .iter()
        .map(|m| m.resident_kib)
        .sum()
}

/// Splits session `w` with a pane running `script`; returns the new pane's id.
fn split(env: &Env, script: &str) -> String {
    let id = env.ok(&[
        "split",
        "-t",
        "w",
        "-P",
        "-F",
        "#{pane_id}",
        "--",
        "sh",
        "-c",
        script,
    ]);
    let id = id.trim().to_string();
    assert!(id.starts_with('%'), "{id}");
    id
}

#[test]
fn the_server_releases_the_code_pages_it_ran_and_keeps_working() {
    let env = Env::new();
    env.ok(&["new", "-d", "-s", "w", "--", "sh"]);
    let pid = env.server_pid();
    let started = releasable_kib(pid);
    // A request runs more code (and, should the start-up release already have happened, maps
    // some of it again); the client leaving schedules the next release.
    let first = split(&env, "echo code-pages-ok; exec sh");
    let busy = started.max(releasable_kib(pid));
    assert!(busy > 0, "nothing of the executable resident");
    let released = wait_until("the server's code pages released", || {
        let now = releasable_kib(pid);
        (now < busy / 2).then_some(now)
    });
    // Everything still works on code mapped again: the new pane's output, a listing, a pane.
    env.wait_capture(&first, "code-pages-ok");
    let listed = env.ok(&["ls"]);
    assert!(listed.starts_with("w:"), "{listed}");
    let second = split(&env, "echo again-ok; exec sh");
    env.wait_capture(&second, "again-ok");
    eprintln!("executable resident: {busy} KiB busy, {released} KiB after the release");
}
