//! The receiving side of [`ClientMessage::AdoptChannel`](crate::protocol::ClientMessage):
//! `calyx remote-bridge` passes its SSH channel (stdin and stdout, the pipes sshd gave it)
//! over its Unix socket connection, and the server serves that channel as a client
//! connection of its own. A keystroke from `calyx --remote` then goes sshd -> server with no
//! bridge process copying it in between (one process hop less each way).

use std::os::fd::{FromRawFd, OwnedFd, RawFd};

use tokio::io::Interest;
use tokio::net::unix::pipe;
use tokio::net::UnixStream;

/// The channel handed over: the pipe the client's frames arrive on and the one the server
/// writes to.
pub struct Channel {
    pub input: pipe::Receiver,
    pub output: pipe::Sender,
}

/// Receives the two descriptors sent with the one byte that follows the `AdoptChannel`
/// frame. Anything else (no descriptors, not two pipes of the right direction) is refused
/// and whatever arrived is closed.
pub async fn receive(stream: &UnixStream) -> std::io::Result<Channel> {
    let fds = loop {
        stream.readable().await?;
        match stream.try_io(Interest::READABLE, || recv_fds(stream)) {
            Ok(fds) => break fds,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            Err(e) => return Err(e),
        }
    };
    let mut fds = fds.into_iter();
    let (Some(input), Some(output), None) = (fds.next(), fds.next(), fds.next()) else {
        return Err(std::io::Error::other(
            "the bridge did not pass exactly two descriptors",
        ));
    };
    Ok(Channel {
        input: pipe::Receiver::from_owned_fd(input)?,
        output: pipe::Sender::from_owned_fd(output)?,
    })
}

/// One `recvmsg` of one byte with room for a few descriptors; every descriptor received is
/// owned (and so closed when dropped) whatever happens next.
fn recv_fds(stream: &UnixStream) -> std::io::Result<Vec<OwnedFd>> {
    use nix::sys::socket::{recvmsg, ControlMessageOwned, MsgFlags};
    use std::os::fd::AsRawFd;
    let mut byte = [0u8; 1];
    let mut iov = [std::io::IoSliceMut::new(&mut byte)];
    let mut space = nix::cmsg_space!([RawFd; 4]);
    let msg = recvmsg::<()>(
        stream.as_raw_fd(),
        &mut iov,
        Some(&mut space),
        MsgFlags::MSG_CMSG_CLOEXEC,
    )
    .map_err(std::io::Error::from)?;
    let mut fds = Vec::new();
    for cmsg in msg.cmsgs() {
        if let ControlMessageOwned::ScmRights(received) = cmsg {
            // SAFETY: the kernel just installed these descriptors in this process for us;
            // nothing else owns them.
            fds.extend(
                received
                    .into_iter()
                    .map(|fd| unsafe { OwnedFd::from_raw_fd(fd) }),
            );
        }
    }
    if msg.bytes == 0 {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    Ok(fds)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// Two pipes passed the way the bridge passes its stdin and stdout arrive as a working
    /// channel: what is written to the first pipe is read from `input`, and what is written
    /// to `output` comes out of the second.
    #[tokio::test]
    async fn a_passed_pair_of_pipes_is_served_as_a_channel() {
        let (bridge, server) = std::os::unix::net::UnixStream::pair().expect("socketpair");
        let (in_read, in_write) = nix::unistd::pipe().expect("pipe");
        let (out_read, out_write) = nix::unistd::pipe().expect("pipe");
        crate::remote::handover::send_fds(&bridge, &[in_read.as_fd(), out_write.as_fd()])
            .expect("send");
        drop((in_read, out_write));
        server.set_nonblocking(true).expect("nonblocking");
        let server = UnixStream::from_std(server).expect("tokio");
        let mut channel = receive(&server).await.expect("received");
        std::io::Write::write_all(&mut std::fs::File::from(in_write), b"keys").expect("write in");
        let mut got = [0u8; 4];
        channel.input.read_exact(&mut got).await.expect("read in");
        assert_eq!(&got, b"keys");
        channel.output.write_all(b"echo").await.expect("write out");
        drop(channel);
        let mut out = String::new();
        std::io::Read::read_to_string(&mut std::fs::File::from(out_read), &mut out)
            .expect("read out");
        assert_eq!(out, "echo");
    }

    /// A byte without descriptors is refused.
    #[tokio::test]
    async fn a_byte_without_descriptors_is_refused() {
        let (mut bridge, server) = std::os::unix::net::UnixStream::pair().expect("socketpair");
        std::io::Write::write_all(&mut bridge, &[0]).expect("write");
        server.set_nonblocking(true).expect("nonblocking");
        let server = UnixStream::from_std(server).expect("tokio");
        assert!(receive(&server).await.is_err());
    }
}
