//! Giving freed memory back to the system after a burst of it was let go: MCP sessions
//! closing, a huge client leaving, a command's connection closing while no client is attached
//! (its work done, nobody typing), a session shrinking.
//!
//! glibc's malloc keeps freed memory in its arenas for reuse, so the server's resident size
//! stays where the burst took it. A little while after the frees (so a burst, or a user
//! dragging a window's size, costs one trim), `malloc_trim(0)` hands the free pages back
//! ([`calyx_pty::release_freed_memory`]), and the mappings of the code the burst ran are
//! dropped ([`crate::code_pages`]; the server also trims once after start-up for the code
//! only start-up runs). It runs on a blocking thread, never on the owner's or
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
    /// A client is attached when the trim runs: its code pages are kept (see `release`).
    attached: Arc<AtomicBool>,
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
        let attached = self.attached.clone();
        runtime.spawn(async move {
            tokio::time::sleep(TRIM_DELAY).await;
            pending.store(false, Ordering::Release);
            let code = !attached.load(Ordering::Acquire);
            let _ = tokio::task::spawn_blocking(move || release(code)).await;
        });
    }

    /// Whether a client is attached now (the owner says so every turn).
    pub fn set_attached(&self, attached: bool) {
        self.attached.store(attached, Ordering::Release);
    }
}

/// What a trim hands back: glibc's free heap pages, and (with `code`) the mappings of the
/// executable's code that the burst (or the start-up) ran and that stay in the page cache
/// ([`crate::code_pages`]). The next code that runs maps its pages again from the page cache:
/// while a client is attached that would be the keystroke path's code, faulted back in on
/// the echo's way (a trim 2 s after start-up fell in the first keys of every attach), so the
/// code pages are then kept until the last client leaves, which trims again.
fn release(code: bool) {
    calyx_pty::release_freed_memory();
    if !code {
        tracing::debug!("code pages kept: a client is attached");
        return;
    }
    match crate::code_pages::release_code_pages() {
        Ok(released) => tracing::debug!(
            "code pages released: {} KiB in {} mappings",
            released.resident_kib,
            released.mappings
        ),
        // Said once at warn (no /proc, a kernel that refuses): the server works the same
        // without it, only with more of its code resident.
        Err(e) if !CODE_PAGES_WARNED.swap(true, Ordering::Relaxed) => {
            tracing::warn!("could not release code pages: {e}")
        }
        Err(e) => tracing::debug!("could not release code pages: {e}"),
    }
}

/// Whether a failed code-page release was logged at warn already.
static CODE_PAGES_WARNED: AtomicBool = AtomicBool::new(false);
