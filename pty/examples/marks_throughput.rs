//! What the shell-integration scanner costs on the parse path: 64 MB of mixed ANSI text fed in
//! 64 KiB chunks to the command log alone and to a whole `Terminal` (vt100 + history + log),
//! without marks and inside one running command (so every byte is also captured), and the
//! work at a command's end for 1 MiB of output.
//!
//! `cargo run --release -p calyx-pty --example marks_throughput`

use std::time::Instant;

use calyx_pty::{CommandLog, HistoryLimits, Terminal};

fn sample() -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0u64;
    while out.len() < 64 << 20 {
        let line = format!(
            "\x1b[1;3{}m{i:08}\x1b[0m plain text of a build log line \x1b[32mok\x1b[0m {}\r\n",
            i % 8,
            "x".repeat((i % 40) as usize)
        );
        out.extend_from_slice(line.as_bytes());
        i += 1;
    }
    out
}

fn rate(bytes: usize, run: impl FnOnce()) -> f64 {
    let start = Instant::now();
    run();
    bytes as f64 / start.elapsed().as_secs_f64() / 1e6
}

fn main() {
    let data = sample();
    pieces(&data);
    let chunks: Vec<&[u8]> = data.chunks(64 * 1024).collect();
    let log_only = rate(data.len(), || {
        let mut log = CommandLog::default();
        chunks.iter().for_each(|c| log.feed(c));
    });
    let log_capturing = rate(data.len(), || {
        let mut log = CommandLog::default();
        log.feed(b"\x1b]133;C;cmdline=cat big.log\x07");
        chunks.iter().for_each(|c| log.feed(c));
        log.feed(b"\x1b]133;D;0\x07");
    });
    let terminal = |marks: bool| {
        rate(data.len(), || {
            let mut t = Terminal::new(50, 200, HistoryLimits::default());
            if marks {
                t.process(b"\x1b]133;C;cmdline=cat big.log\x07");
            }
            chunks.iter().for_each(|c| t.process(c));
            if marks {
                t.process(b"\x1b]133;D;0\x07");
            }
        })
    };
    let plain = terminal(false);
    let running = terminal(true);
    println!("command log alone, no command running: {log_only:.0} MB/s");
    println!("command log alone, capturing a command: {log_capturing:.0} MB/s");
    println!("Terminal::process, no command running:  {plain:.1} MB/s");
    println!("Terminal::process, capturing a command: {running:.1} MB/s");
}

/// The work at a command's end: its output (up to 1 MiB kept raw) to text, then redacted.
fn pieces(data: &[u8]) {
    let raw = &data[..1 << 20];
    let start = Instant::now();
    let text = calyx_pty::plain::plain_text(raw);
    let plain = start.elapsed();
    let start = Instant::now();
    let red = calyx_pty::redact::redact(&text);
    println!(
        "1 MiB: plain_text {plain:?}, redact {:?} ({} bytes)",
        start.elapsed(),
        red.len()
    );
}
