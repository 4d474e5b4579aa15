//! End to end: typed input reaches the pane's program whole and in order, and a program that
//! stops reading its input never blocks the server (keystrokes are written to the PTY without
//! blocking, the rest queued behind them).

use crate::common;

use std::io::Write;
use std::process::{Command, Stdio};

use common::{wait_until, Env};

/// What `cksum` prints for `data`.
fn cksum(data: &[u8]) -> String {
    let mut child = Command::new("cksum")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("cksum");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(data)
        .expect("feed cksum");
    let out = child.wait_with_output().expect("cksum output");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn input_to_a_program_that_is_not_reading_is_queued_in_order_without_blocking_the_server() {
    let env = Env::new();
    let go = env.path().join("go");
    let script = format!(
        "stty raw -echo; echo waiting; while [ ! -e {} ]; do sleep 0.05; done; \
         head -c 100000 | cksum; sleep 60",
        go.display()
    );
    let mut c = env.client(&["new", "--", "sh", "-c", &script], 24, 80);
    c.wait_for("waiting");
    // 100 KB typed in small pieces, far more than the PTY's input buffer holds.
    let data: Vec<u8> = (0..100_000u32)
        .map(|i| b"abcdefghijklmnopqrstuvwxyz0123456789"[(i * 7 % 36) as usize])
        .collect();
    let (first, second) = data.split_at(50_000);
    for piece in first.chunks(100) {
        c.send(piece);
    }
    // The server still answers while the program reads nothing.
    let panes = env.panes();
    assert_eq!(panes.len(), 1);
    // The program starts reading while the rest is still being typed: newer keys must not
    // overtake the queued ones.
    std::fs::write(&go, b"").expect("go");
    for piece in second.chunks(100) {
        c.send(piece);
    }
    let want = cksum(&data);
    wait_until("the program read all input in order", || {
        let screen = c.screen();
        screen.contains(&want).then_some(())
    });
}
