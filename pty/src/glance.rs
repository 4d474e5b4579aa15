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
const SYNCHRONIZED_OUTPUT: u8 = 1 << 3;
const MOUSE_ANY_MOTION: u8 = 1 << 4;

/// The modes a parse leaves, as the reader publishes them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Modes {
    pub application_cursor: bool,
    pub bracketed_paste: bool,
    pub focus_events: bool,
    pub synchronized_output: bool,
    pub mouse_any_motion: bool,
}

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

    /// Whether the program is inside a synchronized update (DECSET 2026).
    pub fn synchronized_output(&self) -> bool {
        self.modes.load(Ordering::Acquire) & SYNCHRONIZED_OUTPUT != 0
    }

    /// Whether the program asked for mouse reports on any motion (DECSET 1003).
    pub fn mouse_any_motion(&self) -> bool {
        self.modes.load(Ordering::Acquire) & MOUSE_ANY_MOTION != 0
    }

    /// The OSC title the program set, if any.
    pub fn title(&self) -> Option<Arc<str>> {
        self.title
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Stores the modes (the reader, after a parse).
    pub(crate) fn set_modes(&self, modes: Modes) {
        let bits = [
            (modes.application_cursor, APPLICATION_CURSOR),
            (modes.bracketed_paste, BRACKETED_PASTE),
            (modes.focus_events, FOCUS_EVENTS),
            (modes.synchronized_output, SYNCHRONIZED_OUTPUT),
            (modes.mouse_any_motion, MOUSE_ANY_MOTION),
        ]
        .into_iter()
        .filter(|(on, _)| *on)
        .fold(0, |all, (_, bit)| all | bit);
        self.modes.store(bits, Ordering::Release);
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
    pub(crate) fn publish(&mut self, title: Option<&str>, modes: Modes) {
        self.glance.set_modes(modes);
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
        let vim = Modes {
            application_cursor: true,
            focus_events: true,
            mouse_any_motion: true,
            ..Modes::default()
        };
        publisher.publish(Some("vim"), vim);
        assert!(glance.application_cursor());
        assert!(!glance.bracketed_paste());
        assert!(glance.wants_focus_events());
        assert!(glance.mouse_any_motion() && !glance.synchronized_output());
        assert_eq!(glance.title().as_deref(), Some("vim"));
        let shell = Modes {
            bracketed_paste: true,
            synchronized_output: true,
            ..Modes::default()
        };
        publisher.publish(None, shell);
        assert!(!glance.application_cursor() && glance.bracketed_paste());
        assert!(glance.synchronized_output() && !glance.mouse_any_motion());
        assert!(glance.title().is_none());
    }
}
