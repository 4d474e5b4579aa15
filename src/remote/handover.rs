//! The bridge hands its SSH channel to the server (issue 20 benchmark): instead of copying
//! every frame between its stdin/stdout and the server's socket (one more process woken on
//! each keystroke and each echo), it passes those two descriptors to the server over the
//! socket (`SCM_RIGHTS`) and waits. The server then reads the client's frames from sshd's
//! pipe and writes its frames to sshd's pipe itself, so `calyx --remote` has the same hops as
//! `ssh -t host tmux attach`. The bridge stays alive while the channel is served: sshd stops
//! feeding a session whose command has exited.
//!
//! The relay remains for what cannot be handed over: a channel that is not two pipes (another
//! SSH server), a server from before this (it does not answer `Adopted`), or
//! `CALYX_BRIDGE_RELAY=1` (to compare both paths in a benchmark).

use std::io::{Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::os::unix::net::UnixStream;

use crate::protocol::{encode_message, ClientMessage, ServerMessage, TAG_JSON};

/// Forces the relay when set to `1`.
pub const RELAY_ENV: &str = "CALYX_BRIDGE_RELAY";

/// What became of the channel.
pub enum Handover {
    /// The server served it and it has ended: the bridge is done.
    Taken,
    /// The server closed the connection without taking it: connect again and relay.
    Refused,
    /// Not tried (not two pipes, or the relay was asked for): relay on this connection.
    Unsupported(UnixStream),
}

/// The largest answer read while waiting for `Adopted`.
const MAX_ANSWER: usize = 4096;

/// Offers stdin and stdout to the server on `socket` and, when it takes them, waits until the
/// server closes `socket` (the channel's connection ended).
pub fn hand_over(socket: UnixStream) -> Handover {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    if std::env::var(RELAY_ENV).is_ok_and(|v| v == "1")
        || !is_pipe(stdin.as_fd())
        || !is_pipe(stdout.as_fd())
        || socket.set_nonblocking(false).is_err()
    {
        return Handover::Unsupported(socket);
    }
    let offered = (&socket)
        .write_all(&encode_message(&ClientMessage::AdoptChannel))
        .and_then(|()| send_fds(&socket, &[stdin.as_fd(), stdout.as_fd()]));
    if offered.is_err() || !read_adopted(&socket) {
        return Handover::Refused;
    }
    // The server's copies are the channel's only ones now: when it closes them, ssh on the
    // other side sees the end at once instead of when this process exits.
    if let Ok(null) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
    {
        let _ = nix::unistd::dup2(null.as_raw_fd(), stdin.as_raw_fd());
        let _ = nix::unistd::dup2(null.as_raw_fd(), stdout.as_raw_fd());
    }
    // Nothing more comes on this connection: it closes when the channel's connection ends.
    let mut rest = [0u8; 64];
    while matches!((&socket).read(&mut rest), Ok(n) if n > 0) {}
    Handover::Taken
}

fn is_pipe(fd: BorrowedFd<'_>) -> bool {
    use std::os::unix::fs::FileTypeExt;
    fd.try_clone_to_owned()
        .map(std::fs::File::from)
        .and_then(|f| f.metadata())
        .is_ok_and(|m| m.file_type().is_fifo())
}

/// One byte carrying the descriptors.
pub(crate) fn send_fds(socket: &UnixStream, fds: &[BorrowedFd<'_>]) -> std::io::Result<()> {
    use nix::sys::socket::{sendmsg, ControlMessage, MsgFlags};
    let raw: Vec<i32> = fds.iter().map(AsRawFd::as_raw_fd).collect();
    let iov = [std::io::IoSlice::new(&[0u8])];
    let sent = sendmsg::<()>(
        socket.as_raw_fd(),
        &iov,
        &[ControlMessage::ScmRights(&raw)],
        MsgFlags::empty(),
        None,
    )
    .map_err(std::io::Error::from)?;
    if sent == 1 {
        Ok(())
    } else {
        Err(std::io::ErrorKind::WriteZero.into())
    }
}

/// Whether the server's first frame is `Adopted`.
fn read_adopted(mut socket: &UnixStream) -> bool {
    let mut len = [0u8; 4];
    if socket.read_exact(&mut len).is_err() {
        return false;
    }
    let len = u32::from_be_bytes(len) as usize;
    if len == 0 || len > MAX_ANSWER {
        return false;
    }
    let mut body = vec![0u8; len];
    if socket.read_exact(&mut body).is_err() || body[0] != TAG_JSON {
        return false;
    }
    matches!(
        serde_json::from_slice::<ServerMessage>(&body[1..]),
        Ok(ServerMessage::Adopted)
    )
}
