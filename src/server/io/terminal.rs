//! A client's terminal, read and written by the server itself.
//!
//! An attached client could carry every keystroke to the server and every frame back, but each
//! of those is a hop through another process on the keystroke-to-echo path. Like tmux, the
//! server instead opens the client's terminal device (the path the client names in `Attach`)
//! and reads input from it and writes frames to it directly; the client only keeps raw mode,
//! reports resizes and waits to be told to exit. A terminal the server cannot open (another
//! mount namespace, a device that is not ours) leaves the client forwarding as before.
//!
//! Order matters when a client leaves: the owner stops reading the terminal as the client is
//! removed (it reads only its clients' terminals, see [`next_input`]), so keys typed afterwards
//! reach the shell; and the connection's writer writes everything queued for the terminal
//! before the `Exit` that lets the client restore it (see `socket::connection`).

use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::Poll;

use tokio::io::unix::AsyncFd;
use tokio::io::Interest;
use tokio::sync::mpsc;

use crate::server::model::ids::ClientId;

/// The client's terminal device, opened non-blocking by the server.
#[derive(Clone, Debug)]
pub struct DirectTerminal {
    fd: Arc<AsyncFd<File>>,
    /// Terminal bytes handed to the connection's writer and not yet written: while there are
    /// none, the owner writes a frame itself, saving the hop to the writer task.
    queued: Arc<AtomicUsize>,
}

/// Why a terminal path was not used.
fn refuse(path: &str, why: &str) -> std::io::Error {
    std::io::Error::other(format!("{path}: {why}"))
}

impl DirectTerminal {
    /// Opens the client's terminal: the path must lead to the very device file the client
    /// has (not another by that name), a terminal owned by the server's user. `O_NOCTTY` keeps
    /// it from becoming the server's controlling terminal, and opening it anew (rather than
    /// sharing the client's descriptor) keeps `O_NONBLOCK` off the shell's.
    pub fn open(device: &crate::protocol::TerminalDevice) -> std::io::Result<Self> {
        let path = device.path.as_str();
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOCTTY | libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(path)?;
        if !std::io::IsTerminal::is_terminal(&file) {
            return Err(refuse(path, "not a terminal"));
        }
        let meta = file.metadata()?;
        if meta.dev() != device.dev || meta.ino() != device.ino {
            return Err(refuse(path, "is another terminal than the client's"));
        }
        if meta.uid() != crate::paths::current_uid() {
            return Err(refuse(path, "belongs to another user"));
        }
        // Registered for input only: frames are written straight away (`send_to_terminal`),
        // and a registration for both would wake the owner once per frame for the `EPOLLOUT`
        // edge of the terminal taking it, which nothing waits for. A writer that finds the
        // terminal full waits on a registration of its own (`write_all`).
        // SAFETY: the AsyncFd owns the File, so its descriptor stays open and the same for
        // the AsyncFd's whole life (nothing calls get_mut to swap it). This is tokio's
        // registration contract, not a system call: nix has nothing to offer here.
        let fd = unsafe { AsyncFd::register_with_interest(file, Interest::READABLE) }?;
        Ok(Self {
            fd: Arc::new(fd),
            queued: Arc::new(AtomicUsize::new(0)),
        })
    }

