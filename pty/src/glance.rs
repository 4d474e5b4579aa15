//! What the owner needs to know about a pane's terminal without locking it: the title and the
//! modes that decide how keys and pastes are encoded. The reader thread holds the terminal's
//! lock while it parses each read, and on a loaded machine it can lose its core while holding
//! it; `list-panes`, MCP `pane_list`, `send-keys` and typing into a flooding pane must not wait
//! for it (issue 19). The reader publishes these after every `Terminal::process`, so a glance
//! is exactly as fresh as a locked read between two reads would be.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

const APPLICATION_CURSOR: u8 = 1;
const BRACKETED_PASTE: u8 = 1 << 1;
const FOCUS_EVENTS: u8 = 1 << 2;

/// A pane terminal's title and input modes as of its last parse, shared by the terminal (which
/// writes it) and whoever holds an `Arc` of it (which reads it, never waiting for a parse).
#[derive(Debug, Default)]
pub struct Glance {
    modes: AtomicU8,
    /// Changed only when the program sets another title; the lock is held for a pointer copy.
    title: Mutex<Option<Arc<str>>>,
}

impl Glance {
    /// Whether the program asked for application cursor keys (DECCKM).
    pub fn application_cursor(&self) -> bool {
        self.modes.load(Ordering::Acquire) & APPLICATION_CURSOR != 0
    }

    /// Whether the program asked for bracketed paste (DECSET 2004).
    pub fn bracketed_paste(&self) -> bool {
        self.modes.load(Ordering::Acquire) & BRACKETED_PASTE != 0
    }

    /// Whether the program asked for focus in/out reports (DECSET 1004).
    pub fn wants_focus_events(&self) -> bool {
        self.modes.load(Ordering::Acquire) & FOCUS_EVENTS != 0
    }

    /// The OSC title the program set, if any.
    pub fn title(&self) -> Option<Arc<str>> {
        self.title
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Stores the modes (the reader, after a parse).
    pub(crate) fn set_modes(&self, application_cursor: bool, bracketed: bool, focus: bool) {
        let mut modes = 0;
        if application_cursor {
            modes |= APPLICATION_CURSOR;
        }
        if bracketed {
            modes |= BRACKETED_PASTE;
        }
        if focus {
            modes |= FOCUS_EVENTS;
        }
        self.modes.store(modes, Ordering::Release);
    }

    /// Stores a new title (the reader, only when it changed).
    pub(crate) fn set_title(&self, title: Option<Arc<str>>) {
        *self.title.lock().unwrap_or_else(PoisonError::into_inner) = title;
    }
}

/// The terminal's side: the shared glance and the title last published, so that a parse that
/// left the title alone costs a string comparison and no lock.
#[derive(Debug, Default)]
pub(crate) struct Publisher {
    glance: Arc<Glance>,
    title: Option<Arc<str>>,
}

impl Publisher {
    /// The glance readers share.
    pub(crate) fn glance(&self) -> Arc<Glance> {
        Arc::clone(&self.glance)
    }

    /// Publishes what a parse may have changed.
    pub(crate) fn publish(&mut self, title: Option<&str>, modes: (bool, bool, bool)) {
        self.glance.set_modes(modes.0, modes.1, modes.2);
        if self.title.as_deref() != title {
            self.title = title.map(Arc::from);
            self.glance.set_title(self.title.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_publish_is_seen_through_every_shared_glance() {
        let mut publisher = Publisher::default();
        let glance = publisher.glance();
        assert!(!glance.application_cursor() && glance.title().is_none());
        publisher.publish(Some("vim"), (true, false, true));
        assert!(glance.application_cursor());
        assert!(!glance.bracketed_paste());
        assert!(glance.wants_focus_events());
        assert_eq!(glance.title().as_deref(), Some("vim"));
        publisher.publish(None, (false, true, false));
        assert!(!glance.application_cursor() && glance.bracketed_paste());
        assert!(glance.title().is_none());
    }
}
