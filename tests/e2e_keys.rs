//! End to end: keys typed into a real client. The `prefix :` command prompt, the prefix pressed
//! twice, the resize bindings, and everything that is not a binding reaching the pane's program
//! byte for byte (function keys, Alt and Ctrl combinations, cursor keys in normal and
//! application mode), as a key-logging program in the pane reads them.

use crate::common;

use common::keylog::KeyLog;
use common::{wait_until, Client, Env};

fn pane_ids(env: &Env) -> Vec<String> {
    env.panes()
        .iter()
        .filter_map(|p| p["id"].as_str().map(str::to_string))
        .collect()
}

/// The (cols, rows) of each pane, in layout order.
fn sizes(env: &Env) -> Vec<(u64, u64)> {
    env.panes()
        .iter()
        .map(|p| {
            (
                p["cols"].as_u64().unwrap_or(0),
                p["rows"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

/// Starts a client whose only pane runs a key logger with `modes` on; waits until it reads.
fn logger_client(env: &Env, name: &str, modes: &[&str]) -> (Client, KeyLog) {
    let log = KeyLog::new(env, name);
    let cmd = log.command(modes);
    let mut args = vec!["new", "--"];
    args.extend(KeyLog::args(&cmd));
    let c = env.client(&args, 24, 80);
    c.wait_for("READY");
    (c, log)
}

#[test]
fn command_prompt_runs_commands_and_reports_unknown_ones() {
    let env = Env::new();
    let mut c = env.client(&["new", "-s", "prompt"], 30, 100);
    c.wait_for("$ ");
    // A command from the table, by its full name.
    c.prefix(":");
    c.wait_screen("the prompt on the status line", |s| {
        s.lines().last().is_some_and(|l| l.starts_with(": "))
    });
    c.send("split-window -h\r");
    wait_until("split from the prompt", || {
        (pane_ids(&env).len() == 2).then_some(())
    });
    // Commands with arguments.
    c.prefix(":");
    c.send("rename-window logs\r");
    c.wait_for("0:logs*");
    c.prefix(":");
    c.send("new-window\r");
    c.wait_for("1:sh*");
    c.prefix(":");
    c.send("select-window -t 0\r");
    c.wait_for("0:logs*");
    // Backspace and C-u edit the line; what runs is what is shown.
    c.prefix(":");
    c.send("rename-window xx\x7f\x7fwork\r");
    c.wait_for("0:work*");
    c.prefix(":");
    c.send("garbage\x15rename-session renamed\r");
    wait_until("session renamed from the prompt", || {
        env.ok(&["ls"]).starts_with("renamed:").then_some(())
    });
    // Unknown commands say so; Escape cancels without running anything.
    c.prefix(":");
    c.send("frobnicate now\r");
    c.wait_for("unknown command: frobnicate");
    // The prompt takes the CLI's flags (issue 15 §1: it refused them before); a flag the
    // command does not have is refused, and nothing runs.
    c.prefix(":");
    c.send("new-window -n foo\r");
    c.wait_for("2:foo*");
    c.prefix(":");
    c.send("new-window --frobnicate\r");
    c.wait_for("unexpected argument '--frobnicate'");
    assert_eq!(pane_ids(&env).len(), 4, "only the named window was made");
    c.prefix(":");
    c.send("kill-session");
    c.send("\x1b");
    c.wait_screen("prompt closed", |s| {
        !s.lines().last().is_some_and(|l| l.starts_with(": "))
    });
    assert_eq!(pane_ids(&env).len(), 4, "Escape must not run the command");
    // The prompt can end the session.
    c.prefix(":");
    c.send("kill-session\r");
    c.wait_exit();
    assert!(!env.run(&["ls"]).status.success(), "the session is gone");
}

#[test]
fn the_prefix_pressed_twice_reaches_the_program() {
    let env = Env::new();
    let (mut c, log) = logger_client(&env, "prefix", &[]);
    c.send("\x02\x02");
    let at = log.expect_since(0, b"\x02");
    // The key after it is an ordinary key again, not a binding.
    c.send("d");
    log.expect_since(at, b"d");
    assert!(!c.exited(), "prefix prefix d must not detach");

    // With another prefix, that key is sent and C-b is an ordinary key.
    let env = Env::new();
    env.write_config("prefix = \"C-a\"\n");
    let (mut c, log) = logger_client(&env, "prefix-a", &[]);
    c.send("\x01\x01");
    let at = log.expect_since(0, b"\x01");
    c.send("\x02");
    log.expect_since(at, b"\x02");
}

#[test]
fn resize_bindings_move_the_border_and_the_program_sees_its_new_size() {
    let env = Env::new();
    let mut c = env.client(&["new", "-s", "rs"], 30, 100);
    c.wait_for("$ ");
    c.prefix("%");
    wait_until("two panes side by side", || {
        (pane_ids(&env).len() == 2).then_some(())
    });
    let before = sizes(&env);
    let total = before[0].0 + before[1].0;
    // prefix C-Left (xterm sends ESC [ 1 ; 5 D): the border moves left by 4.
    c.prefix("\x1b[1;5D");
    let after = wait_until("border moved left", || {
        let s = sizes(&env);
        (s[0].0 < before[0].0).then_some(s)
    });
    assert_eq!(after[0].0, before[0].0 - 4, "{before:?} -> {after:?}");
    assert_eq!(after[0].0 + after[1].0, total);
    // prefix M-Right (ESC [ 1 ; 3 C) moves it back.
    c.prefix("\x1b[1;3C");
    wait_until("border moved right", || {
        (sizes(&env)[0].0 == before[0].0).then_some(())
    });
    // Alt-arrows as terminals that prefix ESC send them (ESC ESC [ C) work the same.
    c.prefix("\x1b\x1b[C");
    wait_until("border moved right again", || {
        (sizes(&env)[0].0 == before[0].0 + 4).then_some(())
    });

    // Top/bottom: prefix C-Up / C-Down change heights by 2.
    c.prefix("\"");
    wait_until("three panes", || (pane_ids(&env).len() == 3).then_some(()));
    let before = sizes(&env);
    c.prefix("\x1b[1;5A");
    let after = wait_until("border moved up", || {
        let s = sizes(&env);
        (s[2].1 > before[2].1).then_some(s)
    });
    assert_eq!(after[2].1, before[2].1 + 2, "{before:?} -> {after:?}");
    assert_eq!(after[1].1 + after[2].1, before[1].1 + before[2].1);
    // The program in the pane gets the new size of its terminal.
    c.send("stty size\r");
    c.wait_for(&format!("{} {}", after[2].1, after[2].0));
    c.prefix("\x1b[1;5B");
    wait_until("border moved down", || {
        (sizes(&env)[2].1 == before[2].1).then_some(())
    });
}

#[test]
fn function_alt_and_ctrl_keys_reach_the_program_unchanged() {
    let env = Env::new();
    let (mut c, log) = logger_client(&env, "keys", &[]);
    let cases: &[(&str, &[u8])] = &[
        ("F1", b"\x1bOP"),
        ("F4", b"\x1bOS"),
        ("F5", b"\x1b[15~"),
        ("F12", b"\x1b[24~"),
        ("S-F5", b"\x1b[15;2~"),
        ("C-F12", b"\x1b[24;5~"),
        ("M-x", b"\x1bx"),
        ("M-X", b"\x1bX"),
        ("M-Enter", b"\x1b\r"),
        ("M-.", b"\x1b."),
        ("C-a", b"\x01"),
        ("C-c", b"\x03"),
        ("C-Left", b"\x1b[1;5D"),
        ("M-Up", b"\x1b[1;3A"),
        ("S-Tab", b"\x1b[Z"),
        ("Home", b"\x1b[H"),
        ("PageUp", b"\x1b[5~"),
        ("Delete", b"\x1b[3~"),
        ("Escape", b"\x1b"),
        ("BSpace", b"\x7f"),
        ("utf-8", "é中".as_bytes()),
    ];
    let mut at = 0;
    for (name, bytes) in cases {
        c.send(bytes);
        at = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| log.expect_since(at, bytes)))
            .unwrap_or_else(|_| panic!("{name} did not arrive unchanged"));
    }
    // Alt-arrows as ESC-prefixing terminals send them arrive whole, not as Escape then Up.
    c.send("\x1b\x1b[A");
    at = log.expect_since(at, b"\x1b\x1b[A");
    // Cursor keys from an outer terminal in application mode are what this pane's mode says:
    // normal mode here.
    c.send("\x1bOA");
    at = log.expect_since(at, b"\x1b[A");
    // send-keys names work the same way.
    let pane = pane_ids(&env)[0].clone();
    env.ok(&["send-keys", "-t", &pane, "F5", "M-x", "Up", "C-Left"]);
    log.expect_since(at, b"\x1b[15~\x1bx\x1b[A\x1b[1;5D");
}

#[test]
fn application_cursor_mode_changes_what_the_arrows_send() {
    let env = Env::new();
    // The program sets DECCKM (CSI ? 1 h) before it prints READY.
    let (mut c, log) = logger_client(&env, "decckm", &["1"]);
    let cases: &[(&[u8], &[u8])] = &[
        (b"\x1b[A", b"\x1bOA"),
        (b"\x1b[B", b"\x1bOB"),
        (b"\x1b[C", b"\x1bOC"),
        (b"\x1b[D", b"\x1bOD"),
        (b"\x1b[H", b"\x1bOH"),
        (b"\x1b[F", b"\x1bOF"),
        // Modified arrows keep their CSI form in either mode, as in xterm.
        (b"\x1b[1;5A", b"\x1b[1;5A"),
        (b"\x1b[1;2B", b"\x1b[1;2B"),
    ];
    let mut at = 0;
    for (sent, want) in cases {
        c.send(sent);
        at = log.expect_since(at, want);
    }
    let pane = pane_ids(&env)[0].clone();
    env.ok(&["send-keys", "-t", &pane, "Up", "Left"]);
    log.expect_since(at, b"\x1bOA\x1bOD");
}

/// Issue 15 §7: a message cut off on the status line is readable whole in the log (prefix ~).
#[test]
fn the_message_log_shows_status_messages_whole() {
    let env = Env::new();
    let mut c = env.client(&["new", "-s", "log"], 24, 40);
    c.wait_for("$ ");
    // Longer than the 40-column status line.
    c.prefix(":");
    c.send("frobnicate-with-a-very-long-name-indeed\r");
    c.wait_for("unknown command");
    c.prefix("~");
    c.wait_screen("the log with the whole message", |s| {
        s.contains("messages") && s.contains("prefix ? lists them")
    });
    c.send("q");
    c.wait_screen("the log closed", |s| !s.contains("prefix ? lists them"));
}

/// Issue 15 §8: prefix q numbers the panes and a digit focuses that pane (tmux's
/// display-panes).
#[test]
fn display_panes_numbers_the_panes_and_a_digit_focuses_one() {
    let env = Env::new();
    let mut c = env.client(&["new", "-s", "q"], 24, 100);
    c.wait_for("$ ");
    env.ok(&["split", "-t", "q", "-h"]);
    let first = env
        .ok(&["list-panes", "-t", "q", "-F", "#{pane_index} #{pane_id}"])
        .lines()
        .find_map(|l| l.strip_prefix("0 ").map(str::to_string))
        .expect("pane 0");
    let focused = |env: &Env| {
        env.ok(&["list-panes", "-t", "q", "-F", "#{pane_active}#{pane_id}"])
            .lines()
            .find_map(|l| l.strip_prefix('1').map(str::to_string))
    };
    assert_ne!(
        focused(&env).as_deref(),
        Some(first.as_str()),
        "the split took focus"
    );
    c.prefix("q");
    c.wait_screen("both numbers on screen", |s| {
        s.contains(" 0 ") && s.contains(" 1 ") && s.contains("PANES")
    });
    c.send("0");
    wait_until("pane 0 focused", || {
        (focused(&env).as_deref() == Some(first.as_str())).then_some(())
    });
    c.wait_screen("numbers gone", |s| !s.contains("PANES"));
}
