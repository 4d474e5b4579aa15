//! The view server (issue 17, "The view server"): two loopback listeners, the host page's and
//! the sandbox's, on different ports so they are different origins as the MCP Apps spec
//! requires, serving each view's pages and driving each open page's [`protocol::Session`].
//!
//! It is separate from the agent endpoint: browsers reach it, agents never do, and nothing on
//! it needs the endpoint's bearer token; a view's URL tokens are its only key.
//!
//! [`protocol::Session`]: crate::views::protocol::Session

mod bind;
mod pages;
mod routes;
mod sse;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::{broadcast, watch};
use tokio::task::JoinHandle;

use super::hub::{ViewHub, ViewPorts};
use super::protocol::{HostAction, HostLook, JsonRpcError};
use super::registry::ViewId;

pub use pages::{ViewNotes, NOT_OPEN};

/// A boxed future, so [`ViewUpstream`] can be used as a trait object.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What the view server needs from the rest of calyx: the views' MCP servers and the actions
/// views ask for. The lead implements it over the hosted supervisor and the approval queue.
///
/// [`ViewUpstream::tool`] is called while the server holds its page lock: it must answer from
/// what it has (the server's cached tool list) and never call back into the view server.
pub trait ViewUpstream: Send + Sync + 'static {
    /// Sends `method` with `params` to hosted server `alias` and returns its answer (a view's
    /// `tools/call`, `resources/*` and `prompts/list`).
    fn request<'a>(
        &'a self,
        alias: &'a str,
        method: &'a str,
        params: Value,
    ) -> BoxFuture<'a, Result<Value, JsonRpcError>>;

    /// Tool `name` (its original name) as server `alias` listed it, `_meta` included; `None`
    /// when the server has no such tool.
    fn tool(&self, alias: &str, name: &str) -> Option<Value>;

    /// An action view `view` asks of calyx. For [`HostAction::OpenLink`] and
    /// [`HostAction::SendMessage`] the answer goes back to the view (`{}` when done, or the
    /// refusal as an error); for the others (`Log`, `ModelContext`, `DownloadOffered`) it is
    /// ignored. `TeardownRequested` never comes here: the server removes the view itself.
    fn action<'a>(
        &'a self,
        view: ViewId,
        action: HostAction,
    ) -> BoxFuture<'a, Result<Value, JsonRpcError>>;

    /// Notifications from the hosted servers, as `(alias, message)`; the view server forwards
    /// `notifications/tools/list_changed` and `notifications/resources/list_changed` to the
    /// pages of that alias's views. `None` when there are none to follow.
    fn notifications(&self) -> Option<broadcast::Receiver<(String, Value)>>;
}

/// The running view server. Dropping it stops both listeners and ends every page's stream.
pub struct ViewServerHandle {
    ports: ViewPorts,
    pages: Arc<pages::Pages>,
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for ViewServerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ViewServerHandle")
            .field("ports", &self.ports)
            .finish_non_exhaustive()
    }
}

impl ViewServerHandle {
    /// The host page's and the sandbox's ports.
    pub fn ports(&self) -> ViewPorts {
        self.ports
    }

    /// A new look (config reload, a client's terminal colours): open pages get
    /// `ui/notifications/host-context-changed` with what changed.
    pub fn set_look(&self, look: HostLook) {
        self.pages.set_look(look);
    }

    /// What view `id` logged and its last model context (`calyx mcp views --json`,
    /// `app_context`); kept until the view is removed.
    pub fn notes(&self, id: ViewId) -> Option<ViewNotes> {
        self.pages.notes(id)
    }

    /// An agent's call of tool `name` that view `id` registered (published as
    /// `<alias>-app_<name>`): sent to the view through its open page; the view's result, or an
    /// error ([`NOT_OPEN`]) when no page is open or it goes before answering.
    pub async fn call_app_tool(
        &self,
        id: ViewId,
        name: &str,
        arguments: Value,
    ) -> Result<Value, JsonRpcError> {
        self.pages
            .call_app_tool(id, name.to_string(), arguments)
            .await
    }

