//! Binding, accepting and shutting down: one tokio task accepts, one task per connection serves
//! it with hyper's HTTP/1.1 state machine, so a slow or hostile client holds only its own task.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};

use super::endpoint_file::{self, EndpointInfo};
use super::options::{EndpointOptions, PortChoice, DEFAULT_PORTS};
use super::routes::{self, Shared};
use super::{token, EndpointSender};
use crate::accept_backoff::AcceptBackoff;

/// A running endpoint. Dropping it stops the server too; [`EndpointHandle::shutdown`] also waits
/// for in-flight requests and removes the endpoint file.
#[derive(Debug)]
pub struct EndpointHandle {
    info: EndpointInfo,
    /// The inode of the endpoint file this server wrote (see `endpoint_file::remove_if_ours`).
    written: u64,
    /// The listening socket's descriptor, which an in-place upgrade hands over.
    listener_fd: std::os::fd::RawFd,
    endpoint_file: PathBuf,
    stop: watch::Sender<bool>,
    accept_task: Option<JoinHandle<()>>,
    removed: bool,
}

impl EndpointHandle {
    /// The loopback port the server listens on.
    pub fn port(&self) -> u16 {
        self.info.port
    }

    /// The bearer token every request must carry.
    pub fn token(&self) -> &str {
        &self.info.token
    }

    /// The listening socket's descriptor number (for `calyx server-upgrade` to hand over).
    pub fn listener_fd(&self) -> std::os::fd::RawFd {
        self.listener_fd
    }

    /// Where the port and token were written.
    pub fn endpoint_file(&self) -> &Path {
        &self.endpoint_file
    }

    /// Stops accepting, lets in-flight requests finish (within the shutdown grace), then removes
    /// the endpoint file so hooks stop calling a server that is gone.
    pub async fn shutdown(mut self) -> anyhow::Result<()> {
        self.stop.send_replace(true);
        if let Some(task) = self.accept_task.take() {
            if let Err(e) = task.await {
                tracing::warn!(error = %e, "endpoint: accept task ended abnormally");
            }
        }
        self.removed = true;
        endpoint_file::remove_if_ours(&self.endpoint_file, &self.info, self.written)
            .with_context(|| format!("failed to remove {}", self.endpoint_file.display()))
    }
}

impl Drop for EndpointHandle {
    fn drop(&mut self) {
        self.stop.send_replace(true);
        if !self.removed {
            let _ = endpoint_file::remove_if_ours(&self.endpoint_file, &self.info, self.written);
        }
    }
}

/// Starts the endpoint: binds 127.0.0.1 (see [`PortChoice`]), writes the endpoint file, and
/// serves until the handle is shut down or dropped. Requests go to the owner through `sender`.
pub async fn start(
    sender: EndpointSender,
    options: EndpointOptions,
) -> anyhow::Result<EndpointHandle> {
    let (listener, token) = match &options.inherited {
        Some(inherited) => {
            let fd = crate::upgrade::inherit::inherited_fd(
                inherited.fd,
                nix::sys::stat::SFlag::S_IFSOCK,
            )?;
            let listener = std::net::TcpListener::from(fd);
            listener.set_nonblocking(true)?;
            (TcpListener::from_std(listener)?, inherited.token.clone())
        }
        None => bind(endpoint_file::read(&options.endpoint_file), options.port).await?,
    };
    let listener_fd = std::os::fd::AsRawFd::as_raw_fd(&listener);
    let port = listener
        .local_addr()
        .context("failed to read the endpoint's local address")?
        .port();
    let info = EndpointInfo { port, token };
    let written = endpoint_file::write(&options.endpoint_file, &info)
        .with_context(|| format!("failed to write {}", options.endpoint_file.display()))?;

    let shared = Arc::new(Shared {
        token: info.token.clone(),
        sender,
        started: Instant::now(),
        max_body_bytes: options.max_body_bytes,
        request_timeout: options.request_timeout,
        approval_timeout: options.approval_timeout,
        mcp: options
            .mcp
            .clone()
            .map(|mcp| crate::mcp::service(mcp, port, options.max_body_bytes)),
        hosted: options.hosted.clone().map(|route| {
            let limits = options.mcp.as_ref().map_or_else(
                crate::mcp::SessionLimits::default,
                crate::mcp::McpOptions::session_limits,
            );
            let service = route.service(limits, port, options.max_body_bytes);
            (route, service)
        }),
    });
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(options.head_timeout)
        .max_header_size(options.max_header_bytes)
        .max_buf_size(options.max_header_bytes.max(64 * 1024));
    let (stop, stopped) = watch::channel(false);
    let limits = ConnectionLimits {
        max_connections: options.max_connections,
        unauthenticated_deadline: options.unauthenticated_deadline,
    };
    let accept_task = tokio::spawn(accept_loop(
        listener,
        http,
        shared,
        stopped,
        options.shutdown_grace,
        limits,
    ));
    tracing::info!(port, file = %options.endpoint_file.display(), "endpoint: listening on 127.0.0.1");
    Ok(EndpointHandle {
        info,
        written,
        listener_fd,
        endpoint_file: options.endpoint_file,
        stop,
        accept_task: Some(accept_task),
        removed: false,
    })
}

