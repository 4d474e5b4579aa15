//! The pane reader threads' door into the owner loop: a pane's output and its program's exit
//! become [`Msg`]s, with at most one output message in flight per pane.

use std::sync::atomic::{AtomicBool, Ordering};

use calyx_pty::PaneEvents;
use tokio::sync::mpsc;

use crate::layout::PaneId;
use crate::server::messages::Msg;

/// Tells the owner loop about a pane's output, at most one message in flight per pane; the
/// owner re-arms it when it takes the output, which under a flood is once per frame
/// (`pane_events::fold_into_frame`): a flooding pane costs one wake-up per frame, not one per
/// read.
pub struct PaneNotifier {
    pane: PaneId,
    tx: mpsc::UnboundedSender<Msg>,
    pending: AtomicBool,
}

impl PaneNotifier {
    /// Called by the owner when it handles the notification, so the next output notifies again.
    pub fn rearm(&self) {
        self.pending.store(false, Ordering::Release);
    }
}

impl PaneEvents for PaneNotifier {
    fn output(&self) {
        if !self.pending.swap(true, Ordering::AcqRel) {
            let _ = self.tx.send(Msg::PaneOutput { pane: self.pane });
        }
    }

    fn exited(&self, status: Option<u32>) {
        let _ = self.tx.send(Msg::PaneExited {
            pane: self.pane,
            status,
        });
    }
}

impl PaneNotifier {
    /// A notifier for `pane` that sends to the owner loop's channel.
    pub fn new(pane: PaneId, tx: mpsc::UnboundedSender<Msg>) -> Self {
        PaneNotifier {
            pane,
            tx,
            pending: AtomicBool::new(false),
        }
    }
}
