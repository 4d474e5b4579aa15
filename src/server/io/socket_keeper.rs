//! Keeps the server reachable when its socket file goes. A tmp cleaner (systemd-tmpfiles ages
//! `/tmp`, where the socket lives without `XDG_RUNTIME_DIR`), an `rm -rf` of the runtime
//! directory, or a script's clean-up can unlink the socket of a server that still holds the
//! user's sessions; tmux then answers "no server running" until the user finds `kill -USR1`.
//! calyx watches the socket's directory with inotify (nothing runs while nothing changes) and,
//! when its socket is gone, binds a fresh one at the same path and accepts there (making the
//! socket's directory again, but not the directories above it); `SIGUSR1` asks for the same
//! check, as in tmux. A path another live server took meanwhile is left to it. The owner hears of each new listener ([`Msg::SocketRebound`]) so that an in-place
//! upgrade hands over the socket clients can reach.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify};
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;
use tokio::net::UnixListener;
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::mpsc;

use super::socket::{accept_loop, bind};
use crate::server::messages::Msg;

/// The inode of the socket file this server listens on (0: none), shared by the keeper, which
/// changes it when it binds again, and the exiting server, which removes only that file: a
/// server started while this one exits has bound a socket of its own at the same path.
#[derive(Debug, Clone, Default)]
pub struct BoundSocket(Arc<AtomicU64>);

impl BoundSocket {
    /// The socket now at `path`, which this server just bound or inherited.
    pub fn at(path: &Path) -> BoundSocket {
        BoundSocket(Arc::new(AtomicU64::new(inode_of(path).unwrap_or(0))))
    }

    fn set(&self, inode: Option<u64>) {
        self.0.store(inode.unwrap_or(0), Ordering::SeqCst);
    }

    fn get(&self) -> Option<u64> {
        Some(self.0.load(Ordering::SeqCst)).filter(|&i| i != 0)
    }

    /// Removes the socket file at `path` if it is still this server's.
    pub fn remove(&self, path: &Path) {
        if self.get().is_some() && inode_of(path) == self.get() {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Accepts on `listener` (bound at `path`) for the server's life, binding `path` again
/// whenever the socket there is no longer this server's.
pub async fn serve(
    listener: UnixListener,
    path: PathBuf,
    bound: BoundSocket,
    tx: mpsc::UnboundedSender<Msg>,
) {
    let mut inode = bound.get();
    let mut accepting = tokio::spawn(accept_loop(listener, tx.clone()));
    let mut usr1 = signal(SignalKind::user_defined1()).ok();
    loop {
        // Watching before looking: a removal after the look still wakes the wait below.
        let watch = DirWatch::new(&path);
        // The owner is gone (the server is exiting and removed the socket itself).
        if tx.is_closed() {
            return;
        }
        let ours = inode.is_some() && inode_of(&path) == inode;
        if !ours {
            match rebind(&path).await {
                Some((listener, fd)) => {
                    accepting.abort();
                    inode = inode_of(&path);
                    bound.set(inode);
                    accepting = tokio::spawn(accept_loop(listener, tx.clone()));
                    let _ = tx.send(Msg::SocketRebound { fd });
                    tracing::warn!(
                        "the socket {} was removed: listening there again",
                        path.display()
                    );
                    // Watch again: the directory may be a new one.
                    continue;
                }
                // Nothing better than waiting for the next change or SIGUSR1.
                None => inode = None,
            }
        }
        tokio::select! {
            () = changed(watch.as_ref()) => {}
            Some(()) = next_signal(&mut usr1) => {
                tracing::info!("SIGUSR1: checking the socket {}", path.display());
            }
        }
    }
}

/// A fresh listener at `path` and its descriptor, unless another live server answers there
/// or the path cannot be bound (said in the log).
async fn rebind(path: &Path) -> Option<(UnixListener, RawFd)> {
    // The socket's own directory is made again, never what holds it: a runtime directory
    // (`/run/user/UID`) or a test's temporary tree that went away took this server's world
    // with it, and recreating it would leave directories behind for nobody.
    if let Some(home) = path.parent().and_then(Path::parent) {
        if !home.is_dir() {
            tracing::warn!(
                "the socket {} is gone with {}: not making that again",
                path.display(),
                home.display()
            );
            return None;
        }
    }
    match bind(path).await {
        Ok(listener) => {
            let fd = listener.as_raw_fd();
            Some((listener, fd))
        }
        Err(e) => {
            tracing::warn!(
                "the socket {} is gone and cannot be bound again: {e:#}",
                path.display()
            );
            None
        }
    }
}

fn inode_of(path: &Path) -> Option<u64> {
    std::fs::symlink_metadata(path).ok().map(|m| m.ino())
}

async fn next_signal(usr1: &mut Option<tokio::signal::unix::Signal>) -> Option<()> {
    match usr1 {
        Some(signal) => signal.recv().await,
        None => std::future::pending().await,
    }
}

/// Resolves when something in the watched directory was removed or moved away, or the
/// directory itself was; never without a watch (the directory could not be watched).
async fn changed(watch: Option<&DirWatch>) {
    let Some(watch) = watch else {
        return std::future::pending().await;
    };
    loop {
        let Ok(mut ready) = watch.fd.readable().await else {
            return std::future::pending().await;
        };
        match watch.fd.get_ref().0.read_events() {
            Ok(events) if !events.is_empty() => return,
            Ok(_) => ready.clear_ready(),
            Err(nix::errno::Errno::EAGAIN) => ready.clear_ready(),
            Err(e) => {
                tracing::warn!("socket watch: {e}");
                return std::future::pending().await;
            }
        }
    }
}

/// An inotify watch on the socket's directory for what can take the socket away.
struct DirWatch {
    fd: AsyncFd<WatchFd>,
}

/// [`Inotify`] as tokio wants it (a raw descriptor).
struct WatchFd(Inotify);

impl AsRawFd for WatchFd {
    fn as_raw_fd(&self) -> RawFd {
        let fd: BorrowedFd<'_> = self.0.as_fd();
        fd.as_raw_fd()
    }
}

impl DirWatch {
    fn new(socket: &Path) -> Option<DirWatch> {
        let dir = socket.parent()?;
        let inotify = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC).ok()?;
        let flags = AddWatchFlags::IN_DELETE
            | AddWatchFlags::IN_MOVED_FROM
            | AddWatchFlags::IN_DELETE_SELF
            | AddWatchFlags::IN_MOVE_SELF;
        if let Err(e) = inotify.add_watch(dir, flags) {
            tracing::warn!(
                "cannot watch {} for the socket's removal: {e}",
                dir.display()
            );
            return None;
        }
        // SAFETY: the descriptor is the Inotify's own, which the AsyncFd owns and keeps open
        // for its whole life, and `as_raw_fd` always returns that one.
        let fd = unsafe { AsyncFd::register_with_interest(WatchFd(inotify), Interest::READABLE) }
            .ok()?;
        Some(DirWatch { fd })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_exiting_server_removes_only_its_own_socket() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("server.sock");
        let _ours = UnixListener::bind(&path).expect("bind");
        let bound = BoundSocket::at(&path);
        // A server started while this one exits binds its own socket at the same path.
        std::fs::remove_file(&path).expect("rm");
        let _theirs = UnixListener::bind(&path).expect("bind again");
        bound.remove(&path);
        assert!(path.exists(), "the other server's socket stays");
        BoundSocket::at(&path).remove(&path);
        assert!(!path.exists(), "its own socket goes");
        // Nothing bound: nothing removed.
        BoundSocket::default().remove(&path);
    }
}