    /// Writes all of `bytes`, waiting while the terminal is slow to take them: on a duplicate
    /// descriptor registered for output, made only once the terminal is found full and
    /// dropped with the write (see `open` for why the terminal's own is for input only).
    pub async fn write_all(&self, mut bytes: &[u8]) -> std::io::Result<()> {
        let mut room: Option<AsyncFd<File>> = None;
        while !bytes.is_empty() {
            match (&mut self.fd.get_ref()).write(bytes) {
                Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
                Ok(n) => bytes = &bytes[n..],
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    let room = match &mut room {
                        Some(room) => room,
                        None => room.insert(self.output_registration()?),
                    };
                    let mut ready = room.writable().await?;
                    // A write is tried again right after; if the terminal is still full, the
                    // next wait is for the next edge.
                    ready.clear_ready();
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// A duplicate of the terminal's descriptor registered for output only.
    fn output_registration(&self) -> std::io::Result<AsyncFd<File>> {
        let file = self.fd.get_ref().try_clone()?;
        // SAFETY: as in `open`: the AsyncFd owns its own duplicate for its whole life.
        Ok(unsafe { AsyncFd::register_with_interest(file, Interest::WRITABLE) }?)
    }
}

/// What reading a client's terminal gave.
#[derive(Debug, PartialEq, Eq)]
pub enum TerminalInput {
    Bytes(Vec<u8>),
    /// The terminal hung up (a dropped SSH connection, a closed window) or failed.
    Lost,
}

/// How much of a terminal's input one read takes (a paste arrives in several).
const INPUT_CHUNK: usize = 16 * 1024;

/// Waits until one of `terminals` has input, and reads it: on the owner's own thread, so a key
/// goes from the terminal to `input::route` with no task or channel in between. Never returns
/// while none has input (pending forever for an empty list).
pub async fn next_input(terminals: &[(ClientId, DirectTerminal)]) -> (ClientId, TerminalInput) {
    std::future::poll_fn(|cx| {
        for (id, t) in terminals {
            loop {
                let mut ready = match t.fd.poll_read_ready(cx) {
                    Poll::Ready(Ok(ready)) => ready,
                    Poll::Ready(Err(_)) => return Poll::Ready((*id, TerminalInput::Lost)),
                    Poll::Pending => break,
                };
                // The buffer exists only once a terminal is ready, not in every pending future.
                let read = ready.try_io(|fd| {
                    let mut buf = vec![0u8; INPUT_CHUNK];
                    let n = (&mut fd.get_ref()).read(&mut buf)?;
                    buf.truncate(n);
                    Ok(buf)
                });
                match read {
                    Ok(Ok(bytes)) if bytes.is_empty() => {
                        return Poll::Ready((*id, TerminalInput::Lost))
                    }
                    Ok(Ok(bytes)) => {
                        // A read shorter than asked took all the terminal had (a raw-mode
                        // read returns what is queued, up to the size asked), so the next wait
                        // is for new input: without this, the next turn read once more only to
                        // get EAGAIN, a system call per keystroke. Input arriving meanwhile is
                        // a new edge, which this does not clear (tokio compares the event's
                        // tick).
                        if bytes.len() < INPUT_CHUNK {
                            ready.clear_ready();
                        }
                        return Poll::Ready((*id, TerminalInput::Bytes(bytes)));
                    }
                    Ok(Err(e)) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    // EIO: hung up.
                    Ok(Err(_)) => return Poll::Ready((*id, TerminalInput::Lost)),
                    // Readiness was stale and is cleared: poll again, which registers the waker.
                    Err(_would_block) => {}
                }
            }
        }
        Poll::Pending
    })
    .await
}

/// Sends bytes to an attached client's terminal: written at once when the server owns the
/// terminal and nothing is queued before them (what does not fit is queued), else queued for
/// the connection's writer, which keeps the order. Err when the client's queue is full.
pub fn send_to_terminal(
    tx: &mpsc::Sender<Outgoing>,
    direct: Option<&DirectTerminal>,
    bytes: Vec<u8>,
) -> Result<(), ()> {
    let Some(t) = direct else {
        return tx.try_send(Outgoing::Terminal(bytes)).map_err(|_| ());
    };
    let mut rest = &bytes[..];
    if t.queued.load(Ordering::Acquire) == 0 {
        loop {
            match (&mut t.fd.get_ref()).write(rest) {
                Ok(n) if n == rest.len() => return Ok(()),
                Ok(0) => break,
                Ok(n) => rest = &rest[n..],
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                // Full (WouldBlock) or failing: the writer waits for room, or finds out.
                Err(_) => break,
            }
        }
    }
    t.queued.fetch_add(1, Ordering::AcqRel);
    tx.try_send(Outgoing::Terminal(rest.to_vec())).map_err(|_| {
        t.queued.fetch_sub(1, Ordering::AcqRel);
    })
}

impl DirectTerminal {
    /// Marks one queued item written (or dropped) by the connection's writer.
    pub fn written(&self) {
        self.queued.fetch_sub(1, Ordering::AcqRel);
    }
}

/// What the server sends one connection, in order.
#[derive(Debug)]
pub enum Outgoing {
    /// Bytes for the attached client's terminal: frames, bells, clipboard, notifications.
    Terminal(Vec<u8>),
    /// An encoded protocol message (a response, `Exit`): always over the socket.
    Message(Vec<u8>),
    /// From now on, terminal bytes go to this terminal directly instead of through the client.
    UseTerminal(DirectTerminal),
}

#[cfg(test)]
mod tests {
    use super::*;
    use portable_pty::{native_pty_system, PtySize};
    use std::time::Duration;

    /// The device at `path` as a client would name it.
    fn device(path: &std::path::Path) -> crate::protocol::TerminalDevice {
        let meta = std::fs::metadata(path).expect("stat");
        crate::protocol::TerminalDevice {
            path: path.display().to_string(),
            dev: meta.dev(),
            ino: meta.ino(),
        }
    }

    /// A fresh PTY, its terminal side opened as a client's would be.
    fn open_pty() -> (portable_pty::PtyPair, DirectTerminal) {
        let pty = native_pty_system()
            .openpty(PtySize::default())
            .expect("openpty");
        let path = pty.master.tty_name().expect("tty name");
        let terminal = DirectTerminal::open(&device(&path)).expect("open");
        (pty, terminal)
    }

    #[tokio::test]
    async fn a_path_that_is_not_a_terminal_is_refused() {
        let file = tempfile::NamedTempFile::new().expect("temp file");
        let err = DirectTerminal::open(&device(file.path())).expect_err("a plain file");
        assert!(err.to_string().contains("not a terminal"), "{err}");
        let mut missing = device(file.path());
        missing.path = "/nonexistent/tty".into();
        assert!(DirectTerminal::open(&missing).is_err());
    }

    #[tokio::test]
    async fn a_path_leading_to_another_terminal_is_refused() {
        let pty = native_pty_system()
            .openpty(PtySize::default())
            .expect("openpty");
        let other = native_pty_system()
            .openpty(PtySize::default())
            .expect("openpty");
        // The client's terminal as the client sees it, and the name of another one (as a
        // client in another mount namespace might see it).
        let mut named = device(&pty.master.tty_name().expect("tty name"));
        named.path = other
            .master
            .tty_name()
            .expect("tty name")
            .display()
            .to_string();
        let err = DirectTerminal::open(&named).expect_err("another terminal");
        assert!(err.to_string().contains("another terminal"), "{err}");
    }

    #[tokio::test]
    async fn input_is_read_as_its_clients_and_a_hangup_is_reported() {
        let (pty, terminal) = open_pty();
        let (quiet_pty, quiet) = open_pty();
        let terminals = [(3, quiet), (7, terminal.clone())];
        let mut keys = pty.master.take_writer().expect("writer");
        keys.write_all(b"typed\n").expect("type");
        assert_eq!(
            next_input(&terminals).await,
            (7, TerminalInput::Bytes(b"typed\n".to_vec()))
        );
        terminal.write_all(b"drawn").await.expect("draw");
        drop((keys, pty.master, pty.slave));
        assert_eq!(next_input(&terminals).await, (7, TerminalInput::Lost));
        drop(quiet_pty);
    }

    #[tokio::test]
    async fn frames_are_written_at_once_but_never_ahead_of_queued_ones() {
        let (pty, terminal) = open_pty();
        let direct = terminal.clone();
        let (tx, mut rx) = mpsc::channel(8);
        // Nothing queued: written straight to the terminal, the writer task never sees it.
        send_to_terminal(&tx, Some(&direct), b"now".to_vec()).expect("sent");
        assert!(rx.try_recv().is_err());
        let mut screen = pty.master.try_clone_reader().expect("reader");
        let mut got = [0u8; 3];
        screen.read_exact(&mut got).expect("read");
        assert_eq!(&got, b"now");
        // Something still queued for the writer: the next bytes queue up behind it.
        terminal.queued.fetch_add(1, Ordering::AcqRel);
        tx.try_send(Outgoing::Terminal(b"first".to_vec()))
            .expect("queue");
        send_to_terminal(&tx, Some(&direct), b"second".to_vec()).expect("sent");
        let order: Vec<Vec<u8>> = std::iter::from_fn(|| match rx.try_recv() {
            Ok(Outgoing::Terminal(bytes)) => Some(bytes),
            _ => None,
        })
        .collect();
        assert_eq!(order, vec![b"first".to_vec(), b"second".to_vec()]);
        assert_eq!(terminal.queued.load(Ordering::Acquire), 2);
    }

    #[tokio::test]
    async fn each_key_is_read_when_it_comes_after_a_short_read() {
        // A short read clears the terminal's readiness; a key typed afterwards is a new edge
        // and must still be read (a lost edge would leave the key unread until the next one).
        let (pty, terminal) = open_pty();
        let terminals = [(7, terminal)];
        let mut keys = pty.master.take_writer().expect("writer");
        for key in ["a\n", "b\n", "c\n"] {
            keys.write_all(key.as_bytes()).expect("type");
            let got = tokio::time::timeout(Duration::from_secs(30), next_input(&terminals))
                .await
                .expect("a key typed after a short read was never read");
            assert_eq!(got, (7, TerminalInput::Bytes(key.as_bytes().to_vec())));
        }
    }

    #[tokio::test]
    async fn a_write_to_a_full_terminal_waits_for_room_and_completes_in_order() {
        // The terminal's own registration is for input only: a writer that finds it full
        // waits on a registration of its own, and must be woken when the reader makes room.
        let (pty, terminal) = open_pty();
        let mut filled = 0usize;
        while let Ok(n) = (&mut terminal.fd.get_ref()).write(&[b'f'; 4096]) {
            filled += n;
        }
        let rest: Vec<u8> = (0..64 * 1024).map(|i| b'a' + (i % 26) as u8).collect();
        let writer = terminal.clone();
        let written = rest.clone();
        let write = tokio::spawn(async move { writer.write_all(&written).await });
        let mut screen = pty.master.try_clone_reader().expect("reader");
        let total = filled + rest.len();
        let read = std::thread::spawn(move || {
            let mut got = vec![0u8; total];
            screen.read_exact(&mut got).map(|()| got)
        });
        tokio::time::timeout(Duration::from_secs(30), write)
            .await
            .expect("the write to a full terminal never completed")
            .expect("task")
            .expect("write");
        let got = read.join().expect("reader thread").expect("read");
        assert!(got[..filled].iter().all(|&b| b == b'f'));
        assert!(
            got[filled..] == rest[..],
            "the bytes written after the wait arrived out of order"
        );
    }
}
