//! End to end, issue 15 §9: settings and keys changed at run time, from the `:` prompt of a real
//! client and from the CLI: set-option/show-options applied live, source-file, new-session and
//! rename-window from the prompt, list-keys, bind-key/unbind-key.

use crate::common;

use common::{wait_until, Env};

/// The status line (the client's last row).
fn status(c: &common::Client) -> String {
    c.region(23, 0, 1, 140).join("")
}

/// Runs `line` at the client's `:` prompt.
fn prompt(c: &mut common::Client, line: &str) {
    c.prefix(":");
    c.wait_screen("the prompt", |_| status(c).starts_with(":"));
    c.send(format!("{line}\r"));
}

fn window_names(env: &Env, session: &str) -> Vec<String> {
    env.panes()
        .into_iter()
        .filter(|p| p["session"] == session)
        .filter_map(|p| p["window_name"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn set_option_applies_live_and_checks_as_the_config_file_does() {
    let env = Env::new();
    let mut c = env.client(&["new", "-s", "alpha"], 24, 140);
    c.wait_for("$ ");
    assert_eq!(env.ok(&["show-options", "-v", "mouse"]), "true\n");
    prompt(&mut c, "set -g mouse off");
    wait_until("mouse off", || {
        (env.ok(&["show-options", "mouse"]) == "mouse false\n").then_some(())
    });
    // A switch without a value flips, as in tmux.
    env.ok(&["set-option", "mouse"]);
    assert_eq!(env.ok(&["show-options", "-v", "mouse"]), "true\n");
    // A new prefix works at once: C-a c makes a window, and C-b is typed into the pane.
    prompt(&mut c, "set-option -g prefix C-a");
    wait_until("the prefix changed", || {
        env.ok(&["show-options", "-v", "prefix"])
            .contains("C-a")
            .then_some(())
    });
    c.send("\x01c");
    wait_until("a second window from C-a c", || {
        (window_names(&env, "alpha").len() == 2).then_some(())
    });
    // The config file's own message for a bad value; the setting keeps its value.
    c.send("\x01:");
    c.wait_screen("the prompt", |_| status(&c).starts_with(":"));
    c.send("set-option base-index -5\r");
    c.wait_screen("the reader's message", |_| {
        status(&c).contains("expected a whole number of at least 0, found -5")
    });
    // Settings are global: -t is accepted and the answer says so.
    c.send("\x01:");
    c.wait_screen("the prompt", |_| status(&c).starts_with(":"));
    c.send("set -t alpha renumber-windows on\r");
    c.wait_screen("global", |_| status(&c).contains("global in calyx"));
    assert_eq!(env.ok(&["show", "-v", "renumber_windows"]), "true\n");
    // From the CLI too; -u gives the default back.
    env.ok(&["set-option", "-g", "base-index", "1"]);
    assert_eq!(env.ok(&["show-options", "-v", "base-index"]), "1\n");
    env.ok(&["set-option", "-u", "base-index"]);
    assert_eq!(env.ok(&["show-options", "-v", "base-index"]), "0\n");
    let bad = env.run(&["set-option", "mose", "on"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("did you mean `mouse`"));
}

#[test]
fn source_file_applies_a_file_and_reports_every_problem() {
    let env = Env::new();
    let file = env.path().join("home/extra.toml");
    std::fs::write(&file, "base_index = 1\nmouse = \"on\"\nbell = 5\n").expect("write");
    let mut c = env.client(
        &[
            "new",
            "-s",
            "alpha",
            "-c",
            &env.path().join("home").display().to_string(),
        ],
        24,
        140,
    );
    c.wait_for("$ ");
    // Relative to the pane's directory.
    prompt(&mut c, "source-file extra.toml");
    c.wait_screen("the first problem", |_| status(&c).contains("`mouse`"));
    // The whole message, every problem in it, in the message log.
    c.prefix("~");
    c.wait_screen("both problems", |s| {
        s.contains("`mouse`") && s.contains("`bell`")
    });
    c.send("q");
    // Everything valid applied.
    assert_eq!(env.ok(&["show-options", "-v", "base_index"]), "1\n");
    let missing = env.run(&["source-file", "/nonexistent/calyx.toml"]);
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no such file"));
}

#[test]
fn new_session_and_rename_window_from_the_prompt() {
    let env = Env::new();
    let mut c = env.client(&["new", "-s", "alpha"], 24, 140);
    c.wait_for("$ ");
    prompt(&mut c, "new-session -d -s delta");
    wait_until("delta made", || {
        env.ok(&["ls"]).contains("delta:").then_some(())
    });
    // `-d` leaves this client where it was (the redraw after the prompt closes may lag).
    c.wait_screen("still on alpha", |_| status(&c).contains("[alpha]"));
    prompt(&mut c, "new-session -s gamma");
    c.wait_screen("switched to gamma", |_| status(&c).contains("[gamma]"));
    prompt(&mut c, "rename-window logs");
    wait_until("the window renamed", || {
        (window_names(&env, "gamma") == ["logs"]).then_some(())
    });
}

#[test]
fn bind_key_at_run_time_with_and_without_the_prefix() {
    let env = Env::new();
    let mut c = env.client(&["new", "-s", "alpha"], 24, 140);
    c.wait_for("$ ");
    // Checked when bound: a bad command is refused at once.
    prompt(&mut c, "bind-key Q frobnicate");
    c.wait_screen("the refusal", |_| {
        status(&c).contains("unknown command: frobnicate")
    });
    // Without the prefix: M-w runs the command line.
    prompt(&mut c, "bind-key -n M-w new-window -n fromkey");
    wait_until("bound", || {
        env.ok(&["list-keys"])
            .contains("bind-key -n M-w new-window -n fromkey")
            .then_some(())
    });
    c.send("\x1bw");
    wait_until("the window from M-w", || {
        window_names(&env, "alpha")
            .contains(&"fromkey".to_string())
            .then_some(())
    });
    // After the prefix, from the CLI, to a table command.
    env.ok(&["bind-key", "Z", "new-window", "-n", "second"]);
    c.prefix("Z");
    wait_until("the window from prefix Z", || {
        window_names(&env, "alpha")
            .contains(&"second".to_string())
            .then_some(())
    });
    // -r: repeatable, as list-keys says.
    env.ok(&["bind-key", "-r", "j", "select-pane", "-D"]);
    assert!(env
        .ok(&["list-keys"])
        .contains("bind-key -r j select-pane -D"));
    // A reload keeps run-time bindings the file does not name; for Z, which it names, the
    // file's binding wins.
    env.write_config("mouse = true\n[keys]\nZ = \"zoom\"\n");
    env.ok(&["reload-config"]);
    let keys = env.ok(&["list-keys"]);
    assert!(keys.contains("bind-key -n M-w"), "{keys}");
    assert!(keys.contains("bind-key -r j select-pane -D"), "{keys}");
    assert!(keys.contains("bind-key Z resize-pane -Z"), "{keys}");
    assert!(!keys.contains("second"), "{keys}");
    // list-keys in the prompt: the key help overlay, run-time bindings in it.
    prompt(&mut c, "list-keys");
    c.wait_for("keys (prefix is C-b)");
    // Run-time bindings come last: page down to them.
    c.send("          ");
    c.wait_for("bound with bind-key");
    c.send("q");
    c.wait_screen("the overlay closed", |s| !s.contains("bound with bind-key"));
    // unbind-key: M-w reaches the pane again (the shell echoes nothing, no window is made).
    prompt(&mut c, "unbind-key -n M-w");
    wait_until("unbound", || {
        (!env.ok(&["list-keys"]).contains("M-w")).then_some(())
    });
    let before = window_names(&env, "alpha").len();
    c.send("\x1bw");
    c.send("echo still-here\r");
    c.wait_for("still-here");
    assert_eq!(window_names(&env, "alpha").len(), before);
}
