//! End to end: graphemes whose width terminals disagree on (ZWJ sequences, VS16, skin tones,
//! flags) cannot corrupt the rest of the row on the user's screen (issue 15, item 3). The outer
//! terminal is real tmux 3.3a, which counts the family as 6 columns and the VS16 heart as 1
//! where calyx counts 2 and 2; what it shows is read with `tmux capture-pane`.

use crate::common;

use std::path::PathBuf;
use std::process::{Command, Output};

use common::{calyx_bin, wait_until, Env};

const EMOJI_LINE: &str = "emoji: \u{1f600} \u{1f44d}\u{1f3fd} \u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467} \u{1f1ef}\u{1f1f5} \u{2764}\u{fe0f} end|XYZ";

/// A script that fills a row of the pane with `o`, waits for Enter, then prints the emoji line
/// over it (and clears the rest of the row, as far as the pane is concerned).
fn emoji_script(env: &Env) -> PathBuf {
    let script = env.path().join("emoji.sh");
    std::fs::write(
        &script,
        format!(
            "cols=$(stty size | cut -d' ' -f2)\nstty -echo\nprintf 'o%.0s' $(seq 2 $cols); printf '\\n'\nread go\nprintf '\\033[1A%s\\033[K\\n' '{EMOJI_LINE}'\nstty echo\n"
        ),
    )
    .expect("write script");
    script
}

/// A tmux server of the test's own, its socket in the test's directory.
struct Tmux {
    socket: PathBuf,
}

impl Tmux {
    fn run(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("run tmux")
    }

    /// What tmux's pane (the calyx client) shows, a line per row.
    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-t", "outer"]).stdout)
            .to_string()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

#[test]
fn an_emoji_line_over_a_longer_one_leaves_nothing_stale_in_tmux() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let env = Env::new();
    env.ok(&["new", "-d", "-s", "e"]);
    let script = emoji_script(&env);
    let tmux = Tmux {
        socket: env.path().join("tmux.sock"),
    };
    let mut client = vec!["env".to_string(), "-i".to_string()];
    for (k, v) in env.vars() {
        let v = if k == "TERM" { "screen".to_string() } else { v };
        client.push(format!("{k}={v}"));
    }
    client.push(calyx_bin().display().to_string());
    client.extend(["attach".to_string(), "-t".to_string(), "e".to_string()]);
    let client: Vec<&str> = client.iter().map(String::as_str).collect();
    let mut args = vec![
        "-f",
        "/dev/null",
        "new-session",
        "-d",
        "-s",
        "outer",
        "-x",
        "100",
        "-y",
        "20",
    ];
    args.extend(client);
    let started = tmux.run(&args);
    assert!(started.status.success(), "{started:?}");
    wait_until("the calyx client drawn in tmux", || {
        tmux.screen().contains("[e]").then_some(())
    });
    env.ok(&[
        "send-keys",
        "-t",
        "%1",
        &format!("sh {}", script.display()),
        "Enter",
    ]);
    // The older line is on the user's screen first; then the emoji line is printed over it.
    wait_until("the older line drawn in tmux", || {
        tmux.screen().contains(&"o".repeat(90)).then_some(())
    });
    env.ok(&["send-keys", "-t", "%1", "Enter"]);
    env.wait_capture("%1", "end|XYZ");
    let screen = wait_until("the emoji line drawn in tmux", || {
        let s = tmux.screen();
        s.lines()
            .any(|l| l.contains("end|XYZ") && !l.contains("printf"))
            .then_some(s)
    });
    assert_nothing_stale_after_the_emoji_line(&screen);
}

#[test]
fn an_emoji_line_over_a_longer_one_leaves_nothing_stale_in_a_grapheme_aware_terminal() {
    // The harness's own terminal (vt100, which counts the family and the heart as calyx does).
    let env = Env::new();
    env.ok(&["new", "-d", "-s", "e"]);
    let script = emoji_script(&env);
    let c = env.client(&["attach", "-t", "e"], 20, 100);
    c.wait_for("[e]");
    env.ok(&[
        "send-keys",
        "-t",
        "%1",
        &format!("sh {}", script.display()),
        "Enter",
    ]);
    c.wait_for(&"o".repeat(90));
    env.ok(&["send-keys", "-t", "%1", "Enter"]);
    let screen = c.wait_screen("the emoji line", |s| {
        s.lines()
            .any(|l| l.contains("end|XYZ") && !l.contains("printf"))
    });
    assert_nothing_stale_after_the_emoji_line(&screen);
}

/// Only blanks and the pane's right border follow the emoji line's text: no 'o' of the older
/// line, which filled the row (calyx blanks it to the row's end; a cursor the emoji moved would
/// leave its end standing).
fn assert_nothing_stale_after_the_emoji_line(screen: &str) {
    let row = screen
        .lines()
        .find(|l| l.contains("end|XYZ") && !l.contains("printf"))
        .unwrap_or_default();
    let after = &row[row.find("XYZ").map_or(0, |i| i + 3)..];
    assert!(
        after.chars().all(|c| matches!(c, ' ' | '│' | '┃')),
        "stale cells after the emoji line: {row:?}\n{screen}"
    );
}
