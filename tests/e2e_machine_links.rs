//! The server's live links to saved machines (issue 20 §2, §3), end to end: a real sshd on
//! 127.0.0.1 in front of a second calyx world (tests/support_sshd.rs), a local server started
//! with `CALYX_SSH` as the user's environment would give it, and real `calyx hook` processes
//! on the "remote" machine. A remote agent's row and its pending request appear in the local
//! `calyx agents` and `calyx approvals`; `calyx approve build:ID` here makes the waiting hook
//! there print allow, and the remote audit log names this machine; a machine that goes away
//! is shown unreachable and its request is never allowed; the sidebar, the status line, a
//! desktop notification and the panel's `y` work for a remote agent too.

use std::process::{Child, Stdio};

use serde_json::Value;

use crate::common::{wait_until, Env};
use crate::support_sshd::{available, RemoteCalyx, Sshd, HOST};

/// The `payload` of a captured fixture.
pub(crate) fn fixture(name: &str) -> Value {
    let mut payload = crate::common::gates::fixture_payload(name);
    payload["session_id"] = Value::from("links-1");
    payload
}

/// Claude Code's exact allow.
pub(crate) const CLAUDE_ALLOW: &str = r#""behavior":"allow""#;

/// Two worlds: "build" (behind sshd) with an idle Claude Code agent in session `far`, and a
/// local server (session `near`) that saved it and whose link is live.
pub(crate) struct Linked {
    pub(crate) sshd: Sshd,
    pub(crate) local: Env,
    pub(crate) far: String,
}

/// The surface id of the remote's first pane, where a Claude Code session has just started
/// (its captured SessionStart hook sent there).
pub(crate) fn claude_in_first_pane(sshd: &Sshd) -> String {
    let far = sshd.remote.first_surface();
    sshd.remote.hook_event(
        &far,
        "claude-code",
        &fixture("claude-2.1.197-SessionStart.json"),
    );
    far
}

pub(crate) fn linked() -> Option<Linked> {
    if !available() {
        return None;
    }
    let sshd = Sshd::start(RemoteCalyx::ThisBinary);
    let local = Env::new();
    sshd.remote.ok(&["new", "-d", "-s", "far"]);
    let far = claude_in_first_pane(&sshd);
    local.ok(&["machine", "add", "build", HOST]);
    // The local server starts with CALYX_SSH in its environment, as the user's shell gives it.
    sshd.client_ok(&local, &["new", "-d", "-s", "near"]);
    let linked = Linked { sshd, local, far };
    wait_until("build's agent row in the local agents", || {
        linked
            .agent_row("build")
            .filter(|r| r["state"] == "idle")
            .map(|_| ())
    });
    let listed = linked.local.ok(&["machine", "list"]);
    assert!(
        listed
            .lines()
            .any(|l| l.starts_with("build ") && l.ends_with("  live")),
        "{listed}"
    );
    Some(linked)
}

impl Linked {
    /// The local `calyx agents --json` answer.
    fn agents(&self) -> Value {
        serde_json::from_str(&self.local.ok(&["agents", "--json"])).expect("agents json")
    }

    /// The first local agent row of `machine`.
    pub(crate) fn agent_row(&self, machine: &str) -> Option<Value> {
        self.agents()["agents"]
            .as_array()?
            .iter()
            .find(|r| r["machine"] == machine)
            .cloned()
    }

    /// The local pending requests of saved machines.
    fn remote_pending(&self) -> Vec<Value> {
        let v: Value = serde_json::from_str(&self.local.ok(&["approvals", "--json", "--pending"]))
            .expect("approvals json");
        v["pending"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p["machine"] == "build")
            .cloned()
            .collect()
    }

    /// A real `calyx hook claude-code --approval` on the remote machine, waiting for an answer.
    pub(crate) fn remote_gate(&self, command: &str) -> Child {
        let mut payload = fixture("claude-2.1.197-PermissionRequest.json");
        payload["tool_input"]["command"] = Value::from(command);
        self.sshd.remote.hook_process(
            &self.far,
            &["claude-code", "--approval"],
            &payload,
            Stdio::piped(),
        )
    }
}

