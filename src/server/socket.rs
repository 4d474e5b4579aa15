//! The server's Unix socket: a private directory (0700, ours), a socket only our uid may use,
//! and one reader and one writer task per connection.

use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::Context;
use tokio::io::AsyncWriteExt;
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::mpsc;

use crate::accept_backoff::AcceptBackoff;
use crate::paths;
use crate::protocol::{encode_raw, read_frame, Frame, FrameError};

use super::terminal::{DirectTerminal, Outgoing};
use super::{Msg, Server};

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

static NEXT_CLIENT: AtomicU64 = AtomicU64::new(1);

/// Accepts connections forever, refusing other users. One descriptor is kept in reserve: when
/// the table is full, it is given up to take the user's connection, so the user can still
/// list, approve and kill while something else holds every other descriptor.
async fn accept_loop(listener: UnixListener, tx: mpsc::UnboundedSender<Msg>) {
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

async fn connection(stream: UnixStream, id: u64, tx: mpsc::UnboundedSender<Msg>) {
    let (mut reader, mut writer) = stream.into_split();
    let (out_tx, mut out_rx) = mpsc::channel::<Outgoing>(CLIENT_QUEUE);
    if tx.send(Msg::Connected { id, tx: out_tx }).is_err() {
        return;
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
        let _ = writer.shutdown().await;
    });
    loop {
        match read_frame(&mut reader).await {
            Ok(Frame::Raw(bytes)) => {
                if tx.send(Msg::Input { id, bytes }).is_err() {
                    break;
                }
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
    let _ = writer_task.await;
}

/// Sends log lines to `server.log` in the state directory, rotated by size
/// ([`crate::log_file`]). The default level is `info`, with rmcp's routine per-session lines
/// (a session created, its client's whole `initialize`, "serve finished") left out: at about
/// 780 bytes a session they let any client with the token grow the log at will. calyx logs
/// session open and close itself, at debug (`CALYX_LOG=debug`).
fn init_logging() {
    let dir = paths::state_dir();
    let _ = std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir);
    let file = crate::log_file::RotatingFile::open(
        dir.join("server.log"),
        crate::log_file::max_bytes_from_env(),
    );
    if let Ok(file) = file {
        let filter = tracing_subscriber::EnvFilter::try_from_env("CALYX_LOG")
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(DEFAULT_LOG_FILTER));
        let _ = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_ansi(false)
            .with_writer(std::sync::Mutex::new(file))
            .try_init();
    }
}

/// What `server.log` gets without `CALYX_LOG`: calyx at info, rmcp's warnings and errors only.
const DEFAULT_LOG_FILTER: &str = "info,rmcp=warn";

/// Starts the agent endpoint and forwards its requests into the owner loop. A failure is
/// logged, not fatal: the multiplexer works without agent events.
async fn start_endpoint(
    tx: mpsc::UnboundedSender<Msg>,
    mcp_tools: std::sync::Arc<crate::mcp::ToolSet>,
    peers: std::sync::Arc<crate::mcp::PeerRegistry>,
    open_files: Option<u64>,
) -> Option<crate::http::EndpointHandle> {
    let (sender, mut requests) = mpsc::channel(256);
    let backend = std::sync::Arc::new(super::mcp_backend::OwnerBackend { tx: tx.clone() });
    let defaults = crate::http::EndpointOptions::default();
    // A quarter of the descriptors at most, so panes, clients and the socket keep the rest.
    let max_connections = open_files.map_or(defaults.max_connections, |limit| {
        defaults
            .max_connections
            .min(usize::try_from(limit / 4).unwrap_or(usize::MAX))
            .max(8)
    });
    let options = crate::http::EndpointOptions {
        mcp: Some(
            crate::mcp::McpOptions::new(backend)
                .with_tools(mcp_tools)
                .with_peers(peers)
                .with_limits_from_env(),
        ),
        max_connections,
        ..defaults
    };
    match crate::http::start(sender, options).await {
        Ok(handle) => {
            tracing::info!("agent endpoint on 127.0.0.1:{}", handle.port());
            // Entries `calyx setup` wrote earlier must never point at a dead endpoint: bring
            // the installed ones up to date with this port, token and binary (off the loop).
            let info = crate::http::endpoint_file::EndpointInfo {
                port: handle.port(),
                token: handle.token().to_string(),
            };
            tokio::task::spawn_blocking(move || {
                let Ok(bin) = crate::setup::calyx_binary() else {
                    return;
                };
                for message in crate::setup::resync_installed(&info, &bin) {
                    tracing::info!("{message}");
                }
            });
            tokio::spawn(async move {
                while let Some(request) = requests.recv().await {
                    if tx.send(Msg::Endpoint(request)).is_err() {
                        break;
                    }
                }
            });
            Some(handle)
        }
        Err(e) => {
            tracing::error!("agent endpoint did not start: {e:#}");
            None
        }
    }
}

/// Runs the server on `socket` until it exits. Blocks the calling thread.
pub fn serve(socket: PathBuf) -> anyhow::Result<()> {
    init_logging();
    let open_files = match crate::accept_backoff::raise_open_files_limit() {
        Ok(limit) => {
            tracing::info!("open files limit: {limit}");
            Some(limit)
        }
        Err(e) => {
            tracing::warn!("could not raise the open files limit: {e}");
            None
        }
    };
    // One thread for the owner, the connections and the HTTP endpoint: they do little work each
    // (parsing happens on pane reader threads), and keeping them together saves a cross-thread
    // wake-up on every hop of the keystroke-to-echo path.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("failed to start the async runtime")?;
    runtime.block_on(async move {
        let listener = bind(&socket).await?;
        let (config, errors) = crate::config::Config::load(&paths::config_file());
        for e in &errors {
            tracing::warn!("{e}");
        }
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(accept_loop(listener, tx.clone()));
        let peers = std::sync::Arc::new(crate::mcp::PeerRegistry::new());
        let mcp_tools = std::sync::Arc::new(crate::mcp::ToolSet::with_disabled(
            config.mcp_disabled_tools.clone(),
        ));
        let endpoint =
            start_endpoint(tx.clone(), mcp_tools.clone(), peers.clone(), open_files).await;
        let signal_tx = tx.clone();
        tokio::spawn(async move {
            use tokio::signal::unix::{signal, SignalKind};
            let (Ok(mut term), Ok(mut int), Ok(mut hup)) = (
                signal(SignalKind::terminate()),
                signal(SignalKind::interrupt()),
                signal(SignalKind::hangup()),
            ) else {
                return;
            };
            loop {
                tokio::select! {
                    _ = term.recv() => break,
                    _ = int.recv() => break,
                    // The server has no terminal of its own: a hangup means nothing to it.
                    _ = hup.recv() => continue,
                }
            }
            let _ = signal_tx.send(Msg::Shutdown);
        });
        tracing::info!(
            "calyx server {} listening on {}",
            env!("CARGO_PKG_VERSION"),
            socket.display()
        );
        let mut server = Server::new(config, errors, socket.display().to_string(), tx, mcp_tools);
        server.peers = peers;
        server.run(rx).await;
        if let Some(handle) = endpoint {
            if let Err(e) = handle.shutdown().await {
                tracing::warn!("agent endpoint shutdown: {e:#}");
            }
        }
        let _ = std::fs::remove_file(&socket);
        tracing::info!("calyx server exiting");
        Ok::<(), anyhow::Error>(())
    })?;
    // Give writer tasks no chance to linger: the runtime is dropped here.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    Ok(())
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
