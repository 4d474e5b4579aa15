//! Agents that talk across machines (issue 20 §4): an agent's MCP calls on this machine's
//! calyx reach a saved machine through a real sshd on 127.0.0.1 in front of a second calyx
//! server (tests/support_sshd.rs). The remote agent rows come from real `calyx hook`
//! processes, its screen from a real shell, its peer from a real MCP session on the remote
//! server, and the remote approval is answered by a real `calyx approve` there.

use serde_json::{json, Value};

use crate::common::mcp::McpSession;
use crate::common::{wait_until, Env};
use crate::support_sshd::{available, RemoteCalyx, Sshd, HOST};

/// The `payload` of a captured Claude Code fixture.
fn fixture(name: &str) -> Value {
    let mut payload = crate::common::gates::fixture_payload(name);
    payload["session_id"] = Value::from("machines-mcp-1");
    payload
}

/// The first pane of `env`'s server: its id and surface id.
fn first_pane(env: &Env) -> (String, String) {
    let pane = &env.panes()[0];
    let field = |k: &str| pane[k].as_str().unwrap_or_default().to_string();
    (field("id"), field("surface_id"))
}

fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn is_error(result: &Value) -> bool {
    result["isError"] == true
}

/// The remote world with a session `far` whose shell printed a marker and whose agent is
/// blocked on a permission request; the local world, its server started with `CALYX_SSH` so
/// its agents' calls reach the remote, `build` saved. Returns the remote pane id.
fn two_machines(sshd: &Sshd, local: &Env) -> String {
    sshd.remote.ok(&["new", "-d", "-s", "far"]);
    let (far, far_surface) = first_pane(&sshd.remote);
    sshd.remote
        .ok(&["send-keys", "-t", &far, "-l", "echo far-marker-$((6*7))"]);
    sshd.remote.ok(&["send-keys", "-t", &far, "Enter"]);
    sshd.remote.wait_capture(&far, "far-marker-42");
    for event in ["SessionStart", "PermissionRequest"] {
        sshd.remote.hook_event(
            &far_surface,
            "claude-code",
            &fixture(&format!("claude-2.1.197-{event}.json")),
        );
    }
    sshd.client_ok(local, &["new", "-d", "-s", "near"]);
    local.ok(&["machine", "add", "build", HOST]);
    far
}

#[test]
fn an_agent_lists_reads_and_waits_for_agents_on_a_saved_machine() {
    if !available() {
        return;
    }
    let sshd = Sshd::start(RemoteCalyx::ThisBinary);
    let local = Env::new();
    let far = two_machines(&sshd, &local);
    let (_, near_surface) = first_pane(&local);
    let mcp = McpSession::open(&local, &near_surface);
    let qualified = format!("build/{far}");

    // agent_list on the saved machine: its rows, ids qualified, the machine named.
    let listed = mcp.call("agent_list", json!({"machine": "build"}));
    assert!(!is_error(&listed), "{listed}\nsshd log: {}", sshd.log());
    let out = &listed["structuredContent"];
    assert_eq!(out["machine"], "build", "{listed}");
    assert_eq!(out["agents"][0]["pane"], qualified.as_str(), "{listed}");
    assert_eq!(out["agents"][0]["state"], "blocked", "{listed}");
    assert_eq!(out["agents"].as_array().map(Vec::len), Some(1), "{listed}");
    assert!(text(&listed).starts_with("on machine build"), "{listed}");
    // This machine's list is still its own (no agent here).
    let here = mcp.call("agent_list", json!({}));
    assert_eq!(here["structuredContent"]["agents"], json!([]), "{here}");

    // pane_list there, and pane_read by the qualified id alone.
    let panes = mcp.call("pane_list", json!({"machine": "build"}));
    assert_eq!(
        panes["structuredContent"]["panes"][0]["id"],
        qualified.as_str(),
        "{panes}"
    );
    assert_eq!(panes["structuredContent"]["panes"][0]["session"], "far");
    let read = mcp.call("pane_read", json!({"pane": qualified}));
    assert!(!is_error(&read), "{read}");
    assert_eq!(read["structuredContent"]["pane"], qualified.as_str());
    let screen = read["structuredContent"]["text"].as_str().unwrap_or("");
    assert!(screen.contains("far-marker-42"), "{read}");

    // agent_wait there: answered when the remote agent stops (a real hook there).
    let waiting = mcp.start(
        "agent_wait",
        json!({"pane": qualified, "until": ["idle"], "timeout_ms": 50000}),
    );
    let (_, far_surface) = first_pane(&sshd.remote);
    sshd.remote.hook_event(
        &far_surface,
        "claude-code",
        &fixture("claude-2.1.197-Stop.json"),
    );
    let waited = waiting.join();
    assert_eq!(waited["structuredContent"]["state"], "idle", "{waited}");
    assert_eq!(waited["structuredContent"]["timed_out"], false, "{waited}");
    assert_eq!(waited["structuredContent"]["pane"], qualified.as_str());

    // A `machine` and a qualified id that disagree, a machine not saved, one that is down.
    let clash = mcp.call("pane_read", json!({"pane": qualified, "machine": "other"}));
    assert!(
        is_error(&clash) && text(&clash).contains("leave `machine` out"),
        "{clash}"
    );
    let unknown = mcp.call("agent_list", json!({"machine": "nope"}));
    assert!(is_error(&unknown), "{unknown}");
    assert!(
        text(&unknown).contains("no saved machine named nope"),
        "{unknown}"
    );
    let dead_port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a port")
        .port();
    local.ok(&[
        "machine",
        "add",
        "down",
        &format!("ssh://127.0.0.1:{dead_port}"),
    ]);
    let down = mcp.call("pane_read", json!({"pane": "down/%0"}));
    assert!(is_error(&down), "{down}");
    assert!(text(&down).starts_with("unreachable: down ("), "{down}");
    assert!(text(&down).contains("Connection refused"), "{down}");
}

