//! Issue 13: a local user without the token floods the endpoint with idle connections. The
//! server must keep serving its own user (the Unix socket: `calyx ls`, `calyx approve`), and a
//! hook already waiting for a human must still get the human's answer.

mod common;

use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

use common::mcp::endpoint;
use common::{calyx_bin, wait_until, Env};

/// Open descriptors of process `pid`.
fn open_files(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count())
}

fn pending_ids(env: &Env) -> Vec<u64> {
    let out: serde_json::Value =
        serde_json::from_str(&env.ok(&["approvals", "--json", "--pending"])).expect("json");
    out["pending"]
        .as_array()
        .map(|a| a.iter().filter_map(|p| p["id"].as_u64()).collect())
        .unwrap_or_default()
}

#[test]
fn idle_connections_without_a_token_cannot_lock_the_user_out() {
    let env = Env::new();
    // The server inherits a small hard limit on open files, so 300 connections would fill its
    // descriptor table if it accepted them all.
    let mut start = Command::new("prlimit");
    start
        .args(["--nofile=128:128", "--"])
        .arg(calyx_bin())
        .args(["new", "-d", "-s", "flood"])
        .env_clear();
    for (k, v) in env.vars() {
        start.env(k, v);
    }
    let started = start.output().expect("prlimit calyx new");
    assert!(started.status.success(), "{started:?}");
    let pid = env.server_pid();
    let ep = endpoint(&env);

    // A hook waiting for a human before the flood starts.
    let payload = env.path().join("perm.json");
    std::fs::write(
        &payload,
        r#"{"hook_event_name":"PermissionRequest","session_id":"s1","tool_name":"Bash","tool_input":{"command":"echo flooded"}}"#,
    )
    .expect("payload");
    let out = env.path().join("out.txt");
    let line = format!(
        "{} hook claude-code --approval < {} > {}; echo DONE:$?",
        calyx_bin().display(),
        payload.display(),
        out.display()
    );
    env.ok(&["send-keys", "-t", "%1", &line, "Enter"]);
    let id = wait_until("the hook's request to be pending", || {
        pending_ids(&env).first().copied()
    });

    let before = open_files(pid);
    let flood: Vec<TcpStream> = (0..300)
        .filter_map(|_| TcpStream::connect(("127.0.0.1", ep.port)).ok())
        .collect();
    assert!(
        flood.len() >= 250,
        "only {} connections opened",
        flood.len()
    );
    // The server has taken what it takes of them.
    wait_until("the server to accept part of the flood", || {
        (open_files(pid) >= before + 16).then_some(())
    });

    // The user's own socket still answers, promptly (normally a few milliseconds; a server
    // out of descriptors never accepts it at all).
    let asked = Instant::now();
    let listed = env.ok(&["ls"]);
    assert!(listed.contains("flood"), "{listed}");
    assert!(
        asked.elapsed() < Duration::from_secs(5),
        "calyx ls took {:?} under the flood",
        asked.elapsed()
    );
    assert!(
        open_files(pid) < 120,
        "the flood took {} of 128 descriptors",
        open_files(pid)
    );

    // And the human's answer reaches the hook that was waiting.
    env.ok(&["approve", &id.to_string()]);
    env.wait_capture("%1", "DONE:0");
    let printed = std::fs::read_to_string(&out).unwrap_or_default();
    assert!(printed.contains(r#""behavior":"allow""#), "{printed}");

    // A connection that never sent an authorized request is closed after a few seconds (the
    // first one was accepted at once).
    let first = &flood[0];
    first
        .set_read_timeout(Some(Duration::from_millis(200)))
        .expect("timeout");
    wait_until(
        "the first idle connection to be closed by the server",
        || {
            let mut byte = [0u8; 1];
            matches!(std::io::Read::read(&mut &*first, &mut byte), Ok(0)).then_some(())
        },
    );
}
