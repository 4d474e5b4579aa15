//! What the agent endpoint needs to serve `/mcp-hosted`: the republishing handler behind
//! rmcp's Streamable HTTP service with `/mcp`'s settings, the switch `[mcp] host_servers`, and
//! the announcer that tells every open calyx-mcp session when the published tools change.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use super::publish::{HostedHandler, Registry};
use crate::mcp::{McpService, SessionLimits, ToolSet};

/// Changes of the published set closer together than this make one `tools/list_changed`.
pub const ANNOUNCE_COALESCE: Duration = Duration::from_millis(250);

/// The parts of hosting the endpoint shares with the server. Cloning shares them.
#[derive(Clone, Default)]
pub struct HostedRoute {
    /// The tools of the ready servers.
    pub registry: Registry,
    /// The open calyx-mcp sessions (its disabled list stays empty: it is only the session list
    /// that hears `tools/list_changed`).
    pub sessions: Arc<ToolSet>,
    /// `[mcp] host_servers`: off, the route answers 404.
    pub enabled: Arc<AtomicBool>,
    /// MCP App views: the server's hub, `[mcp_apps] views` and who finds callers' panes.
    pub views: super::views::ViewWire,
}

impl std::fmt::Debug for HostedRoute {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostedRoute")
            .field("enabled", &self.is_enabled())
            .finish_non_exhaustive()
    }
}

impl HostedRoute {
    /// A route with nothing published, on or off.
    pub fn new(enabled: bool) -> Self {
        HostedRoute {
            enabled: Arc::new(AtomicBool::new(enabled)),
            ..Default::default()
        }
    }

    pub fn is_enabled(&self) -> bool {
        self.enabled.load(Ordering::Relaxed)
    }

    pub fn set_enabled(&self, on: bool) {
        self.enabled.store(on, Ordering::Relaxed);
    }

    /// The Streamable HTTP service for an endpoint on `port`, with the same protocol versions,
    /// response rules, session cap and body limit as `/mcp`. Starts the announcer too (inside
    /// the endpoint's runtime).
    pub fn service(
        &self,
        limits: SessionLimits,
        port: u16,
        max_body_bytes: usize,
    ) -> McpService<HostedHandler> {
        tokio::spawn(announce_changes(
            self.registry.clone(),
            self.sessions.clone(),
        ));
        let registry = self.registry.clone();
        let sessions = self.sessions.clone();
        let views = self.views.clone();
        crate::mcp::service_with(
            move || {
                HostedHandler::new(registry.clone())
                    .with_sessions(sessions.clone())
                    .with_views(std::sync::Arc::new(views.clone()))
            },
            self.sessions.clone(),
            limits,
            port,
            max_body_bytes,
        )
    }
}

/// Tells every open session `notifications/tools/list_changed` whenever the published set
/// changes, once per burst ([`coalesce`]). Ends when the registry is gone.
pub async fn announce_changes(registry: Registry, sessions: Arc<ToolSet>) {
    let changes = registry.watch_changes();
    drop(registry);
    coalesce(changes, || sessions.announce_change()).await;
}

/// Calls `announce` once for each burst of changes: after a change it waits
/// [`ANNOUNCE_COALESCE`] and takes every change made meanwhile with it. Ends when the sender is
/// gone.
pub async fn coalesce(mut changes: watch::Receiver<u64>, mut announce: impl FnMut()) {
    changes.mark_unchanged();
    while changes.changed().await.is_ok() {
        tokio::time::sleep(ANNOUNCE_COALESCE).await;
        changes.mark_unchanged();
        announce();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[tokio::test(start_paused = true)]
    async fn a_burst_of_changes_is_announced_once() {
        let (sender, receiver) = watch::channel(0u64);
        let told = Arc::new(AtomicUsize::new(0));
        let counter = told.clone();
        let announcer = tokio::spawn(coalesce(receiver, move || {
            counter.fetch_add(1, Ordering::SeqCst);
        }));
        tokio::task::yield_now().await;
        for _ in 0..5 {
            sender.send_modify(|n| *n += 1);
            tokio::time::sleep(Duration::from_millis(40)).await;
        }
        tokio::time::sleep(ANNOUNCE_COALESCE * 2).await;
        assert_eq!(
            told.load(Ordering::SeqCst),
            1,
            "five changes in 200 ms, one announcement"
        );
        sender.send_modify(|n| *n += 1);
        tokio::time::sleep(ANNOUNCE_COALESCE * 2).await;
        assert_eq!(
            told.load(Ordering::SeqCst),
            2,
            "a later change is announced again"
        );
        drop(sender);
        announcer.await.expect("the announcer ends with the sender");
    }
}
