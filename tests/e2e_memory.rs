//! End to end: a client reporting a huge terminal (issue 13, a hostile pane's neighbour: any
//! local process can connect and say it is 10000x10000) cannot take the server down. Its size
//! is clamped (at most 10,000 cells a side and 1,000,000 cells in all), and when it leaves the
//! session shrinks back and the server's memory is handed back.

use crate::common;

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;

use calyx::protocol::{encode_message, ClientMessage};
use common::{wait_until, wait_until_within, Env};

/// Most cells of a client or pane (calyx_pty::limits; docs/design.md, "Sizes").
const MAX_CELLS: u64 = 1_000_000;
/// Most cells along one side.
const MAX_SIDE: u64 = 10_000;
/// How far above its size before the big client the server's RSS may stay once it left:
/// measured 0.05 MiB (14.8 MiB before, 136 MiB with the client, 14.8 MiB after;
/// docs/performance.md, "A huge client"); generous for allocator noise.
const RSS_SLACK_KIB: u64 = 40 * 1024;

/// The server's resident memory in KiB (VmRSS).
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// The (rows, cols) of every pane, from `list-panes --json`.
fn pane_sizes(env: &Env) -> Vec<(u64, u64)> {
    env.panes()
        .iter()
        .map(|p| {
            (
                p["rows"].as_u64().unwrap_or(0),
                p["cols"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

/// Attaches a protocol-speaking client that claims a terminal of `rows` x `cols`, reads and
/// drops whatever the server sends; returns the connection (shutting it down detaches).
fn huge_client(env: &Env, session: &str, rows: u16, cols: u16) -> UnixStream {
    let socket = env.path().join("run/calyx/server.sock");
    let mut stream = UnixStream::connect(&socket).expect("connect");
    let attach = ClientMessage::Attach {
        target: Some(session.into()),
        create: None,
        create_if_missing: false,
        rows,
        cols,
        term: Some("xterm-256color".into()),
        terminal: None,
        opener_env: Vec::new(),
        back_to: None,
    };
    stream.write_all(&encode_message(&attach)).expect("attach");
    let mut reader = stream.try_clone().expect("clone");
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 1 << 16];
        while matches!(reader.read(&mut buf), Ok(n) if n > 0) {}
    });
    stream
}

#[test]
fn a_10000x10000_client_is_clamped_and_its_memory_returns_when_it_leaves() {
    let env = Env::new();
    env.ok(&[
        "new", "-d", "-s", "big", "-x", "100", "-y", "30", "--", "sh",
    ]);
    env.ok(&["split", "-t", "big", "-h", "--", "sh"]);
    let before = pane_sizes(&env);
    let pid = env.server_pid();
    let rss_before = rss_kib(pid);
    let client = huge_client(&env, "big", 10_000, 10_000);
    let big = wait_until("the panes to take the client's size", || {
        let sizes = pane_sizes(&env);
        (sizes != before && sizes.len() == 2).then_some(sizes)
    });
    for (rows, cols) in &big {
        assert!(
            *rows <= MAX_SIDE && *cols <= MAX_SIDE && rows * cols <= MAX_CELLS,
            "a pane of {rows}x{cols}: {big:?}"
        );
    }
    // The server is alive and its panes too: a pane still runs commands.
    env.ok(&["send-keys", "-t", "big", "-l", "echo still-alive"]);
    env.ok(&["send-keys", "-t", "big", "Enter"]);
    wait_until("the pane to answer", || {
        let out = env.run(&["capture", "-t", "big"]);
        String::from_utf8_lossy(&out.stdout)
            .contains("still-alive")
            .then_some(())
    });
    let rss_peak = rss_kib(pid);
    eprintln!("rss before {rss_before} KiB, with the huge client {rss_peak} KiB, panes {big:?}");
    // (The reader thread holds a clone of the socket: shut it, so the server sees it close.)
    let _ = client.shutdown(std::net::Shutdown::Both);
    drop(client);
    // The panes go back to the size they had before it came, and the memory goes back.
    wait_until("the panes to shrink back", || {
        (pane_sizes(&env) == before).then_some(())
    });
    let rss_after = wait_until_within(
        "the server's RSS to come back down",
        std::time::Duration::from_secs(30),
        || {
            let rss = rss_kib(pid);
            (rss <= rss_before + RSS_SLACK_KIB).then_some(rss)
        },
    );
    eprintln!("rss after it left {rss_after} KiB");
}
