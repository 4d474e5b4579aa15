//! Rules that hold "anywhere" (issue 20 §3), end to end over a real sshd (the worlds of
//! tests/e2e_machine_links.rs): `e` in the local panel on a local request makes a rule that
//! answers a real `calyx hook --approval` here and on the linked machine; a remote server
//! that restarted gets it again when its link comes back; `E` on the remote machine's request
//! makes the wider rule here too; revoking it here (`r`, `d`) revokes it there.

use std::process::{Child, Stdio};

use serde_json::Value;

use crate::common::{wait_until, Env};
use crate::e2e_machine_links::{fixture, hostname, linked, remote_log, Linked, CLAUDE_ALLOW};

/// A real `calyx hook claude-code --approval` in the pane with `surface` of `env`.
fn gate(env: &Env, surface: &str, command: &str) -> Child {
    let mut payload = fixture("claude-2.1.197-PermissionRequest.json");
    payload["tool_input"]["command"] = Value::from(command);
    env.hook_process(
        surface,
        &["claude-code", "--approval"],
        &payload,
        Stdio::piped(),
    )
}

/// Whether `hook` printed Claude Code's allow.
fn allowed(hook: Child) -> bool {
    let out = hook.wait_with_output().expect("hook output");
    String::from_utf8_lossy(&out.stdout).contains(CLAUDE_ALLOW)
}

/// `calyx approvals --rules --json` of `env`.
fn rules(env: &Env) -> Vec<Value> {
    let v: Value =
        serde_json::from_str(&env.ok(&["approvals", "--json", "--rules"])).expect("rules json");
    v.as_array().cloned().expect("a JSON array of rules")
}

/// The ids of the pending requests of `env` itself (not its saved machines').
fn own_pending(env: &Env) -> Vec<u64> {
    let v: Value = serde_json::from_str(&env.ok(&["approvals", "--json", "--pending"]))
        .expect("approvals json");
    v["pending"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["machine"].is_null())
        .filter_map(|p| p["id"].as_u64())
        .collect()
}

/// The surface of the first pane of session `session` in `env`.
fn surface(env: &Env, session: &str) -> String {
    env.panes()
        .iter()
        .find(|p| p["session"] == session)
        .and_then(|p| p["surface_id"].as_str())
        .expect("pane of the session")
        .to_string()
}

/// Waits until the remote world holds exactly `count` rules pushed from this host.
fn remote_rules_from_here(l: &Linked, count: usize) -> Vec<Value> {
    let from = format!("from {}", hostname());
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let r = rules(&l.sshd.remote);
        if r.len() == count && r.iter().all(|r| r["machines"] == from.as_str()) {
            return r;
        }
        if std::time::Instant::now() > until {
            let log = |p: &std::path::Path| {
                std::fs::read_to_string(p.join("state/calyx/server.log")).unwrap_or_default()
            };
            panic!(
                "not {count} rules from {from} on build: {r:?}\nlocal:\n{}\nremote:\n{}",
                log(l.local.path()),
                log(l.sshd.remote.path())
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn a_rule_made_anywhere_here_allows_there_survives_a_restart_there_and_is_revoked_there() {
    let Some(l) = linked() else { return };
    let near = surface(&l.local, "near");
    l.local.hook_event(
        &near,
        "claude-code",
        &fixture("claude-2.1.197-SessionStart.json"),
    );
    let mut c = l.local.client(&["attach", "-t", "near"], 30, 200);
    c.wait_for("[near]");

    // `e` on a local request: exactly this call, every pane, every machine.
    let hook = gate(&l.local, &near, "npm test --watch");
    c.wait_for("e/E as A/P on every machine");
    c.answer("e");
    assert!(allowed(hook), "the local request was not allowed");
    c.wait_panel_gone();
    let here = rules(&l.local);
    assert_eq!(here.len(), 1, "{here:?}");
    assert_eq!(here[0]["machines"], "every", "{here:?}");
    assert_eq!(here[0]["pane"], Value::Null, "{here:?}");
    // The local twin: the same call here passes with nobody asked.
    assert!(allowed(gate(&l.local, &near, "npm test --watch")));
    // Pushed to build: a real hook there is allowed by it, and build's record says so.
    remote_rules_from_here(&l, 1);
    assert!(allowed(gate(&l.sshd.remote, &l.far, "npm test --watch")));
    let log = remote_log(&l.sshd);
    let added = log
        .iter()
        .find(|r| r["event"] == "rule added")
        .unwrap_or_else(|| panic!("no rule record there: {log:?}"));
    assert_eq!(added["from"], hostname().as_str(), "{added}");
    assert_eq!(added["anywhere"], true, "{added}");
    assert!(log.iter().any(|r| r["by"] == "rule"), "{log:?}");
    // Only that call: another command there still waits for a human.
    let other = gate(&l.sshd.remote, &l.far, "npm test --ci");
    let ids = wait_until("the other command pending there", || {
        let ids = own_pending(&l.sshd.remote);
        (ids.len() == 1).then_some(ids)
    });
    l.sshd.remote.ok(&["deny", &ids[0].to_string()]);
    let _ = other.wait_with_output();

    // build restarts: its link comes back and the rule is pushed again.
    l.sshd.remote.ok(&["kill-server"]);
    l.sshd.remote.ok(&["new", "-d", "-s", "again"]);
    remote_rules_from_here(&l, 1);
    let again = surface(&l.sshd.remote, "again");
    l.sshd.remote.hook_event(
        &again,
        "claude-code",
        &fixture("claude-2.1.197-SessionStart.json"),
    );
    assert!(allowed(gate(&l.sshd.remote, &again, "npm test --watch")));

    // `E` on build's request: the wider rule build names, held here and pushed back there.
    let hook = gate(&l.sshd.remote, &again, "cargo build --release");
    c.wait_screen("build's request with its rule choices", |s| {
        s.contains("asked on build") && s.contains("p/P always commands starting with")
    });
    c.answer("E");
    assert!(allowed(hook), "build's request was not allowed");
    let here = wait_until("the wider rule here", || {
        let r = rules(&l.local);
        (r.len() == 2).then_some(r)
    });
    assert!(
        here.iter()
            .any(|r| r["machines"] == "every"
                && r["covers"] == "commands starting with `cargo build`"),
        "{here:?}"
    );
    assert!(allowed(gate(&l.local, &near, "cargo build --offline")));
    remote_rules_from_here(&l, 2);
    assert!(allowed(gate(&l.sshd.remote, &again, "cargo build")));

    // Revoked here (`r`, `d` on the first rule, shown over a request of this machine): gone
    // there too, and that call asks there again.
    let waiting = gate(&l.local, &near, "make lint");
    c.wait_for("make lint");
    c.answer("r");
    c.wait_for("on every machine");
    c.send("d");
    c.send("d");
    wait_until("the rules gone here", || {
        rules(&l.local).is_empty().then_some(())
    });
    c.send("\x1b");
    c.answer("n");
    let _ = waiting.wait_with_output();
    remote_rules_from_here(&l, 0);
    let asks = gate(&l.sshd.remote, &again, "npm test --watch");
    wait_until("the call pending there again", || {
        (own_pending(&l.sshd.remote).len() == 1).then_some(())
    });
    let log = remote_log(&l.sshd);
    assert!(
        log.iter()
            .any(|r| r["event"] == "rule revoked" && r["from"] == hostname().as_str()),
        "{log:?}"
    );
    let mut asks = asks;
    assert!(
        asks.try_wait().expect("hook").is_none(),
        "answered by itself"
    );
    let _ = asks.kill();
    let _ = asks.wait();
}
