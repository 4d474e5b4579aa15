//! End to end: a real server, real clients in PTYs, real keys; assertions on what the user's
//! terminal shows.

use crate::common;

use common::{wait_until, wait_until_within, Env};

fn pane_ids(env: &Env) -> Vec<String> {
    env.panes()
        .iter()
        .filter_map(|p| p["id"].as_str().map(str::to_string))
        .collect()
}

fn focused(env: &Env) -> String {
    env.panes()
        .iter()
        .find(|p| p["focused"].as_bool() == Some(true))
        .and_then(|p| p["id"].as_str().map(str::to_string))
        .unwrap_or_default()
}

#[test]
fn split_focus_zoom_and_close_with_keys() {
    let env = Env::new();
    let mut c = env.client(&[], 30, 100);
    c.wait_for("$ ");
    c.send("echo left-pane\r");
    c.wait_for("left-pane");
    c.prefix("%");
    wait_until("second pane", || (pane_ids(&env).len() == 2).then_some(()));
    c.send("echo right-pane\r");
    let screen = c.wait_for("right-pane");
    // Side by side: both markers on the same row band, left one first.
    let row = screen
        .lines()
        .find(|l| l.contains("right-pane"))
        .unwrap_or_default()
        .to_string();
    assert!(row.find("│").is_some(), "bordered panes: {screen}");
    let ids = pane_ids(&env);
    assert_eq!(focused(&env), ids[1]);

    // prefix Left focuses the left pane; prefix o cycles.
    c.prefix("\x1b[D");
    wait_until("focus left", || (focused(&env) == ids[0]).then_some(()));
    c.prefix("o");
    wait_until("focus cycles", || (focused(&env) == ids[1]).then_some(()));

    // Zoom: the focused pane takes the whole window.
    c.prefix("z");
    c.wait_for("[Z]");
    let zoomed = c.wait_screen("zoomed", |s| !s.contains("left-pane"));
    assert!(zoomed.contains("right-pane"));
    c.prefix("z");
    c.wait_for("left-pane");

    // Split below, then close it: the layout heals to two panes.
    c.prefix("\"");
    wait_until("third pane", || (pane_ids(&env).len() == 3).then_some(()));
    c.prefix("x");
    c.wait_for("? (y/n)");
    c.send("y");
    wait_until("pane closed", || (pane_ids(&env).len() == 2).then_some(()));
    c.send("exit\r");
    wait_until("pane exited", || (pane_ids(&env).len() == 1).then_some(()));
    c.wait_for("left-pane");
}

#[test]
fn windows_create_rename_switch() {
    let env = Env::new();
    let mut c = env.client(&[], 24, 90);
    c.wait_for("$ ");
    c.prefix("c");
    c.wait_for("1:");
    c.prefix(",");
    c.wait_for("(rename-window)");
    c.send("\x15logs\r");
    c.wait_for("1:logs*");
    c.prefix("0");
    c.wait_for("0:sh*");
    c.prefix("n");
    c.wait_for("1:logs*");
    c.prefix("p");
    c.wait_for("0:sh*");
    c.prefix("1");
    c.wait_for("1:logs*");
    // Windows are targets too.
    let panes = env.panes();
    assert_eq!(panes.len(), 2);
    assert_eq!(panes[1]["window_name"], "logs");
}

#[test]
fn detach_and_reattach_keeps_panes_and_history() {
    let env = Env::new();
    let mut c = env.client(&["new", "-s", "work"], 24, 80);
    c.wait_for("$ ");
    c.send("for i in $(seq 1 300); do echo line-$i; done\r");
    c.wait_for("line-300");
    c.prefix("d");
    let out = c.wait_exit();
    assert!(out.contains("[detached]"), "{out}");
    let ls = env.ok(&["ls"]);
    assert!(ls.starts_with("work: 1 window, 1 pane"), "{ls}");
    // The pane kept running: it still answers.
    env.ok(&["send-keys", "-t", "work", "echo still-alive", "Enter"]);
    env.wait_capture("work", "still-alive");
    // Scrollback survived detaching.
    let history = env.ok(&["capture", "-t", "work", "--scrollback"]);
    assert!(history.contains("line-1\n"), "history lost:\n{history}");
    assert!(history.contains("line-300"));
    let mut again = env.client(&["attach", "-t", "work"], 24, 80);
    again.wait_for("still-alive");
    again.wait_for("line-300");
    again.prefix("d");
    again.wait_exit();
}

