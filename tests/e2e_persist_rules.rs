//! "Always" approval rules outlive the server (issue 18 §1): a rule the human made for one
//! pane and one for every pane are saved with their scope; after kill -9 and a restore, each
//! answers a matching `calyx hook claude-code --approval` with nobody asked, the pane's rule
//! on the restored pane's new id and only there.

use crate::common::gates::{
    approvals_log, claude_bash, gate, payload_file, side_by_side, wait_pending, CLAUDE_ALLOW,
};
use crate::common::{wait_until, Client, Env};
use crate::e2e_persist::{kill_9, saved};

/// Asks about `command` in `pane` (a real hook process in the pane).
fn ask(env: &Env, pane: &str, command: &str, name: &str) -> crate::common::gates::Gate {
    let payload = payload_file(env, &format!("{name}.json"), &claude_bash(command));
    gate(env, pane, "claude-code", &payload, name)
}

/// The human answers `command` in `pane` with `key` (`a`: always here, `A`: every pane).
fn always(env: &Env, c: &mut Client, pane: &str, command: &str, key: &str, name: &str) {
    let g = ask(env, pane, command, name);
    c.wait_for("wants Bash");
    c.answer(key);
    assert_eq!(g.output(env), CLAUDE_ALLOW);
    c.wait_panel_gone();
}

/// `command` in `pane` is allowed by a rule, nobody asked.
fn ruled(env: &Env, pane: &str, command: &str, name: &str) {
    let g = ask(env, pane, command, name);
    assert_eq!(g.output(env), CLAUDE_ALLOW, "{command:?} in {pane}");
    let last = approvals_log(env)
        .into_iter()
        .rev()
        .find(|l| !l["by"].is_null())
        .expect("a decision recorded");
    assert_eq!(last["by"], "rule", "{command:?} in {pane}: {last}");
}

/// The first pane of `session`.
fn first_pane(env: &Env, session: &str) -> String {
    wait_until(&format!("a pane of {session}"), || {
        env.panes()
            .into_iter()
            .find(|p| p["session"] == session)
            .and_then(|p| p["id"].as_str().map(str::to_string))
    })
}

#[test]
fn rules_come_back_with_their_scope_after_kill_9_and_restore() {
    let (env, mut c, panes) = side_by_side(1, 150);
    let old = panes[0].clone();
    always(&env, &mut c, &old, "rm -rf /tmp/here", "a", "pane-rule");
    always(&env, &mut c, &old, "make clean-all", "A", "every-rule");
    wait_until("both rules saved with what they match", || {
        let rules = saved(&env)?.approval_rules;
        (rules.len() == 2 && rules.iter().all(|r| r.matches.is_some())).then_some(())
    });
    drop(c);
    kill_9(&env);

    // Another session first, so the restored pane gets another id than it had.
    env.ok(&["new", "-d", "-s", "other"]);
    env.ok(&["split", "-t", "other", "-h"]);
    let other = first_pane(&env, "other");
    let _c = env.client(&["attach", "-t", "gates"], 40, 150);
    let restored = first_pane(&env, "gates");
    assert_ne!(restored, old, "the restored pane has a new id");

    ruled(&env, &restored, "rm -rf /tmp/here", "pane-again");
    ruled(&env, &restored, "make clean-all", "every-again");
    ruled(&env, &other, "make clean-all", "every-elsewhere");
    // The pane's rule stayed the pane's: elsewhere the same command waits for a human.
    let g = ask(&env, &other, "rm -rf /tmp/here", "pane-elsewhere");
    let waiting = wait_pending(&env, 1);
    assert_eq!(waiting[0]["pane"], other.as_str());
    assert!(!g.done(&env), "answered without asking");
    let rules: serde_json::Value =
        serde_json::from_str(&env.ok(&["approvals", "--rules", "--json"])).expect("json");
    let panes: Vec<&serde_json::Value> = rules
        .as_array()
        .expect("rules")
        .iter()
        .map(|r| &r["pane"])
        .collect();
    assert_eq!(panes.len(), 2, "{rules}");
    assert!(
        panes.contains(&&serde_json::Value::from(restored.as_str())),
        "{rules}"
    );
    assert!(panes.contains(&&serde_json::Value::Null), "{rules}");
}
