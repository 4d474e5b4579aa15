//! Giving freed memory back to the system after a burst of it was let go: MCP sessions
//! closing, a huge client leaving, a session shrinking.
//!
//! glibc's malloc keeps freed memory in its arenas for reuse, so the server's resident size
//! stays where the burst took it. A little while after the frees (so a burst, or a user
//! dragging a window's size, costs one trim), `malloc_trim(0)` hands the free pages back
//! ([`calyx_pty::release_freed_memory`]). It runs on a blocking thread, never on the owner's or
//! the endpoint's, and at most once per [`TRIM_DELAY`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How long after a free the trim runs: frees within it share that one trim.
pub const TRIM_DELAY: Duration = Duration::from_secs(2);

/// Schedules trims; cheap to call on every free. Clones share one schedule.
#[derive(Debug, Default, Clone)]
pub struct Trimmer {
    pending: Arc<AtomicBool>,
}

impl Trimmer {
    /// Trims in [`TRIM_DELAY`] unless a trim is already scheduled. Outside a tokio runtime
    /// (nothing to schedule on) it does nothing.
    pub fn soon(&self) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if self.pending.swap(true, Ordering::AcqRel) {
            return;
        }
        let pending = self.pending.clone();
        runtime.spawn(async move {
            tokio::time::sleep(TRIM_DELAY).await;
            pending.store(false, Ordering::Release);
            let _ = tokio::task::spawn_blocking(calyx_pty::release_freed_memory).await;
        });
    }
}
