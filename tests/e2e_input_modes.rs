//! End to end: the input modes a program in a pane asks for are honoured between the user's
//! terminal and the program: focus events (mode 1004), bracketed paste (2004) of the paste buffer
//! and of the terminal's own pastes, mouse reporting (1000/1006) with coordinates translated to
//! the pane, and the mouse driving copy mode in panes that did not ask for it.

use crate::common;

use base64::Engine;
use common::keylog::KeyLog;
use common::{wait_until, Client, Env};

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

/// Runs `calyx ARGS -- <key logger with modes>`.
fn with_logger(args: &[&str], log: &KeyLog, modes: &[&str]) -> Vec<String> {
    let cmd = log.command(modes);
    let mut all: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    all.push("--".into());
    all.extend(cmd);
    all
}

fn logger_client(env: &Env, name: &str, modes: &[&str]) -> (Client, KeyLog) {
    let log = KeyLog::new(env, name);
    let args = with_logger(&["new", "-s", name], &log, modes);
    let c = env.client(&KeyLog::args(&args), 24, 80);
    c.wait_for("READY");
    (c, log)
}

/// The texts of every OSC 52 clipboard write the client sent so far, decoded.
fn clipboard_writes(c: &Client) -> Vec<String> {
    let raw = String::from_utf8_lossy(&c.raw()).to_string();
    raw.split("\x1b]52;c;")
        .skip(1)
        .filter_map(|rest| rest.split('\x07').next())
        .map(|b64| {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(b64)
                .unwrap_or_default();
            String::from_utf8_lossy(&bytes).to_string()
        })
        .collect()
}

/// Whether a border shows a copy-mode position like "[3/41]".
fn shows_copy_position(screen: &str) -> bool {
    screen.split('[').skip(1).any(|rest| {
        rest.split_once(']').is_some_and(|(inside, _)| {
            inside
                .split_once('/')
                .is_some_and(|(a, b)| a.parse::<u32>().is_ok() && b.parse::<u32>().is_ok())
        })
    })
}

#[test]
fn focus_events_reach_only_programs_that_asked_for_them() {
    let env = Env::new();
    let (mut c, log) = logger_client(&env, "focus", &["1004"]);
    // The user's terminal reports focus (the client turned mode 1004 on in it).
    assert!(String::from_utf8_lossy(&c.raw()).contains("\x1b[?1004h"));
    c.send("\x1b[O");
    let at = log.expect_since(0, b"\x1b[O");
    c.send("\x1b[I");
    let at = log.expect_since(at, b"\x1b[I");
    // A focus change while the prefix is pending reaches the program and keeps the prefix:
    // the second C-b is then "send the prefix".
    c.send("\x02");
    c.send("\x1b[O");
    c.send("\x02");
    let at = log.expect_since(at, b"\x1b[O\x02");
    c.send("\x1b[I");
    let at = log.expect_since(at, b"\x1b[I");
    // Moving calyx's focus to another pane and back is a focus change for the program too.
    c.prefix("%");
    wait_until("a second pane", || {
        (pane_ids(&env).len() == 2).then_some(())
    });
    let at = log.expect_since(at, b"\x1b[O");
    c.prefix("\x1b[D");
    let at = log.expect_since(at, b"\x1b[I");
    c.send("k");
    log.expect_since(at, b"k");

    // A program that did not ask gets no focus reports, only its keys.
    let (mut c, log) = logger_client(&env, "nofocus", &[]);
    c.send("\x1b[O");
    c.send("\x1b[I");
    c.send("z");
    log.expect_since(0, b"z");
}

