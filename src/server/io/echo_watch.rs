//! The owner reads a keystroke's echo itself: the pane's reader thread is not woken for it,
//! so the echo wakes one thread (the owner), as in tmux, instead of the reader thread waking
//! the owner. See `calyx_pty::read_gate` for why that is safe whoever ends up reading.

use std::fs::File;
use std::sync::Arc;

use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

use crate::layout::PaneId;
use crate::server::owner::Server;

/// The pane whose next output the owner took, and a descriptor of its PTY to wait on.
pub(crate) struct EchoWatch {
    pane: PaneId,
    fd: Arc<AsyncFd<File>>,
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
        let Ok(file) = p.process.output_watch() else {
            return;
        };
        // SAFETY: the AsyncFd owns the duplicate descriptor (a `File` nobody else holds) for its
        // whole life and never swaps it, so it stays open and the same while registered. This
        // is tokio's registration contract, not a system call: nix has nothing to offer here.
        let Ok(fd) = (unsafe { AsyncFd::register_with_interest(file, Interest::READABLE) }) else {
            return;
        };
        p.process.take_next_output();
        self.echo_watch = Some(EchoWatch {
            pane,
            fd: Arc::new(fd),
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

    /// Drops the watch of a pane that closed (nothing to give reading back to).
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
    }

    /// Gives reading back to the pane whose echo the owner read (`echo_ready`) and drops the
    /// watch's registration. Done after the echo's frame is written, not before: handing back
    /// (an `epoll_ctl` on the reader's epoll), deregistering (another) and closing the watch's
    /// descriptor were three system calls between the echo's read and its frame's write, on
    /// every key. The reader thread stays off meanwhile, which holds only the pane's next
    /// output, and only until the owner loop's next turn starts (see `main_loop::turn`).
    pub(crate) fn release_echo_watch(&mut self) {
        if let Some(w) = self.echo_read.take() {
            if let Some(p) = self.state.panes.get(&w.pane) {
                p.process.give_back_output();
            }
        }
    }

    /// The watched pane has output: read one chunk here and handle it as any pane output (the
    /// echo is drawn at once); reading is handed back after the frame (`release_echo_watch`).
    pub(crate) fn echo_ready(&mut self) {
        let Some(w) = self.echo_watch.take() else {
            return;
        };
        let Some(p) = self.state.panes.get(&w.pane) else {
            return;
        };
        let parsed = p.process.read_output(&p.terminal);
        let pane = w.pane;
        self.echo_read = Some(w);
        if parsed {
            self.pane_output(pane);
        }
    }
}
