//! The server's Unix socket: a private directory (0700, ours), a socket only our uid may use,
//! and one reader and one writer task per connection.

use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::Context;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::mpsc;

use crate::accept_backoff::AcceptBackoff;
use crate::paths;
use crate::protocol::{
    encode_message, encode_raw, read_frame, ClientMessage, Frame, FrameError, ServerMessage,
};

use super::terminal::{DirectTerminal, Outgoing};
use crate::server::messages::Msg;

/// Frames queued for one client before it counts as behind (it then gets a full redraw).
const CLIENT_QUEUE: usize = 256;

/// Creates (or checks) the socket's directory: it must be ours and private.
pub fn prepare_dir(dir: &Path) -> anyhow::Result<()> {
    if !dir.exists() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .with_context(|| format!("failed to create {}", dir.display()))?;
    }
    let meta =
        std::fs::metadata(dir).with_context(|| format!("failed to inspect {}", dir.display()))?;
    if meta.uid() != paths::current_uid() {
        anyhow::bail!(
            "{} belongs to another user; refusing to use it",
            dir.display()
        );
    }
    if meta.mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .with_context(|| format!("failed to make {} private", dir.display()))?;
    }
    Ok(())
}

/// Binds the socket, replacing a stale one. Fails when a live server already listens there.
pub async fn bind(path: &Path) -> anyhow::Result<UnixListener> {
    if let Some(dir) = path.parent() {
        prepare_dir(dir)?;
    }
    if path.exists() {
        if UnixStream::connect(path).await.is_ok() {
            anyhow::bail!("a calyx server is already running on {}", path.display());
        }
        std::fs::remove_file(path)
            .with_context(|| format!("failed to remove stale socket {}", path.display()))?;
    }
    let listener = UnixListener::bind(path)
        .with_context(|| format!("failed to listen on {}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .with_context(|| format!("failed to restrict {}", path.display()))?;
    Ok(listener)
}

/// The listening socket inherited from the server this process replaced in place
/// (`calyx server-upgrade`): the same socket file, never closed in between.
pub fn inherited(fd: i32) -> anyhow::Result<UnixListener> {
    let fd = crate::upgrade::inherit::inherited_fd(fd, nix::sys::stat::SFlag::S_IFSOCK)?;
    let listener = std::os::unix::net::UnixListener::from(fd);
    listener.set_nonblocking(true)?;
    Ok(UnixListener::from_std(listener)?)
}

static NEXT_CLIENT: AtomicU64 = AtomicU64::new(1);

/// Accepts connections forever, refusing other users. One descriptor is kept in reserve: when
/// the table is full, it is given up to take the user's connection, so the user can still
/// list, approve and kill while something else holds every other descriptor.
pub async fn accept_loop(listener: UnixListener, tx: mpsc::UnboundedSender<Msg>) {
    let uid = paths::current_uid();
    let mut backoff = AcceptBackoff::default();
    let mut reserve = std::fs::File::open("/dev/null").ok();
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => {
                backoff.reset();
                // Taken again once a descriptor is free (not before the user's connection
                // took the one given up).
                if reserve.is_none() {
                    reserve = std::fs::File::open("/dev/null").ok();
                }
                stream
            }
            Err(e) if is_out_of_descriptors(&e) && reserve.is_some() => {
                tracing::warn!("socket: out of file descriptors; using the reserved one");
                reserve = None;
                continue;
            }
            Err(e) => {
                backoff.wait(&e, "socket").await;
                continue;
            }
        };
        if !peer_is(&stream, uid) {
            tracing::warn!("refused a connection from another user");
            continue;
        }
        let id = NEXT_CLIENT.fetch_add(1, Ordering::Relaxed);
        tokio::spawn(connection(stream, id, tx.clone()));
    }
}

fn is_out_of_descriptors(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE))
}

/// Whether the process at the other end of `stream` runs as `uid` (the kernel's peer
/// credentials, not anything the peer says). Only the server's own user may talk to it: the
/// directory's mode keeps others out, and this holds even if that mode were loosened.
fn peer_is(stream: &UnixStream, uid: u32) -> bool {
    stream.peer_cred().is_ok_and(|cred| cred.uid() == uid)
}