#[test]
fn two_clients_share_a_session_at_the_smallest_size() {
    let env = Env::new();
    let mut big = env.client(&["new", "-s", "pair"], 40, 120);
    big.wait_for("$ ");
    let mut small = env.client(&["attach", "-t", "pair"], 20, 60);
    small.wait_for("$ ");
    wait_until("session at the smaller size", || {
        env.ok(&["ls"]).contains("[60x20]").then_some(())
    });
    small.send("echo from-small\r");
    big.wait_for("from-small");
    small.wait_for("from-small");
    // The bigger client shows the area outside the session as dots.
    big.wait_for("·");
    small.prefix("d");
    small.wait_exit();
    wait_until("session back at the big size", || {
        env.ok(&["ls"]).contains("[120x40]").then_some(())
    });
    big.prefix("d");
    big.wait_exit();
}

#[test]
fn hangup_only_detaches() {
    let env = Env::new();
    let c = env.client(&["new", "-s", "ssh"], 24, 80);
    c.wait_for("$ ");
    // A dropped SSH connection: SIGHUP to the client.
    c.signal(nix::sys::signal::Signal::SIGHUP);
    wait_until("client detached", || {
        env.ok(&["ls"])
            .contains("ssh: 1 window")
            .then_some(())
            .filter(|_| !env.ok(&["ls"]).contains("attached"))
    });
    env.ok(&["send-keys", "-t", "ssh", "echo survived", "Enter"]);
    env.wait_capture("ssh", "survived");
}

#[test]
fn copy_mode_search_and_copy_sends_osc52_and_pastes() {
    let env = Env::new();
    let mut c = env.client(&[], 24, 80);
    c.wait_for("$ ");
    // The marker is computed by the shell so the echoed command line cannot
    // match it: copy mode must start only after all 200 rows are printed.
    c.send("for i in $(seq 1 200); do echo row-$i; done; echo needle-$((6*7))\r");
    c.wait_for("needle-42");
    c.prefix("[");
    c.wait_for("COPY");
    // Search backward for an old line, far in the history.
    c.send("?");
    c.wait_for("(search up)");
    c.send("row-42\r");
    c.wait_screen("history scrolled to row-42", |s| {
        s.lines()
            .any(|l| l.contains("row-42") && !l.contains("seq"))
    });
    // Select the match's line from its start and copy it.
    c.send("0");
    c.send(" ");
    c.send("$");
    c.send("\r");
    wait_until("OSC 52 on the outer terminal", || {
        let raw = String::from_utf8_lossy(&c.raw()).to_string();
        raw.contains("\x1b]52;c;").then_some(())
    });
    let raw = String::from_utf8_lossy(&c.raw()).to_string();
    let b64 = raw
        .split("\x1b]52;c;")
        .nth(1)
        .and_then(|r| r.split('\x07').next())
        .unwrap_or_default()
        .to_string();
    use base64::Engine;
    let copied = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .unwrap_or_default();
    assert_eq!(String::from_utf8_lossy(&copied), "row-42");
    c.wait_screen("copy mode left", |s| !s.contains("COPY"));
    // prefix ] pastes it into the pane.
    c.send("echo pasted:");
    c.prefix("]");
    c.send("\r");
    c.wait_for("pasted:row-42");
}

