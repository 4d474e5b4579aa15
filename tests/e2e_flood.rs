//! Issue 13: a local user without the token floods the endpoint with idle connections. The
//! server must keep serving its own user (the Unix socket: `calyx ls`, `calyx approve`), and a
//! hook already waiting for a human must still get the human's answer.

use crate::common;

use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

use common::mcp::endpoint;
use common::{calyx_bin, wait_until, Env};

/// Idle connections to the endpoint that send nothing, held until dropped: from `nobody`
/// (through `setpriv` and the system's python) when this test runs as root, else from this
/// process (the descriptor exhaustion is the same whoever holds them).
enum Flood {
    OtherUser(std::process::Child),
    /// Held only to keep them open.
    Ours(#[allow(dead_code)] Vec<TcpStream>),
}

impl Flood {
    fn open(port: u16, count: usize) -> Self {
        let root = std::fs::read_to_string("/proc/self/status")
            .is_ok_and(|s| s.lines().any(|l| l.starts_with("Uid:\t0\t")));
        let python = std::path::Path::new("/usr/bin/python3").exists();
        if root && python && Command::new("setpriv").arg("--version").output().is_ok() {
            let script = format!(
                "import socket, sys\n\
                 held = [socket.create_connection(('127.0.0.1', {port})) for _ in range({count})]\n\
                 print(len(held), flush=True)\n\
                 sys.stdin.read()\n"
            );
            let mut child = Command::new("setpriv")
                .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                .args(["/usr/bin/python3", "-c", &script])
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .expect("setpriv python");
            let mut opened = String::new();
            let out = child.stdout.as_mut().expect("stdout");
            std::io::BufRead::read_line(&mut std::io::BufReader::new(out), &mut opened)
                .expect("opened");
            assert_eq!(opened.trim(), count.to_string(), "connections from nobody");
            return Flood::OtherUser(child);
        }
        eprintln!("not root: the flood comes from this process, not another user");
        let held: Vec<TcpStream> = (0..count)
            .filter_map(|_| TcpStream::connect(("127.0.0.1", port)).ok())
            .collect();
        assert!(
            held.len() >= count - 50,
            "only {} connections opened",
            held.len()
        );
        Flood::Ours(held)
    }
}

impl Drop for Flood {
    fn drop(&mut self) {
        if let Flood::OtherUser(child) = self {
            // Closing its stdin ends it, and its connections with it.
            drop(child.stdin.take());
            let _ = child.wait();
        }
    }
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

    let before = common::open_files(pid);
    // One idle connection of the test's own, opened first (so it is accepted at once), to see
    // the server close it; the other 299 from another local account where the test can start
    // one (root, as CI runs), else from this process.
    let first = TcpStream::connect(("127.0.0.1", ep.port)).expect("connect");
    let _flood = Flood::open(ep.port, 299);
    // The server has taken what it takes of them.
    wait_until("the server to accept part of the flood", || {
        (common::open_files(pid) >= before + 16).then_some(())
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
        common::open_files(pid) < 120,
        "the flood took {} of 128 descriptors",
        common::open_files(pid)
    );

    // And the human's answer reaches the hook that was waiting.
    env.ok(&["approve", &id.to_string()]);
    env.wait_capture("%1", "DONE:0");
    let printed = std::fs::read_to_string(&out).unwrap_or_default();
    assert!(printed.contains(r#""behavior":"allow""#), "{printed}");

    // A connection that never sent an authorized request is closed after a few seconds (the
    // first one was accepted at once).
    first
        .set_read_timeout(Some(Duration::from_millis(200)))
        .expect("timeout");
    wait_until(
        "the first idle connection to be closed by the server",
        || {
            let mut byte = [0u8; 1];
            matches!(std::io::Read::read(&mut &first, &mut byte), Ok(0)).then_some(())
        },
    );
}

/// VmRSS of process `pid`, in KiB.
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(0)
}

/// Issue 14: the owner loop's channel is unbounded, so what bounds it must be upstream: every
/// endpoint connection has at most one request in flight (HTTP/1.1, answered before the next is
/// read) and connections are capped. A flood of hook events from many connections at once must
/// leave the server's memory where it was.
#[test]
fn a_hook_flood_cannot_grow_the_servers_memory() {
    use std::io::{BufRead, BufReader, Write};
    let env = Env::new();
    env.ok(&["new", "-d", "-s", "hooks", "--", "sh"]);
    let pid = env.server_pid();
    let ep = endpoint(&env);
    let surface = env.first_surface();
    let body = r#"{"hook_event_name":"PostToolUse","session_id":"flood","tool_name":"Bash","tool_input":{"command":"true"}}"#;
    let request = format!(
        "POST /agent-event HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {}\r\n\
         X-Calyx-Surface-ID: {surface}\r\nX-Calyx-Agent-Kind: claude-code\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        ep.port,
        ep.token,
        body.len()
    );
    // One round to warm up (the row, allocator arenas), then the measured flood.
    let flood = |threads: usize, each: usize| -> usize {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let request = request.clone();
                let port = ep.port;
                std::thread::spawn(move || {
                    let Ok(stream) = TcpStream::connect(("127.0.0.1", port)) else {
                        return 0;
                    };
                    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
                    let mut writer = stream;
                    let mut answered = 0;
                    for _ in 0..each {
                        if writer.write_all(request.as_bytes()).is_err() {
                            break;
                        }
                        // A 204 has no body: the head ends at the blank line.
                        let mut status = String::new();
                        if reader.read_line(&mut status).is_err() || !status.contains(" 204 ") {
                            break;
                        }
                        let mut line = String::new();
                        while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                            line.clear();
                        }
                        answered += 1;
                    }
                    answered
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or(0)).sum()
    };
    assert_eq!(flood(8, 50), 400);
    let before = rss_kib(pid);
    let answered = flood(64, 200);
    assert_eq!(answered, 64 * 200, "every event was answered");
    let after = rss_kib(pid);
    assert!(
        after < before + 20 * 1024,
        "12,800 hook events grew the server from {before} KiB to {after} KiB"
    );
}