/// Serves one accepted connection; when it is a bridge handing over its SSH channel
/// ([`ClientMessage::AdoptChannel`]), serves the channel next and keeps this connection open
/// until the channel's ends (the bridge waits on it, and sshd keeps the channel while the
/// bridge runs).
async fn connection(stream: UnixStream, id: u64, tx: mpsc::UnboundedSender<Msg>) {
    let (reader, writer) = stream.into_split();
    let Some((reader, mut writer)) = frames(reader, writer, id, tx.clone()).await else {
        return;
    };
    let channel = match super::adopt::receive(reader.as_ref()).await {
        Ok(channel) => channel,
        Err(e) => {
            tracing::warn!("client {id}: no channel handed over: {e}");
            return;
        }
    };
    if writer
        .write_all(&encode_message(&ServerMessage::Adopted))
        .await
        .is_err()
    {
        return;
    }
    let id = NEXT_CLIENT.fetch_add(1, Ordering::Relaxed);
    // A channel asking to hand itself over again is simply closed.
    let _ = frames(channel.input, channel.output, id, tx).await;
}

/// Relays frames between one client and the owner until either side ends. Returns the two
/// halves, unclosed, when the client asked to hand over a channel (`AdoptChannel`): the
/// owner has forgotten this client by then.
async fn frames<R, W>(
    mut reader: R,
    mut writer: W,
    id: u64,
    tx: mpsc::UnboundedSender<Msg>,
) -> Option<(R, W)>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (out_tx, mut out_rx) = mpsc::channel::<Outgoing>(CLIENT_QUEUE);
    if tx.send(Msg::Connected { id, tx: out_tx }).is_err() {
        return None;
    }
    // One writer keeps the order of everything sent to this client: in particular, frames for
    // a terminal the server writes directly are all written before the `Exit` behind them.
    let writer_task = tokio::spawn(async move {
        let mut terminal: Option<DirectTerminal> = None;
        let mut broken = false;
        while let Some(out) = out_rx.recv().await {
            let sent = match out {
                Outgoing::Terminal(bytes) => match &terminal {
                    Some(t) => {
                        // A terminal that failed is gone, and the client with it: nothing to
                        // draw on any more.
                        if !broken && t.write_all(&bytes).await.is_err() {
                            broken = true;
                        }
                        t.written();
                        Ok(())
                    }
                    None => writer.write_all(&encode_raw(&bytes)).await,
                },
                Outgoing::Message(bytes) => writer.write_all(&bytes).await,
                Outgoing::UseTerminal(t) => {
                    terminal = Some(t);
                    Ok(())
                }
            };
            if sent.is_err() {
                break;
            }
        }
        writer
    });
    let mut handover = false;
    loop {
        match read_frame(&mut reader).await {
            Ok(Frame::Raw(bytes)) => {
                if tx.send(Msg::Input { id, bytes }).is_err() {
                    break;
                }
            }
            Ok(Frame::Message(ClientMessage::AdoptChannel)) => {
                handover = true;
                break;
            }
            Ok(Frame::Message(msg)) => {
                if tx.send(Msg::Message { id, msg }).is_err() {
                    break;
                }
            }
            Err(FrameError::Closed) => break,
            Err(e) => {
                tracing::warn!("client {id}: {e}");
                break;
            }
        }
    }
    let _ = tx.send(Msg::Disconnected { id });
    let mut writer = writer_task.await.ok()?;
    if handover {
        return Some((reader, writer));
    }
    let _ = writer.shutdown().await;
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn only_the_servers_own_user_is_accepted() {
        let (ours, _other_end) = UnixStream::pair().expect("socketpair");
        let me = paths::current_uid();
        assert!(peer_is(&ours, me));
        assert!(!peer_is(&ours, me.wrapping_add(1)));
    }

    #[test]
    fn a_shared_directory_is_made_private() {
        let dir = tempfile::tempdir().expect("tempdir");
        let sub = dir.path().join("calyx");
        std::fs::create_dir(&sub).expect("mkdir");
        std::fs::set_permissions(&sub, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        prepare_dir(&sub).expect("prepare");
        let mode = std::fs::metadata(&sub).expect("stat").mode() & 0o777;
        assert_eq!(mode, 0o700);
    }
}
