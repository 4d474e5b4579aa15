//! `[persistence] scrollback_lines` (issue 18 §1): a graceful stop (`kill-server`) keeps each
//! pane's last lines, redacted; the restored pane shows them dimmed above its new shell, under
//! `── restored <date time> ──`, where `capture` finds them. A crash (kill -9) keeps none, not
//! even the lines an earlier graceful stop kept and a restore already showed.

use crate::common::{wait_until, Env};
use crate::e2e_persist::{kill_9, saved, sessions_file, wait_saved};

/// The secret the pane prints: a value `DB_PASSWORD=` assigns (typed as a `printf`, so the
/// command line does not show it whole).
const SECRET: &str = "zq9x8c7v6b5n4m3l";

fn capture(env: &Env, target: &str, ansi: bool) -> String {
    let mut args = vec!["capture", "-t", target];
    if ansi {
        args.push("--ansi");
    }
    env.ok(&args)
}

#[test]
fn a_graceful_stop_keeps_the_last_lines_redacted_and_a_crash_keeps_none() {
    let env = Env::new();
    env.ok(&["new", "-d", "-s", "hist", "-x", "100", "-y", "30"]);
    env.ok(&[
        "send-keys",
        "-t",
        "hist",
        "echo HIST-$((6*7))-MARK; echo DB_PASSWORD=$(printf 'zq%s' 9x8c7v6b5n4m3l)",
        "Enter",
    ]);
    env.wait_capture("hist", &format!("DB_PASSWORD={SECRET}"));
    env.ok(&["kill-server"]);

    // Saved with the record, redacted, in a file only the user reads.
    let text = std::fs::read_to_string(sessions_file(&env)).expect("state file");
    assert!(!text.contains(SECRET), "the secret was saved: {text}");
    let state = saved(&env).expect("saved state");
    let history = state.sessions[0].windows[0].panes[0]
        .history
        .clone()
        .expect("history saved at kill-server");
    assert!(
        history.lines.iter().any(|l| l == "HIST-42-MARK"),
        "{history:?}"
    );
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(sessions_file(&env))
        .expect("meta")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);

    let _c = env.client(&["attach", "-t", "hist"], 30, 100);
    let shown = env.wait_capture("hist", "── restored ");
    let lines: Vec<&str> = shown.lines().collect();
    let mark = lines.iter().position(|l| *l == "HIST-42-MARK");
    let restored = lines.iter().position(|l| l.starts_with("── restored 20"));
    assert!(
        mark.is_some() && restored.is_some() && mark < restored,
        "the old lines above the restored line: {shown}"
    );
    assert!(shown.contains("DB_PASSWORD=[REDACTED]"), "{shown}");
    assert!(!shown.contains(SECRET), "{shown}");
    // Dimmed, so they read as the past.
    let ansi = capture(&env, "hist", true);
    assert!(ansi.contains("\x1b[2mHIST-42-MARK"), "{ansi:?}");
    // The restarted shell runs below them.
    env.ok(&["send-keys", "-t", "hist", "echo AFTER-$((2+3))", "Enter"]);
    env.wait_capture("hist", "AFTER-5");

    // A crash now: the periodic saves of a running server carry no history.
    wait_saved(&env, &["hist"]);
    wait_until("the running session saved without history", || {
        let state = saved(&env)?;
        state.sessions[0].windows[0].panes[0]
            .history
            .is_none()
            .then_some(())
    });
    kill_9(&env);
    let _c = env.client(&["attach", "-t", "hist"], 30, 100);
    // The restored shell answers (the client may still be starting the server).
    wait_until("the session restored", || {
        let typed = env.run(&["send-keys", "-t", "hist", "echo BACK-$((3+4))", "Enter"]);
        typed.status.success().then_some(())
    });
    let shown = env.wait_capture("hist", "BACK-7");
    assert!(
        !shown.contains("restored") && !shown.contains("HIST-42-MARK"),
        "nothing is shown after a crash: {shown}"
    );
}

#[test]
fn scrollback_lines_zero_keeps_no_history() {
    let env = Env::new();
    env.write_config("[persistence]\nscrollback_lines = 0\n");
    env.ok(&["new", "-d", "-s", "off"]);
    env.ok(&["send-keys", "-t", "off", "echo OFF-$((6*7))-MARK", "Enter"]);
    env.wait_capture("off", "OFF-42-MARK");
    env.ok(&["kill-server"]);
    let state = saved(&env).expect("saved state");
    assert!(state.sessions[0].windows[0].panes[0].history.is_none());
    let text = std::fs::read_to_string(sessions_file(&env)).expect("state file");
    assert!(!text.contains("OFF-42-MARK"), "{text}");
}
