//! End to end against a real calyx server: what a hostile MCP client on loopback cannot make
//! the server hold. Sessions are capped (the least recently used idle one is closed for a new
//! `initialize`, a 503 when none can be), the server's memory stays bounded through thousands
//! of `initialize` calls and after their expiry, and `server.log` rotates by size.
//!
//! The limits are lowered for these tests through the server's test-only environment
//! variables (`CALYX_MCP_MAX_SESSIONS`, `CALYX_MCP_SESSION_IDLE_SECS`, `CALYX_LOG_MAX_BYTES`),
//! so each test stays well under 30 s; docs/performance.md has the full-size benchmark.

mod common;

use std::process::Command;
use std::time::Duration;

use common::mcp::{self, Endpoint, INITIALIZE};
use common::{calyx_bin, wait_until_within, Env};

/// A calyx world whose server runs with `extra` in its environment.
fn world(extra: &[(&str, &str)]) -> Env {
    let env = Env::new();
    let out = Command::new(calyx_bin())
        .args(["new", "-d", "-s", "limits"])
        .env_clear()
        .envs(env.vars())
        .envs(extra.iter().copied())
        .output()
        .expect("run calyx");
    assert!(out.status.success(), "{out:?}");
    env
}

/// `initialize` with no identity; returns the status and the session id (empty when none).
fn initialize(ep: &Endpoint) -> (u16, String, serde_json::Value) {
    let (head, json) = mcp::post(ep, &[], INITIALIZE);
    let id = head
        .lines()
        .find_map(|l| {
            l.split_once(':')
                .filter(|(k, _)| k.eq_ignore_ascii_case("mcp-session-id"))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_default();
    (mcp::status(&head), id, json)
}

#[test]
fn server_log_rotates_by_size_into_two_private_files() {
    const LIMIT: u64 = 8 * 1024;
    let env = world(&[("CALYX_LOG_MAX_BYTES", "8192"), ("CALYX_LOG", "debug")]);
    let ep = mcp::endpoint(&env);
    let dir = env.path().join("state/calyx");
    let log = dir.join("server.log");
    let rotated = dir.join("server.log.1");
    // Debug logging of a few hundred sessions writes well past the limit more than once.
    for _ in 0..300 {
        let (status, _, json) = initialize(&ep);
        assert_eq!(status, 200, "{json}");
    }
    let len = |p: &std::path::Path| std::fs::metadata(p).map_or(0, |m| m.len());
    wait_until_within("server.log.1", Duration::from_secs(10), || {
        rotated.exists().then_some(())
    });
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("state dir")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("server.log"))
        .collect();
    names.sort();
    assert_eq!(names, ["server.log", "server.log.1"]);
    for path in [&log, &rotated] {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let longest = text.lines().map(|l| l.len() as u64 + 1).max().unwrap_or(0);
        assert!(
            len(path) <= LIMIT + longest,
            "{} is {} bytes (limit {LIMIT}, longest line {longest})",
            path.display(),
            len(path)
        );
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path).map_or(0, |m| m.permissions().mode() & 0o777);
        assert_eq!(mode, 0o600, "{}", path.display());
    }
}
