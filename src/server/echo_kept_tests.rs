//! The owner's registration of a pane's PTY for echoes is kept from key to key
//! (`Server::echo_kept`, src/server/io/echo_watch.rs): made, registered, deregistered and
//! closed per key, it cost four system calls a keystroke. And it goes once the pane prints
//! twice what the owner did not take with no key in between, so a pane that prints on its own
//! does not wake the owner for every write. A real pane in a real PTY, driven by the owner loop's own `turn`; what
//! happened in which turn, not timings.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::reducer_tests::{current_thread_runtime, Harness};

#[test]
fn one_registration_serves_every_key_until_the_pane_prints_on_its_own() {
    let mut h = Harness::new(25, 80);
    let pane = h.shell_pane();
    let runtime = current_thread_runtime();
    runtime.block_on(async {
        h.server.owner_loop = true;
        let deadline = Instant::now() + Duration::from_secs(60);
        for _ in 0..5 {
            h.type_until_the_owner_reads_an_echo(deadline).await;
            let kept = h
                .server
                .echo_kept
                .as_ref()
                .expect("a kept registration")
                .ready();
            // The next key is watched through the same registration, not a new one.
            h.keys(b"x");
            let watched = h
                .server
                .echo_watch
                .as_ref()
                .expect("the key is watched")
                .ready();
            assert!(
                Arc::ptr_eq(&kept, &watched),
                "the next key made a registration of its own"
            );
            let _ =
                tokio::time::timeout(Duration::from_secs(1), h.server.turn(&mut h.owner_rx)).await;
        }
        // One output the owner did not take per key is let be; a second before the next key
        // drops the registration.
        h.type_until_the_owner_reads_an_echo(deadline).await;
        h.server.release_echo_watch();
        h.server.untaken_output(pane);
        assert!(
            h.server.echo_kept.is_some(),
            "one untaken output dropped it"
        );
        h.keys(b"x");
        h.server.untaken_output(pane);
        assert!(
            h.server.echo_kept.is_some(),
            "output while a key's echo is awaited dropped it"
        );
        h.type_until_the_owner_reads_an_echo(deadline).await;
        h.server.release_echo_watch();
        h.server.untaken_output(pane);
        assert!(
            h.server.echo_kept.is_some(),
            "a key did not start the count again"
        );
        h.server.untaken_output(pane);
        assert!(
            h.server.echo_kept.is_none(),
            "two untaken outputs with no key between kept it"
        );
        h.type_until_the_owner_reads_an_echo(deadline).await;
        // Real output the owner does not take, twice with no key in between (each printed a
        // second after the last, so each is its own read), drops it.
        h.keys(b"\x15sleep 1; echo late-$((6*7)); sleep 1; echo later-$((6*7))\r");
        while !(h.server.echo_kept.is_none() && h.pane_text(pane).contains("later-42")) {
            assert!(
                Instant::now() < deadline,
                "the registration outlived output the owner did not take"
            );
            let _ =
                tokio::time::timeout(Duration::from_secs(1), h.server.turn(&mut h.owner_rx)).await;
        }
        // The next key registers again, and its echo is read.
        h.type_until_the_owner_reads_an_echo(deadline).await;
        assert!(
            h.server.echo_kept.is_some(),
            "the new key's registration is kept"
        );
        h.server.owner_loop = false;
        h.server.end_echo_watch();
    });
}
