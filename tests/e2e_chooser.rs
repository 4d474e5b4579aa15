//! End to end: the two choosers (issue 15 §12), as tmux has them: `prefix s` lists one row per
//! session (its windows shown with Right or `+`, hidden with Left or `-`), `prefix w` lists
//! every session's windows, and both preview the selected row's pane (its window's focused
//! pane) in a box under the list, read here on the client's own terminal; `x` kills the
//! selected row after asking.

use crate::common;

use common::{wait_until, Env};

#[test]
fn sessions_and_windows_choosers_differ_and_preview_the_selected_pane() {
    let env = Env::new();
    env.ok(&["new", "-d", "-s", "beta", "--", "sh"]);
    env.ok(&["new-window", "-d", "-t", "beta", "-n", "logs", "--", "sh"]);
    env.ok(&["send-keys", "-t", "beta:0", "echo BETA-''MARK", "Enter"]);
    env.wait_capture("beta:0", "BETA-MARK");
    let mut c = env.client(&["new", "-s", "alpha"], 30, 120);
    c.wait_for("[alpha]");
    env.ok(&["send-keys", "-t", "alpha", "echo ALPHA-''MARK", "Enter"]);
    c.wait_for("ALPHA-MARK");

    // prefix s: one row per session, no window rows; the current session is selected and
    // its pane previewed under the list.
    c.prefix("s");
    let screen = c.wait_for("sessions and windows");
    assert!(screen.contains("beta  2 windows"), "{screen}");
    assert!(!screen.contains("1: logs"), "{screen}");
    let (list_row, _) = c.wait_find("beta  2 windows");
    let (title_row, _) = c.wait_find("╭ alpha ");
    assert!(
        title_row > list_row,
        "the preview's box is under the list:\n{screen}"
    );
    // Down: beta's pane in the preview.
    c.send("j");
    c.wait_for("BETA-MARK");
    // Right shows beta's windows, Left hides them again.
    c.send("\x1b[C");
    c.wait_for("1: logs");
    c.send("\x1b[D");
    wait_until("beta's windows hidden", || {
        (!c.screen().contains("1: logs")).then_some(())
    });
    c.send("q");
    wait_until("the chooser closed", || {
        (!c.screen().contains("sessions and windows")).then_some(())
    });

    // prefix w: every session's windows, the current window selected.
    c.prefix("w");
    let screen = c.wait_for("1: logs");
    assert!(screen.contains("sessions and windows"), "{screen}");
    let windows = screen.lines().filter(|l| l.contains(": sh")).count();
    assert!(windows >= 2, "beta's windows and alpha's listed:\n{screen}");
    // G: the last row, beta's "logs", previewed under its own title; Enter shows it.
    c.send("G");
    c.wait_find("╭ 1: logs ");
    c.send("\r");
    c.wait_for("[beta]");
    let shown = env.ok(&["display-message", "-p", "-t", "beta", "#{window_index}"]);
    assert_eq!(shown.trim(), "1");

    // x asks before killing the selected row: `n` keeps a window, `y` kills a session.
    env.ok(&["new", "-d", "-s", "gamma"]);
    c.prefix("w");
    c.wait_for("sessions and windows");
    c.send("x");
    c.wait_for("kill-window 1? (y/n)");
    c.send("n");
    wait_until("the question gone", || {
        (!c.screen().contains("kill-window 1?")).then_some(())
    });
    assert_eq!(
        env.ok(&["list-panes", "-t", "beta", "-F", "#{window_index}"])
            .lines()
            .count(),
        2
    );
    c.prefix("s");
    c.wait_for("sessions and windows");
    c.send("G");
    c.wait_find("╭ gamma ");
    c.send("x");
    c.wait_for("kill-session gamma? (y/n)");
    c.send("y");
    wait_until("gamma killed, beta and alpha kept", || {
        let ls = env.ok(&["ls"]);
        (!ls.contains("gamma:") && ls.contains("beta:") && ls.contains("alpha:")).then_some(())
    });
}
