//! End to end: the server hands back the mappings of its own code that it ran and no longer
//! runs (src/code_pages.rs: once after start-up, and a little after a client leaves), and goes
//! on working on pages it maps again from the page cache.

use crate::common::{mcp, wait_until, Env};

/// The server's resident KiB mapped from its own executable that a release may drop.
fn releasable_kib(pid: u32) -> u64 {
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap_or_default();
    let smaps = std::fs::read_to_string(format!("/proc/{pid}/smaps")).unwrap_or_default();
    calyx::code_pages::droppable(&smaps, &exe.to_string_lossy())
        .iter()
        .map(|m| m.resident_kib)
        .sum()
}

#[test]
fn the_server_releases_the_code_pages_it_ran_and_keeps_working() {
    let env = Env::new();
    env.ok(&["new", "-d", "-s", "w", "--", "sh"]);
    let pid = env.server_pid();
    let started = releasable_kib(pid);
    // A request runs more code (and, should the start-up release already have happened, maps
    // some of it again); the client leaving schedules the next release.
    let first = env.split_running("w", "echo code-pages-ok; exec sh");
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
    let second = env.split_running("w", "echo again-ok; exec sh");
    env.wait_capture(&second, "again-ok");
    eprintln!("executable resident: {busy} KiB busy, {released} KiB after the release");
}

#[test]
fn the_code_pages_stay_while_a_client_types_and_go_once_it_leaves() {
    // The trim 2 s after start-up falls while this client is attached: handing the code back
    // then would fault the keystroke path's code back in on the echo's way.
    let env = Env::new();
    let mut vars = env.vars();
    vars.push(("CALYX_LOG".into(), "debug".into()));
    let mut c = crate::common::Client::spawn_with(
        &env,
        &["new", "-s", "w", "--", "sh", "-c", "echo READY; exec cat"],
        24,
        80,
        &vars,
    );
    c.wait_for("READY");
    let pid = env.server_pid();
    let log = env.path().join("state/calyx/server.log");
    wait_until("a trim that kept the code pages", || {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        text.contains("code pages kept: a client is attached")
            .then_some(())
    });
    let attached = releasable_kib(pid);
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        !text.contains("code pages released"),
        "code pages released while a client was attached"
    );
    // An MCP session closing while the client is attached trims on the server's own schedule,
    // which knows about the client: the code pages stay then too.
    let ep = mcp::endpoint(&env);
    let (head, _) = mcp::post(&ep, &[], mcp::INITIALIZE);
    let id = mcp::session_header(&head);
    let session = [
        ("Mcp-Session-Id", id.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let (_, head) = mcp::open(&ep, "DELETE", "/mcp", &session);
    assert!(mcp::status(&head) < 300, "closing the MCP session: {head}");
    let text = wait_until("the trim after the MCP session closed", || {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        (text.contains("code pages released")
            || text
                .matches("code pages kept: a client is attached")
                .count()
                >= 2)
            .then_some(text)
    });
    assert!(
        !text.contains("code pages released"),
        "an MCP session's trim released the code pages while a client was attached"
    );
    // Typing still echoes; then the client leaves and the next trim hands the code back.
    c.send("typed-ok");
    c.wait_for("typed-ok");
    c.prefix("d");
    let released = wait_until("the code pages released after the client left", || {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        text.contains("code pages released")
            .then(|| releasable_kib(pid))
    });
    eprintln!("executable resident: {attached} KiB attached, {released} KiB after leaving");
}
