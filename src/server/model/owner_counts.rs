//! How much work pane output costs the owner loop, counted (never timed): output
//! notifications handled, frames drawn, and pane terminal locks taken or found busy. A flooding
//! pane's reader parses a read of about 4 KiB at a time; what the owner does per read, rather
//! than per frame, is what issue 19 cut. Shared (`Arc`) so that a test can read the counts while
//! `Server::run` owns the server, and logged at debug level now and then (`CALYX_LOG=debug`).

use std::sync::atomic::{AtomicU64, Ordering};

/// The owner's counters. Only the owner thread adds to them; relaxed atomics, as each is read on
/// its own.
#[derive(Debug, Default)]
pub struct OwnerCounts {
    /// Output notifications from pane readers the owner handled (echoes it read itself too).
    notifications: AtomicU64,
    /// Notifications that arrived while a frame was pending and were folded into it.
    held: AtomicU64,
    /// Frames sent to clients.
    frames: AtomicU64,
    /// Pane terminal locks the owner took for output and frames.
    locks: AtomicU64,
    /// Times the owner found a pane terminal locked by its reader and went on without it.
    busy: AtomicU64,
}

/// The counts at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CountsNow {
    pub notifications: u64,
    pub held: u64,
    pub frames: u64,
    pub locks: u64,
    pub busy: u64,
}

impl OwnerCounts {
    pub fn notification(&self) {
        self.notifications.fetch_add(1, Ordering::Relaxed);
    }

    pub fn held(&self) {
        self.held.fetch_add(1, Ordering::Relaxed);
    }

    /// A frame was sent; every 60th (about a second of a flood) logs the counts so far, for
    /// measuring a real server (`CALYX_LOG=debug`).
    pub fn frame(&self) {
        let frames = self.frames.fetch_add(1, Ordering::Relaxed) + 1;
        if frames.is_multiple_of(60) {
            let now = self.now();
            tracing::debug!(
                notifications = now.notifications,
                held = now.held,
                frames = now.frames,
                locks = now.locks,
                busy = now.busy,
                "owner counts"
            );
        }
    }

    /// The owner tried a pane terminal's lock: `taken`, or found the reader in it.
    pub fn lock(&self, taken: bool) {
        if taken {
            self.locks.fetch_add(1, Ordering::Relaxed);
        } else {
            self.busy.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub fn now(&self) -> CountsNow {
        CountsNow {
            notifications: self.notifications.load(Ordering::Relaxed),
            held: self.held.load(Ordering::Relaxed),
            frames: self.frames.load(Ordering::Relaxed),
            locks: self.locks.load(Ordering::Relaxed),
            busy: self.busy.load(Ordering::Relaxed),
        }
    }
}
