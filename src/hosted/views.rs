//! Where `/mcp-hosted` meets MCP App views (issue 17, "When a view is created"): an agent's
//! `tools/call` of a tool with a `ui://` resource creates a view in the server's
//! [`ViewHub`], the call goes upstream at once, and the resource is read in parallel on the
//! same connection. The agent's result is never changed: the view only watches the call.
//!
//! The calling pane comes from the session's identity headers, which only the owner loop can
//! match to a pane (and to its agent row), so it is asked through [`PaneLookup`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use calyx_integrations::AgentKind;
use serde_json::Value;

use super::publish::{CallWatch, Caller, PublishedServer, Registry, ViewBegun, ViewStarter};
use crate::layout::PaneId;
use crate::views::hub::ViewHub;
use crate::views::registry::{NewView, ViewId, ViewState};
use crate::views::resource::{merge_ui_meta, tool_resource_uri, view_document, Rejection};

/// What the owner knows of a caller: its pane and that pane's agent row.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallerPane {
    /// The pane the identity headers name (None: a standalone view).
    pub pane: Option<PaneId>,
    /// The agent kind of the pane's row.
    pub agent: Option<AgentKind>,
    /// The row's conversation (hook `session_id`).
    pub conversation: Option<String>,
}

/// Finds the pane behind a caller's identity headers.
#[async_trait::async_trait]
pub trait PaneLookup: Send + Sync {
    async fn caller_pane(&self, caller: Caller) -> CallerPane;
}

/// The views part of the hosted route: the hub, the `[mcp_apps] views` switch and the pane
/// lookup. Cloning shares them.
#[derive(Clone)]
pub struct ViewWire {
    pub hub: ViewHub,
    enabled: Arc<AtomicBool>,
    lookup: Option<Arc<dyn PaneLookup>>,
}

impl Default for ViewWire {
    fn default() -> Self {
        ViewWire {
            hub: ViewHub::new(),
            enabled: Arc::new(AtomicBool::new(true)),
            lookup: None,
        }
    }
}

impl std::fmt::Debug for ViewWire {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ViewWire")
            .field("enabled", &self.is_enabled())
            .finish_non_exhaustive()
    }
}

impl ViewWire {
    /// Views on or off, with `lookup` naming callers' panes (None: every view is standalone).
    pub fn new(enabled: bool, lookup: Option<Arc<dyn PaneLookup>>) -> Self {
        ViewWire {
            hub: ViewHub::new(),
            enabled: Arc::new(AtomicBool::new(enabled)),
            lookup,
        }
    }

    /// `[mcp_apps] views`.
    pub fn is_enabled(&self) -> bool {
        self.enabled.load(Ordering::Relaxed)
    }

    /// Follows `[mcp_apps] views` after a reload (views that exist stay).
    pub fn set_enabled(&self, on: bool) {
        self.enabled.store(on, Ordering::Relaxed);
    }

    /// Creates the view for a call of `published` (original name `original`) on `server`, when
    /// views are on and the tool has a `ui://` resource, and starts reading that resource.
    /// None: a plain call.
    pub async fn begin(
        &self,
        server: &Arc<PublishedServer>,
        published: &str,
        original: &str,
        arguments: Option<&serde_json::Map<String, Value>>,
        caller: Option<Caller>,
    ) -> Option<ViewCall> {
        if !self.is_enabled() {
            return None;
        }
        let tool = server
            .tools
            .published
            .iter()
            .find(|(name, _)| name == published)
            .map(|(_, tool)| tool)?;
        let mut tool = serde_json::to_value(tool).ok()?;
        tool_resource_uri(&tool)?;
        // The tool as its server listed it: `hostContext.toolInfo.tool` names it so.
        tool["name"] = Value::String(original.to_string());
        let header_kind = caller
            .as_ref()
            .and_then(|c| c.kind.as_deref())
            .and_then(|k| k.parse::<AgentKind>().ok());
        let found = match (&self.lookup, caller) {
            (Some(lookup), Some(caller)) => lookup.caller_pane(caller).await,
            _ => CallerPane::default(),
        };
        let origin = NewView {
            pane: found.pane,
            alias: server.alias.clone(),
            published_tool: published.to_string(),
            original_tool: original.to_string(),
            agent: found.agent.or(header_kind),
            conversation: found.conversation,
        };
        // A call without arguments has none: the view's tool-input says `{}`.
        let arguments = Value::Object(arguments.cloned().unwrap_or_default());
        let created = match self.hub.create(origin, tool, arguments) {
            Ok(created) => created,
            Err(e) => {
                tracing::warn!("MCP App view not created: no randomness for its tokens: {e}");
                return None;
            }
        };
        let id = created.id;
        tracing::info!(
            "MCP App view {id}: `{published}` on `{}` (pane {:?})",
            server.alias,
            self.hub.get(id).and_then(|v| v.view.origin.pane)
        );
        let loading = self
            .hub
            .get(id)
            .is_some_and(|v| v.view.state == ViewState::Loading);
        if loading {
            tokio::spawn(read_into_view(self.hub.clone(), server.clone(), id));
        }
        Some(ViewCall {
            hub: self.hub.clone(),
            id,
            ended: false,
        })
    }

