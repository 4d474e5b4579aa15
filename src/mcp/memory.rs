//! Giving freed memory back to the system after MCP sessions close.
//!
//! glibc's malloc keeps freed memory in its arenas for reuse, so a burst of sessions that all
//! expire can leave the server's resident size where the burst took it. A little while after
//! sessions close (so a burst of closes costs one trim), `malloc_trim(0)` hands the free pages
//! back. It runs on a blocking thread, never on the owner's or the endpoint's, and at most once
//! per [`TRIM_DELAY`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How long after a session closes the trim runs: closes within it share that one trim.
pub const TRIM_DELAY: Duration = Duration::from_secs(2);

/// Schedules trims; cheap to call on every close.
#[derive(Debug, Default)]
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
            let _ = tokio::task::spawn_blocking(trim).await;
        });
    }
}

/// Returns free heap memory to the system.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn trim() {
    // SAFETY: malloc_trim only walks and releases the allocator's own free lists under its
    // own locks; it takes no pointers from us and is safe to call from any thread. It is a
    // glibc extension, so nix (POSIX and kernel interfaces) has no wrapper for it.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Other allocators (musl, macOS) return memory on their own terms.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim() {}
