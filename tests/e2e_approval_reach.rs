//! End to end: the approval panel reaches requests wherever they come from. `g` takes the
//! client to the asking pane (in its window, in another window, in another session); requests
//! made while no client is attached wait for the next attach, and still expire.

use crate::common;

use std::process::Command;

use common::gates::{
    claude_bash, focused_pane, gate, pane_ids, payload_file, pending, side_by_side, wait_pending,
    CLAUDE_ALLOW,
};
use common::{calyx_bin, wait_until, Env};

#[test]
fn g_focuses_the_asking_pane_in_the_same_window() {
    let (env, mut c, ids) = side_by_side(2, 150);
    let (first, second) = (ids[0].clone(), ids[1].clone());
    assert_eq!(focused_pane(&env, "gates"), Some(first.clone()));
    let p = payload_file(&env, "p.json", &claude_bash("ls"));
    let g = gate(&env, &second, "claude-code", &p, "here");
    c.wait_for(&format!("in {second} (gates:0) wants Bash"));
    c.send("g");
    wait_until("focus on the asking pane", || {
        (focused_pane(&env, "gates") == Some(second.clone())).then_some(())
    });
    // The panel still shows the request; it answers as before.
    c.wait_for("wants Bash");
    c.answer("y");
    assert_eq!(g.output(&env), CLAUDE_ALLOW);
}

#[test]
fn a_request_from_another_window_is_shown_and_g_switches_to_that_window() {
    let env = Env::new();
    let mut c = env.client(&["new", "-s", "gates"], 40, 150);
    c.wait_for("$ ");
    env.ok(&["new-window", "-d", "-t", "gates", "-n", "side"]);
    let side = env
        .panes()
        .into_iter()
        .find(|p| p["window"] == 1)
        .and_then(|p| p["id"].as_str().map(str::to_string))
        .expect("a pane in window 1");
    c.wait_for("1:side ");
    let p = payload_file(&env, "side-window.json", &claude_bash("ls"));
    let g = gate(&env, &side, "claude-code", &p, "side");
    let screen = c.wait_for(&format!("in {side} (gates:1) wants Bash"));
    assert!(
        !screen.contains("side-window.json"),
        "window 1 is not shown yet:\n{screen}"
    );
    c.send("g");
    // The client now shows window 1, with the asking pane (its command line) focused.
    c.wait_for("1:side*");
    c.wait_for("side-window.json");
    assert_eq!(focused_pane(&env, "gates"), Some(side.clone()));
    c.answer("y");
    assert_eq!(g.output(&env), CLAUDE_ALLOW);
}

#[test]
fn g_switches_the_client_to_the_session_and_window_of_the_asking_pane() {
    let env = Env::new();
    let mut c = env.client(&["new", "-s", "one"], 40, 150);
    c.wait_for("$ ");
    env.ok(&["new", "-d", "-s", "two"]);
    env.ok(&["new-window", "-d", "-t", "two", "-n", "far"]);
    let far = env
        .panes()
        .into_iter()
        .find(|p| p["session"] == "two" && p["window"] == 1)
        .and_then(|p| p["id"].as_str().map(str::to_string))
        .expect("a pane in two:1");
    let p = payload_file(&env, "far-away.json", &claude_bash("ls"));
    let g = gate(&env, &far, "claude-code", &p, "far");
    c.wait_screen("the request of session two, shown in session one", |s| {
        s.contains(&format!("in {far} (two:1) wants Bash")) && s.contains("[one]")
    });
    c.send("g");
    c.wait_for("[two]");
    c.wait_for("1:far*");
    c.wait_for("far-away.json");
    assert_eq!(focused_pane(&env, "two"), Some(far.clone()));
    let ls = env.ok(&["ls"]);
    assert!(
        ls.lines()
            .any(|l| l.starts_with("two:") && l.ends_with("(attached)")),
        "{ls}"
    );
    assert!(
        ls.lines()
            .any(|l| l.starts_with("one:") && !l.ends_with("(attached)")),
        "{ls}"
    );
    // The switched client types into its new session.
    c.answer("y");
    assert_eq!(g.output(&env), CLAUDE_ALLOW);
    c.send("echo typed-in-two\r");
    env.wait_capture(&far, "typed-in-two");
}

/// `calyx ARGS` with the test's environment plus `extra` (a server started by it sees them).
fn run_with(env: &Env, extra: &[(&str, &str)], args: &[&str]) {
    let mut cmd = Command::new(calyx_bin());
    cmd.args(args).env_clear();
    for (k, v) in env.vars() {
        cmd.env(k, v);
    }
    for (k, v) in extra {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run calyx");
    assert!(out.status.success(), "calyx {args:?}: {out:?}");
}

#[test]
fn a_request_made_with_no_client_attached_waits_for_the_next_attach() {
    let env = Env::new();
    env.ok(&["new", "-d", "-s", "gates", "-x", "150", "-y", "40"]);
    let pane = pane_ids(&env)[0].clone();
    let p = payload_file(&env, "p.json", &claude_bash("ls"));
    let g = gate(&env, &pane, "claude-code", &p, "later");
    wait_pending(&env, 1);
    let mut c = env.client(&["attach", "-t", "gates"], 40, 150);
    c.wait_for(&format!("in {pane} (gates:0) wants Bash"));
    assert!(!g.done(&env));
    c.answer("y");
    assert_eq!(g.output(&env), CLAUDE_ALLOW);
}

#[test]
fn a_request_made_with_no_client_attached_still_expires() {
    let env = Env::new();
    run_with(
        &env,
        &[("CALYX_APPROVAL_EXPIRY_SECS", "1")],
        &["new", "-d", "-s", "gates"],
    );
    let pane = pane_ids(&env)[0].clone();
    let p = payload_file(&env, "p.json", &claude_bash("ls"));
    let g = gate(&env, &pane, "claude-code", &p, "expiring");
    // Claude Code's expiry is an empty answer: it asks in its own prompt.
    assert_eq!(g.output(&env), "");
    assert!(pending(&env).is_empty());
    let log = common::gates::approvals_log(&env);
    assert!(
        log.iter().any(|l| l["by"] == "expiry"),
        "recorded as expired: {log:?}"
    );
    // Nothing is left for the next client.
    let c = env.client(&["attach", "-t", "gates"], 40, 150);
    let screen = c.wait_for("[gates]");
    assert!(!screen.contains("wants Bash"), "{screen}");
    assert!(!screen.contains("(prefix i)"), "{screen}");
}
