//! End to end: moving between sessions from the keyboard, in a real client: the chooser
//! (`prefix s` / `prefix w`) with each session's windows and agents, and `prefix (`, `)`, `L`.

use crate::common;

use common::{calyx_bin, wait_until, Env};

/// The (session, window index) of the focused pane of `session`.
fn active_window(env: &Env, session: &str) -> Option<u64> {
    env.panes()
        .into_iter()
        .find(|p| p["session"] == session && p["focused"] == true)
        .and_then(|p| p["window"].as_u64())
}

#[test]
fn the_chooser_and_switch_keys_move_the_client_between_sessions() {
    let env = Env::new();
    env.ok(&["new", "-d", "-s", "beta", "--", "sh"]);
    env.ok(&["new-window", "-d", "-t", "beta", "-n", "logs", "--", "sh"]);
    let mut c = env.client(&["new", "-s", "alpha"], 30, 120);
    c.wait_for("[alpha]");
    // An agent at work in beta's first window shows in the chooser.
    let beta_first = wait_until("beta's first pane", || {
        env.panes()
            .into_iter()
            .find(|p| p["session"] == "beta" && p["window"] == 0)
            .and_then(|p| p["id"].as_str().map(str::to_string))
    });
    let hook = format!(
        "echo '{{\"hook_event_name\":\"UserPromptSubmit\",\"session_id\":\"t1\",\"prompt\":\"go\"}}' | {} hook claude-code",
        calyx_bin().display()
    );
    env.ok(&["send-keys", "-t", &beta_first, &hook, "Enter"]);
    wait_until("beta's agent working", || {
        env.ok(&["agents", "--json"])
            .contains("working")
            .then_some(())
    });

    // prefix s: one row per session (tmux's choose-tree -s; windows show with Right), the
    // client's own marked; Down twice reaches beta (the last row), Enter switches to it.
    c.prefix("s");
    let screen = c.wait_for("sessions and windows");
    assert!(screen.contains("* alpha"), "{screen}");
    assert!(screen.contains("beta  2 windows"), "{screen}");
    assert!(!screen.contains("1: logs"), "{screen}");
    c.wait_for("◐1");
    c.send("jj\r");
    c.wait_for("[beta]");
    wait_until("the chooser closed", || {
        (!c.screen().contains("sessions and windows")).then_some(())
    });

    // prefix L: back to the last session; ) and ( cycle by name, wrapping.
    c.prefix("L");
    c.wait_for("[alpha]");
    c.prefix(")");
    c.wait_for("[beta]");
    c.prefix(")");
    c.wait_for("[alpha]");
    c.prefix("(");
    c.wait_for("[beta]");

    // prefix w: starts on the current window; G goes to the last row (beta's "logs"), and
    // Enter shows that window.
    assert_eq!(active_window(&env, "beta"), Some(0));
    c.prefix("w");
    c.wait_for("sessions and windows");
    c.send("G\r");
    wait_until("beta's logs window shown", || {
        (active_window(&env, "beta") == Some(1)).then_some(())
    });
    // Esc closes the chooser without switching.
    c.prefix("s");
    c.wait_for("sessions and windows");
    c.send("k\x1b");
    wait_until("the chooser closed", || {
        (!c.screen().contains("sessions and windows")).then_some(())
    });
    c.wait_for("[beta]");
}

#[test]
fn switching_with_one_session_says_so() {
    let env = Env::new();
    let mut c = env.client(&["new", "-s", "solo"], 24, 100);
    c.wait_for("[solo]");
    c.prefix(")");
    c.wait_for("no other session");
    c.prefix("L");
    c.wait_for("no last session");
}

/// Issue 15 §1: the prompt reads commands as the CLI does, flags and targets included, and
/// never acts on another target than the one named.
#[test]
fn the_prompt_takes_the_cli_s_targets_and_refuses_what_it_cannot_read() {
    let env = Env::new();
    env.ok(&["new", "-d", "-s", "alpha"]);
    env.ok(&["new", "-d", "-s", "beta"]);
    let mut c = env.client(&["attach", "-t", "alpha"], 24, 100);
    c.wait_for("$ ");
    c.prefix(":");
    c.send("kill-session -t beta\r");
    wait_until("beta gone and alpha kept", || {
        let ls = env.ok(&["ls"]);
        (!ls.contains("beta:") && ls.contains("alpha:")).then_some(())
    });
    // An argument kill-server does not take: refused on the status line, nothing killed.
    c.prefix(":");
    c.send("kill-server now\r");
    c.wait_screen("the refusal", |s| s.contains("unexpected argument 'now'"));
    assert!(env.ok(&["ls"]).contains("alpha:"));
    // kill-window -t and split-window -h -c from the prompt, as from the CLI.
    env.ok(&["new-window", "-t", "alpha", "-d"]);
    c.prefix(":");
    c.send("kill-window -t alpha:1\r");
    wait_until("window 1 closed", || {
        let windows: Vec<u64> = env
            .panes()
            .into_iter()
            .filter_map(|p| p["window"].as_u64())
            .collect();
        (windows == vec![0]).then_some(())
    });
    c.prefix(":");
    c.send("split-window -h -c /tmp\r");
    wait_until("a second pane in /tmp", || {
        let panes = env.panes();
        (panes.len() == 2 && panes.iter().any(|p| p["cwd"] == "/tmp")).then_some(())
    });
}
