//! The owner reads the output of the pane keys go to itself: a keystroke's echo then wakes one
//! thread (the owner), as in tmux, instead of the pane's reader thread waking the owner. See
//! `calyx_pty::read_gate` for why that is safe whoever ends up reading.
//!
//! The owner takes a pane's output at its first key and keeps it from key to key: taking and
//! giving back per key were two `epoll_ctl`s a keystroke, and an echo that beat the take went
//! the long way round. It gives reading back to the reader thread as soon as the pane prints
//! more than echoes: a read that fills the owner's buffer (bulk output), or a second output
//! with no key in between (a command's output, a pane that prints on its own). So a flood
//! costs the owner at most two small reads, and the next key takes the pane again.

use std::fs::File;
use std::sync::Arc;

use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

use calyx_pty::OwnerRead;

use crate::layout::PaneId;
use crate::server::owner::Server;

/// The pane whose output the owner reads, and a descriptor of its PTY to wait on (a duplicate
/// registered with the owner's reactor, for as long as the owner reads the pane).
pub(crate) struct OwnerReads {
    pane: PaneId,
    fd: Arc<AsyncFd<File>>,
    /// A key was written to the pane and its echo is not read yet.
    awaiting_echo: bool,
    /// The pane printed something that was no key's echo since the last key.
    untaken: bool,
}

impl OwnerReads {
    /// What the owner loop waits on for the pane's output.
    pub(crate) fn ready(&self) -> Arc<AsyncFd<File>> {
        self.fd.clone()
    }

    /// The pane read.
    #[cfg(test)]
    pub(crate) fn pane(&self) -> PaneId {
        self.pane
    }

    /// Whether a key's echo is still to come.
    #[cfg(test)]
    pub(crate) fn awaiting_echo(&self) -> bool {
        self.awaiting_echo
    }
}

/// Waits until `fd` (if any) is readable; never returns without one.
pub(crate) async fn readable(fd: Option<Arc<AsyncFd<File>>>) {
    match fd {
        Some(fd) => {
            // Cleared before the read, so output that comes after it is a new wake.
            if let Ok(mut ready) = fd.readable().await {
                ready.clear_ready();
            }
        }
        None => std::future::pending().await,
    }
}

impl Server {
    /// A key was just written to `pane`: the owner reads its echo (and takes the pane's output
    /// from its reader thread, if it has not yet). An echo that came before a first key's take
    /// is read by the reader thread as usual, which is harmless. Without a descriptor to wait
    /// on (or an owner loop to wait in: the reducer's unit tests drive the server without one),
    /// the reader thread keeps reading.
    pub(crate) fn watch_echo(&mut self, pane: PaneId) {
        if !self.owner_loop {
            return;
        }
        if let Some(reads) = self.owner_reads.as_mut().filter(|r| r.pane == pane) {
            reads.awaiting_echo = true;
            reads.untaken = false;
            return;
        }
        // One pane at a time: typing moved to another pane.
        self.stop_owner_reads();
        let Some(p) = self.state.panes.get(&pane) else {
            return;
        };
        let Ok(file) = p.process.output_watch() else {
            return;
        };
        // SAFETY: the AsyncFd owns the duplicate descriptor (a `File` nobody else holds) for
        // its whole life and never swaps it, so it stays open and the same while registered.
        // This is tokio's registration contract, not a system call: nix has nothing to offer.
        let Ok(fd) = (unsafe { AsyncFd::register_with_interest(file, Interest::READABLE) }) else {
            return;
        };
        p.process.take_output();
        self.owner_reads = Some(OwnerReads {
            pane,
            fd: Arc::new(fd),
            awaiting_echo: true,
            untaken: false,
        });
    }

    /// Gives reading back to the pane's reader thread (which wakes at once if output waits),
    /// and closes the owner's descriptor of its PTY.
    pub(crate) fn stop_owner_reads(&mut self) {
        if let Some(reads) = self.owner_reads.take() {
            if let Some(p) = self.state.panes.get(&reads.pane) {
                p.process.give_back_output();
            }
        }
    }

    /// A pane closed or its program exited: the owner's descriptor would hold its PTY open.
    pub(crate) fn forget_owner_reads(&mut self, pane: PaneId) {
        if self.owner_reads.as_ref().is_some_and(|r| r.pane == pane) {
            self.stop_owner_reads();
        }
    }

    /// `pane` printed something that was no key's echo (read by the owner, or by the reader
    /// thread before the owner took the pane). One such output per key is let be (a line end
    /// after the echo, a shell's redraw); a second with no key in between gives reading back,
    /// so a pane that prints on its own wakes the owner twice, not once per write.
    pub(crate) fn untaken_output(&mut self, pane: PaneId) {
        let Some(reads) = self
            .owner_reads
            .as_mut()
            .filter(|r| r.pane == pane && !r.awaiting_echo)
        else {
            return;
        };
        if reads.untaken {
            self.stop_owner_reads();
        } else {
            reads.untaken = true;
        }
    }

    /// The pane the owner reads has output: read one chunk here and handle it as any pane
    /// output (an echo is drawn at once). A wake with nothing to read (readiness left from
    /// output the reader thread read) changes nothing.
    pub(crate) fn owner_output(&mut self) {
        let Some(reads) = self.owner_reads.as_mut() else {
            return;
        };
        let pane = reads.pane;
        let Some(p) = self.state.panes.get(&pane) else {
            self.owner_reads = None;
            return;
        };
        match p.process.read_output(&p.terminal) {
            OwnerRead::Nothing => {}
            OwnerRead::Parsed { full } => {
                let echo = std::mem::replace(&mut reads.awaiting_echo, false);
                if full {
                    // Bulk output: the reader thread reads the rest, in its bigger chunks.
                    self.stop_owner_reads();
                } else if !echo {
                    self.untaken_output(pane);
                }
                self.pane_output(pane);
            }
            // The reader thread sees the end too, and reports the exit.
            OwnerRead::Closed => self.stop_owner_reads(),
        }
    }
}
