//! Sessions outlive the server (issue 18 §1-2): kill -9 the server, and `calyx ls` lists what
//! was saved, `calyx attach` brings back layouts, directories, `less` with its file and an agent
//! CLI resumed in its conversation; a bad state file is moved aside and the server starts; the
//! file parses whenever the server dies.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common::gates::fixture_payload;
use crate::common::{calyx_bin, wait_until, Env};

/// The state file of a test world.
pub(crate) fn sessions_file(env: &Env) -> PathBuf {
    env.path().join("state/calyx/sessions.json")
}

/// The state file, parsed as the server reads it.
pub(crate) fn saved(env: &Env) -> Option<calyx::persist::SavedState> {
    let text = std::fs::read_to_string(sessions_file(env)).ok()?;
    calyx::persist::file::parse(&text).ok()
}

/// Runs `calyx ARGS` in the world with `PATH` starting at `bin` (the stand-in CLIs).
fn ok_with_path(env: &Env, bin: &Path, args: &[&str]) -> String {
    let mut cmd = Command::new(calyx_bin());
    cmd.args(args).env_clear();
    for (k, v) in env.vars() {
        cmd.env(k, v);
    }
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = cmd.env("PATH", path).output().expect("run calyx");
    assert!(out.status.success(), "calyx {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// `calyx ls`'s listing, whatever its status (it fails when no session is running, even with
/// saved ones listed).
pub(crate) fn ls(env: &Env) -> String {
    String::from_utf8_lossy(&env.run(&["ls"]).stdout).to_string()
}

/// Kills the world's server with SIGKILL and waits until it is gone.
pub(crate) fn kill_9(env: &Env) {
    let pid = env.server_pid();
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGKILL,
    );
    wait_until("the server gone", || {
        (!Path::new(&format!("/proc/{pid}/status")).exists()
            || std::fs::read_to_string(format!("/proc/{pid}/status"))
                .is_ok_and(|s| s.contains("State:\tZ")))
        .then_some(())
    });
    // A zombie leader can still have threads exiting, whose shared descriptor table keeps the
    // listening socket open: a client connecting then is reset. Gone means refusing.
    let socket = env.path().join("run/calyx/server.sock");
    wait_until("the socket refuses connections", || {
        std::os::unix::net::UnixStream::connect(&socket)
            .is_err()
            .then_some(())
    });
}

/// What list-panes says about the layout: window, index, size and directory of each pane.
fn geometry(env: &Env) -> Vec<(u64, u64, u64, u64, String)> {
    let mut out: Vec<_> = env
        .panes()
        .iter()
        .map(|p| {
            (
                p["window"].as_u64().unwrap_or(99),
                p["index"].as_u64().unwrap_or(99),
                p["rows"].as_u64().unwrap_or(0),
                p["cols"].as_u64().unwrap_or(0),
                p["cwd"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

/// A stand-in for Claude Code: a script named `claude` that prints its arguments and waits
/// (staying itself, so /proc shows its argv as a real CLI's).
fn stand_in_claude(env: &Env) -> PathBuf {
    let bin = env.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let script = bin.join("claude");
    std::fs::write(&script, "#!/bin/sh\necho \"stand-in claude args: $*\"\nwhile read -r line; do echo \"$line\"; done\n")
        .expect("script");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    bin
}

#[test]
fn kill_9_then_attach_restores_layouts_cwds_less_and_the_agent() {
    let env = Env::new();
    let bin = stand_in_claude(&env);
    let a = env.path().join("a dir");
    let b = env.path().join("b");
    for d in [&a, &b] {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    std::fs::write(b.join("notes.txt"), "restored notes line\n").expect("notes");
    let (a, b) = (a.display().to_string(), b.display().to_string());
    // Session one: three panes of two shapes in window 0, `less` in window 1.
    ok_with_path(
        &env,
        &bin,
        &["new", "-d", "-s", "one", "-c", &a, "-x", "100", "-y", "30"],
    );
    env.ok(&["split", "-t", "one", "-h", "-c", &b]);
    env.ok(&["split", "-t", "one", "-v", "-c", &a]);
    env.ok(&["resize-pane", "-t", "one", "-U", "3"]);
    env.ok(&["new-window", "-t", "one", "-c", &b]);
    env.ok(&["send-keys", "-t", "one:1", "less notes.txt", "Enter"]);
    env.wait_capture("one:1", "restored notes line");
    // Session two: the stand-in CLI with an agent row from a real hook payload.
    ok_with_path(
        &env,
        &bin,
        &["new", "-d", "-s", "two", "-c", &b, "-x", "100", "-y", "30"],
    );
    env.ok(&["split", "-t", "two", "-v", "-c", &a]);
    let agent_pane = env
        .panes()
        .into_iter()
        .find(|p| p["session"] == "two" && p["index"] == 1)
        .expect("pane two:0.1");
    let surface = agent_pane["surface_id"]
        .as_str()
        .expect("surface")
        .to_string();
    let id = agent_pane["id"].as_str().expect("id").to_string();
    env.ok(&[
        "send-keys",
        "-t",
        &id,
        "claude --model opus --verbose",
        "Enter",
    ]);
    env.wait_capture(&id, "stand-in claude args: --model opus --verbose");
    let mut payload = fixture_payload("claude-2.1.197-SessionStart.json");
    payload["session_id"] = Value::from("5e55-1d");
    payload["cwd"] = Value::from(a.clone());
    env.hook_event(&surface, "claude-code", &payload);
    let before = geometry(&env);
    // Saved within a second of the last change: wait for the agent and less to be in the file.
    wait_until("the agent and less saved", || {
        let state = saved(&env)?;
        let panes: Vec<_> = state
            .sessions
            .iter()
            .flat_map(|s| &s.windows)
            .flat_map(|w| &w.panes)
            .collect();
        let agent = panes.iter().any(|p| {
            p.agent
                .as_ref()
                .is_some_and(|a| a.session_id.as_deref() == Some("5e55-1d"))
        });
        let less = panes
            .iter()
            .any(|p| p.foreground.first().is_some_and(|f| f == "less"));
        (agent && less).then_some(())
    });
    kill_9(&env);

    let out = env.run(&["ls"]);
    assert!(!out.status.success(), "nothing runs: {out:?}");
    let ls = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        ls.contains("one: 2 windows, 4 panes, 0 agents (saved ")
            && ls.contains("two: 1 window, 2 panes, 1 agent (saved "),
        "{ls}"
    );
    assert!(ls.contains(", not running)"), "{ls}");

    let _one = env.client(&["attach", "-t", "one"], 30, 100);
    env.wait_capture("one:1", "restored notes line");
    let _two = env.client(&["attach", "-t", "two"], 30, 100);
    let resumed = wait_until("session two restored", || {
        env.panes()
            .into_iter()
            .find(|p| p["session"] == "two" && p["index"] == 1)
    });
    let resumed = resumed["id"].as_str().expect("id").to_string();
    env.wait_capture(
        &resumed,
        "stand-in claude args: --resume 5e55-1d --model opus",
    );
    assert_eq!(geometry(&env), before);
    let less = env
        .panes()
        .into_iter()
        .find(|p| p["session"] == "one" && p["window"] == 1)
        .expect("less pane");
    assert_eq!(less["command"], "less");
    // Both are running now: nothing is left "not running".
    let ls = env.ok(&["ls"]);
    assert!(!ls.contains("not running"), "{ls}");
}

#[test]
fn bad_state_files_are_moved_aside_and_the_server_starts() {
    let future = r#"{"version": 99, "saved_at": 1, "sessions": []}"#;
    for text in ["{\"version\": 1, \"sess", "not json at all", future] {
        let env = Env::new();
        std::fs::create_dir_all(env.path().join("state/calyx")).expect("state dir");
        std::fs::write(sessions_file(&env), text).expect("write");
        env.ok(&["new", "-d", "-s", "fresh"]);
        let moved = wait_until("the bad file moved aside", || {
            std::fs::read_dir(env.path().join("state/calyx"))
                .ok()?
                .flatten()
                .find(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .starts_with("sessions.json.bad-")
                })
                .map(|e| e.path())
        });
        assert_eq!(std::fs::read_to_string(moved).expect("aside"), text);
        assert!(env.ok(&["ls"]).contains("fresh"));
        let doctor = env.run(&["doctor"]);
        let doctor = String::from_utf8_lossy(&doctor.stdout).to_string();
        assert!(doctor.contains("was unusable and moved aside"), "{doctor}");
        // The server saves over the bad file's place a file that parses.
        wait_until("a good file saved", || {
            saved(&env).filter(|s| s.sessions.iter().any(|s| s.name == "fresh"))
        });
    }
}

#[test]
fn kill_forgets_a_saved_session_and_kill_server_keeps_the_rest() {
    let env = Env::new();
    env.ok(&["new", "-d", "-s", "keep"]);
    env.ok(&["new", "-d", "-s", "drop"]);
    env.ok(&["kill-server"]);
    let ls = ls(&env);
    assert!(
        ls.contains("keep: 1 window") && ls.contains("drop: 1 window"),
        "{ls}"
    );
    // No server runs: the record is forgotten in the file.
    env.ok(&["kill", "-t", "drop"]);
    let ls = self::ls(&env);
    assert!(ls.contains("keep:") && !ls.contains("drop:"), "{ls}");
    // With a server running, it forgets a record it did not restore.
    env.ok(&["new", "-d", "-s", "other"]);
    env.ok(&["kill", "-t", "keep"]);
    let ls = env.ok(&["ls"]);
    assert!(!ls.contains("keep:") && ls.contains("other:"), "{ls}");
    env.ok(&["kill-server", "--forget"]);
    let out = env.run(&["ls"]);
    assert!(!out.status.success(), "nothing to list: {out:?}");
    assert!(saved(&env).is_some_and(|s| s.sessions.is_empty()));
}

#[test]
fn the_file_parses_whenever_the_server_is_killed() {
    let env = Env::new();
    for round in 0..8 {
        env.ok(&["new", "-d", "-s", &format!("s{round}")]);
        for _ in 0..3 {
            env.ok(&["split", "-t", &format!("s{round}"), "-h"]);
            env.ok(&["select-layout", "-t", &format!("s{round}"), "-n"]);
        }
        // Kill at a different point of the save cycle each round.
        std::thread::sleep(std::time::Duration::from_millis(130 * round));
        kill_9(&env);
        let text = std::fs::read_to_string(sessions_file(&env)).unwrap_or_default();
        if !text.is_empty() {
            calyx::persist::file::parse(&text)
                .unwrap_or_else(|e| panic!("round {round}: {e}: {text}"));
        }
        // Nothing but the file: no temp files are left to confuse the next start.
        let leftovers: Vec<String> = std::fs::read_dir(env.path().join("state/calyx"))
            .expect("state dir")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains("bad-"))
            .collect();
        assert!(leftovers.is_empty(), "round {round}: {leftovers:?}");
    }
    let state = saved(&env).expect("saved sessions");
    assert!(!state.sessions.is_empty());
}

#[test]
fn the_chooser_lists_a_saved_session_and_enter_restores_it() {
    let env = Env::new();
    let dir = env.path().join("kept");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let dir = dir.display().to_string();
    env.ok(&["new", "-d", "-s", "kept", "-c", &dir]);
    env.ok(&["split", "-t", "kept", "-h", "-c", &dir]);
    env.ok(&["kill-server"]);
    let mut c = env.client(&["new", "-s", "live"], 24, 100);
    c.wait_for("[live]");
    c.prefix("s");
    c.wait_for("saved");
    c.wait_for("not running");
    c.send("j");
    c.send("\r");
    c.wait_for("[kept]");
    let panes: Vec<_> = env
        .panes()
        .into_iter()
        .filter(|p| p["session"] == "kept")
        .collect();
    assert_eq!(panes.len(), 2);
    assert!(panes.iter().all(|p| p["cwd"] == dir.as_str()), "{panes:?}");
}

/// Waits until the state file holds sessions named `names`.
pub(crate) fn wait_saved(env: &Env, names: &[&str]) {
    wait_until(&format!("{names:?} saved"), || {
        let state = saved(env)?;
        names
            .iter()
            .all(|n| state.sessions.iter().any(|s| s.name == *n))
            .then_some(())
    });
}

#[test]
fn restore_at_start_brings_every_saved_session_back_and_off_brings_none() {
    let env = Env::new();
    env.write_config("[persistence]\nrestore = \"at-start\"\n");
    env.ok(&["new", "-d", "-s", "a"]);
    env.ok(&["new", "-d", "-s", "b"]);
    wait_saved(&env, &["a", "b"]);
    kill_9(&env);
    env.ok(&["new", "-d", "-s", "c"]);
    let ls = env.ok(&["ls"]);
    for name in ["a", "b", "c"] {
        assert!(ls.contains(&format!("{name}: 1 window, 1 pane [")), "{ls}");
    }
    assert!(!ls.contains("not running"), "{ls}");

    env.write_config("[persistence]\nrestore = \"off\"\n");
    wait_saved(&env, &["a", "b", "c"]);
    kill_9(&env);
    env.ok(&["new", "-d", "-s", "d"]);
    let ls = env.ok(&["ls"]);
    assert!(ls.contains("a: 1 window, 1 pane, 0 agents (saved "), "{ls}");
    let attach = env.run(&["attach", "-t", "a"]);
    assert!(!attach.status.success(), "{attach:?}");
    assert!(env
        .ok(&["ls"])
        .contains("a: 1 window, 1 pane, 0 agents (saved "));
}

#[test]
fn attach_without_a_target_restores_the_most_recently_saved_session() {
    let env = Env::new();
    env.ok(&["new", "-d", "-s", "solo"]);
    wait_saved(&env, &["solo"]);
    kill_9(&env);
    let c = env.client(&["attach"], 24, 80);
    c.wait_for("[solo]");
    assert!(env.ok(&["ls"]).starts_with("solo: 1 window, 1 pane ["));
}
