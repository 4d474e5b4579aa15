//! Choosing the view server's two ports: the configured pair when free, else the next free
//! pair up to eight ports up (so a second calyx server, or a leftover one, lands on a
//! predictable pair an SSH tunnel line can name), else two random ports.

use std::net::{Ipv4Addr, SocketAddr};

use anyhow::Context as _;
use tokio::net::TcpListener;

/// How far above the preferred port a pair is looked for.
const SPAN: u16 = 8;

/// Binds the host page's listener and the sandbox's (host port + 1) on 127.0.0.1.
pub async fn bind_pair(preferred: u16) -> anyhow::Result<(TcpListener, TcpListener)> {
    if preferred != 0 {
        for host in preferred..=preferred.saturating_add(SPAN) {
            let Some(sandbox) = host.checked_add(1) else {
                break;
            };
            if let Ok(host) = listen(host).await {
                if let Ok(sandbox) = listen(sandbox).await {
                    return Ok((host, sandbox));
                }
            }
        }
    }
    let host = listen(0)
        .await
        .context("failed to bind the view server's host page port on 127.0.0.1")?;
    let sandbox = listen(0)
        .await
        .context("failed to bind the view server's sandbox port on 127.0.0.1")?;
    Ok((host, sandbox))
}

async fn listen(port: u16) -> std::io::Result<TcpListener> {
    TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port))).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_taken_port_moves_the_pair_up() {
        // Find a free pair region by binding a random port and using the ones above it.
        let probe = listen(0).await.expect("bind");
        let base = probe.local_addr().expect("addr").port();
        drop(probe);
        let Some(start) = base.checked_sub(20) else {
            return;
        };
        // Hold the preferred sandbox port: the pair must move up together.
        let Ok(blocker) = listen(start + 1).await else {
            return; // taken by someone else: the case cannot be set up here
        };
        let (host, sandbox) = bind_pair(start).await.expect("bind pair");
        let host = host.local_addr().expect("addr").port();
        let sandbox = sandbox.local_addr().expect("addr").port();
        assert_eq!(sandbox, host + 1);
        assert!(host > start + 1 && host <= start + SPAN, "{host}");
        drop(blocker);
    }

    #[tokio::test]
    async fn zero_gives_two_random_ports() {
        let (host, sandbox) = bind_pair(0).await.expect("bind pair");
        assert_ne!(
            host.local_addr().expect("addr").port(),
            sandbox.local_addr().expect("addr").port()
        );
    }
}
