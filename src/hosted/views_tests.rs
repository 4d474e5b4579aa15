//! Views from `/mcp-hosted` calls against a real rmcp upstream over an in-memory pipe: which
//! calls create a view, the resource read and its per-connection cache (dropped on
//! `notifications/resources/list_changed`), and a reload without a ready server.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};

use rmcp::model::{
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::{ErrorData, RoleClient, RoleServer, ServerHandler, ServiceExt};
use serde_json::json;

use super::*;
use crate::hosted::connection::filter::classify;
use crate::hosted::connection::HostedClient;

/// An upstream with one view resource, counting its reads.
#[derive(Clone, Default)]
struct Upstream {
    reads: Arc<AtomicUsize>,
}

impl ServerHandler for Upstream {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_resources().build())
    }

    async fn list_resources(
        &self,
        _request: Option<rmcp::model::PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourcesResult, ErrorData> {
        serde_json::from_value(json!({"resources": [{
            "uri": "ui://t/v.html",
            "name": "v",
            "_meta": {"ui": {"csp": {"connectDomains": ["*"]}}},
        }]}))
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    async fn read_resource(
        &self,
        _request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        serde_json::from_value(json!({"contents": [{
            "uri": "ui://t/v.html",
            "mimeType": "text/html;profile=mcp-app",
            "text": "<p>v</p>",
        }]}))
        .map(ReadResourceResponse::Complete)
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }
}

struct World {
    server: Arc<PublishedServer>,
    upstream: RunningService<RoleServer, Upstream>,
    reads: Arc<AtomicUsize>,
    _client: RunningService<RoleClient, HostedClient>,
}

async fn world() -> World {
    let upstream = Upstream::default();
    let reads = upstream.reads.clone();
    let (client_side, server_side) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_side);
    let serving = tokio::spawn(async move {
        upstream
            .serve(AsyncRwTransport::new_server(server_read, server_write))
            .await
            .expect("upstream serves")
    });
    let (client_read, client_write) = tokio::io::split(client_side);
    let client = HostedClient::new()
        .serve(AsyncRwTransport::new_client(client_read, client_write))
        .await
        .expect("connects");
    let upstream = serving.await.expect("upstream task");
    let tools: Vec<rmcp::model::Tool> = serde_json::from_value(json!([
        {"name": "show", "inputSchema": {"type": "object"},
         "_meta": {"ui": {"resourceUri": "ui://t/v.html"}}},
        {"name": "plain", "inputSchema": {"type": "object"}},
    ]))
    .expect("tools");
    let server = Arc::new(PublishedServer {
        alias: "t".into(),
        name: "T".into(),
        peer: client.peer().clone(),
        tools: classify("t", tools, &HashSet::new()),
        instructions: None,
        progress: Default::default(),
        resources: client.service().resources(),
    });
    World {
        server,
        upstream,
        reads,
        _client: client,
    }
}

/// Waits (on the real clock, briefly) until `check` holds.
async fn until(what: &str, check: impl Fn() -> bool) {
    for _ in 0..200 {
        if check() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("timed out waiting for {what}");
}

fn state(wire: &ViewWire, id: ViewId) -> ViewState {
    wire.hub.get(id).expect("view").view.state
}

#[tokio::test]
async fn a_ui_tool_call_makes_a_view_whose_resource_is_read_once_per_connection() {
    let w = world().await;
    let wire = ViewWire::new(true, None);
    assert!(
        wire.begin(&w.server, "t-plain", "plain", None, None)
            .await
            .is_none(),
        "a plain tool"
    );
    let call = wire
        .begin(&w.server, "t-show", "show", None, None)
        .await
        .expect("a view");
    let id = call.id();
    let snapshot = wire.hub.get(id).expect("view");
    assert_eq!(snapshot.view.origin.pane, None, "no lookup: standalone");
    assert_eq!(snapshot.call.tool["name"], "show", "the original name");
    until("the document", || state(&wire, id) == ViewState::Running).await;
    let csp = wire.hub.get(id).and_then(|v| v.call.csp).expect("a CSP");
    assert_eq!(
        csp.ignored,
        ["*"],
        "the listing's `_meta.ui` stands in for the item's"
    );
    call.result(&rmcp::model::CallToolResult::success(vec![]));
    assert_eq!(state(&wire, id), ViewState::Completed);

    // The second view's resource comes from the connection's cache.
    let second = wire
        .begin(&w.server, "t-show", "show", None, None)
        .await
        .expect("a view");
    until("the cached document", || {
        state(&wire, second.id()) == ViewState::Running
    })
    .await;
    assert_eq!(w.reads.load(Ordering::SeqCst), 1);
    // Dropped unanswered (the agent's session went away): cancelled.
    let second_id = second.id();
    drop(second);
    assert_eq!(state(&wire, second_id), ViewState::Cancelled);

    // The server's resources changed: the next view reads again.
    w.upstream
        .peer()
        .notify_resource_list_changed()
        .await
        .expect("notify");
    until("the cache dropped", || {
        w.server.resources.get("ui://t/v.html").is_none()
    })
    .await;
    let third = wire
        .begin(&w.server, "t-show", "show", None, None)
        .await
        .expect("a view");
    until("the third document", || {
        state(&wire, third.id()) == ViewState::Running
    })
    .await;
    assert_eq!(w.reads.load(Ordering::SeqCst), 2);

    // Views off: plain calls.
    wire.set_enabled(false);
    assert!(wire
        .begin(&w.server, "t-show", "show", None, None)
        .await
        .is_none());
}

#[tokio::test]
async fn a_reload_without_a_ready_server_says_why() {
    let w = world().await;
    let wire = ViewWire::new(true, None);
    let call = wire
        .begin(&w.server, "t-show", "show", None, None)
        .await
        .expect("a view");
    until("the document", || {
        state(&wire, call.id()) == ViewState::Running
    })
    .await;
    let empty = Registry::default();
    assert!(wire.reload(&empty, call.id()));
    match state(&wire, call.id()) {
        ViewState::Rejected(why) => assert!(why.contains("server `t` is not ready"), "{why}"),
        other => panic!("not rejected: {other:?}"),
    }
    assert!(!wire.reload(&empty, ViewId(999)), "no such view");
}

#[test]
fn the_items_own_ui_meta_wins_over_the_listings() {
    let listed = json!({"csp": {"connectDomains": ["https://list.example"]}});
    let own = json!({"contents": [{"uri": "ui://a", "_meta": {"ui": {"prefersBorder": true}}}]});
    let kept = with_ui_meta(own.clone(), Some(&listed));
    assert_eq!(kept, own, "the item's replaces the listing's as a whole");
    let bare = json!({"contents": [{"uri": "ui://a", "text": "x"}]});
    let merged = with_ui_meta(bare, Some(&listed));
    assert_eq!(merged["contents"][0]["_meta"]["ui"], listed);
    let several = json!({"contents": [{"uri": "a"}, {"uri": "b"}]});
    assert_eq!(with_ui_meta(several.clone(), Some(&listed)), several);
}
