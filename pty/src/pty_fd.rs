//! The PTY master's file descriptor, made non-blocking so the server's owner loop can write a
//! keystroke straight to it (one thread hop less between a key and its echo) without ever
//! blocking on a program that stopped reading its input. The pane's reader and writer threads
//! work on their own duplicates of it; the writer waits with `poll` when it is not ready, the
//! reader with the epoll of its `read_gate`.

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// Sets `O_NONBLOCK` on the open file description of `fd` (shared by all its duplicates).
pub fn set_nonblocking(fd: RawFd) -> io::Result<()> {
    // SAFETY: fcntl(2) on a descriptor the caller owns; no memory is passed.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// A new descriptor for the same open file, owned by the returned `File`.
pub fn duplicate(fd: RawFd) -> io::Result<File> {
    // SAFETY: dup(2) on a descriptor the caller owns; the result is checked and then owned
    // by exactly one `OwnedFd`.
    let new = unsafe { libc::dup(fd) };
    if new < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `new` is a fresh descriptor nobody else owns.
    Ok(File::from(unsafe { OwnedFd::from_raw_fd(new) }))
}

/// Waits until `file` is readable (`POLLIN`) or writable (`POLLOUT`), or hung up. False when
/// the descriptor is unusable (then reading or writing will report the error).
pub fn wait(file: &File, events: libc::c_short) -> bool {
    let mut pollfd = libc::pollfd {
        fd: file.as_raw_fd(),
        events,
        revents: 0,
    };
    loop {
        // SAFETY: one valid pollfd for the duration of the call.
        let ready = unsafe { libc::poll(&mut pollfd, 1, -1) };
        if ready >= 0 {
            return pollfd.revents & libc::POLLNVAL == 0;
        }
        if io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            return false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn a_nonblocking_pipe_reports_would_block_and_wait_returns_when_ready() {
        let mut fds = [0; 2];
        // SAFETY: pipe(2) fills the two-element array.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: both descriptors are fresh and owned once each.
        let (mut read_end, mut write_end) = unsafe {
            (
                File::from(OwnedFd::from_raw_fd(fds[0])),
                File::from(OwnedFd::from_raw_fd(fds[1])),
            )
        };
        set_nonblocking(read_end.as_raw_fd()).expect("nonblocking");
        let mut buf = [0u8; 4];
        let err = read_end.read(&mut buf).expect_err("nothing to read yet");
        assert_eq!(err.kind(), io::ErrorKind::WouldBlock);
        let mut dup = duplicate(read_end.as_raw_fd()).expect("dup");
        write_end.write_all(b"hi").expect("write");
        assert!(wait(&dup, libc::POLLIN));
        assert_eq!(dup.read(&mut buf).expect("read"), 2);
        assert_eq!(&buf[..2], b"hi");
    }
}
