//! End to end: what a program in a pane says about the terminal itself reaches the user: its
//! cursor shape (DECSCUSR) on the user's terminal, its bell (BEL) rung there and marked on a
//! hidden window's tab, and its OSC 0/2 title in `list-panes`, on its border and on the status
//! line.

use crate::common;

use common::{wait_until, Client, Env};

/// Bytes the client sent to its terminal after the first `from`.
fn raw_since(c: &Client, from: usize) -> String {
    let raw = c.raw();
    String::from_utf8_lossy(raw.get(from..).unwrap_or_default()).to_string()
}

fn pane_titles(env: &Env) -> Vec<String> {
    env.panes()
        .iter()
        .map(|p| p["title"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn cursor_shapes_follow_the_focused_pane() {
    let env = Env::new();
    let mut c = env.client(&["new", "-s", "shape", "--", "sh"], 24, 80);
    c.wait_for("$ ");
    // A bar cursor (DECSCUSR 5), as editors set in insert mode.
    let mark = c.raw().len();
    c.send("printf '\\033[5 q'; echo SHAPE-$((2+3))\r");
    c.wait_for("SHAPE-5");
    wait_until("the bar cursor on the user's terminal", || {
        raw_since(&c, mark).contains("\x1b[5 q").then_some(())
    });
    // A new pane has the terminal's default shape; going back restores the bar.
    let mark = c.raw().len();
    c.prefix("%");
    wait_until("the default shape in the new pane", || {
        raw_since(&c, mark).contains("\x1b[0 q").then_some(())
    });
    let mark = c.raw().len();
    c.prefix("\x1b[D");
    wait_until("the bar again in the first pane", || {
        raw_since(&c, mark).contains("\x1b[5 q").then_some(())
    });
    // An underline, then back to the default.
    let mark = c.raw().len();
    c.send("printf '\\033[4 q'; echo SHAPE-$((2+2))\r");
    c.wait_for("SHAPE-4");
    wait_until("the underline cursor", || {
        raw_since(&c, mark).contains("\x1b[4 q").then_some(())
    });
    // Detaching leaves the user's terminal with its default cursor.
    c.prefix("d");
    let out = c.wait_exit();
    let tail = &out[out.rfind("\x1b[4 q").unwrap_or(0)..];
    assert!(tail.contains("\x1b[0 q"), "{tail:?}");
}

#[test]
fn the_bell_rings_on_the_users_terminal_and_marks_a_hidden_window() {
    let env = Env::new();
    let mut c = env.client(&["new", "-s", "bell", "--", "sh"], 24, 80);
    c.wait_for("$ ");
    let mark = c.raw().len();
    c.send("printf '\\a'; echo RANG-$((1+1))\r");
    c.wait_for("RANG-2");
    wait_until("BEL on the user's terminal", || {
        raw_since(&c, mark).contains('\x07').then_some(())
    });
    c.wait_for("0:sh*");
    // A bell in a window that is not shown rings too and marks that window's tab with "!".
    c.prefix("c");
    c.wait_for("1:sh*");
    let mark = c.raw().len();
    env.ok(&["send-keys", "-t", "bell:0", "printf '\\a'", "Enter"]);
    c.wait_for("0:sh-!");
    assert!(raw_since(&c, mark).contains('\x07'));
    // Looking at the window clears the mark.
    c.prefix("0");
    c.wait_for("0:sh*");
    c.wait_screen("the mark cleared", |s| !s.contains("0:sh-!"));

    // With `bell = false`, the terminal is not rung, but the window is still marked.
    let env = Env::new();
    env.write_config("bell = false\n");
    let mut c = env.client(&["new", "-s", "quiet", "--", "sh"], 24, 80);
    c.wait_for("$ ");
    c.prefix("c");
    c.wait_for("1:sh*");
    let mark = c.raw().len();
    env.ok(&["send-keys", "-t", "quiet:0", "printf '\\a'", "Enter"]);
    c.wait_for("0:sh-!");
    assert!(!raw_since(&c, mark).contains('\x07'));
}

#[test]
fn titles_show_in_list_panes_on_the_border_and_on_the_status_line() {
    let env = Env::new();
    let mut c = env.client(&["new", "-s", "titles", "--", "sh"], 24, 100);
    c.wait_for("$ ");
    // Without a title, the border and the status line show the command. (A frame may reach
    // the terminal in more than one read: wait for all of it.)
    c.wait_screen("the command on the border and the status line", |s| {
        let lines: Vec<&str> = s.lines().collect();
        lines.first().is_some_and(|l| l.contains("0: sh"))
            && lines.last().is_some_and(|l| l.contains("sh"))
    });
    // OSC 2.
    c.send("printf '\\033]2;build: ok\\007'\r");
    wait_until("title in list-panes", || {
        (pane_titles(&env) == ["build: ok"]).then_some(())
    });
    c.wait_screen("title on the border and the status line", |s| {
        let lines: Vec<&str> = s.lines().collect();
        lines.first().is_some_and(|l| l.contains("0: build: ok"))
            && lines.last().is_some_and(|l| l.contains("build: ok"))
    });
    // OSC 0 sets it too, and a title keeps its semicolons.
    c.send("printf '\\033]0;make; make test\\033\\\\'\r");
    wait_until("OSC 0 title", || {
        (pane_titles(&env) == ["make; make test"]).then_some(())
    });
    c.wait_screen("OSC 0 title on the border", |s| {
        s.lines()
            .next()
            .is_some_and(|l| l.contains("0: make; make test"))
    });
    // Control characters in a title (here a C1 CSI) never reach the user's terminal.
    let mark = c.raw().len();
    c.send("printf '\\033]2;x\\302\\23331my\\007'\r");
    wait_until("C1 title", || {
        (pane_titles(&env) == ["x31my"]).then_some(())
    });
    c.wait_for("x31my");
    assert!(!raw_since(&c, mark).contains('\u{9b}'));
    // An empty title gives the border back to the command.
    c.send("printf '\\033]2;\\007'\r");
    c.wait_screen("command label again", |s| {
        s.lines().next().is_some_and(|l| l.contains("0: sh"))
    });
    // Each pane has its own title; the status line follows the focused one.
    c.prefix("%");
    wait_until("two panes", || (env.panes().len() == 2).then_some(()));
    c.send("printf '\\033]2;right-side\\007'\r");
    c.wait_screen("the status line shows the focused pane's title", |s| {
        s.lines().last().is_some_and(|l| l.contains("right-side"))
    });
    assert_eq!(pane_titles(&env), ["", "right-side"]);
    // A long title is cut on the status line rather than pushing the label off it.
    c.send("printf '\\033]2;%s\\007' $(printf 'long%.0s' $(seq 1 20))\r");
    c.wait_screen("a long title cut on the status line", |s| {
        s.lines()
            .last()
            .is_some_and(|l| l.contains(&format!(" {}…", &"long".repeat(6)[..23])))
    });
}
