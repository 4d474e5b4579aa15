//! Who reads a pane's next output: its reader thread, or the server's owner loop.
//!
//! The reader thread parses output off the owner's thread, so a flooding pane never delays
//! keystrokes elsewhere. But a keystroke's echo read there costs one thread wake-up more than
//! in tmux (program → reader thread → owner → terminal), and on a busy two-core machine every
//! wake-up is one more chance to wait for a CPU. So while keys go to a pane the owner reads
//! its output itself ([`ReadGate::take`]): the reader thread's epoll registration is disarmed
//! (`EPOLLONESHOT` without `EPOLLIN`) so an echo wakes only the owner. The owner hands reading
//! back ([`ReadGate::give_back`]) as soon as the pane prints more than echoes, re-arming the
//! reader (which wakes at once if more output waits).
//!
//! Correctness never depends on who wins: every read and its parse happen under the pane's
//! terminal lock ([`read_once`]), so chunks are parsed in the order they were read whoever
//! reads them. A hang-up always wakes the reader (epoll reports it unasked).

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use nix::errno::Errno;
use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags, EpollTimeout};

use crate::Terminal;

/// The reader thread's wait, which the owner can disarm for one read.
#[derive(Debug)]
pub struct ReadGate {
    epoll: Epoll,
    /// The reader thread's descriptor of the PTY master. The gate owns it so that the epoll
    /// registration can never outlive it (or name a reused descriptor number).
    reader: File,
    /// Set while the owner reads the next output.
    owner: AtomicBool,
    /// How often reads found the terminal locked by someone else (see [`ReadStats`]).
    stats: ReadStats,
}

/// How often a pane's reads had to wait for its terminal's lock: a flooding pane's reader
/// should almost never wait for the owner (which holds the lock only to copy a frame's rows),
/// or the parse stalls behind rendering. Two relaxed counters, bumped once per read.
#[derive(Debug, Default)]
pub struct ReadStats {
    reads: AtomicU64,
    contended: AtomicU64,
}

impl ReadStats {
    /// (reads that parsed output, of those the ones that found the lock taken and waited).
    pub fn counts(&self) -> (u64, u64) {
        (
            self.reads.load(Ordering::Relaxed),
            self.contended.load(Ordering::Relaxed),
        )
    }
}

/// Armed: the reader thread wakes for output, once (then it is disarmed until re-armed).
const ARMED: EpollFlags = EpollFlags::EPOLLIN.union(EpollFlags::EPOLLONESHOT);
/// Registered but deaf to output (hang-ups and errors are always reported).
const DISARMED: EpollFlags = EpollFlags::EPOLLONESHOT;

