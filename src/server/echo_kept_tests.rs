//! The owner reads the output of the pane keys go to itself, from key to key
//! (`Server::owner_reads`, src/server/io/echo_watch.rs): taking it from the pane's reader
//! thread and giving it back per key cost two `epoll_ctl`s a keystroke, and registering a
//! descriptor per key four more system calls. Reading goes back to the reader thread once the
//! pane prints twice what was no key's echo with no key in between, or prints in bulk, so a
//! pane that prints on its own does not keep the owner reading it. A real pane in a real PTY,
//! driven by the owner loop's own `turn`; what happened in which turn, not timings.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::reducer_tests::{current_thread_runtime, Harness};

#[test]
fn one_take_serves_every_key_until_the_pane_prints_on_its_own() {
    let mut h = Harness::new(25, 80);
    let pane = h.shell_pane();
    let runtime = current_thread_runtime();
    runtime.block_on(async {
        h.server.owner_loop = true;
        let deadline = Instant::now() + Duration::from_secs(60);
        for _ in 0..5 {
            h.type_until_the_owner_reads_an_echo(deadline).await;
            let frames = h.server.state.counts.now().frames;
            let _ =
                tokio::time::timeout(Duration::from_secs(1), h.server.turn(&mut h.owner_rx)).await;
            assert!(
                h.server.state.counts.now().frames > frames,
                "the echo's frame was not drawn in the next turn"
            );
            let reads = h.server.owner_reads.as_ref().expect("the owner reads on");
            assert_eq!(reads.pane(), pane);
            let kept = reads.ready();
            // The next key is read through the same registration, not a new one.
            h.keys(b"x");
            let reads = h.server.owner_reads.as_ref().expect("the key is awaited");
            assert!(reads.awaiting_echo(), "the key's echo is not awaited");
            assert!(
                Arc::ptr_eq(&kept, &reads.ready()),
                "the next key made a registration of its own"
            );
            let _ =
                tokio::time::timeout(Duration::from_secs(1), h.server.turn(&mut h.owner_rx)).await;
        }
        // One output that was no key's echo is let be per key; a second before the next key
        // gives reading back.
        h.type_until_the_owner_reads_an_echo(deadline).await;
        h.server.untaken_output(pane);
        assert!(
            h.server.owner_reads.is_some(),
            "one untaken output gave reading back"
        );
        h.keys(b"x");
        h.server.untaken_output(pane);
        assert!(
            h.server.owner_reads.is_some(),
            "output while a key's echo is awaited gave reading back"
        );
        h.type_until_the_owner_reads_an_echo(deadline).await;
        h.server.untaken_output(pane);
        assert!(
            h.server.owner_reads.is_some(),
            "a key did not start the count again"
        );
        h.server.untaken_output(pane);
        assert!(
            h.server.owner_reads.is_none(),
            "two untaken outputs with no key between kept the owner reading"
        );
        h.type_until_the_owner_reads_an_echo(deadline).await;
        // Real output that is no key's echo, twice with no key in between (each printed a
        // second after the last, so each is its own read), gives reading back, and all of it
        // reaches the screen whoever reads it.
        h.keys(b"\x15sleep 1; echo late-$((6*7)); sleep 1; echo later-$((6*7))\r");
        while !(h.server.owner_reads.is_none() && h.pane_text(pane).contains("later-42")) {
            assert!(
                Instant::now() < deadline,
                "the owner kept reading output that was no key's echo"
            );
            let _ =
                tokio::time::timeout(Duration::from_secs(1), h.server.turn(&mut h.owner_rx)).await;
        }
        // The next key takes the pane again, and its echo is read.
        h.type_until_the_owner_reads_an_echo(deadline).await;
        assert!(h.server.owner_reads.is_some(), "the new key's take is kept");
        h.server.owner_loop = false;
        h.server.stop_owner_reads();
    });
}

/// Output in bulk while the owner reads the pane (more than one owner read holds, printed at
/// once, then nothing more): the owner gives reading back and every byte reaches the screen.
#[test]
fn bulk_output_while_the_owner_reads_reaches_the_screen_whole() {
    let mut h = Harness::new(25, 80);
    let pane = h.shell_pane();
    let dir = tempfile::tempdir().expect("tempdir");
    let bulk = dir.path().join("bulk");
    // 5997 'y's then a marker, written by one `dd` write; the shell then sleeps, printing
    // nothing, so no later output can wake a stalled read.
    let mut text = vec![b'y'; 5997];
    text.extend_from_slice(b"BULK-END");
    std::fs::write(&bulk, &text).expect("write the bulk file");
    let runtime = current_thread_runtime();
    runtime.block_on(async {
        h.server.owner_loop = true;
        let deadline = Instant::now() + Duration::from_secs(60);
        h.type_until_the_owner_reads_an_echo(deadline).await;
        let command = format!(
            "\x15dd if={} bs=65536 status=none; sleep 30\r",
            bulk.display()
        );
        h.keys(command.as_bytes());
        while !(h.server.owner_reads.is_none() && h.pane_text(pane).contains("BULK-END")) {
            assert!(
                Instant::now() < deadline,
                "bulk output stalled or kept the owner reading: {:?}",
                h.pane_text(pane)
            );
            let _ =
                tokio::time::timeout(Duration::from_secs(1), h.server.turn(&mut h.owner_rx)).await;
        }
        let text = h.pane_text(pane);
        let ys = text.matches('y').count();
        assert!(
            ys >= 500 && text.contains("yBULK-END"),
            "the screen does not end with the bulk: {text:?}"
        );
        h.server.owner_loop = false;
        h.server.stop_owner_reads();
        h.keys(b"\x03");
    });
}
