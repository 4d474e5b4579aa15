//! Who reads and writes the user's terminal: normally the server itself (the client only holds
//! raw mode and waits), or the client when `direct_terminal = false`. Either way the terminal
//! goes back to the shell intact when the client leaves.

use crate::common;

use std::path::Path;

use common::{calyx_bin, wait_until, Client, Env};

/// A pane program that prints a numbered line every 5 ms, for ever.
const TICKING: &str = "i=0; while :; do i=$((i+1)); echo tick-$i; sleep 0.005; done";

fn server_log(env: &Env) -> String {
    std::fs::read_to_string(env.path().join("state/calyx/server.log")).unwrap_or_default()
}

#[test]
fn the_server_reads_and_draws_the_terminal_while_the_client_is_stopped() {
    let env = Env::new();
    let mut c = env.client(&["new", "-s", "direct"], 24, 80);
    c.wait_for("$ ");
    // A stopped client can neither forward a key nor draw a frame: only a server that owns
    // the terminal can echo this.
    c.signal(nix::sys::signal::Signal::SIGSTOP);
    c.send("echo typed-$((6*7))\r");
    c.wait_for("typed-42");
    c.signal(nix::sys::signal::Signal::SIGCONT);
    let log = server_log(&env);
    assert!(log.contains("the server reads and writes /dev/"), "{log}");
    c.prefix("d");
    let out = c.wait_exit();
    assert!(out.contains("[detached]"), "{out}");
}

#[test]
fn with_direct_terminal_off_the_client_forwards_keys_and_frames() {
    let env = Env::new();
    env.write_config("direct_terminal = false\n");
    let mut c = env.client(&["new", "-s", "proxied"], 24, 80);
    c.wait_for("$ ");
    c.send("echo forwarded-$((6*7))\r");
    c.wait_for("forwarded-42");
    c.prefix("%");
    wait_until("two panes", || (env.panes().len() == 2).then_some(()));
    c.send("echo in-the-new-pane\r");
    c.wait_for("in-the-new-pane");
    let log = server_log(&env);
    assert!(!log.contains("the server reads and writes"), "{log}");
    c.prefix("d");
    let out = c.wait_exit();
    assert!(out.contains("[detached]"), "{out}");
    env.wait_capture("proxied", "in-the-new-pane");
}

#[test]
fn after_detaching_the_shell_gets_the_keyboard_back() {
    let env = Env::new();
    // The keys typed after detaching wait in the terminal while `sleep` runs: a server still
    // reading the terminal would take them, and `read` would never see them.
    let script = format!(
        "{} new -s back; sleep 0.5; read line; echo \"got:$line\"; sleep 30",
        calyx_bin().display()
    );
    let mut shell = Client::spawn_program(
        &env,
        Path::new("/bin/sh"),
        &["-c", &script],
        24,
        80,
        &env.vars(),
    );
    wait_until("the session attached", || {
        let ls = String::from_utf8_lossy(&env.run(&["ls"]).stdout).to_string();
        ls.contains("attached").then_some(())
    });
    shell.send("echo inside\r");
    env.wait_capture("back", "inside");
    shell.prefix("d");
    shell.wait_for("[detached]");
    shell.send("released\r");
    shell.wait_for("got:released");
    let pane = env.ok(&["capture", "-t", "back"]);
    assert!(!pane.contains("released"), "{pane}");
}

#[test]
fn sigterm_detaches_once_the_server_has_finished_drawing() {
    let env = Env::new();
    // Frames keep coming while the client is told to go: none may land after it restored the
    // terminal (they would draw over the user's shell).
    let mut c = env.client(&["new", "-s", "term", "--", "sh", "-c", TICKING], 24, 80);
    c.wait_for("tick-20");
    c.signal(nix::sys::signal::Signal::SIGTERM);
    let out = c.wait_exit();
    assert!(out.contains("detached (terminated)"), "{out}");
    // The terminal was restored after the server's last frame: the alternate screen is left.
    let leave = out.rfind("\x1b[?1049l").expect("alternate screen left");
    assert!(
        leave > out.rfind("\x1b[?2026l").unwrap_or(0),
        "a frame came after the terminal was restored"
    );
    let ls = env.ok(&["ls"]);
    assert!(
        ls.starts_with("term: 1 window,") && !ls.contains("attached"),
        "{ls}"
    );
}

/// The last `tick-N` on a screen.
fn last_tick(screen: &str) -> u64 {
    screen
        .split("tick-")
        .skip(1)
        .filter_map(|s| {
            s.chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
                .parse()
                .ok()
        })
        .max()
        .unwrap_or(0)
}

