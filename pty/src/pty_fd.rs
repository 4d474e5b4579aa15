//! The PTY master's file descriptor, made non-blocking so the server's owner loop can write a
//! keystroke straight to it (one thread hop less between a key and its echo) without ever
//! blocking on a program that stopped reading its input. The pane's reader and writer threads
//! work on their own duplicates of it; the writer waits with `poll` when it is not ready, the
//! reader with the epoll of its `read_gate`.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};

use nix::fcntl::{fcntl, FcntlArg, OFlag};
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};

/// Sets `O_NONBLOCK` on the open file description of `fd` (shared by all its duplicates).
pub fn set_nonblocking(fd: BorrowedFd<'_>) -> io::Result<()> {
    let flags = OFlag::from_bits_retain(fcntl(fd.as_raw_fd(), FcntlArg::F_GETFL)?);
    fcntl(fd.as_raw_fd(), FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK))?;
    Ok(())
}

/// A new descriptor for the same open file, owned by the returned `File`. It is close-on-exec
/// (`F_DUPFD_CLOEXEC`), so programs started later never inherit a pane's master.
pub fn duplicate(fd: BorrowedFd<'_>) -> io::Result<File> {
    Ok(File::from(fd.try_clone_to_owned()?))
}

/// Waits until `file` is readable (`POLLIN`) or writable (`POLLOUT`), or hung up. False when
/// the descriptor is unusable (then reading or writing will report the error).
pub fn wait(file: &File, events: PollFlags) -> bool {
    let mut fds = [PollFd::new(file.as_fd(), events)];
    loop {
        match poll(&mut fds, PollTimeout::NONE) {
            Ok(_) => {
                return !fds[0]
                    .revents()
                    .is_some_and(|r| r.contains(PollFlags::POLLNVAL))
            }
            Err(nix::errno::Errno::EINTR) => {}
            Err(_) => return false,
        }
    }
}

/// Whether a line editor has the terminal behind the PTY master `file` (canonical input is
/// off: the program reads keys one by one). An unreadable terminal counts as yes: nobody
/// should wait on it.
pub fn line_editing(file: &File) -> bool {
    nix::sys::termios::tcgetattr(file.as_fd())
        .map(|t| {
            !t.local_flags
                .contains(nix::sys::termios::LocalFlags::ICANON)
        })
        .unwrap_or(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn a_nonblocking_pipe_reports_would_block_and_wait_returns_when_ready() {
        let (read_end, write_end) = nix::unistd::pipe().expect("pipe");
        let (mut read_end, mut write_end) = (File::from(read_end), File::from(write_end));
        set_nonblocking(read_end.as_fd()).expect("nonblocking");
        let mut buf = [0u8; 4];
        let err = read_end.read(&mut buf).expect_err("nothing to read yet");
        assert_eq!(err.kind(), io::ErrorKind::WouldBlock);
        let mut dup = duplicate(read_end.as_fd()).expect("dup");
        write_end.write_all(b"hi").expect("write");
        assert!(wait(&dup, PollFlags::POLLIN));
        assert_eq!(dup.read(&mut buf).expect("read"), 2);
        assert_eq!(&buf[..2], b"hi");
    }
}
