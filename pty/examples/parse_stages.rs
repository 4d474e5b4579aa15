//! Where a pane's reader thread spends its time: each pass `Terminal::process` makes over a
//! chunk, run alone over muxbench's mixed ANSI text (the same text as `parse_bench`) in 64 KiB
//! chunks at 200x50, in MB/s. A pass that runs at many GB/s costs nothing; the slowest ones
//! set the pane's throughput (the whole is about the harmonic sum of the parts).
//!
//! Rates are per CPU second of the benchmark's thread (per core, what other programs on a busy
//! machine change least), with wall-clock rates beside them.
//!
//! `cargo run --release -p calyx-pty --example parse_stages [MB] [RUNS] [lf]` (default 64 MB,
//! best of 3; the text as the PTY delivers it, `\r\n` line ends, unless `lf`). Stages:
//! - `osc cap`: `OscCap::filter` (ESC to ESC with memchr, looking for over-long OSC strings);
//! - `charset`: `Charset::translate` (DEC line drawing; a search for `ESC ( 0` when unused);
//! - `history`: `History::push` (copy into the byte log, count newlines, trim);
//! - `marks`: `CommandLog::feed` (the OSC 133 / OSC 7 scan, nothing running);
//! - `vte only`: vte's state machine with a performer that does nothing (the floor of any
//!   vte-based screen);
//! - `vt100`: vt100's parser and screen (vte plus the screen writes), 100 rows of scrollback;
//! - `vt100 reference`: the same with the fast text path switched off (the per-character path);
//! - `Terminal::process`: all of it, as the reader thread runs it.

use std::time::Instant;

use calyx_pty::history::History;
use calyx_pty::{Answerback, CommandLog, HistoryLimits, Terminal};

#[path = "support/muxbench_text.rs"]
mod muxbench_text;

/// A performer that only receives the events: what vte alone costs.
struct Nothing(u64);

impl vte::Perform for Nothing {
    fn print(&mut self, c: char) {
        self.0 = self.0.wrapping_add(u64::from(c));
    }
    fn execute(&mut self, byte: u8) {
        self.0 = self.0.wrapping_add(u64::from(byte));
    }
}

/// The best rate of `runs` runs, by CPU time (per core) and by wall time, in MB/s.
fn best_rate(bytes: usize, runs: usize, mut run: impl FnMut()) -> (f64, f64) {
    let (mut cpu, mut wall) = (f64::MAX, f64::MAX);
    for _ in 0..runs {
        let start = Instant::now();
        let cpu_start = muxbench_text::thread_cpu_seconds();
        run();
        cpu = cpu.min(muxbench_text::thread_cpu_seconds() - cpu_start);
        wall = wall.min(start.elapsed().as_secs_f64());
    }
    let mb = bytes as f64 / (1024.0 * 1024.0);
    (mb / cpu, mb / wall)
}

fn vt100_parser() -> vt100::Parser<Answerback> {
    vt100::Parser::new_with_callbacks(
        std::num::NonZeroU16::new(50).unwrap_or(std::num::NonZeroU16::MIN),
        std::num::NonZeroU16::new(200).unwrap_or(std::num::NonZeroU16::MIN),
        calyx_pty::terminal::LIVE_SCROLLBACK_ROWS,
        Answerback::default(),
    )
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mb: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(64);
    let runs: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(3);
    let lf = args.next().as_deref() == Some("lf");
    let data = muxbench_text::payload(mb, false);
    let data = if lf {
        data
    } else {
        muxbench_text::as_the_pty_delivers(&data)
    };
    let chunks: Vec<&[u8]> = data.chunks(64 * 1024).collect();
    let n = data.len();
    let limits = HistoryLimits::default();

    let mut rows: Vec<(&str, (f64, f64))> = Vec::new();
    rows.push((
        "osc cap",
        best_rate(n, runs, || {
            let mut cap = calyx_pty::osc_cap::OscCap::default();
            for c in &chunks {
                std::hint::black_box(cap.filter(c));
            }
        }),
    ));
    rows.push((
        "charset",
        best_rate(n, runs, || {
            let mut charset = calyx_pty::charset::Charset::default();
            for c in &chunks {
                std::hint::black_box(charset.translate(c));
            }
        }),
    ));
    rows.push((
        "history",
        best_rate(n, runs, || {
            let mut history = History::new(limits.lines, limits.bytes);
            for c in &chunks {
                history.push(c);
            }
            std::hint::black_box(history.len_bytes());
        }),
    ));
    rows.push((
        "marks",
        best_rate(n, runs, || {
            let mut log = CommandLog::default();
            for c in &chunks {
                log.feed(c);
            }
            std::hint::black_box(log.changes());
        }),
    ));
    rows.push((
        "vte only",
        best_rate(n, runs, || {
            let mut parser = vte::Parser::new();
            let mut nothing = Nothing(0);
            for c in &chunks {
                parser.advance(&mut nothing, c);
            }
            std::hint::black_box(nothing.0);
        }),
    ));
    for (name, reference) in [("vt100", false), ("vt100 reference", true)] {
        rows.push((
            name,
            best_rate(n, runs, || {
                let mut parser = vt100_parser();
                parser.set_reference_text_path(reference);
                for c in &chunks {
                    parser.process(c);
                }
                std::hint::black_box(parser.screen().cursor_position());
            }),
        ));
    }
    rows.push((
        "Terminal::process",
        best_rate(n, runs, || {
            let mut term = Terminal::new(50, 200, limits);
            for c in &chunks {
                term.process(c);
                let _ = term.drain();
            }
        }),
    ));
    let total = n as f64 / (1024.0 * 1024.0);
    let ends = if lf { "\\n" } else { "\\r\\n" };
    println!("{total:.0} MB of muxbench text ({ends} line ends) in 64 KiB chunks at 200x50, best of {runs}:");
    println!(
        "  {:<18} {:>14} {:>12} {:>14}",
        "stage", "MB/s per core", "ns/byte", "MB/s wall"
    );
    for (name, (cpu, wall)) in rows {
        // Nanoseconds per byte: the parts of a pass add up in these, not in MB/s.
        let ns = 1e9 / (cpu * 1024.0 * 1024.0);
        println!("  {name:<18} {cpu:>14.1} {ns:>12.2} {wall:>14.1}");
    }
}