#[test]
fn send_keys_and_capture_with_key_names() {
    let env = Env::new();
    env.ok(&["new", "-d", "-s", "bg", "--", "sh"]);
    env.ok(&["send-keys", "-t", "bg", "printf 'a%sb\\n' -", "Enter"]);
    env.wait_capture("bg", "a-b");
    // C-c interrupts a running program.
    env.ok(&["send-keys", "-t", "bg:0.0", "sleep 100", "Enter"]);
    wait_until("sleep running", || {
        env.panes()[0]["command"]
            .as_str()
            .filter(|c| *c == "sleep")
            .map(|_| ())
    });
    env.ok(&["send-keys", "-t", "bg", "C-c"]);
    wait_until("sleep interrupted", || {
        env.panes()[0]["command"]
            .as_str()
            .filter(|c| *c == "sh")
            .map(|_| ())
    });
    // ANSI capture keeps colors.
    env.ok(&[
        "send-keys",
        "-t",
        "bg",
        "printf '\\033[31mRED\\033[0m\\n'",
        "Enter",
    ]);
    env.wait_capture("bg", "RED");
    let ansi = env.ok(&["capture", "-t", "bg", "--ansi"]);
    assert!(ansi.contains("\x1b[31mRED"), "{ansi:?}");
    // Unknown targets are clear errors.
    let out = env.run(&["capture", "-t", "nope"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("can't find session: nope"));
}

#[test]
fn pane_environment_identifies_the_pane() {
    let env = Env::new();
    env.ok(&["new", "-d", "-s", "ids", "--", "sh"]);
    env.ok(&[
        "send-keys",
        "-t",
        "ids",
        "echo T=$TERM C=$COLORTERM",
        "Enter",
    ]);
    env.wait_capture("ids", "T=xterm-256color C=truecolor");
    env.ok(&[
        "send-keys",
        "-t",
        "ids",
        "clear; echo S=$CALYX_SURFACE_ID",
        "Enter",
    ]);
    let surface = env.first_surface();
    assert_eq!(surface.len(), 36, "a UUID");
    env.wait_capture("ids", &format!("S={surface}"));
    env.ok(&[
        "send-keys",
        "-t",
        "ids",
        "clear; echo R=$CALYX_SESSION_ID",
        "Enter",
    ]);
    env.wait_capture("ids", &format!("R={surface}"));
    let other = env.ok(&["split", "-t", "ids", "-d", "--", "sh"]);
    assert!(other.is_empty());
    let panes = env.panes();
    assert_ne!(
        panes[0]["surface_id"], panes[1]["surface_id"],
        "each pane has its own surface id"
    );
}

#[test]
fn help_overlay_lists_bindings_from_the_command_table() {
    let env = Env::new();
    let mut c = env.client(&[], 50, 110);
    c.wait_for("$ ");
    c.prefix("?");
    // The overlay may reach the terminal in more than one read: wait for all of it.
    c.wait_screen("the help overlay", |s| {
        s.contains("keys (prefix is C-b)")
            && s.contains("split-window -h")
            && s.contains("detach-client")
    });
    c.send("q");
    c.wait_screen("help closed", |s| !s.contains("keys (prefix is"));
}

#[test]
fn rebinding_in_config_and_broken_config_falls_back() {
    let env = Env::new();
    env.write_config("prefix = \"C-a\"\n[keys]\n\"|\" = \"split-window -h\"\n");
    let mut c = env.client(&[], 24, 80);
    c.wait_for("$ ");
    c.send("\x01|");
    wait_until("split by rebinding", || {
        (pane_ids(&env).len() == 2).then_some(())
    });
    // C-b is no longer the prefix: it reaches the pane.
    c.send("\x01d");
    c.wait_exit();
    env.ok(&["kill-server"]);

    let env = Env::new();
    env.write_config("mouse = true\nscrollback_lines = \"lots\"\n");
    let c = env.client(&[], 24, 100);
    let s = c.wait_for("config.toml");
    assert!(s.contains("line 2"), "{s}");
    c.wait_for("$ ");
}

#[test]
fn the_mouse_switch_leaves_the_outer_terminal_its_own_mouse() {
    let on = Env::new();
    let c = on.client(&[], 24, 80);
    c.wait_for("$ ");
    let raw = String::from_utf8_lossy(&c.raw()).to_string();
    assert!(raw.contains("\x1b[?1000h"), "mouse reporting on by default");
    let off = Env::new();
    off.write_config("mouse = false\n");
    let c = off.client(&[], 24, 80);
    c.wait_for("$ ");
    let raw = String::from_utf8_lossy(&c.raw()).to_string();
    assert!(
        !raw.contains("\x1b[?1000h") && !raw.contains("\x1b[?1002h"),
        "mouse = false must not turn on mouse reporting: {raw:?}"
    );
}

#[test]
fn remain_on_exit_keeps_the_pane_with_its_status() {
    let env = Env::new();
    env.write_config("remain_on_exit = true\n");
    let c = env.client(&["new", "--", "sh", "-c", "echo bye; exit 3"], 24, 80);
    c.wait_for("[exited 3]");
    c.wait_for("bye");
    assert_eq!(env.panes()[0]["dead"], true);
}

#[test]
fn foreground_new_runs_the_command_and_kill_server_ends_it() {
    // The benchmark's way in: `calyx new -- sh -c CMD` attached, then `calyx kill-server`.
    let env = Env::new();
    let mut c = env.client(&["new", "--", "sh", "-c", "echo MARK-OK; sleep 30"], 24, 80);
    c.wait_for("MARK-OK");
    env.ok(&["kill-server"]);
    c.wait_exit();
    let out = env.run(&["ls"]);
    assert!(!out.status.success(), "no server after kill-server");
}

fn alive(pid: i32) -> bool {
    // No signal: only checks that the process exists.
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_ok()
}

#[test]
fn process_ignoring_sighup_is_killed_with_its_pane_and_the_neighbour_lives_on() {
    let env = Env::new();
    let mut c = env.client(
        &[
            "new",
            "-s",
            "stubborn",
            "--",
            "sh",
            "-c",
            "trap '' HUP; echo armed; while true; do sleep 1; done",
        ],
        30,
        100,
    );
    c.wait_for("armed");
    env.ok(&["split", "-t", "stubborn", "--", "sh"]);
    let panes = env.panes();
    assert_eq!(panes.len(), 2);
    let stubborn = panes[0]["id"].as_str().unwrap_or_default().to_string();
    let neighbour = panes[1]["id"].as_str().unwrap_or_default().to_string();
    let stubborn_pid = panes[0]["pid"].as_u64().unwrap_or(0) as i32;
    let neighbour_pid = panes[1]["pid"].as_u64().unwrap_or(0) as i32;
    assert!(stubborn_pid > 0 && neighbour_pid > 0, "{panes:?}");
    // Close just the stubborn pane, from the keyboard: SIGHUP, ignored, then SIGKILL.
    env.ok(&["select", "-t", &stubborn]);
    wait_until("stubborn pane focused", || {
        (focused(&env) == stubborn).then_some(())
    });
    c.prefix("x");
    c.wait_for("? (y/n)");
    c.send("y");
    wait_until("stubborn pane closed", || {
        (pane_ids(&env) == vec![neighbour.clone()]).then_some(())
    });
    wait_until("stubborn process killed", || {
        (!alive(stubborn_pid)).then_some(())
    });
    // The neighbour's program still runs and answers, in the same server, on the same client.
    assert!(
        alive(neighbour_pid),
        "the neighbour pane's shell was killed"
    );
    assert_eq!(focused(&env), neighbour);
    env.ok(&[
        "send-keys",
        "-t",
        &neighbour,
        "echo neighbour-$((6*7))",
        "Enter",
    ]);
    env.wait_capture(&neighbour, "neighbour-42");
    c.wait_for("neighbour-42");
    assert!(env.ok(&["ls"]).contains("stubborn"), "the session lives on");
    assert!(!c.exited(), "the client stays attached");
}

#[test]
fn many_panes_and_tiny_or_huge_terminals_are_survived() {
    let env = Env::new();
    let mut c = env.client(&[], 60, 200);
    c.wait_for("$ ");
    // 100 panes in one session: 20 windows of 5.
    for w in 0..20 {
        if w > 0 {
            env.ok(&["new-window", "-d", "--", "sh", "-c", "sleep 120"]);
        }
        for _ in 0..4 {
            env.ok(&[
                "split",
                "-t",
                &format!(":{w}"),
                "-d",
                "--",
                "sh",
                "-c",
                "sleep 120",
            ]);
        }
    }
    assert_eq!(pane_ids(&env).len(), 100);
    // Splitting a pane that has no room left is refused, not squeezed to nothing.
    let mut refused = false;
    for _ in 0..40 {
        let out = env.run(&["split", "-t", ":0", "-h", "--", "sh", "-c", "sleep 120"]);
        if !out.status.success() {
            assert!(String::from_utf8_lossy(&out.stderr).contains("no space for new pane"));
            refused = true;
            break;
        }
    }
    assert!(refused);
    c.resize(1, 1);
    wait_until("1x1 session", || {
        env.ok(&["ls"])
            .contains("[1x1]")
            .then_some(())
            .or_else(|| env.ok(&["ls"]).contains("[2x2]").then_some(()))
    });
    c.resize(200, 500);
    wait_until("500x200 session", || {
        env.ok(&["ls"]).contains("[500x200]").then_some(())
    });
    env.ok(&["select", "-t", ":0.0"]);
    env.ok(&["send-keys", "-t", ":0.0", "echo big-enough", "Enter"]);
    c.wait_for("big-enough");
}

fn server_rss_kb(env: &Env) -> u64 {
    let pid = env.server_pid();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// A pane printing far more than its history cap while a client draws it: the client is killed
/// mid-frame, a neighbour pane keeps answering during the flood, the server's memory stays
/// bounded (sampled throughout, not just at the end) and the history holds about the cap.
/// 40 MB, not the issue's 1 GB: a debug build moves 2-3 MB/s, so 1 GB takes minutes;
/// `scripts/bench-flood.py` floods 1 GiB through a release build (docs/performance.md).
#[test]
fn a_flooding_pane_and_a_client_killed_mid_frame_leave_the_server_bounded() {
    let env = Env::new();
    env.write_config("scrollback_bytes = 1048576\n");
    let mut c = env.client(&["new", "-s", "flood"], 30, 100);
    c.wait_for("$ ");
    env.ok(&["split", "-d", "-t", "flood", "--", "sh"]);
    let neighbour = pane_ids(&env)[1].clone();
    // 40 MB of output (40x the history cap) through the focused pane while a client draws it.
    c.send("yes 'calyx flood line with some text' | head -c 40000000; echo FLOOD-DONE\r");
    c.wait_screen("flood running", |s| s.contains("calyx flood line"));
    // Kill the client mid-frame; the server must not care.
    c.signal(nix::sys::signal::Signal::SIGKILL);
    // The neighbour answers while the flood runs.
    env.ok(&[
        "send-keys",
        "-t",
        &neighbour,
        "echo neighbour-$((6*7))",
        "Enter",
    ]);
    env.wait_capture(&neighbour, "neighbour-42");
    let mut peak_rss = 0;
    wait_until_within(
        "flood finished",
        std::time::Duration::from_secs(120),
        || {
            peak_rss = peak_rss.max(server_rss_kb(&env));
            let text = String::from_utf8_lossy(&env.run(&["capture", "-t", "flood:0.0"]).stdout)
                .to_string();
            text.contains("FLOOD-DONE").then_some(())
        },
    );
    assert!(
        peak_rss < 200 * 1024,
        "server RSS peaked at {peak_rss} KiB during 40 MB of output"
    );
    // History is capped by bytes: the retained text is about 1 MiB, not 40 MB.
    let history = env.ok(&["capture", "-t", "flood:0.0", "--scrollback"]);
    assert!(
        history.len() < 2 << 20,
        "history is {} bytes",
        history.len()
    );
    // Other panes and new clients work.
    env.ok(&[
        "send-keys",
        "-t",
        &neighbour,
        "echo after-$((6*8))",
        "Enter",
    ]);
    env.wait_capture(&neighbour, "after-48");
    env.ok(&["split", "-t", "flood", "--", "sh"]);
    let again = env.client(&["attach", "-t", "flood"], 30, 100);
    again.wait_for("after-48");
}

#[test]
fn mouse_click_focuses_wheel_scrolls_and_border_drag_resizes() {
    let env = Env::new();
    let mut c = env.client(&[], 30, 100);
    c.wait_for("$ ");
    c.send("for i in $(seq 1 100); do echo wheel-$i; done\r");
    c.wait_for("wheel-100");
    c.prefix("%");
    wait_until("two panes", || (pane_ids(&env).len() == 2).then_some(()));
    let ids = pane_ids(&env);
    assert_eq!(focused(&env), ids[1]);
    // Click inside the left pane (SGR mouse, 1-based coordinates).
    c.send("\x1b[<0;10;10M\x1b[<0;10;10m");
    wait_until("click focuses the left pane", || {
        (focused(&env) == ids[0]).then_some(())
    });
    // The wheel on a shell scrolls into copy mode.
    c.send("\x1b[<64;10;10M");
    c.wait_for("COPY");
    c.send("q");
    c.wait_screen("copy mode left", |s| !s.contains("COPY"));
    // Drag the border between the panes (columns 50/51) to the left.
    let width_before = env.panes()[0]["cols"].as_u64().unwrap_or(0);
    c.send("\x1b[<0;50;10M\x1b[<32;30;10M\x1b[<0;30;10m");
    wait_until("border dragged", || {
        let w = env.panes()[0]["cols"].as_u64().unwrap_or(0);
        (w + 10 < width_before).then_some(())
    });
}

#[test]
fn swap_and_break_a_pane_with_keys() {
    let env = Env::new();
    let mut c = env.client(&["new", "-s", "sw"], 30, 100);
    c.wait_for("$ ");
    c.prefix("%");
    wait_until("two panes", || (pane_ids(&env).len() == 2).then_some(()));
    assert_eq!(
        (pane_ids(&env), focused(&env)),
        (vec!["%1".into(), "%2".into()], "%2".into())
    );
    let pane_x = |env: &Env, id: &str| {
        env.panes()
            .into_iter()
            .find(|p| p["id"] == id)
            .map(|p| (p["window"].as_u64(), p["cols"].as_u64()))
    };
    let (_, half) = pane_x(&env, "%2").unwrap_or_default();

    // prefix {: the focused pane moves left and keeps the focus.
    c.prefix("{");
    wait_until("swapped", || (pane_ids(&env) == ["%2", "%1"]).then_some(()));
    assert_eq!(focused(&env), "%2");
    c.prefix("}");
    wait_until("swapped back", || {
        (pane_ids(&env) == ["%1", "%2"]).then_some(())
    });

    // prefix !: the pane gets a window of its own, shown, with the whole width.
    c.prefix("!");
    wait_until("%2 alone in window 1, wider", || {
        let (window, cols) = pane_x(&env, "%2")?;
        (window == Some(1) && cols > half).then_some(())
    });
    c.wait_for("1:");
    assert_eq!(pane_x(&env, "%1").and_then(|p| p.0), Some(0));
    c.prefix("!");
    c.wait_for("the window has only this pane");
}

#[test]
fn a_program_that_execs_another_without_printing_is_renamed_on_screen() {
    let env = Env::new();
    // `sh` replaces itself with `sleep` after a moment, printing nothing: no output will ask
    // for a frame, yet the border and status must come to say "sleep" (as tmux's do).
    let c = env.client(
        &[
            "new",
            "-s",
            "ren",
            "--",
            "sh",
            "-c",
            "sleep 0.5; exec sleep 30",
        ],
        24,
        100,
    );
    c.wait_for("[ren]");
    c.wait_for("0:sleep");
}

#[test]
fn kill_pane_and_kill_window_close_only_what_they_name() {
    let env = Env::new();
    env.ok(&["new", "-d", "-s", "k", "--", "sh"]);
    env.ok(&["split", "-t", "k", "--", "sh"]);
    env.ok(&["new-window", "-t", "k", "-n", "two", "--", "sh"]);
    wait_until("three panes", || (pane_ids(&env).len() == 3).then_some(()));
    env.ok(&["kill-pane", "-t", "%2"]);
    wait_until("%2 gone", || (pane_ids(&env) == ["%1", "%3"]).then_some(()));
    env.ok(&["kill-window", "-t", "k:1"]);
    wait_until("window 1 gone", || (pane_ids(&env) == ["%1"]).then_some(()));
    assert!(env.ok(&["ls"]).starts_with("k: 1 window, 1 pane"));
    let bad = env.run(&["kill-pane", "-t", "%9"]);
    assert!(!bad.status.success());
}
