//! End to end: window numbers through the command line (issue 15 §6). A window keeps its
//! number when another closes, as in tmux (`renumber-windows` off), and a new window takes the
//! lowest free number; `base_index` and `renumber_windows` in config.toml change that.

use crate::common;

use common::Env;

/// The window number of every pane of `session`, one per pane, in order.
fn window_numbers(env: &Env, session: &str) -> Vec<String> {
    env.ok(&["list-panes", "-t", session, "-F", "#{window_index}"])
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn killing_a_window_keeps_the_others_numbers_and_a_new_one_fills_the_gap() {
    let env = Env::new();
    env.ok(&["new", "-d", "-s", "w"]);
    env.ok(&["new-window", "-d", "-t", "w"]);
    env.ok(&["new-window", "-d", "-t", "w"]);
    assert_eq!(window_numbers(&env, "w"), ["0", "1", "2"]);
    env.ok(&["kill-window", "-t", "w:1"]);
    assert_eq!(window_numbers(&env, "w"), ["0", "2"]);
    // `w:2` still names the window that was 2.
    let named = env.ok(&["display-message", "-p", "-t", "w:2", "#{window_index}"]);
    assert_eq!(named.trim(), "2");
    let made = env.ok(&["new-window", "-d", "-t", "w", "-P", "-F", "#{window_index}"]);
    assert_eq!(made.trim(), "1");
    assert_eq!(window_numbers(&env, "w"), ["0", "1", "2"]);
}

#[test]
fn base_index_and_renumber_windows_from_the_config_file() {
    let env = Env::new();
    env.write_config("base_index = 1\nrenumber_windows = true\n");
    let first = env.ok(&["new", "-d", "-s", "w", "-P", "-F", "#{window_index}"]);
    assert_eq!(first.trim(), "1");
    env.ok(&["new-window", "-d", "-t", "w"]);
    env.ok(&["new-window", "-d", "-t", "w"]);
    assert_eq!(window_numbers(&env, "w"), ["1", "2", "3"]);
    env.ok(&["kill-window", "-t", "w:2"]);
    assert_eq!(window_numbers(&env, "w"), ["1", "2"]);
}