/// The remote approval record, one value a line.
pub(crate) fn remote_log(sshd: &Sshd) -> Vec<Value> {
    std::fs::read_to_string(sshd.remote.path().join("state/calyx/approvals.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

pub(crate) fn hostname() -> String {
    let out = std::process::Command::new("hostname")
        .output()
        .expect("hostname");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn a_remote_request_is_answered_from_here_and_the_remote_record_names_this_machine() {
    let Some(l) = linked() else { return };
    let hook = l.remote_gate("make release");
    // The remote agent turns blocked here, and its request is listed as build:ID.
    wait_until("build's agent blocked in the local agents", || {
        l.agent_row("build")
            .filter(|r| r["state"] == "blocked")
            .map(|_| ())
    });
    let pending = wait_until("build's request in the local approvals", || {
        let p = l.remote_pending();
        (p.len() == 1).then_some(p)
    });
    let id = pending[0]["id"].as_str().expect("id").to_string();
    assert!(id.starts_with("build:"), "{pending:?}");
    assert_eq!(pending[0]["state"], "pending");
    assert!(
        pending[0]["summary"]
            .as_str()
            .is_some_and(|s| s.contains("make release")),
        "{pending:?}"
    );
    let table = l.local.ok(&["approvals", "--pending"]);
    assert!(table.contains(&id), "{table}");
    let agents = l.local.ok(&["agents"]);
    assert!(agents.starts_with("MACHINE      PANE"), "{agents}");
    assert!(
        agents
            .lines()
            .any(|line| line.starts_with("build ") && line.contains("blocked")),
        "{agents}"
    );

    // Answered here: the hook there prints allow.
    l.local.ok(&["approve", &id]);
    let out = hook.wait_with_output().expect("hook output");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains(CLAUDE_ALLOW), "{said}");
    // The record on the machine that asked: a human, and from which machine.
    let number: u64 = id["build:".len()..].parse().expect("number");
    let record = remote_log(&l.sshd)
        .into_iter()
        .find(|r| r["id"] == number && r["by"] == "human")
        .expect("the remote record of the answer");
    assert_eq!(record["event"], "allow", "{record}");
    assert_eq!(record["from"], hostname().as_str(), "{record}");
    // The request leaves the local list; the row moves on.
    wait_until("build's request gone here", || {
        l.remote_pending().is_empty().then_some(())
    });
    // A deny with a message travels the same way, message and all.
    let hook = l.remote_gate("git push --force");
    let pending = wait_until("the second request here", || {
        let p = l.remote_pending();
        (p.len() == 1).then_some(p)
    });
    let second = pending[0]["id"].as_str().expect("id").to_string();
    l.local.ok(&["deny", &second, "-m", "not on main"]);
    let out = hook.wait_with_output().expect("hook output");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains(r#""behavior":"deny""#) && said.contains("not on main"),
        "{said}"
    );
    // An id that is not pending there is refused with the remote server's reason.
    let out = l.local.run(&["approve", &id]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no pending approval"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The pids of the `calyx remote-bridge` processes of the remote world.
pub(crate) fn remote_bridges(sshd: &Sshd) -> Vec<i32> {
    let world = sshd.remote.path().display().to_string();
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).contains("remote-bridge")
            && String::from_utf8_lossy(&environ).contains(&world)
        {
            pids.push(pid);
        }
    }
    pids
}

#[test]
fn a_machine_that_goes_away_is_unreachable_and_its_request_is_never_allowed() {
    let Some(mut l) = linked() else { return };
    let mut hook = l.remote_gate("rm -rf build");
    let pending = wait_until("build's request in the local approvals", || {
        let p = l.remote_pending();
        (p.len() == 1).then_some(p)
    });
    let id = pending[0]["id"].as_str().expect("id").to_string();
    // The machine goes away: its sshd stops listening and the live connection is cut (the
    // bridge there ends), so the link drops and cannot come back.
    l.sshd.stop();
    let bridges = remote_bridges(&l.sshd);
    assert!(!bridges.is_empty(), "no bridge of the link found");
    for pid in bridges {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGTERM,
        );
    }
    let unreachable = wait_until("build's request shown unreachable", || {
        let p = l.remote_pending();
        (p.len() == 1 && p[0]["state"] == "unreachable").then_some(p)
    });
    assert_eq!(unreachable[0]["id"], id.as_str());
    let agents = l.agents();
    let down = agents["machines_down"][0]["line"].as_str().unwrap_or("");
    assert!(down.starts_with("unreachable: build ("), "{agents}");
    assert_eq!(l.agent_row("build").expect("kept row")["stale"], true);
    let table = l.local.ok(&["agents"]);
    assert!(table.contains("blocked (stale)"), "{table}");
    let listed: Value =
        serde_json::from_str(&l.local.ok(&["machine", "list", "--json"])).expect("json");
    assert_eq!(listed[0]["link"], "unreachable", "{listed}");
    assert!(table.contains("unreachable: build ("), "{table}");
    // It cannot be answered from here, and nothing answered it: the hook still waits, and
    // the remote server still holds the request.
    let out = l.local.run(&["approve", &id]);
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(said.contains("unreachable: build ("), "{said}");
    assert!(
        hook.try_wait().expect("hook").is_none(),
        "the hook was answered"
    );
    let held: Value =
        serde_json::from_str(&l.sshd.remote.ok(&["approvals", "--json", "--pending"]))
            .expect("json");
    assert_eq!(held["pending"].as_array().map(Vec::len), Some(1), "{held}");
    assert!(
        remote_log(&l.sshd).iter().all(|r| r["event"] != "allow"),
        "something allowed it"
    );
    let _ = hook.kill();
    let _ = hook.wait();
}

#[test]
fn the_local_sidebar_and_panel_show_a_remote_request_and_y_answers_it_there() {
    let Some(l) = linked() else { return };
    let mut c = l.local.client(&["attach", "-t", "near"], 30, 140);
    c.wait_for("[near]");
    // The sidebar lists the remote agent with its machine.
    c.prefix("a");
    c.wait_for("AGENTS");
    c.wait_for("build:%");
    c.send("\x1b");
    let hook = l.remote_gate("cargo publish");
    // The panel shows the remote request, named with its machine; `y` answers it there.
    let screen = c.wait_screen("the remote request in the panel", |s| {
        s.contains("asked on build") && s.contains("cargo publish")
    });
    assert!(screen.contains("build:%"), "{screen}");
    // The blocked agent over there counts in the status line here, and rang here: a desktop
    // notification titled with its machine.
    c.wait_for("1 blocked");
    wait_until(
        "the remote agent's notification on the outer terminal",
        || {
            let raw = String::from_utf8_lossy(&c.raw()).to_string();
            (raw.contains("\x1b]9;build %") && raw.contains("needs approval")).then_some(())
        },
    );
    c.answer("y");
    let out = hook.wait_with_output().expect("hook output");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains(CLAUDE_ALLOW), "{said}");
    c.wait_screen("the panel gone", |s| !s.contains("asked on build"));

    // `a` here sets the exact "always" rule there, named in that machine's words first; the
    // same call then passes there with nobody asked, and the rule's record names this host.
    let hook = l.remote_gate("cargo publish");
    c.wait_screen("the remote request and its rule choices", |s| {
        s.contains("asked on build") && s.contains("a/A always")
    });
    c.answer("a");
    let out = hook.wait_with_output().expect("hook output");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(CLAUDE_ALLOW),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let ruled = l.remote_gate("cargo publish");
    let out = ruled.wait_with_output().expect("hook output");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(CLAUDE_ALLOW),
        "the rule there did not allow it"
    );
    let log = remote_log(&l.sshd);
    let rule = log
        .iter()
        .find(|r| r["event"] == "rule added")
        .unwrap_or_else(|| panic!("no rule record: {log:?}"));
    assert_eq!(rule["from"], hostname().as_str(), "{rule}");
    assert!(
        log.iter().any(|r| r["by"] == "rule"),
        "the rule's answer is not recorded: {log:?}"
    );
    // `m` types a deny message here; Enter sends it with the deny to the hook there.
    let hook = l.remote_gate("terraform destroy");
    c.wait_screen("the third remote request", |s| {
        s.contains("asked on build") && s.contains("terraform destroy")
    });
    c.answer("m");
    c.send("use plan first\r");
    let out = hook.wait_with_output().expect("hook output");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains(r#""behavior":"deny""#) && said.contains("use plan first"),
        "{said}"
    );
    // Nothing of it is this machine's: no local rule.
    let local: Value = serde_json::from_str(&l.local.ok(&["approvals", "--json"])).expect("json");
    assert_eq!(local["rules"].as_array().map(Vec::len), Some(0), "{local}");
}

