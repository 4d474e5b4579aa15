//! A keystroke's echo is drawn before the pane's reader thread gets reading back
//! (`echo_watch::release_echo_watch`): the hand-back's system calls used to sit between the
//! echo's read and its frame's write. A real pane in a real PTY, driven by the owner loop's own
//! `turn`; what happened in which turn, not timings.

use std::time::{Duration, Instant};

use super::reducer_tests::{current_thread_runtime, Harness};

#[test]
fn a_keys_echo_is_drawn_in_the_turn_that_hands_reading_back_to_the_pane() {
    let mut h = Harness::new(25, 80);
    let pane = h.shell_pane();
    let runtime = current_thread_runtime();
    runtime.block_on(async {
        h.server.owner_loop = true;
        let deadline = Instant::now() + Duration::from_secs(60);
        h.type_until_the_owner_reads_an_echo(deadline).await;
        assert!(
            h.server.echo_watch.is_none(),
            "the echo read ended the watch"
        );
        let frames = h.server.state.counts.now().frames;
        // The next turn draws the echo's frame (due at once) and then hands reading back.
        let _ = tokio::time::timeout(Duration::from_secs(1), h.server.turn(&mut h.owner_rx)).await;
        assert!(
            h.server.echo_read.is_none(),
            "reading was not handed back to the pane in the turn after the echo"
        );
        assert!(
            h.server.state.counts.now().frames > frames,
            "the echo's frame was not drawn in the turn that handed reading back"
        );
        // The reader reads again: what the shell prints next reaches the screen.
        h.server.owner_loop = false;
        h.keys(b"\x15echo after-$((6*7))\r");
        h.server.end_echo_watch();
    });
    h.wait_pane(pane, "after-42");
}