    /// What `/mcp-hosted` needs of the pages, as a handle it can keep: agents' calls of
    /// app-registered tools and the views' model context ([`Apps`]).
    pub fn apps(&self) -> Apps {
        Apps {
            pages: Arc::downgrade(&self.pages),
        }
    }

    /// Stops both listeners and ends every page's event stream.
    pub async fn shutdown(mut self) {
        self.stop.send_replace(true);
        for task in self.tasks.drain(..) {
            let _ = task.await;
        }
        self.pages.close_all();
    }
}

impl Drop for ViewServerHandle {
    fn drop(&mut self) {
        self.stop.send_replace(true);
        for task in &self.tasks {
            task.abort();
        }
        self.pages.close_all();
    }
}

/// The view server's pages as `/mcp-hosted` reaches them (issue 17, "App context and
/// app-registered tools"). Cloneable, and it does not keep the server alive: once the server
/// is stopped, calls fail as if no page were open.
#[derive(Clone)]
pub struct Apps {
    pages: std::sync::Weak<pages::Pages>,
}

impl std::fmt::Debug for Apps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Apps").finish_non_exhaustive()
    }
}

impl Apps {
    /// As [`ViewServerHandle::call_app_tool`].
    pub async fn call_app_tool(
        &self,
        id: ViewId,
        name: &str,
        arguments: Value,
    ) -> Result<Value, JsonRpcError> {
        let Some(pages) = self.pages.upgrade() else {
            return Err(JsonRpcError::new(
                super::protocol::codes::SERVER_ERROR,
                NOT_OPEN,
            ));
        };
        pages.call_app_tool(id, name.to_string(), arguments).await
    }

    /// As [`ViewServerHandle::notes`].
    pub fn notes(&self, id: ViewId) -> Option<ViewNotes> {
        self.pages.upgrade()?.notes(id)
    }
}

/// Starts the view server on the port pair from `preferred` (the host page's port; the
/// sandbox's is the next one): when either is taken, the next pair up to `preferred + 8`, else
/// two random ports (`preferred == 0`: random at once). Records the ports in the hub, follows
/// the hub's events to drive open pages, and serves until the handle is dropped.
pub async fn start(
    hub: ViewHub,
    upstream: Arc<dyn ViewUpstream>,
    preferred: u16,
) -> anyhow::Result<ViewServerHandle> {
    let (host, sandbox) = bind::bind_pair(preferred).await?;
    let ports = ViewPorts {
        host: host.local_addr()?.port(),
        sandbox: sandbox.local_addr()?.port(),
    };
    hub.set_ports(ports);
    let pages = pages::Pages::new(hub.clone(), upstream.clone(), ports);
    let (stop, stopped) = watch::channel(false);
    let mut tasks = vec![
        tokio::spawn(routes::accept_loop(
            host,
            routes::Listener::Host,
            pages.clone(),
            stopped.clone(),
        )),
        tokio::spawn(routes::accept_loop(
            sandbox,
            routes::Listener::Sandbox,
            pages.clone(),
            stopped.clone(),
        )),
        tokio::spawn(pages::follow_hub(
            pages.clone(),
            hub.subscribe(),
            stopped.clone(),
        )),
    ];
    if let Some(notifications) = upstream.notifications() {
        tasks.push(tokio::spawn(pages::follow_servers(
            pages.clone(),
            notifications,
            stopped,
        )));
    }
    tracing::info!(
        host = ports.host,
        sandbox = ports.sandbox,
        "views: serving view pages on 127.0.0.1"
    );
    Ok(ViewServerHandle {
        ports,
        pages,
        stop,
        tasks,
    })
}

#[cfg(test)]
mod test_http;

#[cfg(test)]
#[path = "server_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "browser_tests.rs"]
mod browser_tests;