#[test]
fn a_machine_that_wants_a_host_key_decision_needs_you_and_nothing_prompts() {
    if !available() {
        return;
    }
    let sshd = Sshd::start(RemoteCalyx::ThisBinary);
    let local = Env::new();
    // The harness's ssh config plus an alias for the same sshd whose host key nobody accepted.
    let mut asking = String::new();
    let calyx_ssh = sshd.config_copy(&local, "ssh_config", |config| {
        asking = config
            .replace(&format!("Host {HOST}"), "Host calyx-asking")
            .replace("StrictHostKeyChecking no", "StrictHostKeyChecking ask")
            .replace("known_hosts", "empty_known_hosts");
        format!("{config}\n{asking}")
    });
    local.ok(&["machine", "add", "asking", "calyx-asking"]);
    let out = std::process::Command::new(crate::common::calyx_bin())
        .args(["new", "-d", "-s", "near"])
        .env_clear()
        .envs(local.vars())
        .env("CALYX_SSH", &calyx_ssh)
        .stdin(Stdio::null())
        .output()
        .expect("calyx new");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed = wait_until("asking named as needing the user", || {
        let listed = local.ok(&["machine", "list"]);
        listed
            .contains("needs you: run `calyx machine test asking`")
            .then_some(listed)
    });
    assert!(listed.contains("calyx-asking"), "{listed}");
    let agents: Value = serde_json::from_str(&local.ok(&["agents", "--json"])).expect("json");
    assert_eq!(agents["machines_down"][0]["state"], "needs-you", "{agents}");
    // Nothing was accepted on the user's behalf: no host key was written for that alias.
    let known_hosts = asking
        .lines()
        .find_map(|l| l.trim().strip_prefix("UserKnownHostsFile "))
        .expect("its known_hosts");
    assert!(
        std::fs::read_to_string(known_hosts)
            .unwrap_or_default()
            .is_empty(),
        "a host key was accepted in the background"
    );
}

