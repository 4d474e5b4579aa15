//! A pane's foreground command name, as its border, the status line and window names show it.
//!
//! Frames ask for the name every time they draw, and reading /proc is not free on the keystroke
//! path, so a name is read at most once a [`LABEL_TTL`]. A name shown may go stale right after
//! (a `sleep` started by the Enter whose echo was just drawn, `vim` quitting to a prompt, a
//! program that execs another without printing), and nothing may draw again for a long time;
//! so every name shown asks for one more read when the cache expires
//! ([`LabelCache::recheck_at`]), and that read asks for none. An idle server that draws
//! nothing reads nothing and wakes for nothing.

use std::cell::{Cell, RefCell};
use std::time::Duration;

use tokio::time::Instant;

/// How long a read name is trusted.
pub const LABEL_TTL: Duration = Duration::from_secs(1);

/// The last name read, and whether it was shown since the last recheck.
#[derive(Debug, Default)]
pub struct LabelCache {
    read: RefCell<Option<(Instant, String)>>,
    shown: Cell<bool>,
}

impl LabelCache {
    /// The name: the cached one while it is fresh, else `read()`'s.
    pub fn get(&self, now: Instant, read: impl FnOnce() -> String) -> String {
        self.shown.set(true);
        if let Some((at, name)) = self.read.borrow().as_ref() {
            if now.duration_since(*at) < LABEL_TTL {
                return name.clone();
            }
        }
        self.store(now, read())
    }

    fn store(&self, now: Instant, name: String) -> String {
        *self.read.borrow_mut() = Some((now, name.clone()));
        name
    }

    /// When the name should be read again because it was shown: None once that was done.
    pub fn recheck_at(&self) -> Option<Instant> {
        if !self.shown.get() {
            return None;
        }
        self.read.borrow().as_ref().map(|(at, _)| *at + LABEL_TTL)
    }

    /// Reads the name again if a recheck is due; true when it changed (the frame must show it).
    pub fn recheck(&self, now: Instant, read: impl FnOnce() -> String) -> bool {
        if self.recheck_at().is_none_or(|t| t > now) {
            return false;
        }
        self.shown.set(false);
        let before = self.read.borrow().as_ref().map(|(_, n)| n.clone());
        let name = self.store(now, read());
        before.as_deref() != Some(name.as_str())
    }
}

/// Titles come from programs: keep them to printable characters so no escape reaches the
/// outer terminal.
pub fn sanitize_title(title: &str) -> String {
    title
        .chars()
        .filter(|c| !c.is_control())
        .take(200)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_served_from_the_cache_is_read_again_once_it_expires() {
        let t0 = Instant::now();
        let cache = LabelCache::default();
        assert_eq!(
            cache.recheck_at(),
            None,
            "nothing shown: nothing to recheck"
        );
        assert_eq!(cache.get(t0, || "bash".into()), "bash");
        // Shown (then served from the cache): one recheck when it expires, which finds the
        // new name.
        assert_eq!(cache.get(t0, || "sleep".into()), "bash");
        let due = cache.recheck_at().expect("a recheck");
        assert_eq!(due, t0 + LABEL_TTL);
        assert!(!cache.recheck(t0, || "sleep".into()), "not due yet");
        assert!(cache.recheck(due, || "sleep".into()));
        assert_eq!(cache.recheck_at(), None);
        assert_eq!(cache.get(due, || "other".into()), "sleep");
        // A recheck that finds the same name reports no change, and asks for no more.
        let due = cache.recheck_at().expect("shown again");
        assert!(!cache.recheck(due, || "sleep".into()));
        assert_eq!(cache.recheck_at(), None);
    }
}
