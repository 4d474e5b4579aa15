//! The bridge's relay fallback (`CALYX_BRIDGE_RELAY=1` there, `src/remote/handover.rs`): with
//! the channel not handed to the server, a saved machine's live link (its agent rows, an
//! approval answered from here) and a scripting verb with `--remote` work the same over the
//! real sshd, through `calyx remote-bridge` copying every frame.

use std::process::Stdio;

use serde_json::Value;

use crate::common::{wait_until, Env};
use crate::e2e_machine_links::{claude_in_first_pane, fixture, remote_bridges, CLAUDE_ALLOW};
use crate::support_sshd::{available, RemoteCalyx, Sshd, HOST};

/// What the bridge `pid`'s stdin is: a pipe while it relays; `/dev/null` once it handed the
/// channel to the server.
fn stdin_of(pid: i32) -> String {
    std::fs::read_link(format!("/proc/{pid}/fd/0"))
        .map(|p| p.display().to_string())
        .unwrap_or_default()
}

#[test]
fn links_and_verbs_work_through_the_relaying_bridge() {
    if !available() {
        return;
    }
    let sshd = Sshd::start_with(RemoteCalyx::ThisBinary, &[("CALYX_BRIDGE_RELAY", "1")]);
    let local = Env::new();
    // A verb: a session made and listed there through the relay.
    sshd.client_ok(
        &local,
        &[
            "--remote", HOST, "new", "-d", "-s", "far", "-x", "80", "-y", "24",
        ],
    );
    let listed = sshd.client_ok(&local, &["ls", "--remote", HOST]);
    assert!(listed.contains("far"), "{listed}");
    let far = claude_in_first_pane(&sshd);
    // The link: build's agent row here, then its request answered from here.
    local.ok(&["machine", "add", "build", HOST]);
    sshd.client_ok(&local, &["new", "-d", "-s", "near"]);
    let agents = || -> Value {
        serde_json::from_str(&local.ok(&["agents", "--json"])).expect("agents json")
    };
    wait_until("build's agent row here", || {
        agents()["agents"]
            .as_array()?
            .iter()
            .any(|r| r["machine"] == "build" && r["stale"] == false)
            .then_some(())
    });
    let bridges = remote_bridges(&sshd);
    assert!(!bridges.is_empty(), "no bridge of the link");
    for pid in &bridges {
        let stdin = stdin_of(*pid);
        assert!(
            stdin.starts_with("pipe:"),
            "bridge {pid} does not relay: {stdin}"
        );
    }
    let mut payload = fixture("claude-2.1.197-PermissionRequest.json");
    payload["tool_input"]["command"] = Value::from("make relay");
    let hook = sshd.remote.hook_process(
        &far,
        &["claude-code", "--approval"],
        &payload,
        Stdio::piped(),
    );
    let id = wait_until("build's request here", || {
        let v: Value = serde_json::from_str(&local.ok(&["approvals", "--json", "--pending"]))
            .expect("approvals json");
        v["pending"]
            .as_array()?
            .iter()
            .find(|p| p["machine"] == "build")
            .and_then(|p| p["id"].as_str().map(str::to_string))
    });
    local.ok(&["approve", &id]);
    let out = hook.wait_with_output().expect("hook output");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains(CLAUDE_ALLOW), "{said}");
}
