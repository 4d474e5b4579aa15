//! What drawing one keystroke's echo costs the owner: `render::render_client` on the in-place
//! path (the frame's chrome gathered and compared, the changed row painted, compared and
//! emitted), and `render::render_early` (the same update in the chrome last drawn, which the
//! owner sends before it gathers the chrome) for a 200x50 client, one typed character a frame and a new line every 150; warm
//! (frame after frame), and cold (32 MiB written between frames, as the other programs on a
//! keystroke's path do to the caches in the 10 ms between two keys). Benchmarks, not tests
//! (timings are not asserted); they print the figures for docs/performance.md:
//! `cargo test --release --lib render_bench -- --ignored --nocapture --test-threads 1`.

use std::time::{Duration, Instant};

use super::reducer_tests::{Harness, CLIENT};

#[test]
#[ignore = "a benchmark: run with --ignored --nocapture, in release"]
fn render_bench_an_echo_frame() {
    echo_frames("warm", 20_000, 0, Frame::Usual);
    echo_frames("warm", 20_000, 0, Frame::Early);
}

#[test]
#[ignore = "a benchmark: run with --ignored --nocapture, in release"]
fn render_bench_a_cold_echo_frame() {
    echo_frames("cold", 2_000, 32 << 20, Frame::Usual);
    echo_frames("cold", 2_000, 32 << 20, Frame::Early);
}

/// Which frame is timed.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Frame {
    /// `render_client`: the chrome gathered and compared, then the update in place.
    Usual,
    /// `render_early` (the echo's frame as the owner sends it), with `render_client` run
    /// after it untimed, as the owner does once the echo is on its way.
    Early,
}

/// Times `frames` echo frames, writing `evict` bytes between two frames; prints the figures.
fn echo_frames(label: &str, frames: usize, evict: usize, frame: Frame) {
    let mut sweep = vec![0u8; evict];
    let mut h = Harness::new(50, 200);
    h.wait_ready();
    let pane = h.active();
    h.frame();
    let agents = h.agents();
    let terminal = std::sync::Arc::clone(&h.server.state.panes[&pane].terminal);
    let mut took = Vec::with_capacity(frames);
    let mut bytes = 0;
    for i in 0..frames {
        // One write per cache line; `black_box` keeps the writes from being optimised away.
        sweep
            .iter_mut()
            .step_by(64)
            .for_each(|b| *b = b.wrapping_add(1));
        std::hint::black_box(&mut sweep);
        let typed: &[u8] = if i % 150 == 149 { b"\r\n" } else { b"x" };
        terminal
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .process(typed);
        let start = Instant::now();
        let cache = h.server.frames.entry(CLIENT).or_default();
        if frame == Frame::Early {
            let early = super::render::render_early(&mut h.server.state, CLIENT, cache);
            took.push(start.elapsed());
            bytes += early.map_or(0, |r| r.bytes.len());
        }
        let rendered =
            super::render::render_client(&mut h.server.state, &agents, None, None, CLIENT, cache);
        if frame == Frame::Usual {
            took.push(start.elapsed());
        }
        bytes += rendered.map_or(0, |r| r.bytes.len());
    }
    took.sort();
    let mean = took.iter().sum::<Duration>() / u32::try_from(frames).unwrap_or(u32::MAX);
    eprintln!(
        "{label} echo frame ({frame:?}), 200x50: p50 {:?}, p90 {:?}, p99 {:?}, mean {mean:?}, {} \
         bytes a frame",
        took[frames / 2],
        took[frames * 9 / 10],
        took[frames * 99 / 100],
        bytes / frames
    );
}