/// The text of an MCP tool result.
fn tool_text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn an_agents_call_for_a_linked_machine_goes_over_the_live_link_and_a_dropped_one_answers_unreachable(
) {
    let Some(mut l) = linked() else { return };
    let near = l.local.first_surface();
    let mcp = crate::common::mcp::McpSession::open(&l.local, &near);
    let listed = mcp.call("agent_list", serde_json::json!({"machine": "build"}));
    assert_eq!(listed["isError"], false, "{listed}");
    assert_eq!(listed["structuredContent"]["agents"][0]["state"], "idle");
    // sshd stops listening: a new connection to build cannot be made, yet calls still reach
    // it, so they went over the link that was already open (and several in a row).
    l.sshd.stop();
    for _ in 0..3 {
        let listed = mcp.call("agent_list", serde_json::json!({"machine": "build"}));
        assert_eq!(listed["structuredContent"]["machine"], "build", "{listed}");
        let panes = mcp.call("pane_list", serde_json::json!({"machine": "build"}));
        assert_eq!(
            panes["structuredContent"]["panes"][0]["session"], "far",
            "{panes}"
        );
    }
    // The link drops (its bridge there ends): the call says unreachable, from the link.
    for pid in remote_bridges(&l.sshd) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGTERM,
        );
    }
    wait_until("build unreachable in the local machine list", || {
        let listed: Value =
            serde_json::from_str(&l.local.ok(&["machine", "list", "--json"])).ok()?;
        (listed[0]["link"] == "unreachable").then_some(())
    });
    let down = mcp.call("agent_list", serde_json::json!({"machine": "build"}));
    assert_eq!(down["isError"], true, "{down}");
    assert!(
        tool_text(&down).starts_with("unreachable: build ("),
        "{down}"
    );
}
