//! End to end: a session takes the size of its client, so resizing the client's terminal
//! resizes the pane; making it narrower or shorter and then growing it back must give the pane
//! its content back (the user's two reports: a line cut at the narrow width, and rows blanked
//! at the top after a shrink).

use crate::common;

use common::{wait_until, Env};

fn capture(env: &Env) -> String {
    env.ok(&["capture", "-t", "%1"])
}

#[test]
fn a_line_cut_by_a_narrow_pane_comes_back_when_it_widens() {
    let env = Env::new();
    let mut c = env.client(&[], 30, 160);
    c.wait_for("$ ");
    // The text is built by the shell, so the typed command line does not contain it.
    c.send("printf '\\033[H\\033[2J'; a=abcdefghijklmnopqrstuvwxyz; for i in 1 2 3; do echo \"row $i ${a}0123456789\"; done\r");
    let before = env.wait_capture("%1", "row 3 abcdefghijklmnopqrstuvwxyz0123456789");
    common::resize_session(&env, &mut c, 30, 20);
    // Narrow: the lines wrap instead of being cut (the pane is a little narrower than the
    // client: its border).
    let narrow = capture(&env);
    assert!(narrow.lines().all(|l| l.len() <= 20), "{narrow}");
    assert!(
        narrow
            .replace('\n', "")
            .contains("row 1 abcdefghijklmnopqrstuvwxyz0123456789row 2"),
        "{narrow}"
    );
    common::resize_session(&env, &mut c, 30, 160);
    let after = capture(&env);
    assert!(
        after
            .lines()
            .any(|l| l == "row 1 abcdefghijklmnopqrstuvwxyz0123456789"),
        "{after}"
    );
    assert_eq!(after, before);
}

#[test]
fn rows_pushed_up_by_a_short_pane_come_back_when_it_grows() {
    let env = Env::new();
    let mut c = env.client(&[], 31, 100);
    c.wait_for("$ ");
    c.send("printf '\\033[H\\033[2J'; seq 1 26\r");
    let before = wait_until("seq output", || {
        let text = capture(&env);
        text.lines().any(|l| l == "26").then_some(text)
    });
    assert!(before.starts_with("1\n2\n"), "{before}");
    common::resize_session(&env, &mut c, 10, 100);
    let short = capture(&env);
    assert!(!short.contains("\n17\n"), "the top rows went up: {short}");
    common::resize_session(&env, &mut c, 31, 100);
    let after = capture(&env);
    assert!(
        after.starts_with("1\n2\n"),
        "no blank rows at the top: {after}"
    );
    assert_eq!(after, before);
}