    /// The card's `r`: the view back to `Loading` and its resource read again (not from the
    /// cache), when its server is ready. False when the view is gone.
    pub fn reload(&self, registry: &Registry, id: ViewId) -> bool {
        let Some(snapshot) = self.hub.get(id) else {
            return false;
        };
        if !self.hub.reload(id) {
            return false;
        }
        match registry.get(&snapshot.view.origin.alias) {
            Some(server) => {
                if let Some(uri) = tool_resource_uri(&snapshot.call.tool) {
                    server.resources.forget(uri);
                }
                tokio::spawn(read_into_view(self.hub.clone(), server, id));
            }
            None => {
                self.hub.resource_read(
                    id,
                    Err(Rejection::ReadFailed(format!(
                        "server `{}` is not ready",
                        snapshot.view.origin.alias
                    ))),
                );
            }
        }
        true
    }
}

/// Reads view `id`'s resource on `server`'s connection (from the connection's cache when it
/// was read before) and hands the checked document to the hub.
async fn read_into_view(hub: ViewHub, server: Arc<PublishedServer>, id: ViewId) {
    let Some(uri) = hub
        .get(id)
        .and_then(|v| tool_resource_uri(&v.call.tool).map(str::to_string))
    else {
        return;
    };
    let read = match server.resources.get(&uri) {
        Some(cached) => Ok(cached),
        None => {
            let params = rmcp::model::ReadResourceRequestParams::new(uri.clone());
            // The listing is asked beside the read: its entry's `_meta.ui` stands in when the
            // item has none.
            let (read, listed) = tokio::join!(
                server.peer.read_resource(params),
                server.peer.list_all_resources()
            );
            let list_ui = listed
                .ok()
                .and_then(|resources| listing_ui(&resources, &uri));
            match read {
                Ok(result) => serde_json::to_value(&result)
                    .map_err(|e| Rejection::ReadFailed(e.to_string()))
                    .map(|value| with_ui_meta(value, list_ui.as_ref()))
                    .inspect(|value| server.resources.put(&uri, value.clone())),
                Err(e) => Err(Rejection::ReadFailed(e.to_string())),
            }
        }
    };
    let document = read.and_then(|result| view_document(&result));
    if let Err(why) = &document {
        tracing::info!("MCP App view {id}: rejected: {why}");
    }
    hub.resource_read(id, document);
}

/// The `_meta.ui` of `uri`'s entry in a `resources/list` answer.
fn listing_ui(resources: &[rmcp::model::Resource], uri: &str) -> Option<Value> {
    resources.iter().find_map(|resource| {
        let entry = serde_json::to_value(resource).ok()?;
        (entry["uri"] == uri)
            .then(|| entry.get("_meta")?.get("ui").cloned())
            .flatten()
    })
}

/// A `resources/read` result whose single item carries the `_meta.ui` the view uses: its own
/// when it has one, else the listing's ([`merge_ui_meta`]). Anything else is left as read
/// (`view_document` judges it).
fn with_ui_meta(mut result: Value, list_ui: Option<&Value>) -> Value {
    let Some(item) = result
        .get_mut("contents")
        .and_then(Value::as_array_mut)
        .filter(|c| c.len() == 1)
        .and_then(|c| c.first_mut())
        .filter(|item| item.is_object())
    else {
        return result;
    };
    let own = item.get("_meta").and_then(|m| m.get("ui")).cloned();
    if let Some(ui) = merge_ui_meta(list_ui, own.as_ref()) {
        if !item.get("_meta").is_some_and(Value::is_object) {
            item["_meta"] = Value::Object(Default::default());
        }
        item["_meta"]["ui"] = ui;
    }
    result
}

/// A view watching one forwarded call: the call's upstream id, its result or its
/// cancellation go to the hub. Dropped before the call ended (the agent's session went away
/// mid-call), it reports the call cancelled.
pub struct ViewCall {
    hub: ViewHub,
    id: ViewId,
    ended: bool,
}

impl ViewCall {
    /// The view's id.
    pub fn id(&self) -> ViewId {
        self.id
    }

    /// The upstream `tools/call` went out with `id`.
    pub fn sent(&self, upstream: &rmcp::model::RequestId) {
        if let Ok(id) = serde_json::to_value(upstream) {
            self.hub.set_upstream_id(self.id, id);
        }
    }

    /// The call returned `result` (unchanged).
    pub fn result(mut self, result: &rmcp::model::CallToolResult) {
        self.ended = true;
        match serde_json::to_value(result) {
            Ok(value) => self.hub.tool_result(self.id, value),
            Err(e) => self.hub.tool_cancelled(self.id, e.to_string()),
        };
    }

    /// The call ended without a result.
    pub fn cancelled(mut self, reason: &str) {
        self.ended = true;
        self.hub.tool_cancelled(self.id, reason);
    }
}

impl CallWatch for ViewCall {
    fn sent(&self, upstream: &rmcp::model::RequestId) {
        ViewCall::sent(self, upstream);
    }

    fn result(self: Box<Self>, result: &rmcp::model::CallToolResult) {
        ViewCall::result(*self, result);
    }

    fn cancelled(self: Box<Self>, reason: &str) {
        ViewCall::cancelled(*self, reason);
    }
}

impl ViewStarter for ViewWire {
    fn begin<'a>(
        &'a self,
        server: &'a Arc<PublishedServer>,
        published: &'a str,
        original: &'a str,
        arguments: Option<&'a serde_json::Map<String, Value>>,
        caller: Option<Caller>,
    ) -> ViewBegun<'a> {
        Box::pin(async move {
            ViewWire::begin(self, server, published, original, arguments, caller)
                .await
                .map(|call| Box::new(call) as Box<dyn CallWatch>)
        })
    }
}

impl Drop for ViewCall {
    fn drop(&mut self) {
        if !self.ended {
            self.hub
                .tool_cancelled(self.id, "the agent's session closed");
        }
    }
}

#[cfg(test)]
#[path = "views_tests.rs"]
mod tests;
