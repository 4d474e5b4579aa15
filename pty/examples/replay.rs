//! Replays a recorded byte stream (fixtures/streams/*.bin) into a pane's terminal and prints
//! what a test would see: the screen, the title, the modes, and the answers calyx gives to the
//! queries in the stream. For writing the assertions of a new recording.
//!
//! `cargo run -p calyx-pty --example replay -- FILE ROWS COLS [alt]`: with `alt`, the stream is
//! cut just before the program leaves the alternate screen for the last time (full-screen
//! programs restore the shell's screen when they exit, hiding what they drew).

use calyx_pty::{HistoryLimits, Terminal};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [file, rows, cols, rest @ ..] = args.as_slice() else {
        eprintln!("usage: replay FILE ROWS COLS [alt]");
        std::process::exit(2);
    };
    let (Ok(rows), Ok(cols)) = (rows.parse::<u16>(), cols.parse::<u16>()) else {
        eprintln!("ROWS and COLS are numbers");
        std::process::exit(2);
    };
    let stream = match std::fs::read(file) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{file}: {e}");
            std::process::exit(1);
        }
    };
    let end = if rest.first().map(String::as_str) == Some("alt") {
        stream
            .windows(8)
            .rposition(|w| w == b"\x1b[?1049l")
            .unwrap_or(stream.len())
    } else {
        stream.len()
    };
    let mut t = Terminal::new(rows, cols, HistoryLimits::default());
    t.process(&stream[..end]);
    let drained = t.drain();
    let screen = t.screen();
    println!(
        "--- screen ({rows}x{cols}, {end} of {} bytes) ---",
        stream.len()
    );
    for line in screen.rows(0, cols) {
        println!("|{}", line.trim_end());
    }
    println!("--- state ---");
    println!("title: {:?}", t.title());
    println!(
        "alternate screen: {}, cursor hidden: {}, application cursor: {}, bracketed paste: {}, focus events: {}, mouse: {:?}/{:?}, synchronized: {}",
        screen.alternate_screen(),
        screen.hide_cursor(),
        screen.application_cursor(),
        screen.bracketed_paste(),
        t.wants_focus_events(),
        screen.mouse_protocol_mode(),
        screen.mouse_protocol_encoding(),
        t.synchronized_output(),
    );
    println!(
        "cursor: {:?}, bells: {}",
        screen.cursor_position(),
        drained.bells
    );
    println!("--- replies ---");
    println!("{:?}", String::from_utf8_lossy(&drained.replies));
}
