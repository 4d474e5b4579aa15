//! Parse-rate benchmark of a pane's live screen: the ceiling of a pane's throughput, since one
//! pane's stream is parsed on one thread. Feeds muxbench's mixed ANSI text (the same four line
//! kinds as ../shared/bench/muxbench.py) through `calyx_pty::Terminal` at 200x50 and prints MB/s.
//!
//! `cargo run --release -p calyx-pty --example parse_bench [MB] [plain|links|manylinks][-pty] [RUNS]`
//! (default 64 MB, 3 runs, best reported); with `links`, every fifth line also carries an OSC 8
//! hyperlink and strikethrough, to price them; `manylinks` is a hostile stream of nothing but
//! distinct links (a new id and URI every few cells, so the screen holds thousands at once:
//! issue 13's 11.6 MB that took a pane's reader 20 s). On a shared machine, wall time drifts with the load; comparing
//! `perf stat -e instructions:u` of RUNS=1 and RUNS=3 gives the cost of two parses that does not.

use std::time::Instant;

use calyx_pty::{HistoryLimits, Terminal};

#[path = "support/muxbench_text.rs"]
mod muxbench_text;

/// Distinct links, 64 to a line, each two cells of text: a 200x50 screen and its 100 rows above
/// hold about 9,600 at once, more than the link table.
fn many_links(mb: usize) -> Vec<u8> {
    let target = mb * 1024 * 1024;
    let mut out = String::with_capacity(target + 256);
    let mut i = 0usize;
    while out.len() < target {
        out.push_str(&format!(
            "\x1b]8;id=n{i};https://e.example/{i}\x1b\\w{}\x1b]8;;\x1b\\ ",
            i % 10
        ));
        i += 1;
        if i.is_multiple_of(64) {
            out.push('\n');
        }
    }
    out.into_bytes()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mb = args.next().and_then(|a| a.parse().ok()).unwrap_or(64);
    let mode = args.next().unwrap_or_default();
    // `-pty`: each `\n` becomes `\r\n`, as the PTY's line discipline delivers a file that
    // `cat` prints (without it, lines run on from where the last one ended, and wrap).
    let (mode, pty) = match mode.strip_suffix("-pty") {
        Some(m) => (m.to_string(), true),
        None => (mode, false),
    };
    let links = mode == "links" || mode == "manylinks";
    let runs: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(3);
    let data = if mode == "manylinks" {
        many_links(mb)
    } else {
        muxbench_text::payload(mb, links)
    };
    let data = if pty {
        muxbench_text::as_the_pty_delivers(&data)
    } else {
        data
    };
    let mut best = f64::MAX;
    let mut best_cpu = f64::MAX;
    for _ in 0..runs {
        let mut term = Terminal::new(
            50,
            200,
            HistoryLimits {
                lines: 10_000,
                bytes: 4 << 20,
            },
        );
        let start = Instant::now();
        let cpu_start = muxbench_text::thread_cpu_seconds();
        // The reader thread hands the parser chunks of at most 64 KiB.
        for chunk in data.chunks(64 * 1024) {
            term.process(chunk);
            let _ = term.drain();
        }
        best = best.min(start.elapsed().as_secs_f64());
        best_cpu = best_cpu.min(muxbench_text::thread_cpu_seconds() - cpu_start);
    }
    let size = data.len() as f64 / (1024.0 * 1024.0);
    println!(
        "parse {size:.0} MB{}{}: best of {runs} {:.3} s = {:.1} MB/s; per CPU second {:.1} MB/s",
        match mode.as_str() {
            "links" => " (with links)",
            "manylinks" => " (distinct links only)",
            _ => "",
        },
        if pty { ", \\r\\n as from the PTY" } else { "" },
        best,
        size / best,
        size / best_cpu
    );
}