#[test]
fn pastes_are_bracketed_when_the_program_asked() {
    let env = Env::new();
    let bracketed = KeyLog::new(&env, "bracketed");
    let args = with_logger(&["new", "-s", "paste"], &bracketed, &["2004"]);
    let mut c = env.client(&KeyLog::args(&args), 24, 100);
    c.wait_for("READY");
    // A paste from the user's terminal keeps its brackets (and its newlines and control bytes).
    c.send("\x1b[200~hello\nworld\x02\x1b[201~");
    let at = bracketed.expect_since(0, b"\x1b[200~hello\nworld\x02\x1b[201~");

    // Copy "READY" from the top of the logger's screen in copy mode...
    c.prefix("[");
    c.wait_for("COPY");
    c.send("g0 $\r");
    wait_until("the copy on the clipboard", || {
        clipboard_writes(&c)
            .iter()
            .any(|t| t == "READY")
            .then_some(())
    });
    c.wait_screen("copy mode left", |s| !s.contains("COPY"));
    // ...and paste the buffer: bracketed.
    c.prefix("]");
    bracketed.expect_since(at, b"\x1b[200~READY\x1b[201~");

    // A program that did not ask gets pastes as they are.
    let plain = KeyLog::new(&env, "plain");
    let args = with_logger(&["split", "-h", "-t", "paste"], &plain, &[]);
    env.ok(&KeyLog::args(&args));
    wait_until("the plain logger focused", || {
        (pane_ids(&env).len() == 2 && focused(&env) == pane_ids(&env)[1]).then_some(())
    });
    wait_until("the plain logger ready", || {
        let s = c.screen();
        (s.matches("READY").count() == 2).then_some(())
    });
    c.send("\x1b[200~two\nlines\x1b[201~");
    let at = plain.expect_since(0, b"two\nlines");
    c.prefix("]");
    plain.expect_since(at, b"READY");
}

#[test]
fn the_wheel_and_clicks_reach_a_mouse_program_at_pane_coordinates() {
    let env = Env::new();
    let mut c = env.client(&["new", "-s", "mouse", "--", "sh"], 24, 100);
    c.wait_for("$ ");
    c.send("for i in $(seq 1 60); do echo hist-$i; done\r");
    c.wait_for("hist-60");
    // A program with SGR mouse reporting in the right-hand pane.
    let log = KeyLog::new(&env, "mouse");
    let args = with_logger(&["split", "-h", "-t", "mouse"], &log, &["1000", "1006"]);
    env.ok(&KeyLog::args(&args));
    // READY is printed at the pane's top-left cell: the pane's origin on the client.
    let (top, left) = c.wait_find("READY");
    assert!(left > 40, "the logger is on the right: column {left}");
    // Client cells are 1-based in SGR reports; (left + 5, top + 3) is pane cell (6, 4).
    let at_cell = |code: u8, dx: u16, dy: u16, end: char| {
        format!("\x1b[<{code};{};{}{end}", left + dx + 1, top + dy + 1)
    };
    c.send(at_cell(64, 5, 3, 'M'));
    let at = log.expect_since(0, b"\x1b[<64;6;4M");
    c.send(at_cell(65, 0, 0, 'M'));
    let at = log.expect_since(at, b"\x1b[<65;1;1M");
    // Press and release (mode 1000 reports both); motion is not reported in mode 1000.
    c.send(at_cell(0, 10, 2, 'M'));
    c.send(at_cell(32, 11, 2, 'M'));
    c.send(at_cell(0, 11, 2, 'm'));
    let at = log.expect_since(at, b"\x1b[<0;11;3M\x1b[<0;12;3m");
    // Modifier bits travel with the report (ctrl + wheel).
    c.send(at_cell(80, 1, 1, 'M'));
    let at = log.expect_since(at, b"\x1b[<80;2;2M");
    assert_eq!(
        env.panes()[1]["focused"],
        true,
        "the click focused the logger"
    );

    // The wheel over the shell on the left, which asked for nothing, scrolls its history in
    // copy mode (its border shows the position); the program on the right hears nothing of it.
    let shell_row = top + 5;
    c.send(format!("\x1b[<64;10;{}M", shell_row + 1));
    c.wait_screen("the shell's history scrolled", |s| {
        shows_copy_position(s) && !s.contains("hist-60") && s.contains("hist-5")
    });
    // Wheeling back down to the bottom leaves copy mode.
    for _ in 0..3 {
        c.send(format!("\x1b[<65;10;{}M", shell_row + 1));
    }
    c.wait_screen("copy mode left at the bottom", |s| {
        !shows_copy_position(s) && s.contains("hist-60")
    });
    c.send("q");
    log.expect_since(at, b"q");
}