impl ReadGate {
    /// A gate for the reader thread's descriptor `reader`, which it keeps.
    pub(crate) fn new(reader: File) -> io::Result<Self> {
        let epoll = Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC)?;
        epoll.add(&reader, EpollEvent::new(DISARMED, event_data(&reader)))?;
        Ok(Self {
            epoll,
            reader,
            owner: AtomicBool::new(false),
            stats: ReadStats::default(),
        })
    }

    /// How often reads of this pane waited for its terminal's lock.
    pub fn stats(&self) -> &ReadStats {
        &self.stats
    }

    /// The reader thread's descriptor, to read from when [`ReadGate::wait`] returns.
    pub(crate) fn reader(&self) -> &File {
        &self.reader
    }

    /// Reader thread: sleeps until there is output for it (or the PTY hung up). False when the
    /// wait itself failed.
    pub(crate) fn wait(&self) -> bool {
        if !self.owner.load(Ordering::Acquire) && self.arm(ARMED).is_err() {
            return false;
        }
        let mut events = [EpollEvent::empty()];
        loop {
            match self.epoll.wait(&mut events, EpollTimeout::NONE) {
                Ok(_) => return true,
                Err(Errno::EINTR) => {}
                Err(_) => return false,
            }
        }
    }

    fn arm(&self, events: EpollFlags) -> io::Result<()> {
        let mut event = EpollEvent::new(events, event_data(&self.reader));
        self.epoll.modify(&self.reader, &mut event)?;
        Ok(())
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

/// The event's user data: the descriptor number, as before (nothing reads it back; the gate
/// watches one descriptor).
fn event_data(file: &File) -> u64 {
    u64::try_from(file.as_raw_fd()).unwrap_or(0)
}

/// What one read of a pane's output did.
#[derive(Debug, PartialEq, Eq)]
pub enum ReadOutcome {
    /// Output was parsed into the terminal: its query answers, for the program, and whether
    /// the read filled the buffer (more may be waiting).
    Parsed { answers: Vec<u8>, full: bool },
    /// Nothing was waiting.
    Nothing,
    /// The program closed the PTY (or reading failed).
    Closed,
}

/// Reads what the PTY has (without waiting) and parses it, both under the terminal's lock, so
/// that whichever thread reads, chunks are parsed in the order they were read.
pub(crate) fn read_once(
    file: &File,
    terminal: &Mutex<Terminal>,
    buf: &mut [u8],
    stats: &ReadStats,
) -> ReadOutcome {
    let (mut term, waited) = match terminal.try_lock() {
        Ok(term) => (term, false),
        Err(std::sync::TryLockError::Poisoned(p)) => (p.into_inner(), false),
        Err(std::sync::TryLockError::WouldBlock) => (
            terminal.lock().unwrap_or_else(PoisonError::into_inner),
            true,
        ),
    };
    loop {
        return match (&mut &*file).read(buf) {
            Ok(0) => ReadOutcome::Closed,
            Ok(n) => {
                stats.reads.fetch_add(1, Ordering::Relaxed);
                if waited {
                    stats.contended.fetch_add(1, Ordering::Relaxed);
                }
                term.process(&buf[..n]);
                ReadOutcome::Parsed {
                    answers: term.take_replies(),
                    full: n == buf.len(),
                }
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
        let (read_end, write_end) = nix::unistd::pipe().expect("pipe");
        (File::from(read_end), File::from(write_end))
    }

    /// Whether the gate's epoll reports something right now.
    fn reports(gate: &ReadGate) -> bool {
        let mut events = [EpollEvent::empty()];
        gate.epoll
            .wait(&mut events, EpollTimeout::ZERO)
            .expect("epoll_wait")
            > 0
    }

    #[test]
    fn taken_output_does_not_wake_the_reader_and_giving_back_does() {
        let (read_end, mut write_end) = pipe();
        let gate = ReadGate::new(read_end).expect("gate");
        gate.arm(ARMED).expect("arm");
        gate.take();
        write_end.write_all(b"echo").expect("write");
        assert!(!reports(&gate), "the reader woke for output the owner took");
        gate.give_back();
        assert!(reports(&gate), "output waiting when reading was given back");
    }

    /// The owner keeps the output from read to read (while keys go to the pane): reading it
    /// does not re-arm the reader; only giving it back does.
    #[test]
    fn taken_output_stays_taken_across_the_owners_reads_until_given_back() {
        let (read_end, mut write_end) = pipe();
        crate::pty_fd::set_nonblocking(std::os::fd::AsFd::as_fd(&read_end)).expect("nonblocking");
        let owners = read_end.try_clone().expect("dup");
        let gate = ReadGate::new(read_end).expect("gate");
        let terminal = Mutex::new(Terminal::new(
            2,
            20,
            crate::HistoryLimits {
                lines: 10,
                bytes: 1024,
            },
        ));
        let stats = ReadStats::default();
        let mut buf = [0u8; 64];
        gate.arm(ARMED).expect("arm");
        gate.take();
        for echo in [&b"a"[..], b"b", b"c"] {
            write_end.write_all(echo).expect("write");
            assert!(!reports(&gate), "the reader woke for output the owner took");
            assert!(matches!(
                read_once(&owners, &terminal, &mut buf, &stats),
                ReadOutcome::Parsed { full: false, .. }
            ));
        }
        write_end.write_all(b"d").expect("write");
        gate.give_back();
        assert!(reports(&gate), "output waiting when reading was given back");
    }

    #[test]
    fn reads_parse_in_order_and_report_nothing_or_closed() {
        let (read_end, mut write_end) = pipe();
        crate::pty_fd::set_nonblocking(std::os::fd::AsFd::as_fd(&read_end)).expect("nonblocking");
        let terminal = Mutex::new(Terminal::new(
            2,
            20,
            crate::HistoryLimits {
                lines: 10,
                bytes: 1024,
            },
        ));
        let mut buf = [0u8; 64];
        let stats = ReadStats::default();
        assert_eq!(
            read_once(&read_end, &terminal, &mut buf, &stats),
            ReadOutcome::Nothing
        );
        write_end.write_all(b"ab\x1b[6n").expect("write");
        match read_once(&read_end, &terminal, &mut buf, &stats) {
            ReadOutcome::Parsed { answers, full } => {
                assert_eq!(answers, b"\x1b[1;3R");
                assert!(!full, "6 bytes filled a 64-byte buffer");
            }
            other => panic!("expected output, got {other:?}"),
        }
        drop(write_end);
        assert_eq!(
            read_once(&read_end, &terminal, &mut buf, &stats),
            ReadOutcome::Closed
        );
        assert_eq!(stats.counts(), (1, 0), "one parsed read, the lock was free");
        let screen = terminal.lock().expect("lock").screen().contents();
        assert_eq!(screen.trim_end(), "ab");
    }
}
