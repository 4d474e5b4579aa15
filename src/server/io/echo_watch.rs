//! The owner reads a keystroke's echo itself: the pane's reader thread is not woken for it,
//! so the echo wakes one thread (the owner), as in tmux, instead of the reader thread waking
//! the owner. See `calyx_pty::read_gate` for why that is safe whoever ends up reading.

use std::fs::File;
use std::sync::Arc;

use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

use calyx_pty::OwnerRead;

use crate::layout::PaneId;
use crate::server::owner::Server;

/// The pane whose next output the owner took, and a descriptor of its PTY to wait on (a
/// duplicate registered with the owner's reactor, kept from key to key, see `echo_kept`).
pub(crate) struct EchoWatch {
    pane: PaneId,
    fd: Arc<AsyncFd<File>>,
    /// For the kept registration: the pane printed something the owner did not take since
    /// the last key (see `Server::untaken_output`).
    untaken: bool,
}

impl EchoWatch {
    /// What the owner loop waits on for the echo.
    pub(crate) fn ready(&self) -> Arc<AsyncFd<File>> {
        self.fd.clone()
    }
}

/// Waits until `fd` (if any) is readable; never returns without one.
pub(crate) async fn readable(fd: Option<Arc<AsyncFd<File>>>) {
    match fd {
        Some(fd) => {
            if let Ok(mut ready) = fd.readable().await {
                ready.clear_ready();
            }
        }
        None => std::future::pending().await,
    }
}

impl Server {
    /// Takes `pane`'s next output for the owner (right after a key was written to it: an echo
    /// that came first is read by the reader thread as usual, which is harmless). Without a
    /// descriptor to wait on (or an owner loop to wait in: the reducer's unit tests drive the
    /// server without one), the reader thread keeps reading.
    pub(crate) fn watch_echo(&mut self, pane: PaneId) {
        self.release_echo_watch();
        if !self.owner_loop || self.echo_watch.as_ref().is_some_and(|w| w.pane == pane) {
            return;
        }
        self.end_echo_watch();
        let Some(p) = self.state.panes.get(&pane) else {
            return;
        };
        let fd = match &mut self.echo_kept {
            Some(kept) if kept.pane == pane => {
                kept.untaken = false;
                kept.fd.clone()
            }
            _ => {
                // One kept registration at a time: typing moved to another pane.
                self.echo_kept = None;
                let Ok(file) = p.process.output_watch() else {
                    return;
                };
                // SAFETY: the AsyncFd owns the duplicate descriptor (a `File` nobody else
                // holds) for its whole life and never swaps it, so it stays open and the same
                // while registered. This is tokio's registration contract, not a system call:
                // nix has nothing to offer here.
                let Ok(fd) = (unsafe { AsyncFd::register_with_interest(file, Interest::READABLE) })
                else {
                    return;
                };
                let fd = Arc::new(fd);
                self.echo_kept = Some(EchoWatch {
                    pane,
                    fd: fd.clone(),
                    untaken: false,
                });
                fd
            }
        };
        p.process.take_next_output();
        self.echo_watch = Some(EchoWatch {
            pane,
            fd,
            untaken: false,
        });
    }

    /// Gives reading back to the watched pane's reader thread.
    pub(crate) fn end_echo_watch(&mut self) {
        self.release_echo_watch();
        if let Some(w) = self.echo_watch.take() {
            if let Some(p) = self.state.panes.get(&w.pane) {
                p.process.give_back_output();
            }
        }
    }

    /// Drops the watch of a pane that closed or whose program exited (nothing to give reading
    /// back to), and the registration kept for it, which would hold its PTY open.
    pub(crate) fn forget_echo_watch(&mut self, pane: PaneId) {
        if self.echo_watch.as_ref().is_some_and(|w| w.pane == pane)
            && !self.state.panes.contains_key(&pane)
        {
            self.echo_watch = None;
        }
        if self.echo_read.as_ref().is_some_and(|w| w.pane == pane)
            && !self.state.panes.contains_key(&pane)
        {
            self.echo_read = None;
        }
        if self.echo_kept.as_ref().is_some_and(|w| w.pane == pane) {
            self.echo_kept = None;
        }
    }

    /// The pane's reader thread read output the owner did not take. While the kept
    /// registration lives, each write by the program wakes the owner, for nothing when the
    /// owner does not read it. One such output per key is let be (a line end after the echo,
    /// a shell's redraw); a second with no key in between (a command's output, a pane that
    /// prints on its own, a flood) drops the registration, so such a pane costs two wakes,
    /// not one per write; the next key registers again.
    pub(crate) fn untaken_output(&mut self, pane: PaneId) {
        let watched = self.echo_watch.as_ref().is_some_and(|w| w.pane == pane);
        let Some(kept) = self
            .echo_kept
            .as_mut()
            .filter(|w| w.pane == pane && !watched)
        else {
            return;
        };
        if kept.untaken {
            self.echo_kept = None;
        } else {
            kept.untaken = true;
        }
    }

    /// Gives reading back to the pane whose echo the owner read (`echo_ready`). Done after the
    /// echo's frame is written, not before: handing back (an `epoll_ctl` on the reader's
    /// epoll) was a system call between the echo's read and its frame's write, on every key.
    /// The reader thread stays off meanwhile, which holds only the pane's next output, and
    /// only until the owner loop's next turn starts (see `main_loop::turn`). The owner's own
    /// registration stays (`echo_kept`): registering, deregistering and closing a duplicate
    /// descriptor per key were four more system calls.
    pub(crate) fn release_echo_watch(&mut self) {
        if let Some(w) = self.echo_read.take() {
            if let Some(p) = self.state.panes.get(&w.pane) {
                p.process.give_back_output();
            }
        }
    }

    /// The watched pane has output: read one chunk here and handle it as any pane output (the
    /// echo is drawn at once); reading is handed back after the frame (`release_echo_watch`).
    /// A wake with nothing to read (readiness left from output the reader thread read) keeps
    /// waiting for the echo.
    pub(crate) fn echo_ready(&mut self) {
        let Some(w) = self.echo_watch.take() else {
            return;
        };
        let Some(p) = self.state.panes.get(&w.pane) else {
            return;
        };
        let pane = w.pane;
        match p.process.read_output(&p.terminal) {
            OwnerRead::Nothing => self.echo_watch = Some(w),
            OwnerRead::Parsed => {
                self.echo_read = Some(w);
                self.pane_output(pane);
            }
            OwnerRead::Closed => {
                self.echo_read = Some(w);
                self.echo_kept = None;
            }
        }
    }
}