/// Binds a listener and picks the token: the remembered port and token when that port is free
/// (so configs written earlier keep working), else the configured ports with a fresh token.
async fn bind(
    remembered: Option<EndpointInfo>,
    choice: PortChoice,
) -> anyhow::Result<(TcpListener, String)> {
    if let Some(info) = remembered {
        let usable = match choice {
            PortChoice::Default | PortChoice::Fixed(0) => true,
            PortChoice::Fixed(port) => port == info.port,
        };
        if usable {
            if let Ok(listener) = listen(info.port).await {
                return Ok((listener, info.token));
            }
        }
    }
    let token = token::generate()
        .map_err(|e| anyhow::anyhow!("failed to generate the endpoint token: {e}"))?;
    let candidates: Vec<u16> = match choice {
        PortChoice::Default => DEFAULT_PORTS.chain(std::iter::once(0)).collect(),
        PortChoice::Fixed(port) => vec![port],
    };
    let mut last_error = None;
    for port in candidates {
        match listen(port).await {
            Ok(listener) => return Ok((listener, token)),
            Err(e) => last_error = Some(e),
        }
    }
    Err(last_error
        .map(anyhow::Error::from)
        .unwrap_or_else(|| anyhow::anyhow!("no port to try")))
    .context("failed to bind the agent endpoint on 127.0.0.1")
}

async fn listen(port: u16) -> std::io::Result<TcpListener> {
    TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port))).await
}

/// Limits that keep a flood of connections from taking the server's descriptors.
#[derive(Debug, Clone, Copy)]
struct ConnectionLimits {
    max_connections: usize,
    unauthenticated_deadline: Duration,
}

async fn accept_loop(
    listener: TcpListener,
    http: http1::Builder,
    shared: Arc<Shared>,
    mut stopped: watch::Receiver<bool>,
    grace: Duration,
    limits: ConnectionLimits,
) {
    let mut connections = JoinSet::new();
    let mut backoff = AcceptBackoff::default();
    loop {
        tokio::select! {
            // Also fires when the handle is dropped (the sender is gone).
            _ = stopped.changed() => break,
            // At the cap, new connections wait in the kernel's backlog, holding none of our
            // descriptors, until one of ours ends.
            accepted = listener.accept(), if connections.len() < limits.max_connections => {
                match accepted {
                    Ok((stream, _)) => {
                        backoff.reset();
                        let task = serve(
                            stream,
                            http.clone(),
                            shared.clone(),
                            stopped.clone(),
                            limits.unauthenticated_deadline,
                        );
                        connections.spawn(task);
                    }
                    Err(e) => backoff.wait(&e, "endpoint").await,
                }
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    drop(listener);
    let drained = tokio::time::timeout(grace, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::info!(
            left = connections.len(),
            "endpoint: dropping requests still in flight at shutdown"
        );
    }
    connections.shutdown().await;
}

/// Serves one connection until it closes or the server stops (then gracefully: the request in
/// flight is answered, the connection closed). A connection that has not sent one request
/// with the right token within `deadline` is dropped: only a holder of the token gets the long
/// keep-alive agents need (see [`super::options::HEAD_TIMEOUT`]).
async fn serve(
    stream: TcpStream,
    http: http1::Builder,
    shared: Arc<Shared>,
    mut stopped: watch::Receiver<bool>,
    deadline: Duration,
) {
    let _ = stream.set_nodelay(true);
    let trusted = Arc::new(AtomicBool::new(false));
    let seen = trusted.clone();
    let service = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
        if super::auth::authorized(req.headers(), &shared.token) {
            seen.store(true, Ordering::Relaxed);
        }
        routes::handle(req, shared.clone())
    });
    let connection = http.serve_connection(TokioIo::new(stream), service);
    tokio::pin!(connection);
    let untrusted_until = tokio::time::sleep(deadline);
    tokio::pin!(untrusted_until);
    let mut watching = true;
    loop {
        tokio::select! {
            result = connection.as_mut() => {
                if let Err(e) = result {
                    tracing::debug!(error = %e, "endpoint: connection ended with an error");
                }
                return;
            }
            _ = &mut untrusted_until, if watching => {
                if !trusted.load(Ordering::Relaxed) {
                    tracing::debug!("endpoint: dropped a connection that sent no authorized request");
                    return;
                }
                watching = false;
            }
            _ = stopped.changed() => {
                connection.as_mut().graceful_shutdown();
                let _ = connection.await;
                return;
            }
        }
    }
}