#[test]
fn after_exit_the_server_writes_nothing_more_to_the_terminal() {
    use calyx::protocol::{
        encode_message, read_frame, ClientMessage, Frame, ServerMessage, TerminalDevice,
    };
    use portable_pty::{native_pty_system, PtySize};
    use std::io::Read;
    use std::os::unix::fs::MetadataExt;
    use std::sync::{Arc, Mutex};
    use tokio::io::AsyncWriteExt;

    let env = Env::new();
    env.ok(&["new", "-d", "-s", "tick", "--", "sh", "-c", TICKING]);
    // A terminal of our own, handed to the server the way `calyx attach` does.
    let size = PtySize {
        rows: 24,
        cols: 80,
        pixel_width: 0,
        pixel_height: 0,
    };
    let pty = native_pty_system().openpty(size).expect("openpty");
    let path = pty.master.tty_name().expect("tty name");
    let meta = std::fs::metadata(&path).expect("stat");
    let screen = Arc::new(Mutex::new(vt100::Parser::new(
        std::num::NonZeroU16::new(24).expect("rows"),
        std::num::NonZeroU16::new(80).expect("cols"),
        0,
    )));
    let mut reader = pty.master.try_clone_reader().expect("reader");
    let sink = screen.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 65536];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock()
                .unwrap_or_else(|e| e.into_inner())
                .process(&buf[..n]);
        }
    });
    let shown = || {
        screen
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .screen()
            .contents()
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let socket = env.path().join("run/calyx/server.sock");
    let tick_at_exit = runtime.block_on(async {
        let mut stream = tokio::net::UnixStream::connect(&socket)
            .await
            .expect("connect");
        let attach = ClientMessage::Attach {
            target: Some("tick".into()),
            create: None,
            create_if_missing: false,
            rows: 24,
            cols: 80,
            term: None,
            terminal: Some(TerminalDevice {
                path: path.display().to_string(),
                dev: meta.dev(),
                ino: meta.ino(),
            }),
            opener_env: Vec::new(),
            back_to: None,
        };
        stream
            .write_all(&encode_message(&attach))
            .await
            .expect("attach");
        match read_frame::<_, ServerMessage>(&mut stream).await {
            Ok(Frame::Message(ServerMessage::Attached { direct: true })) => {}
            other => panic!("expected a direct attach, got {other:?}"),
        }
        wait_until("frames on our terminal", || {
            (last_tick(&shown()) > 10).then_some(())
        });
        let detach = ClientMessage::Detach {
            message: "bye".into(),
        };
        stream
            .write_all(&encode_message(&detach))
            .await
            .expect("detach");
        loop {
            match read_frame::<_, ServerMessage>(&mut stream).await {
                Ok(Frame::Message(ServerMessage::Exit { message })) => {
                    assert_eq!(message, "bye");
                    break;
                }
                Ok(Frame::Raw(bytes)) => panic!("a frame came through the socket: {bytes:?}"),
                Ok(_) => {}
                Err(e) => panic!("no Exit: {e}"),
            }
        }
        // The connection stays open: only the detach may stop the drawing.
        let tick = last_tick(&env.ok(&["capture", "-t", "tick"]));
        wait_until("the pane ticking on", || {
            (last_tick(&env.ok(&["capture", "-t", "tick"])) > tick + 20).then_some(())
        });
        drop(stream);
        tick
    });
    let last = last_tick(&shown());
    assert!(
        last <= tick_at_exit,
        "tick-{last} was drawn after Exit (the pane was at tick-{tick_at_exit} then)"
    );
}

#[test]
fn typing_into_a_pane_that_echoes_nothing_leaves_its_later_output_flowing() {
    // The owner takes the output that follows a keystroke (its echo); a program that echoes
    // nothing must not leave the pane deaf: what it prints later still shows.
    let env = Env::new();
    let quiet = "stty -echo; echo ready; read x; echo got-$x; read y; echo got-$y; sleep 30";
    let mut c = env.client(&["new", "-s", "quiet", "--", "sh", "-c", quiet], 24, 80);
    c.wait_for("ready");
    c.send("first");
    c.send("\r");
    c.wait_for("got-first");
    c.send("second\r");
    c.wait_for("got-second");
}

#[test]
fn a_flood_started_by_a_keystroke_is_drawn_to_its_end() {
    // The owner reads one chunk of what follows a keystroke and hands the rest back to the
    // pane's reader thread.
    let env = Env::new();
    let mut c = env.client(&["new", "-s", "flood", "--", "sh"], 24, 80);
    c.wait_for("$ ");
    c.send("yes | head -c 3000000 | tail -c 20; echo flood-$((40+2))\r");
    c.wait_for("flood-42");
    c.send("echo after-$((6*7))\r");
    c.wait_for("after-42");
}
