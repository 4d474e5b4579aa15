//! Progress forwarding: an agent's `tools/call` with a `progressToken` goes upstream with a
//! token of calyx's (rmcp gives every request one); each upstream `notifications/progress` for
//! it is sent to the agent's session with the agent's own token and the same `progress`,
//! `total` and `message`. One table per hosted connection, fed by its client handler.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::Peer;
use rmcp::RoleServer;

/// Where one upstream token's progress goes.
struct Route {
    agent: Peer<RoleServer>,
    token: ProgressToken,
}

/// Upstream progress token → the agent session and token it stands for. Cloning shares it.
#[derive(Clone, Default)]
pub struct ProgressRoutes {
    routes: Arc<Mutex<HashMap<ProgressToken, Route>>>,
}

/// How long a route outlives its call. rmcp hands each incoming notification to a task of
/// its own but the answer straight to the caller, so on a runtime with several threads a
/// server's last progress step (sent before its answer) can be forwarded after the call
/// returned; removing the route at once would drop it.
const ROUTE_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// Removes its route when the call ends (answered, cancelled or dropped), after
/// [`ROUTE_GRACE`] inside a runtime.
pub struct RouteGuard {
    routes: ProgressRoutes,
    upstream: ProgressToken,
}

impl Drop for RouteGuard {
    fn drop(&mut self) {
        let routes = self.routes.clone();
        let upstream = self.upstream.clone();
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    tokio::time::sleep(ROUTE_GRACE).await;
                    routes.lock().remove(&upstream);
                });
            }
            Err(_) => {
                routes.lock().remove(&upstream);
            }
        }
    }
}

impl ProgressRoutes {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<ProgressToken, Route>> {
        self.routes.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sends `upstream`'s progress to `agent` as `token` until the guard is dropped.
    pub fn add(
        &self,
        upstream: ProgressToken,
        agent: Peer<RoleServer>,
        token: ProgressToken,
    ) -> RouteGuard {
        self.lock().insert(upstream.clone(), Route { agent, token });
        RouteGuard {
            routes: self.clone(),
            upstream,
        }
    }

    /// The number of calls whose progress is routed (for tests).
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Passes one upstream notification on; progress for no known call is dropped.
    pub async fn forward(&self, mut params: ProgressNotificationParam) {
        let target = {
            let routes = self.lock();
            routes
                .get(&params.progress_token)
                .map(|r| (r.agent.clone(), r.token.clone()))
        };
        let Some((agent, token)) = target else {
            return;
        };
        params.progress_token = token;
        // An agent that cannot take notifications any more still gets its result.
        if let Err(e) = agent.notify_progress(params).await {
            tracing::debug!("hosted MCP: progress not delivered: {e}");
        }
    }
}
