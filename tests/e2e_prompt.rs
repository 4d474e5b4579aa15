//! End to end, issue 15 §9: the `:` prompt as a tmux user drives it, in a real client through
//! the real server: Tab completes commands, targets and directories from the live server; Up and
//! Down walk the commands run before, kept across prompts and in a private file.

use crate::common;

use common::{wait_until, Env};

/// The status line (the client's last row).
fn status(c: &common::Client, rows: u16, cols: u16) -> String {
    c.region(rows - 1, 0, 1, cols).join("")
}

#[test]
fn tab_completes_commands_and_targets_and_lists_several() {
    let env = Env::new();
    env.ok(&["new", "-d", "-s", "beta"]);
    let mut c = env.client(&["new", "-s", "alpha"], 24, 140);
    c.wait_for("$ ");
    c.prefix(":");
    // One candidate: completed, with a space after it.
    c.send("kill-ses\t");
    c.wait_screen("the command completed", |s| s.contains(": kill-session "));
    // A target from the live server.
    c.send("-t be\t");
    c.wait_screen("the session completed", |s| {
        s.contains(": kill-session -t beta ")
    });
    c.send("\r");
    wait_until("beta killed, alpha kept", || {
        let ls = env.ok(&["ls"]);
        (!ls.contains("beta:") && ls.contains("alpha:")).then_some(())
    });
    // Several candidates: their common start, the list on the status line, Tab cycles.
    c.prefix(":");
    c.send("kill-w\t");
    c.wait_screen("one kill-w command", |s| s.contains(": kill-window "));
    c.send("\x15kill-s\t");
    c.wait_screen("the candidates listed", |_| {
        let line = status(&c, 24, 140);
        line.contains(": kill-se") && line.contains("kill-server") && line.contains("kill-session")
    });
    c.send("\t");
    c.wait_screen("the first candidate", |_| {
        let line = status(&c, 24, 140);
        line.contains(": kill-server ") && line.contains("[kill-server]")
    });
    c.send("\t");
    c.wait_screen("the second candidate", |_| {
        status(&c, 24, 140).contains("[kill-session]")
    });
    // Escape leaves it all; the server and alpha still run.
    c.send("\x1b");
    c.wait_screen("the prompt closed", |_| {
        !status(&c, 24, 140).contains("kill-")
    });
    assert!(env.ok(&["ls"]).contains("alpha:"));
}

#[test]
fn tab_completes_a_directory_for_c() {
    let env = Env::new();
    let base = env.path().join("home");
    std::fs::create_dir_all(base.join("projects-xyz/inner")).expect("mkdir");
    let mut c = env.client(
        &["new", "-s", "alpha", "-c", &base.display().to_string()],
        24,
        140,
    );
    c.wait_for("$ ");
    c.prefix(":");
    // Relative to the focused pane's directory, a directory at a time.
    c.send("split-window -h -c proj\t");
    c.wait_screen("the directory completed", |s| {
        s.contains(": split-window -h -c projects-xyz/")
    });
    c.send("in\t\r");
    let want = base.join("projects-xyz/inner").display().to_string();
    wait_until("a pane started in the completed directory", || {
        env.panes()
            .into_iter()
            .any(|p| p["cwd"].as_str().map(|d| d.trim_end_matches('/')) == Some(want.as_str()))
            .then_some(())
    });
}

#[test]
fn up_and_down_walk_the_history_across_prompts_and_it_is_kept_privately() {
    let env = Env::new();
    let mut c = env.client(&["new", "-s", "alpha"], 24, 140);
    c.wait_for("$ ");
    for word in ["first-word", "second-word"] {
        c.prefix(":");
        c.send(format!("display-message {word}\r"));
        c.wait_screen("the message", |s| s.contains(word));
    }
    c.prefix(":");
    c.send("half typed");
    c.send("\x1b[A");
    c.wait_screen("the newest command", |_| {
        status(&c, 24, 140).contains(": display-message second-word")
    });
    c.send("\x1b[A");
    c.wait_screen("the one before", |_| {
        status(&c, 24, 140).contains(": display-message first-word")
    });
    c.send("\x1b[B\x1b[B");
    c.wait_screen("the typed line back", |_| {
        status(&c, 24, 140).contains(": half typed")
    });
    // The message shown now is second-word's: first-word on the status line is the recall.
    c.send("\x1b[A\x1b[A\r");
    c.wait_screen("the recalled command ran", |_| {
        status(&c, 24, 140).contains("first-word")
    });
    let file = env.path().join("state/calyx/prompt-history");
    let text = std::fs::read_to_string(&file).expect("history file");
    assert_eq!(
        text.lines().collect::<Vec<_>>(),
        [
            "display-message first-word",
            "display-message second-word",
            "display-message first-word"
        ]
    );
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(&file)
        .expect("history file")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}
