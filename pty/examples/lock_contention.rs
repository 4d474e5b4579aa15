//! Does a flooding pane's reader stall behind the owner, or the owner behind the reader? A real
//! pane (a PTY, its reader thread) `cat`s MB of muxbench's mixed ANSI text at 200x50, while an
//! owner thread does what the server's does for a focused pane every frame (16 ms): locks the
//! terminal, waiting if the reader is mid-parse, and copies the screen's rows. Prints the
//! pane's throughput, how many of the reader's reads found the lock taken (and had to wait),
//! and the owner's wait for the lock and hold of it per frame.
//!
//! `cargo run --release -p calyx-pty --example lock_contention [MB]` (default 64)

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use calyx_pty::{spawn, HistoryLimits, PaneEvents, SpawnOptions, Terminal};

#[path = "support/muxbench_text.rs"]
mod muxbench_text;

#[derive(Default)]
struct Exited(AtomicBool);

impl PaneEvents for Exited {
    fn output(&self) {}
    fn exited(&self, _status: Option<u32>) {
        self.0.store(true, Ordering::Release);
    }
}

fn quantile(sorted: &[Duration], q: f64) -> Duration {
    let at = ((sorted.len() as f64) * q) as usize;
    sorted
        .get(at.min(sorted.len().saturating_sub(1)))
        .copied()
        .unwrap_or_default()
}

fn main() -> std::io::Result<()> {
    let mb: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(64);
    let dir = std::env::temp_dir().join(format!("calyx-lock-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let file = dir.join("payload.txt");
    std::fs::write(&file, muxbench_text::payload(mb, false))?;
    let bytes = std::fs::metadata(&file)?.len() as f64;

    let terminal = Arc::new(Mutex::new(Terminal::new(50, 200, HistoryLimits::default())));
    let exited = Arc::new(Exited::default());
    let options = SpawnOptions {
        command: vec!["cat".into(), file.display().to_string()],
        env: vec![("PATH".into(), "/usr/bin:/bin".into())],
        rows: 50,
        cols: 200,
        ..SpawnOptions::default()
    };
    let start = Instant::now();
    let pane = spawn(&options, terminal.clone(), exited.clone())
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    let (mut waits, mut holds) = (Vec::new(), Vec::new());
    let mut frame: Vec<vt100::Cell> = Vec::new();
    while !exited.0.load(Ordering::Acquire) {
        std::thread::sleep(Duration::from_millis(16));
        let asked = Instant::now();
        let term = terminal.lock().unwrap_or_else(PoisonError::into_inner);
        let got = Instant::now();
        frame.clear();
        let screen = term.screen();
        for row in 0..screen.size().0.get() {
            frame.extend_from_slice(screen.row_cells(row).unwrap_or_default());
        }
        drop(term);
        waits.push(got - asked);
        holds.push(got.elapsed());
    }
    let elapsed = start.elapsed().as_secs_f64();
    let (reads, contended) = pane.read_stats();
    waits.sort();
    holds.sort();
    println!(
        "{mb} MB through one 200x50 pane in {elapsed:.2} s = {:.1} MB/s",
        bytes / elapsed / (1024.0 * 1024.0)
    );
    println!(
        "reader: {reads} reads parsed, {contended} found the lock taken ({:.2}%)",
        100.0 * contended as f64 / reads.max(1) as f64
    );
    for (what, d) in [
        ("owner wait for the lock", &waits),
        ("owner hold (row copy)", &holds),
    ] {
        println!(
            "{what}: {} frames, p50 {:?} p99 {:?} max {:?}",
            d.len(),
            quantile(d, 0.5),
            quantile(d, 0.99),
            d.last().copied().unwrap_or_default()
        );
    }
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
