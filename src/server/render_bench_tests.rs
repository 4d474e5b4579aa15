//! What drawing one keystroke's echo costs the owner: `render::render_client` on the in-place
//! path (the frame's chrome gathered and compared, the changed row painted, compared and
//! emitted) for a 200x50 client, one typed character a frame and a new line every 150. A
//! benchmark, not a test (timings are not asserted); it prints the figure for
//! docs/performance.md:
//! `cargo test --release --lib render_bench -- --ignored --nocapture`.

use std::time::{Duration, Instant};

use super::reducer_tests::{Harness, CLIENT};

#[test]
#[ignore = "a benchmark: run with --ignored --nocapture, in release"]
fn render_bench_an_echo_frame() {
    const FRAMES: usize = 20_000;
    let mut h = Harness::new(50, 200);
    h.wait_ready();
    let pane = h.active();
    h.frame();
    let agents = super::view::sidebar::AgentsView::build(
        &h.server.state,
        &h.server.agents,
        &h.server.approvals,
    );
    let terminal = std::sync::Arc::clone(&h.server.state.panes[&pane].terminal);
    let mut took = Vec::with_capacity(FRAMES);
    let mut bytes = 0;
    for i in 0..FRAMES {
        let typed: &[u8] = if i % 150 == 149 { b"\r\n" } else { b"x" };
        terminal
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .process(typed);
        let start = Instant::now();
        let cache = h.server.frames.entry(CLIENT).or_default();
        let rendered =
            super::render::render_client(&mut h.server.state, &agents, None, None, CLIENT, cache);
        took.push(start.elapsed());
        bytes += rendered.map_or(0, |r| r.bytes.len());
    }
    took.sort();
    let mean = took.iter().sum::<Duration>() / u32::try_from(FRAMES).unwrap_or(u32::MAX);
    eprintln!(
        "echo frame, 200x50: p50 {:?}, p90 {:?}, p99 {:?}, mean {mean:?}, {} bytes a frame",
        took[FRAMES / 2],
        took[FRAMES * 9 / 10],
        took[FRAMES * 99 / 100],
        bytes / FRAMES
    );
}