#[test]
fn a_program_asking_for_x10_mouse_reports_gets_them_translated() {
    let env = Env::new();
    let (mut c, log) = logger_client(&env, "x10", &["1000"]);
    let (top, left) = c.wait_find("READY");
    // Client cell (left + 2, top + 1), 1-based in the SGR report the outer terminal sends.
    c.send(format!("\x1b[<0;{};{}M", left + 3, top + 2));
    // X10: ESC [ M, button + 32, column + 33, row + 33 (0-based pane cell (2, 1)).
    log.expect_since(0, &[0x1b, b'[', b'M', 32, 35, 34]);
}

#[test]
fn dragging_in_a_shell_selects_and_copies_with_osc52() {
    let env = Env::new();
    let mut c = env.client(&["new", "-s", "drag", "--", "sh"], 24, 80);
    c.wait_for("$ ");
    // The output line differs from the typed command (the shell computes "2beta").
    c.send("echo alpha $((1+1))beta gamma\r");
    let (row, col) = c.wait_find("2beta gamma");
    // Press on "b", drag to the "a" that ends "beta", release: "beta" is copied.
    let cell = |x: u16| format!("{};{}", x + 1, row + 1);
    c.send(format!("\x1b[<0;{}M", cell(col + 1)));
    c.wait_for("COPY");
    c.send(format!("\x1b[<32;{}M", cell(col + 3)));
    c.send(format!("\x1b[<32;{}M", cell(col + 4)));
    c.send(format!("\x1b[<0;{}m", cell(col + 4)));
    wait_until("the selection on the clipboard", || {
        clipboard_writes(&c).first().cloned()
    });
    assert_eq!(clipboard_writes(&c), vec!["beta".to_string()]);
    c.wait_screen("copy mode left after copying", |s| !s.contains("COPY"));
    // A plain click (no drag) copies nothing and leaves no copy mode behind.
    c.send(format!("\x1b[<0;{}M\x1b[<0;{}m", cell(col), cell(col)));
    c.send("echo pasted:");
    c.prefix("]");
    c.send("\r");
    c.wait_for("pasted:beta");
    assert_eq!(clipboard_writes(&c).len(), 1, "a click copies nothing");
    assert!(!c.screen().contains("COPY"));

    // After wide characters, the cells dragged over are what is copied.
    c.send("clear; echo 中文 $((3+4))wide end\r");
    let (row, col) = c.wait_find("7wide end");
    let cell = |x: u16| format!("{};{}", x + 1, row + 1);
    c.send(format!("\x1b[<0;{}M", cell(col + 1)));
    c.send(format!("\x1b[<32;{}M", cell(col + 4)));
    c.send(format!("\x1b[<0;{}m", cell(col + 4)));
    wait_until("the second selection on the clipboard", || {
        (clipboard_writes(&c).len() == 2).then_some(())
    });
    assert_eq!(clipboard_writes(&c)[1], "wide");
}

#[test]
fn motion_without_a_button_is_reported_only_while_a_pane_asks_for_it() {
    let env = Env::new();
    let (mut c, log) = logger_client(&env, "motion", &["1003", "1006"]);
    // The user's terminal is asked for every motion (1003) because the program wants it.
    wait_until("1003 on the user's terminal", || {
        String::from_utf8_lossy(&c.raw())
            .contains("\x1b[?1003h")
            .then_some(())
    });
    let (top, left) = c.wait_find("READY");
    c.send(format!("\x1b[<35;{};{}M", left + 5, top + 3));
    log.expect_since(0, b"\x1b[<35;5;3M");
    // A window without such a program: the terminal stops reporting bare motion.
    let mark = c.raw().len();
    c.prefix("c");
    wait_until("1003 off again", || {
        String::from_utf8_lossy(&c.raw()[mark..])
            .contains("\x1b[?1003l")
            .then_some(())
    });
    // Detaching turns it off with the other mouse modes, whatever the last frame said.
    c.prefix("d");
    let out = c.wait_exit();
    assert!(out.contains("\x1b[?1002l\x1b[?1003l\x1b[?1006l"), "{out:?}");
}