#[test]
fn peers_on_a_saved_machine_get_messages_and_pane_run_waits_for_its_human() {
    if !available() {
        return;
    }
    let sshd = Sshd::start(RemoteCalyx::ThisBinary);
    let local = Env::new();
    let far = two_machines(&sshd, &local);
    let (_, far_surface) = first_pane(&sshd.remote);
    let (near, near_surface) = first_pane(&local);
    let qualified = format!("build/{far}");

    // A peer on each machine.
    let remote_mcp = McpSession::open(&sshd.remote, &far_surface);
    let reg = remote_mcp.call("register_peer", json!({"name": "farbot"}));
    assert!(!is_error(&reg), "{reg}");
    let mcp = McpSession::open(&local, &near_surface);
    // Unregistered, nothing is sent anywhere.
    let early = mcp.call(
        "send_message",
        json!({"to": qualified, "content": "too soon"}),
    );
    assert!(
        is_error(&early) && text(&early).contains("register first"),
        "{early}"
    );
    mcp.call("register_peer", json!({"name": "nearbot"}));

    let peers = mcp.call("list_peers", json!({}));
    let listed = peers["structuredContent"]["peers"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let theirs = listed
        .iter()
        .find(|p| p["peer_id"] == qualified.as_str())
        .unwrap_or_else(|| panic!("no {qualified} in {peers}"));
    assert_eq!(theirs["name"], "farbot", "{peers}");
    assert!(
        listed.iter().any(|p| p["peer_id"] == near.as_str()),
        "{peers}"
    );

    let sent = mcp.call(
        "send_message",
        json!({"to": qualified, "content": "please run the tests"}),
    );
    assert!(!is_error(&sent), "{sent}");
    assert_eq!(
        sent["structuredContent"]["delivered_to"][0],
        qualified.as_str()
    );
    let inbox = remote_mcp.call("receive_messages", json!({}));
    let message = &inbox["structuredContent"]["messages"][0];
    assert_eq!(message["content"], "please run the tests", "{inbox}");
    assert_eq!(message["from_name"], "nearbot", "{inbox}");
    let from = message["from"].as_str().unwrap_or("");
    assert!(from.ends_with(&format!("/{near}")), "{inbox}");

    // pane_run there: queued in the remote's own approval panel, and typed only once a
    // human there allows it.
    let running = mcp.start(
        "pane_run",
        json!({"machine": "build", "pane": far, "command": "echo ran-$((2+3))", "timeout_ms": 60000}),
    );
    let id = wait_until("the request in the remote's panel", || {
        let listed = sshd.remote.ok(&["approvals", "--json", "--pending"]);
        let v: Value = serde_json::from_str(&listed).ok()?;
        v["pending"][0]["id"].as_u64()
    });
    let pending = sshd.remote.ok(&["approvals", "--json", "--pending"]);
    assert!(
        pending.contains(&format!("/{near}")),
        "the caller is not named: {pending}"
    );
    // Here it is at most the build box's request seen over the live link (`build:ID`), never
    // one queued on this machine.
    let here: Value =
        serde_json::from_str(&local.ok(&["approvals", "--json", "--pending"])).expect("json");
    assert!(
        here["pending"]
            .as_array()
            .is_some_and(|p| p.iter().all(|r| r["machine"] == "build")),
        "queued on the wrong machine: {here}"
    );
    assert!(
        !sshd.remote.ok(&["capture", "-t", &far]).contains("ran-5"),
        "typed before the human answered"
    );
    sshd.remote.ok(&["approve", &id.to_string()]);
    let ran = running.join();
    assert_eq!(ran["structuredContent"]["status"], "sent", "{ran}");
    assert_eq!(
        ran["structuredContent"]["pane"],
        qualified.as_str(),
        "{ran}"
    );
    sshd.remote.wait_capture(&far, "ran-5");

    // Denied there: a normal answer here, nothing typed.
    let denied = mcp.start(
        "pane_run",
        json!({"pane": qualified, "command": "echo never-$((3+4))", "timeout_ms": 60000}),
    );
    let id = wait_until("the second request", || {
        let listed = sshd.remote.ok(&["approvals", "--json", "--pending"]);
        let v: Value = serde_json::from_str(&listed).ok()?;
        v["pending"][0]["id"].as_u64()
    });
    sshd.remote.ok(&["deny", &id.to_string(), "-m", "not now"]);
    let answer = denied.join();
    assert_eq!(answer["structuredContent"]["status"], "denied", "{answer}");
    assert!(!sshd.remote.ok(&["capture", "-t", &far]).contains("never-7"));

    // The asking machine goes away while the request waits there: it is withdrawn there, so
    // no later allow types anything.
    let orphan = mcp.start(
        "pane_run",
        json!({"pane": qualified, "command": "echo orphan-$((4+4))", "timeout_ms": 60000}),
    );
    wait_until("the third request", || {
        let listed = sshd.remote.ok(&["approvals", "--json", "--pending"]);
        let v: Value = serde_json::from_str(&listed).ok()?;
        v["pending"][0]["id"].as_u64()
    });
    local.ok(&["kill-server"]);
    let _ = orphan.join();
    wait_until("the request withdrawn there", || {
        let listed = sshd.remote.ok(&["approvals", "--json", "--pending"]);
        let v: Value = serde_json::from_str(&listed).ok()?;
        (v["pending"].as_array().map(Vec::len) == Some(0)).then_some(())
    });
    assert!(!sshd
        .remote
        .ok(&["capture", "-t", &far])
        .contains("orphan-8"));
}
