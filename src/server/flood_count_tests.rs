//! What a flooding pane costs the owner loop, counted (issue 19): a pane's reader notifies the
//! owner after each read it parses (about 4 KiB), and the owner used to take each notification
//! at once, so a flood cost it one wake-up and one terminal lock per read. Notifications that
//! come while a frame is pending are now folded into that frame: about one per frame. A real
//! pane in a real PTY, driven by the owner loop's own `turn`; counts, not timings.

use std::sync::Arc;
use std::time::Duration;

use super::model::state::try_lock_terminal;
use super::reducer_tests::{current_thread_runtime, Harness};

/// About 4.3 MB of 72-byte lines, then a marker (split by quotes, so the typed command line
/// itself does not show it).
const FLOOD: &[u8] =
    b"yes 01234567890123456789012345678901234567890123456789012345678901234567890 \
| head -n 60000; echo FLOOD-''DONE\r";

/// Floods a shell pane and returns the owner's counts for the flood (`fold`: whether output
/// folds into a pending frame; off is the owner as it was before).
fn flood_counts(fold: bool) -> Counted {
    let mut h = Harness::new(25, 80);
    h.server.fold_output = fold;
    let pane = h.shell_pane();
    let terminal = Arc::clone(&h.server.state.panes[&pane].terminal);
    let runtime = current_thread_runtime();
    let before = h.server.state.counts.now();
    runtime.block_on(async {
        h.server.owner_loop = true;
        h.keys(FLOOD);
        let deadline = std::time::Instant::now() + Duration::from_secs(120);
        let mut typed = false;
        loop {
            // A key typed into the pane while its output is held for a frame: the held output
            // is taken at once, and the key's echo is still awaited (drawn without waiting for
            // the frame).
            if !typed && h.server.output_held.contains(&pane) {
                typed = true;
                h.keys(b" ");
                assert!(
                    !h.server.output_held.contains(&pane),
                    "typing left the pane's output held for the frame"
                );
                assert!(
                    h.server.echo_pending.contains(&pane),
                    "the key's echo is no longer awaited"
                );
            }
            let done = try_lock_terminal(&terminal)
                .is_some_and(|t| t.screen().contents().contains("FLOOD-DONE"));
            if done {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the flood did not end in 120 s"
            );
            // A turn that finds nothing to do waits for the next message: not for ever.
            let _ =
                tokio::time::timeout(Duration::from_secs(1), h.server.turn(&mut h.owner_rx)).await;
        }
        assert_eq!(
            typed, fold,
            "output was held for a frame only with folding on"
        );
        h.server.owner_loop = false;
        h.server.stop_owner_reads();
    });
    let after = h.server.state.counts.now();
    let counted = Counted {
        notifications: after.notifications - before.notifications,
        held: after.held - before.held,
        frames: after.frames - before.frames,
        locks: after.locks - before.locks,
        busy: after.busy - before.busy,
    };
    // Printed for docs/performance.md (`cargo test --lib flood_count -- --nocapture`).
    eprintln!(
        "4.3 MB flood, folding {fold}: {} notifications, {} held for a frame, {} frames, {} \
         terminal locks taken, {} found busy",
        counted.notifications, counted.held, counted.frames, counted.locks, counted.busy
    );
    counted
}

/// What the owner did during one flood.
#[derive(Debug)]
struct Counted {
    notifications: u64,
    held: u64,
    frames: u64,
    locks: u64,
    busy: u64,
}

#[test]
fn a_flooding_pane_costs_the_owner_about_one_notification_a_frame() {
    let folded = flood_counts(true);
    assert!(folded.frames > 0, "the flood was never drawn");
    assert!(
        folded.held > 0,
        "{folded:?}: no output was held for a frame"
    );
    // One notification per frame, plus one more when the frame found the reader in the lock
    // and looked again, plus slack for the prompt's echo and the last output.
    assert!(
        folded.notifications <= 2 * folded.frames + 10,
        "{folded:?}: the owner took the reader's notifications one read at a time"
    );
    assert!(
        folded.locks <= 3 * folded.frames + 10,
        "{folded:?}: the owner locked the terminal more than a few times a frame"
    );
}

/// The same flood with folding off: what the owner did before, and proof that the bound above
/// can fail (its notifications come one read at a time, many per frame).
#[test]
fn without_folding_a_flood_costs_the_owner_a_notification_a_read() {
    let unfolded = flood_counts(false);
    assert!(unfolded.frames > 0, "the flood was never drawn");
    assert_eq!(
        unfolded.held, 0,
        "{unfolded:?}: output was held with folding off"
    );
    assert!(
        unfolded.notifications > 2 * unfolded.frames + 10,
        "{unfolded:?}: without folding the owner should hear of each read"
    );
}
