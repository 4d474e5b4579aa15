//! Rough edges of saved sessions (issue 18 §2): `calyx new -s NAME` when NAME is saved but not
//! running refuses, as tmux refuses a running one, and says how to restore or forget it (the
//! record is kept); an unnamed new session takes no saved name; the command line a restore
//! types into a pane's bash (an agent started from the shell, resumed) shows once, not echoed
//! by the terminal and then again by readline.

use std::path::Path;

use serde_json::Value;

use crate::common::gates::fixture_payload;
use crate::common::{calyx_bin, wait_until, Client, Env};
use crate::e2e_persist::{kill_9, ls, saved, wait_saved};

#[test]
fn new_with_a_saved_name_refuses_and_keeps_the_record() {
    let env = Env::new();
    env.ok(&["new", "-d", "-s", "work"]);
    env.ok(&["new", "-d"]);
    env.ok(&["kill-server"]);
    let before = saved(&env).expect("saved");

    let out = env.run(&["new", "-d", "-s", "work"]);
    assert!(!out.status.success(), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        said.contains("duplicate session: work")
            && said.contains("calyx attach -t work")
            && said.contains("calyx kill -t work"),
        "{said}"
    );
    // Attached, the same answer, and no session is made.
    let mut c = env.client(&["new", "-s", "work"], 24, 100);
    let exit = c.wait_exit();
    assert!(exit.contains("duplicate session: work"), "{exit}");
    // An unnamed session takes a name no saved session has.
    env.ok(&["new", "-d", "-s", "running"]);
    env.ok(&["new", "-d"]);
    let listed = ls(&env);
    assert!(
        listed.contains("work: 1 window, 1 pane, 0 agents (saved "),
        "{listed}"
    );
    let names: Vec<String> = env
        .panes()
        .iter()
        .filter_map(|p| p["session"].as_str().map(str::to_string))
        .collect();
    assert!(!names.contains(&"work".to_string()), "{names:?}");
    assert!(!names.contains(&"1".to_string()), "{names:?}");
    wait_saved(&env, &["work", "1", "running"]);
    let after = saved(&env).expect("saved");
    let record =
        |s: &calyx::persist::SavedState| s.sessions.iter().find(|s| s.name == "work").cloned();
    assert_eq!(record(&after), record(&before), "the saved record is kept");
}

/// The world's variables with bash as the shell and `bin` first on PATH.
fn bash_vars(env: &Env, bin: &Path) -> Vec<(String, String)> {
    let mut vars = env.vars();
    for (k, v) in vars.iter_mut() {
        match k.as_str() {
            "SHELL" => *v = "/bin/bash".into(),
            "PATH" => *v = format!("{}:{v}", bin.display()),
            _ => {}
        }
    }
    vars
}

#[test]
fn the_resume_line_typed_into_bash_shows_once() {
    if !Path::new("/bin/bash").exists() {
        return;
    }
    let env = Env::new();
    let bin = env.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let script = bin.join("claude");
    std::fs::write(
        &script,
        "#!/bin/sh\necho \"stand-in claude args: $*\"\nwhile read -r line; do echo \"$line\"; done\n",
    )
    .expect("script");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let vars = bash_vars(&env, &bin);
    let out = std::process::Command::new(calyx_bin())
        .args(["new", "-d", "-s", "edge", "-x", "120", "-y", "30"])
        .env_clear()
        .envs(vars.iter().cloned())
        .output()
        .expect("calyx new");
    assert!(out.status.success(), "{out:?}");
    env.ok(&["send-keys", "-t", "edge", "claude --model opus", "Enter"]);
    env.wait_capture("edge", "stand-in claude args: --model opus");
    let pane = env.panes().into_iter().next().expect("pane");
    let surface = pane["surface_id"].as_str().expect("surface").to_string();
    let mut payload = fixture_payload("claude-2.1.197-SessionStart.json");
    payload["session_id"] = Value::from("0nce-1d");
    env.hook_event(&surface, "claude-code", &payload);
    wait_until("the agent saved in front of bash", || {
        let state = saved(&env)?;
        let pane = &state
            .sessions
            .first()?
            .windows
            .first()?
            .panes
            .first()?
            .clone();
        (pane.agent.as_ref()?.session_id.as_deref() == Some("0nce-1d")
            && !pane.foreground.is_empty())
        .then_some(())
    });
    kill_9(&env);

    let _c = Client::spawn_with(&env, &["attach", "-t", "edge"], 30, 120, &vars);
    let shown = env.wait_capture(
        "edge",
        "stand-in claude args: --resume 0nce-1d --model opus",
    );
    assert_eq!(
        shown
            .matches("/claude --resume 0nce-1d --model opus")
            .count(),
        1,
        "the typed line shows once: {shown}"
    );
}
