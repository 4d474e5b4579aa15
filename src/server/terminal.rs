//! A client's terminal, read and written by the server itself.
//!
//! An attached client could carry every keystroke to the server and every frame back, but each
//! of those is a hop through another process on the keystroke-to-echo path. Like tmux, the
//! server instead opens the client's terminal device (the path the client names in `Attach`)
//! and reads input from it and writes frames to it directly; the client only keeps raw mode,
//! reports resizes and waits to be told to exit. A terminal the server cannot open (another
//! mount namespace, a device that is not ours) leaves the client forwarding as before.
//!
//! Order matters when a client leaves: the reader stops as the client is removed (so keys
//! typed afterwards reach the shell), and the connection's writer writes everything queued for
//! the terminal before the `Exit` that lets the client restore it (see `socket::connection`).

use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::sync::Arc;

use tokio::io::unix::AsyncFd;
use tokio::sync::mpsc;

use super::{ClientId, Msg};

/// The client's terminal device, opened non-blocking by the server.
#[derive(Clone, Debug)]
pub struct DirectTerminal(Arc<AsyncFd<File>>);

/// Why a terminal path was not used.
fn refuse(path: &str, why: &str) -> std::io::Error {
    std::io::Error::other(format!("{path}: {why}"))
}

impl DirectTerminal {
    /// Opens the terminal at `path`: it must be a terminal device owned by the server's user.
    /// `O_NOCTTY` keeps it from becoming the server's controlling terminal, and opening it
    /// anew (rather than sharing the client's descriptor) keeps `O_NONBLOCK` off the shell's.
    pub fn open(path: &str) -> std::io::Result<Self> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOCTTY | libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(path)?;
        if !std::io::IsTerminal::is_terminal(&file) {
            return Err(refuse(path, "not a terminal"));
        }
        if file.metadata()?.uid() != crate::paths::current_uid() {
            return Err(refuse(path, "belongs to another user"));
        }
        // SAFETY: the AsyncFd owns the File, so its descriptor stays open and the same for
        // the AsyncFd's whole life.
        let fd = unsafe { AsyncFd::register(file) }?;
        Ok(Self(Arc::new(fd)))
    }

    /// Writes all of `bytes`, waiting while the terminal is slow to take them.
    pub async fn write_all(&self, mut bytes: &[u8]) -> std::io::Result<()> {
        while !bytes.is_empty() {
            let mut ready = self.0.writable().await?;
            match ready.try_io(|fd| (&mut fd.get_ref()).write(bytes)) {
                Ok(Ok(0)) => return Err(std::io::ErrorKind::WriteZero.into()),
                Ok(Ok(n)) => bytes = &bytes[n..],
                Ok(Err(e)) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Ok(Err(e)) => return Err(e),
                Err(_would_block) => {}
            }
        }
        Ok(())
    }

    /// Starts reading the terminal's input into the owner loop as `client`'s. Reading stops
    /// when the returned handle is dropped (the client left) or the terminal is gone (then
    /// the owner hears `TerminalLost`).
    pub fn start_reading(&self, client: ClientId, tx: mpsc::UnboundedSender<Msg>) -> InputReader {
        let fd = self.0.clone();
        let task = tokio::spawn(async move {
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                let Ok(mut ready) = fd.readable().await else {
                    break;
                };
                match ready.try_io(|fd| (&mut fd.get_ref()).read(&mut buf)) {
                    Ok(Ok(0)) => break,
                    Ok(Ok(n)) => {
                        let bytes = buf[..n].to_vec();
                        if tx.send(Msg::Input { id: client, bytes }).is_err() {
                            return;
                        }
                    }
                    Ok(Err(e)) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    // EIO: the terminal hung up (a dropped SSH connection, a closed window).
                    Ok(Err(_)) => break,
                    Err(_would_block) => {}
                }
            }
            let _ = tx.send(Msg::TerminalLost { id: client });
        });
        InputReader(task.abort_handle())
    }
}

/// Reads a client's terminal until dropped.
#[derive(Debug)]
pub struct InputReader(tokio::task::AbortHandle);

impl Drop for InputReader {
    fn drop(&mut self) {
        self.0.abort();
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

    #[tokio::test]
    async fn a_path_that_is_not_a_terminal_is_refused() {
        let file = tempfile::NamedTempFile::new().expect("temp file");
        let path = file.path().display().to_string();
        let err = DirectTerminal::open(&path).expect_err("a plain file");
        assert!(err.to_string().contains("not a terminal"), "{err}");
        assert!(DirectTerminal::open("/nonexistent/tty").is_err());
    }

    #[tokio::test]
    async fn input_goes_to_the_owner_as_the_clients_and_a_hangup_is_reported() {
        let pty = native_pty_system()
            .openpty(PtySize::default())
            .expect("openpty");
        let path = pty.master.tty_name().expect("tty name");
        let terminal = DirectTerminal::open(&path.display().to_string()).expect("open");
        let (tx, mut rx) = mpsc::unbounded_channel();
        let _reader = terminal.start_reading(7, tx);
        let mut keys = pty.master.take_writer().expect("writer");
        keys.write_all(b"typed\n").expect("type");
        match rx.recv().await {
            Some(Msg::Input { id: 7, bytes }) => assert_eq!(bytes, b"typed\n"),
            other => panic!("expected input, got {other:?}"),
        }
        terminal.write_all(b"drawn").await.expect("draw");
        drop((keys, pty.master, pty.slave));
        match rx.recv().await {
            Some(Msg::TerminalLost { id: 7 }) => {}
            other => panic!("expected the terminal lost, got {other:?}"),
        }
    }
}
