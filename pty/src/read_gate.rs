//! Who reads a pane's next output: its reader thread, or the server's owner loop.
//!
//! The reader thread parses output off the owner's thread, so a flooding pane never delays
//! keystrokes elsewhere. But a keystroke's echo read there costs one thread wake-up more than
//! in tmux (program → reader thread → owner → terminal), and on a busy two-core machine every
//! wake-up is one more chance to wait for a CPU. So right after a keystroke the owner takes
//! the pane's next output itself ([`ReadGate::take`]): the reader thread's epoll registration
//! is disarmed (`EPOLLONESHOT` without `EPOLLIN`) so the echo wakes only the owner, which reads
//! one chunk and hands reading back ([`ReadGate::give_back`]), re-arming the reader (which
//! wakes at once if more output waits).
//!
//! Correctness never depends on who wins: every read and its parse happen under the pane's
//! terminal lock ([`read_once`]), so chunks are parsed in the order they were read whoever
//! reads them. A hang-up always wakes the reader (epoll reports it unasked).

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use crate::Terminal;

/// The reader thread's wait, which the owner can disarm for one read.
#[derive(Debug)]
pub struct ReadGate {
    epoll: OwnedFd,
    /// The reader thread's descriptor of the PTY master.
    fd: RawFd,
    /// Set while the owner reads the next output.
    owner: AtomicBool,
}

fn epoll_ctl(epoll: RawFd, op: libc::c_int, fd: RawFd, events: u32) -> io::Result<()> {
    let mut event = libc::epoll_event {
        events,
        u64: fd as u64,
    };
    // SAFETY: epoll_ctl(2) reads the one event it is given; both descriptors are open.
    if unsafe { libc::epoll_ctl(epoll, op, fd, &mut event) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

const ARMED: u32 = (libc::EPOLLIN | libc::EPOLLONESHOT) as u32;
/// Registered but deaf to output (hang-ups and errors are always reported).
const DISARMED: u32 = libc::EPOLLONESHOT as u32;

impl ReadGate {
    /// A gate for the reader thread's descriptor `fd` (which must outlive the gate).
    pub(crate) fn new(fd: RawFd) -> io::Result<Self> {
        // SAFETY: epoll_create1(2) has no memory arguments; the result is checked.
        let epoll = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if epoll < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a fresh descriptor that only this OwnedFd owns.
        let epoll = unsafe { OwnedFd::from_raw_fd(epoll) };
        epoll_ctl(epoll.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, DISARMED)?;
        Ok(Self {
            epoll,
            fd,
            owner: AtomicBool::new(false),
        })
    }

    /// Reader thread: sleeps until there is output for it (or the PTY hung up). False when the
    /// wait itself failed.
    pub(crate) fn wait(&self) -> bool {
        if !self.owner.load(Ordering::Acquire) && self.arm(ARMED).is_err() {
            return false;
        }
        let mut event = libc::epoll_event { events: 0, u64: 0 };
        loop {
            // SAFETY: room for exactly the one event asked for.
            let n = unsafe { libc::epoll_wait(self.epoll.as_raw_fd(), &mut event, 1, -1) };
            if n >= 0 {
                return true;
            }
            if io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                return false;
            }
        }
    }

    fn arm(&self, events: u32) -> io::Result<()> {
        epoll_ctl(self.epoll.as_raw_fd(), libc::EPOLL_CTL_MOD, self.fd, events)
    }

    /// Owner: the pane's next output is the owner's to read; the reader thread sleeps through
    /// it. (If the reader was about to re-arm, it may wake too: harmless, see the module doc.)
    pub fn take(&self) {
        self.owner.store(true, Ordering::Release);
        let _ = self.arm(DISARMED);
    }

    /// Owner: the reader thread reads again from here on.
    pub fn give_back(&self) {
        self.owner.store(false, Ordering::Release);
        let _ = self.arm(ARMED);
    }
}

/// What one read of a pane's output did.
#[derive(Debug, PartialEq, Eq)]
pub enum ReadOutcome {
    /// Output was parsed into the terminal; these are its query answers, for the program.
    Parsed(Vec<u8>),
    /// Nothing was waiting.
    Nothing,
    /// The program closed the PTY (or reading failed).
    Closed,
}

/// Reads what the PTY has (without waiting) and parses it, both under the terminal's lock, so
/// that whichever thread reads, chunks are parsed in the order they were read.
pub(crate) fn read_once(file: &File, terminal: &Mutex<Terminal>, buf: &mut [u8]) -> ReadOutcome {
    let mut term = terminal.lock().unwrap_or_else(PoisonError::into_inner);
    loop {
        return match (&mut &*file).read(buf) {
            Ok(0) => ReadOutcome::Closed,
            Ok(n) => {
                term.process(&buf[..n]);
                ReadOutcome::Parsed(term.take_replies())
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => ReadOutcome::Nothing,
            Err(_) => ReadOutcome::Closed,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn pipe() -> (File, File) {
        let mut fds = [0; 2];
        // SAFETY: pipe(2) fills the two-element array.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: both descriptors are fresh and owned once each.
        unsafe {
            (
                File::from(OwnedFd::from_raw_fd(fds[0])),
                File::from(OwnedFd::from_raw_fd(fds[1])),
            )
        }
    }

    /// Whether the gate's epoll reports something right now.
    fn reports(gate: &ReadGate) -> bool {
        let mut event = libc::epoll_event { events: 0, u64: 0 };
        // SAFETY: room for the one event asked for; a zero timeout.
        unsafe { libc::epoll_wait(gate.epoll.as_raw_fd(), &mut event, 1, 0) > 0 }
    }

    #[test]
    fn taken_output_does_not_wake_the_reader_and_giving_back_does() {
        let (read_end, mut write_end) = pipe();
        let gate = ReadGate::new(read_end.as_raw_fd()).expect("gate");
        gate.arm(ARMED).expect("arm");
        gate.take();
        write_end.write_all(b"echo").expect("write");
        assert!(!reports(&gate), "the reader woke for output the owner took");
        gate.give_back();
        assert!(reports(&gate), "output waiting when reading was given back");
    }

    #[test]
    fn reads_parse_in_order_and_report_nothing_or_closed() {
        let (read_end, mut write_end) = pipe();
        crate::pty_fd::set_nonblocking(read_end.as_raw_fd()).expect("nonblocking");
        let terminal = Mutex::new(Terminal::new(
            2,
            20,
            crate::HistoryLimits {
                lines: 10,
                bytes: 1024,
            },
        ));
        let mut buf = [0u8; 64];
        assert_eq!(
            read_once(&read_end, &terminal, &mut buf),
            ReadOutcome::Nothing
        );
        write_end.write_all(b"ab\x1b[6n").expect("write");
        match read_once(&read_end, &terminal, &mut buf) {
            ReadOutcome::Parsed(answers) => assert_eq!(answers, b"\x1b[1;3R"),
            other => panic!("expected output, got {other:?}"),
        }
        drop(write_end);
        assert_eq!(
            read_once(&read_end, &terminal, &mut buf),
            ReadOutcome::Closed
        );
        let screen = terminal.lock().expect("lock").screen().contents();
        assert_eq!(screen.trim_end(), "ab");
    }
}
