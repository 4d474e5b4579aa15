//! Does a flooding pane's reader stall behind the owner, or the owner behind the reader? A real
//! pane (a PTY, its reader thread) `cat`s MB of muxbench's mixed ANSI text at 200x50, while an
//! owner thread does what the server's does for a focused pane every frame (16 ms): locks the
//! terminal, waiting if the reader is mid-parse, and copies the screen's rows. Prints the
//! pane's throughput, how many of the reader's reads found the lock taken (and had to wait),
//! and the owner's wait for the lock and hold of it per frame.
//!
//! What the owner does under the lock, by MODE:
//! - `rows` (the default): copies the screen's rows into a vector, nothing else;
//! - `draw`: draws every row into a 200x50 frame with `calyx_tui::PaneView::render_rows`, as
//!   the server's frames did before session 15 (a flood changes every row);
//! - `copy`: copies every row with `calyx_tui::CopiedRows` and draws the copy after letting the
//!   lock go, as the server's in-place frames do now.
//!
//! `cargo run --release -p calyx-pty --example lock_contention [MB] [rows|draw|copy]` (default
//! 64 rows)

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use calyx_pty::{spawn, HistoryLimits, PaneEvents, SpawnOptions, Terminal};
use calyx_tui::{CopiedRows, PaneView};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

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
    let mode = std::env::args().nth(2).unwrap_or_else(|| "rows".into());
    if !["rows", "draw", "copy"].contains(&mode.as_str()) {
        return Err(std::io::Error::other(format!(
            "unknown mode {mode}: rows, draw or copy"
        )));
    }
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
    let area = Rect::new(0, 0, 200, 50);
    let mut buf = Buffer::empty(area);
    let mut copy = CopiedRows::default();
    let redraw = [true; 50];
    while !exited.0.load(Ordering::Acquire) {
        std::thread::sleep(Duration::from_millis(16));
        let asked = Instant::now();
        let term = terminal.lock().unwrap_or_else(PoisonError::into_inner);
        let got = Instant::now();
        let screen = term.screen();
        match mode.as_str() {
            "draw" => PaneView {
                screen,
                highlights: &[],
            }
            .render_rows(area, &mut buf, None, &redraw),
            "copy" => copy.copy_from(screen, area, &redraw),
            _ => {
                frame.clear();
                for row in 0..screen.size().0.get() {
                    frame.extend_from_slice(screen.row_cells(row).unwrap_or_default());
                }
            }
        }
        drop(term);
        let held = got.elapsed();
        if mode == "copy" {
            copy.draw(area, &mut buf);
        }
        waits.push(got - asked);
        holds.push(held);
    }
    let elapsed = start.elapsed().as_secs_f64();
    let (reads, contended) = pane.read_stats();
    waits.sort();
    holds.sort();
    println!("owner mode: {mode}");
    println!(
        "{mb} MB through one 200x50 pane in {elapsed:.2} s = {:.1} MB/s",
        bytes / elapsed / (1024.0 * 1024.0)
    );
    println!(
        "reader: {reads} reads parsed, {contended} found the lock taken ({:.2}%)",
        100.0 * contended as f64 / reads.max(1) as f64
    );
    for (what, d) in [("owner wait for the lock", &waits), ("owner hold", &holds)] {
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
