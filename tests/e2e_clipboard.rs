//! End to end: a pane's OSC 52 clipboard write (issue 13, a hostile pane). By default
//! (`set_clipboard = "external"`) it fills calyx's paste buffer and never reaches the user's
//! terminal; with "on" it reaches the terminal only from the focused pane, with a status-line
//! message, while a background pane's write still only fills the paste buffer.

use crate::common;

use base64::Engine;
use common::{wait_until, Client, Env};

/// A pane program that, for each line it reads, sets the clipboard to that line with OSC 52
/// and then prints `sent LINE`.
fn copier(env: &Env) -> String {
    let path = env.path().join("copier.sh");
    let body = concat!(
        "while read -r line; do\n",
        "  printf '\\033]52;c;%s\\007' \"$(printf %s \"$line\" | base64 | tr -d '\\n')\"\n",
        "  echo \"sent $line\"\n",
        "done\n",
    );
    std::fs::write(&path, body).expect("write script");
    path.to_string_lossy().to_string()
}

/// Makes pane `target` copy `text` and waits until it says so.
fn copy_from(env: &Env, target: &str, text: &str) {
    env.ok(&["send-keys", "-t", target, "-l", text]);
    env.ok(&["send-keys", "-t", target, "Enter"]);
    env.wait_capture(target, &format!("sent {text}"));
}

fn b64(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(text)
}

fn raw(c: &Client) -> String {
    String::from_utf8_lossy(&c.raw()).to_string()
}

#[test]
fn by_default_a_pane_fills_the_paste_buffer_and_never_the_terminal_clipboard() {
    let env = Env::new();
    let script = copier(&env);
    let mut c = env.client(&["new", "-s", "clip", "--", "sh", &script], 24, 90);
    c.wait_for("[clip]");
    let pane = env.panes()[0]["id"].as_str().unwrap_or("%1").to_string();
    copy_from(&env, &pane, "hostile-payload-1");
    c.wait_for("sent hostile-payload-1");
    let out = raw(&c);
    assert!(
        !out.contains("\x1b]52"),
        "a pane's OSC 52 reached the user's terminal: {out:?}"
    );
    // The paste buffer has it: prefix ] types it into a pane (a shell, which echoes it).
    env.ok(&["new-window", "-t", "clip", "--", "sh"]);
    c.wait_screen("the new window", |s| !s.contains("sent hostile"));
    c.prefix("]");
    let second = wait_until("the second pane", || {
        env.panes()
            .iter()
            .filter_map(|p| p["id"].as_str().map(str::to_string))
            .find(|id| *id != pane)
    });
    env.wait_capture(&second, "hostile-payload-1");
}

#[test]
fn with_on_only_the_focused_pane_reaches_the_terminal() {
    let env = Env::new();
    env.write_config("set_clipboard = \"on\"\n");
    let script = copier(&env);
    let c = env.client(&["new", "-s", "clip", "--", "sh", &script], 24, 90);
    c.wait_for("[clip]");
    let focused = env.panes()[0]["id"].as_str().unwrap_or("%1").to_string();
    // A second window, left in the background (-d).
    env.ok(&["new-window", "-d", "-t", "clip", "--", "sh", &script]);
    let background = wait_until("the background pane", || {
        env.panes()
            .iter()
            .filter_map(|p| p["id"].as_str().map(str::to_string))
            .find(|id| *id != focused)
    });
    copy_from(&env, &focused, "from-the-focused-pane");
    wait_until("the focused pane's OSC 52 on the terminal", || {
        raw(&c)
            .contains(&format!("\x1b]52;c;{}\x07", b64("from-the-focused-pane")))
            .then_some(())
    });
    c.wait_for(&format!("pane {focused} set the clipboard (21 bytes)"));
    copy_from(&env, &background, "from-the-background-pane");
    // A later write from the focused pane orders the check: the background pane's write was
    // handled before it.
    copy_from(&env, &focused, "fence");
    wait_until("the fence's OSC 52", || {
        raw(&c)
            .contains(&format!("\x1b]52;c;{}\x07", b64("fence")))
            .then_some(())
    });
    let out = raw(&c);
    assert!(
        !out.contains(&b64("from-the-background-pane")),
        "a background pane set the user's clipboard: {out:?}"
    );
    assert!(!out.contains(&format!("pane {background} set the clipboard")));
}

#[test]
fn a_reload_switches_the_mode_at_once() {
    let env = Env::new();
    let script = copier(&env);
    let c = env.client(&["new", "-s", "clip", "--", "sh", &script], 24, 90);
    c.wait_for("[clip]");
    let pane = env.panes()[0]["id"].as_str().unwrap_or("%1").to_string();
    copy_from(&env, &pane, "while-external");
    env.write_config("set_clipboard = \"on\"\n");
    env.ok(&["reload-config"]);
    copy_from(&env, &pane, "while-on");
    wait_until("the OSC 52 once \"on\"", || {
        raw(&c)
            .contains(&format!("\x1b]52;c;{}\x07", b64("while-on")))
            .then_some(())
    });
    env.write_config("set_clipboard = \"off\"\n");
    env.ok(&["reload-config"]);
    copy_from(&env, &pane, "while-off");
    c.wait_for("sent while-off");
    let out = raw(&c);
    assert!(!out.contains(&b64("while-external")), "{out:?}");
    assert!(!out.contains(&b64("while-off")), "{out:?}");
}
