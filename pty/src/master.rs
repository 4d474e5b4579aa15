//! A pane's PTY master as the pane keeps it: the one portable-pty opened (a program started
//! here), or a bare descriptor inherited from the server this process replaced
//! (`calyx server-upgrade` execs the new binary in place; portable-pty cannot take over a
//! descriptor it did not open, so resizing and asking for the foreground group are done here
//! with the same two ioctls portable-pty uses).

use std::fs::File;
use std::os::fd::AsRawFd;

use portable_pty::{MasterPty, PtySize};

/// The PTY master of one pane.
pub enum Master {
    /// Opened by portable-pty for a program started by this server.
    Opened(Box<dyn MasterPty + Send>),
    /// Inherited across an in-place upgrade.
    Inherited(File),
}

impl Master {
    /// Tells the kernel (and so the program, by SIGWINCH) the new size.
    pub fn resize(&self, rows: u16, cols: u16) {
        let size = PtySize {
            rows,
            cols,
            pixel_width: 0,
            pixel_height: 0,
        };
        match self {
            Master::Opened(m) => {
                let _ = m.resize(size);
            }
            Master::Inherited(f) => {
                let winsize = libc::winsize {
                    ws_row: rows,
                    ws_col: cols,
                    ws_xpixel: 0,
                    ws_ypixel: 0,
                };
                // SAFETY: TIOCSWINSZ reads one `winsize` through the pointer, which points at a
                // live local for the whole call; the descriptor is owned by `f`. nix 0.28 has
                // no wrapper for this ioctl (portable-pty makes the same call).
                let _ = unsafe { libc::ioctl(f.as_raw_fd(), libc::TIOCSWINSZ, &winsize) };
            }
        }
    }

    /// The foreground process group of the terminal (what the user runs now).
    pub fn process_group_leader(&self) -> Option<i32> {
        match self {
            Master::Opened(m) => m.process_group_leader(),
            Master::Inherited(f) => {
                // SAFETY: tcgetpgrp only reads the descriptor's terminal state; `f` owns the
                // descriptor for the whole call.
                let pid = unsafe { libc::tcgetpgrp(f.as_raw_fd()) };
                (pid > 0).then_some(pid)
            }
        }
    }
}

/// The size the kernel holds for the terminal of `fd` (rows, cols), if it is one.
pub fn size_of(fd: &File) -> Option<(u16, u16)> {
    let mut winsize = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes one `winsize` through the pointer, which points at a live local
    // for the whole call; `fd` owns the descriptor.
    let done = unsafe { libc::ioctl(fd.as_raw_fd(), libc::TIOCGWINSZ, &mut winsize) };
    (done == 0).then_some((winsize.ws_row, winsize.ws_col))
}

#[cfg(test)]
mod tests {
    use super::*;
    use portable_pty::native_pty_system;

    #[test]
    fn an_inherited_master_resizes_the_terminal() {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: 10,
                cols: 40,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("openpty");
        let fd = pair.master.as_raw_fd().expect("master fd");
        // A second descriptor of the same master, as the upgraded server inherits one.
        let master = Master::Inherited(dup_of(fd));
        master.resize(33, 77);
        assert_eq!(pair.master.get_size().expect("size").rows, 33);
        assert_eq!(pair.master.get_size().expect("size").cols, 77);
        if let Master::Inherited(f) = &master {
            assert_eq!(size_of(f), Some((33, 77)));
        }
    }

    /// A `File` of a duplicate of `fd` (the original stays with portable-pty).
    fn dup_of(fd: std::os::fd::RawFd) -> File {
        let dup = nix::fcntl::fcntl(fd, nix::fcntl::FcntlArg::F_DUPFD_CLOEXEC(0)).expect("dup");
        // SAFETY: `dup` is a descriptor fcntl just created for us; nothing else owns it.
        File::from(unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(dup) })
    }
}
