//! `calyx remote-bridge`, run by `ssh` on the far side of `calyx --remote`: it connects to
//! this machine's calyx server (starting it unless `--no-start`) and relays bytes between its
//! stdin/stdout (the SSH channel) and the server's Unix socket, so the client speaks the same
//! protocol as over a local socket. It listens on nothing.

use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::process::ExitCode;

use super::handover::{hand_over, Handover};
use super::handshake;

/// Runs the bridge until either side closes.
pub async fn run(start: bool) -> ExitCode {
    let mut stdout = std::io::stdout();
    // The version first: a client of another protocol stops here, before any server starts.
    if stdout
        .write_all(handshake::header().as_bytes())
        .and_then(|()| stdout.flush())
        .is_err()
    {
        return ExitCode::FAILURE;
    }
    let connected = if start {
        crate::client::connect_or_start().await
    } else {
        crate::client::connect_existing().await
    };
    let socket = match connected.and_then(|s| Ok(s.into_std()?)) {
        Ok(socket) => socket,
        Err(e) => {
            let line = format!(
                "{}{}\n",
                handshake::ERROR,
                format!("{e:#}").replace('\n', " ")
            );
            let _ = stdout.write_all(line.as_bytes());
            let _ = stdout.flush();
            return ExitCode::FAILURE;
        }
    };
    let ready = format!("{}\n", handshake::READY);
    if stdout
        .write_all(ready.as_bytes())
        .and_then(|()| stdout.flush())
        .is_err()
    {
        return ExitCode::FAILURE;
    }
    // Best: the server takes the channel itself (no copy here); else this process relays.
    let socket = match hand_over(socket) {
        Handover::Taken => return ExitCode::SUCCESS,
        Handover::Refused => match reconnect().await {
            Some(socket) => socket,
            None => return ExitCode::FAILURE,
        },
        Handover::Unsupported(socket) => socket,
    };
    match relay(socket) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("calyx remote-bridge: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A new connection to the server for relaying, after a server that could not take the
/// channel closed the first one.
async fn reconnect() -> Option<UnixStream> {
    let socket = crate::client::connect_existing().await.ok()?;
    socket.into_std().ok()
}

/// Plain blocking copies on two threads: a keystroke crosses with one read and one write,
/// with no async runtime hop on the way. Ends when either side closes.
fn relay(socket: UnixStream) -> std::io::Result<()> {
    socket.set_nonblocking(false)?;
    let mut to_server = socket.try_clone()?;
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let up_done = done_tx.clone();
    std::thread::Builder::new()
        .name("bridge-up".into())
        .spawn(move || {
            let mut stdin = std::io::stdin().lock();
            let _ = copy(&mut stdin, &mut to_server);
            let _ = to_server.shutdown(std::net::Shutdown::Write);
            let _ = up_done.send(());
        })?;
    // Frames go out through an unbuffered handle on descriptor 1: `Stdout` is line-buffered
    // and would split a frame holding a newline into two writes (two SSH packets).
    let mut stdout = std::fs::File::from(std::io::stdout().as_fd().try_clone_to_owned()?);
    std::thread::Builder::new()
        .name("bridge-down".into())
        .spawn(move || {
            let mut from_server = socket;
            let _ = copy(&mut from_server, &mut stdout);
            let _ = done_tx.send(());
        })?;
    // Either direction ending ends the bridge: the channel closed (the client went away) or
    // the server closed the connection. The process exit closes the other.
    let _ = done_rx.recv();
    Ok(())
}

/// Copies until end of file, flushing each read through at once.
fn copy(from: &mut impl Read, to: &mut impl Write) -> std::io::Result<()> {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match from.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => {
                to.write_all(&buf[..n])?;
                to.flush()?;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}
