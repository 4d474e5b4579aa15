//! End to end: `prefix x` and `prefix &` ask on the status line before closing, as tmux does
//! (`kill-pane %3? (y/n)`, `kill-window 1? (y/n)`); `y` closes, any other key keeps it, and
//! `confirm_kill = false` in config.toml closes at once (issue 15, item 4).

use crate::common;

use common::gates::pane_ids;
use common::{wait_until, Env};

fn windows(env: &Env) -> usize {
    let mut w: Vec<u64> = env
        .panes()
        .iter()
        .filter_map(|p| p["window"].as_u64())
        .collect();
    w.dedup();
    w.len()
}

#[test]
fn prefix_x_asks_and_only_y_kills_the_pane() {
    let env = Env::new();
    let mut c = env.client(&["new", "-s", "k"], 24, 100);
    c.wait_for("$ ");
    c.prefix("%");
    wait_until("two panes", || (pane_ids(&env).len() == 2).then_some(()));
    let focused = env
        .panes()
        .into_iter()
        .find(|p| p["focused"] == true)
        .and_then(|p| p["id"].as_str().map(str::to_string))
        .expect("a focused pane");
    c.prefix("x");
    c.wait_for(&format!("kill-pane {focused}? (y/n)"));
    c.send("n");
    c.wait_screen("the question gone", |s| !s.contains("(y/n)"));
    assert_eq!(pane_ids(&env).len(), 2, "n keeps the pane");
    c.prefix("x");
    c.wait_for(&format!("kill-pane {focused}? (y/n)"));
    c.send("y");
    wait_until("the pane closed", || {
        (pane_ids(&env).len() == 1).then_some(())
    });
    assert!(!pane_ids(&env).contains(&focused));
}

#[test]
fn prefix_ampersand_asks_before_killing_the_window() {
    let env = Env::new();
    let mut c = env.client(&["new", "-s", "k"], 24, 100);
    c.wait_for("$ ");
    c.prefix("c");
    wait_until("two windows", || (windows(&env) == 2).then_some(()));
    c.prefix("&");
    c.wait_for("kill-window 1? (y/n)");
    c.send("\x1b");
    c.wait_screen("the question gone", |s| !s.contains("(y/n)"));
    assert_eq!(windows(&env), 2, "Esc keeps the window");
    c.prefix("&");
    c.wait_for("kill-window 1? (y/n)");
    c.send("y");
    wait_until("the window closed", || (windows(&env) == 1).then_some(()));
}

#[test]
fn confirm_kill_false_kills_at_once() {
    let env = Env::new();
    env.write_config("confirm_kill = false\n");
    let mut c = env.client(&["new", "-s", "k"], 24, 100);
    c.wait_for("$ ");
    c.prefix("%");
    wait_until("two panes", || (pane_ids(&env).len() == 2).then_some(()));
    c.prefix("x");
    wait_until("the pane closed", || {
        (pane_ids(&env).len() == 1).then_some(())
    });
}
