//! The view server over real loopback sockets on random ports: statuses and headers, the
//! sandbox's CSP header, the page protocol over the event stream and posts, takeover, teardown.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tokio::sync::broadcast;

use super::test_http::{request, Events, Reply};
use super::{start, BoxFuture, ViewServerHandle, ViewUpstream};
use crate::views::csp::sandbox_csp;
use crate::views::hub::ViewHub;
use crate::views::protocol::{HostAction, JsonRpcError};
use crate::views::registry::{NewView, ViewId};
use crate::views::resource::ViewDocument;

/// The upstream side as the lead will wire it, recording what it is asked and answering
/// upstream requests with a fixed result.
#[derive(Default)]
struct Recording {
    requests: Mutex<Vec<(String, String, Value)>>,
    actions: Mutex<Vec<(ViewId, HostAction)>>,
    tools: HashMap<String, Value>,
    notifications: Option<broadcast::Sender<(String, Value)>>,
}

impl ViewUpstream for Recording {
    fn request<'a>(
        &'a self,
        alias: &'a str,
        method: &'a str,
        params: Value,
    ) -> BoxFuture<'a, Result<Value, JsonRpcError>> {
        self.requests
            .lock()
            .expect("lock")
            .push((alias.to_string(), method.to_string(), params));
        Box::pin(async move { Ok(json!({ "content": [{ "type": "text", "text": method }] })) })
    }

    fn tool(&self, _alias: &str, name: &str) -> Option<Value> {
        self.tools.get(name).cloned()
    }

    fn action<'a>(
        &'a self,
        view: ViewId,
        action: HostAction,
    ) -> BoxFuture<'a, Result<Value, JsonRpcError>> {
        self.actions.lock().expect("lock").push((view, action));
        Box::pin(async { Ok(json!({})) })
    }

    fn notifications(&self) -> Option<broadcast::Receiver<(String, Value)>> {
        self.notifications
            .as_ref()
            .map(broadcast::Sender::subscribe)
    }
}

struct Setup {
    hub: ViewHub,
    upstream: Arc<Recording>,
    server: ViewServerHandle,
    id: ViewId,
    notify: broadcast::Sender<(String, Value)>,
}

const HTML: &str = "<!doctype html><title>t</title><p>hello</p>";

async fn setup(csp: Option<Value>) -> Setup {
    let hub = ViewHub::new();
    let (notify, _) = broadcast::channel(16);
    let mut tools = HashMap::new();
    tools.insert("get-time".to_string(), json!({ "name": "get-time" }));
    tools.insert(
        "model-only".to_string(),
        json!({ "name": "model-only", "_meta": { "ui": { "visibility": ["model"] } } }),
    );
    let upstream = Arc::new(Recording {
        tools,
        notifications: Some(notify.clone()),
        ..Recording::default()
    });
    let server = start(hub.clone(), upstream.clone(), 0)
        .await
        .expect("view server starts");
    let id = create_view(&hub, csp);
    Setup {
        hub,
        upstream,
        server,
        id,
        notify,
    }
}

fn create_view(hub: &ViewHub, csp: Option<Value>) -> ViewId {
    let created = hub
        .create(
            NewView {
                pane: None,
                alias: "vanilla".into(),
                published_tool: "vanilla-get-time".into(),
                original_tool: "get-time".into(),
                agent: None,
                conversation: None,
            },
            json!({ "name": "get-time" }),
            json!({ "tz": "UTC" }),
        )
        .expect("random");
    hub.set_upstream_id(created.id, json!(42));
    let ui_meta = csp.map(|csp| json!({ "csp": csp }));
    hub.resource_read(
        created.id,
        Ok(ViewDocument {
            html: HTML.into(),
            ui_meta,
        }),
    );
    created.id
}

impl Setup {
    fn host(&self) -> String {
        format!("127.0.0.1:{}", self.server.ports().host)
    }

    fn page_path(&self, id: ViewId) -> String {
        let view = self.hub.get(id).expect("view").view;
        format!("/v/{}/{}/", id, view.page_token.as_str())
    }

    fn sandbox_path(&self, id: ViewId) -> String {
        let view = self.hub.get(id).expect("view").view;
        format!("/s/{}/{}/", id, view.sandbox_token.as_str())
    }

    async fn get(&self, path: &str) -> Reply {
        request(self.server.ports().host, "GET", path, &self.host(), &[], "").await
    }

    async fn get_sandbox(&self, id: ViewId) -> Reply {
        let port = self.server.ports().sandbox;
        let host = format!("localhost:{port}");
        request(port, "GET", &self.sandbox_path(id), &host, &[], "").await
    }

    /// Opens the page's event stream and returns it with the page's generation.
    async fn open(&self, id: ViewId) -> (Events, u64) {
        let path = format!("{}events", self.page_path(id));
        let mut events = Events::open(self.server.ports().host, &path).await;
        assert_eq!(events.status, 200);
        let ready = events
            .until(|name, data| name == "control" && data["type"] == "ready")
            .await;
        // The page's own colours come with it (the default look: dark).
        assert_eq!(ready["look"]["theme"], "dark", "{ready}");
        assert!(ready["look"]["background"].is_string(), "{ready}");
        (events, ready["page"].as_u64().expect("a page number"))
    }

    async fn post(&self, id: ViewId, page: u64, message: Value) -> Reply {
        self.post_to(&self.page_path(id), page, message).await
    }

    async fn post_to(&self, page_path: &str, page: u64, message: Value) -> Reply {
        let path = format!("{page_path}rpc");
        let page = page.to_string();
        let origin = format!("http://{}", self.host());
        request(
            self.server.ports().host,
            "POST",
            &path,
            &self.host(),
            &[
                ("x-calyx-page", page.as_str()),
                ("Origin", origin.as_str()),
                ("Content-Type", "application/json"),
            ],
            &message.to_string(),
        )
        .await
    }

    /// Initializes the view as an app would and returns the `ui/initialize` answer.
    async fn initialize(&self, events: &mut Events, page: u64) -> Value {
        let reply = self
            .post(
                self.id,
                page,
                json!({ "jsonrpc": "2.0", "id": 1, "method": "ui/initialize",
                        "params": { "protocolVersion": "2026-01-26", "appCapabilities": {} } }),
            )
            .await;
        assert_eq!(reply.status, 202, "{}", reply.body);
        let answer = events
            .until(|name, data| name == "rpc" && data["id"] == 1)
            .await;
        let reply = self
            .post(
                self.id,
                page,
                json!({ "jsonrpc": "2.0", "method": "ui/notifications/initialized" }),
            )
            .await;
        assert_eq!(reply.status, 202);
        answer
    }
}

fn assert_common_headers(reply: &Reply) {
    assert_eq!(
        reply.headers.get("cache-control").map(String::as_str),
        Some("no-store")
    );
    assert_eq!(
        reply.headers.get("referrer-policy").map(String::as_str),
        Some("no-referrer")
    );
    assert!(
        !reply
            .headers
            .keys()
            .any(|k| k.starts_with("access-control-")),
        "no CORS headers: {:?}",
        reply.headers
    );
}

#[tokio::test]
async fn pages_answer_with_their_headers_and_refuse_what_they_must() {
    let s = setup(None).await;
    let page = s.get(&s.page_path(s.id)).await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("host.js"));
    assert_common_headers(&page);
    let script = s.get(&format!("{}host.js", s.page_path(s.id))).await;
    assert_eq!(script.status, 200);
    assert!(script.body.contains("EventSource"));
    assert_common_headers(&script);

    let wrong = format!("/v/{}/{}/", s.id, "0".repeat(32));
    let denied = s.get(&wrong).await;
    assert_eq!(denied.status, 404);
    assert_common_headers(&denied);
    // A sandbox token does not open the host page.
    let swapped = s.sandbox_path(s.id).replacen("/s/", "/v/", 1);
    assert_eq!(s.get(&swapped).await.status, 404);

    let port = s.server.ports().host;
    for host in [
        "evil.example".to_string(),
        format!("evil.example:{port}"),
        format!("127.0.0.1:{}", port + 1),
    ] {
        let reply = request(port, "GET", &s.page_path(s.id), &host, &[], "").await;
        assert_eq!(reply.status, 403, "{host}");
        assert_common_headers(&reply);
    }

    let path = s.page_path(s.id);
    s.hub.remove(s.id);
    let gone = s.get(&path).await;
    assert_eq!(gone.status, 410);
    assert_common_headers(&gone);
    // A removed view's id with a guessed token is as unknown as any other.
    let guessed = format!("/v/{}/{}/", s.id.0, "0".repeat(32));
    assert_eq!(s.get(&guessed).await.status, 404);
    let rpc = s
        .post_to(&guessed, 1, json!({ "jsonrpc": "2.0", "method": "ping" }))
        .await;
    assert_eq!(
        rpc.status, 404,
        "no post reaches a removed view without its token"
    );
}

#[tokio::test]
async fn the_sandbox_page_carries_the_views_csp_header() {
    let s = setup(None).await;
    let reply = s.get_sandbox(s.id).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_common_headers(&reply);
    assert_eq!(
        reply
            .headers
            .get("content-security-policy")
            .map(String::as_str),
        Some(sandbox_csp(None).header.as_str())
    );
    assert!(reply.headers["content-security-policy"]
        .starts_with("default-src 'none'; script-src 'self' 'unsafe-inline'"));
    assert_eq!(
        reply.headers.get("clear-site-data").map(String::as_str),
        Some("\"storage\""),
        "no other view is open"
    );
    // The host origin the sandbox accepts comes from the request's own Host.
    assert!(reply
        .body
        .contains(&format!("\"http://localhost:{}\"", s.server.ports().host)));

    let declared = json!({ "connectDomains": ["http://127.0.0.1:9", "*"] });
    let other = create_view(&s.hub, Some(declared.clone()));
    let (_events, _) = s.open(s.id).await;
    let reply = s.get_sandbox(other).await;
    assert_eq!(
        reply
            .headers
            .get("content-security-policy")
            .map(String::as_str),
        Some(sandbox_csp(Some(&declared)).header.as_str())
    );
    assert!(reply.headers["content-security-policy"].contains("connect-src http://127.0.0.1:9"));
    assert!(
        !reply.headers.contains_key("clear-site-data"),
        "another view's page is open"
    );
    // A query string changes nothing.
    let port = s.server.ports().sandbox;
    let path = format!("{}?csp=*", s.sandbox_path(other));
    let host = format!("127.0.0.1:{port}");
    let reply = request(port, "GET", &path, &host, &[], "").await;
    assert_eq!(
        reply
            .headers
            .get("content-security-policy")
            .map(String::as_str),
        Some(sandbox_csp(Some(&declared)).header.as_str())
    );
    // The sandbox listener checks Host against its own port.
    let wrong = format!("127.0.0.1:{}", s.server.ports().host);
    let reply = request(port, "GET", &s.sandbox_path(other), &wrong, &[], "").await;
    assert_eq!(reply.status, 403);
}

#[tokio::test]
async fn the_page_gets_initialize_then_tool_input_then_the_result() {
    let s = setup(None).await;
    let (mut events, page) = s.open(s.id).await;
    let document = events
        .until(|name, data| name == "control" && data["type"] == "document")
        .await;
    assert_eq!(document["html"], HTML);
    assert_eq!(document["sandbox"], s.sandbox_path(s.id));
    assert!(s.hub.get(s.id).expect("view").call.page_open);

    let answer = s.initialize(&mut events, page).await;
    assert_eq!(answer["result"]["protocolVersion"], "2026-01-26");
    assert_eq!(answer["result"]["hostContext"]["toolInfo"]["id"], 42);
    let input = events.until(|name, _| name == "rpc").await;
    assert_eq!(input["method"], "ui/notifications/tool-input");
    assert_eq!(input["params"]["arguments"], json!({ "tz": "UTC" }));

    let result = json!({ "content": [{ "type": "text", "text": "12:00" }] });
    s.hub.tool_result(s.id, result.clone());
    let sent = events.until(|name, _| name == "rpc").await;
    assert_eq!(sent["method"], "ui/notifications/tool-result");
    assert_eq!(sent["params"], result);

    // A server's list change reaches the page of its views.
    let _ = s.notify.send((
        "vanilla".into(),
        json!({ "jsonrpc": "2.0", "method": "notifications/tools/list_changed" }),
    ));
    let forwarded = events.until(|name, _| name == "rpc").await;
    assert_eq!(forwarded["method"], "notifications/tools/list_changed");
}

#[tokio::test]
async fn view_requests_round_trip_through_the_upstream() {
    let s = setup(None).await;
    let (mut events, page) = s.open(s.id).await;
    s.initialize(&mut events, page).await;
    s.post(
        s.id,
        page,
        json!({ "jsonrpc": "2.0", "id": "a", "method": "tools/call",
                "params": { "name": "get-time", "arguments": {} } }),
    )
    .await;
    let answer = events
        .until(|name, data| name == "rpc" && data["id"] == "a")
        .await;
    assert_eq!(answer["result"]["content"][0]["text"], "tools/call");
    {
        let requests = s.upstream.requests.lock().expect("lock");
        assert_eq!(requests.len(), 1);
        assert_eq!(requests[0].0, "vanilla");
        assert_eq!(requests[0].2["name"], "get-time");
    }
    s.post(
        s.id,
        page,
        json!({ "jsonrpc": "2.0", "id": "b", "method": "tools/call",
                "params": { "name": "model-only" } }),
    )
    .await;
    let refused = events
        .until(|name, data| name == "rpc" && data["id"] == "b")
        .await;
    assert_eq!(refused["error"]["code"], -32602);
    assert_eq!(s.upstream.requests.lock().expect("lock").len(), 1);

    s.post(
        s.id,
        page,
        json!({ "jsonrpc": "2.0", "method": "notifications/message",
                "params": { "level": "info", "data": "hi" } }),
    )
    .await;
    s.post(
        s.id,
        page,
        json!({ "jsonrpc": "2.0", "id": "c", "method": "ui/update-model-context",
                "params": { "structuredContent": { "n": 1 } } }),
    )
    .await;
    events
        .until(|name, data| name == "rpc" && data["id"] == "c")
        .await;
    let notes = s.server.notes(s.id).expect("notes");
    assert_eq!(notes.logs.len(), 1);
    assert_eq!(notes.logs[0]["data"], "hi");
    assert_eq!(
        notes.model_context.map(|(context, _)| context),
        Some(json!({ "structuredContent": { "n": 1 } }))
    );

    // A post from another origin, or without the page's number, is refused.
    let path = format!("{}rpc", s.page_path(s.id));
    let reply = request(
        s.server.ports().host,
        "POST",
        &path,
        &s.host(),
        &[
            ("x-calyx-page", &page.to_string()),
            ("Origin", "http://evil.example"),
        ],
        "{}",
    )
    .await;
    assert_eq!(reply.status, 403);
    let reply = request(s.server.ports().host, "POST", &path, &s.host(), &[], "{}").await;
    assert_eq!(reply.status, 400);
}

#[tokio::test]
async fn a_second_page_takes_over_the_first() {
    let s = setup(None).await;
    let (mut first, first_page) = s.open(s.id).await;
    let (mut second, second_page) = s.open(s.id).await;
    first
        .until(|name, data| name == "control" && data["type"] == "taken-over")
        .await;
    assert!(first.next().await.is_none(), "the first stream ends");
    let reply = s
        .post(
            s.id,
            first_page,
            json!({ "jsonrpc": "2.0", "id": 1, "method": "ping" }),
        )
        .await;
    assert_eq!(reply.status, 409);
    let reply = s
        .post(
            s.id,
            second_page,
            json!({ "jsonrpc": "2.0", "id": 1, "method": "ping" }),
        )
        .await;
    assert_eq!(reply.status, 202);
    let pong = second
        .until(|name, data| name == "rpc" && data["id"] == 1)
        .await;
    assert_eq!(pong["result"], json!({}));
    assert!(s.hub.get(s.id).expect("view").call.page_open);
    drop(second);
    let deadline = std::time::Instant::now() + super::test_http::WAIT;
    while s.hub.get(s.id).expect("view").call.page_open {
        assert!(
            std::time::Instant::now() < deadline,
            "page_open never cleared"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn removal_sends_teardown_and_closes_the_page() {
    let s = setup(None).await;
    let (mut events, page) = s.open(s.id).await;
    s.initialize(&mut events, page).await;
    events.until(|name, _| name == "rpc").await; // tool-input
    let path = s.page_path(s.id);
    // The app asks to be torn down: the server removes the view and tears its page down.
    s.post(
        s.id,
        page,
        json!({ "jsonrpc": "2.0", "method": "ui/notifications/request-teardown" }),
    )
    .await;
    let teardown = events
        .until(|name, data| name == "rpc" && data["method"] == "ui/resource-teardown")
        .await;
    assert!(s.hub.get(s.id).is_none(), "the view is removed");
    let reply = s
        .post_to(
            &path,
            page,
            json!({ "jsonrpc": "2.0", "id": teardown["id"], "result": {} }),
        )
        .await;
    assert_eq!(
        reply.status, 202,
        "the removed view's page answers its teardown"
    );
    events
        .until(|name, data| name == "control" && data["type"] == "closed")
        .await;

    assert!(events.next().await.is_none(), "the stream ends");
    assert_eq!(s.get(&path).await.status, 410);
    let upstream_actions = s.upstream.actions.lock().expect("lock").len();
    assert_eq!(upstream_actions, 0, "teardown requests stay in the server");
}

#[tokio::test]
async fn an_unanswered_teardown_closes_the_page_after_two_seconds() {
    let s = setup(None).await;
    let (mut events, page) = s.open(s.id).await;
    s.initialize(&mut events, page).await;
    let started = std::time::Instant::now();
    s.hub.remove(s.id);
    events
        .until(|name, data| name == "rpc" && data["method"] == "ui/resource-teardown")
        .await;
    events
        .until(|name, data| name == "control" && data["type"] == "closed")
        .await;
    assert!(started.elapsed() >= crate::views::protocol::TEARDOWN_TIMEOUT);
}

#[tokio::test]
async fn a_new_look_reaches_open_pages_as_a_context_change() {
    let s = setup(None).await;
    let (mut events, page) = s.open(s.id).await;
    let answer = s.initialize(&mut events, page).await;
    assert_eq!(answer["result"]["hostContext"]["theme"], "dark");
    events.until(|name, _| name == "rpc").await; // tool-input
    s.server.set_look(crate::views::protocol::HostLook {
        theme: "light".into(),
        ..Default::default()
    });
    let look = events
        .until(|name, data| name == "control" && data["type"] == "look")
        .await;
    assert_eq!(
        look["look"]["theme"], "light",
        "the page's own colours: {look}"
    );
    let changed = events
        .until(|name, data| {
            name == "rpc" && data["method"] == "ui/notifications/host-context-changed"
        })
        .await;
    assert_eq!(changed["params"], json!({ "theme": "light" }));
}

#[tokio::test]
async fn stopping_the_server_ends_the_pages() {
    let s = setup(None).await;
    let (mut events, _page) = s.open(s.id).await;
    assert!(s.hub.get(s.id).expect("view").call.page_open);
    let Setup {
        hub, server, id, ..
    } = s;
    server.shutdown().await;
    while events.next().await.is_some() {}
    assert!(!hub.get(id).expect("view").call.page_open);
}

#[tokio::test]
async fn app_registered_tools_are_listed_called_and_withdrawn_with_the_page() {
    let s = setup(None).await;
    let (mut events, page) = s.open(s.id).await;
    s.post(
        s.id,
        page,
        json!({ "jsonrpc": "2.0", "id": 1, "method": "ui/initialize",
                "params": { "appCapabilities": { "tools": {} } } }),
    )
    .await;
    events
        .until(|name, data| name == "rpc" && data["id"] == 1)
        .await;
    s.post(
        s.id,
        page,
        json!({ "jsonrpc": "2.0", "method": "ui/notifications/initialized" }),
    )
    .await;
    let list = events
        .until(|name, data| name == "rpc" && data["method"] == "tools/list")
        .await;
    s.post(
        s.id,
        page,
        json!({ "jsonrpc": "2.0", "id": list["id"], "result": { "tools": [{ "name": "get-allocations" }] } }),
    )
    .await;
    let published = || {
        s.upstream
            .actions
            .lock()
            .expect("lock")
            .iter()
            .filter_map(|(_, a)| match a {
                HostAction::AppTools { tools } => Some(tools.len()),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    let deadline = std::time::Instant::now() + super::test_http::WAIT;
    while published() != [1] {
        assert!(
            std::time::Instant::now() < deadline,
            "tools never published"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }

    let call = s
        .server
        .call_app_tool(s.id, "get-allocations", json!({ "year": 2026 }));
    let answer_page = async {
        let request = events
            .until(|name, data| name == "rpc" && data["method"] == "tools/call")
            .await;
        assert_eq!(request["params"]["arguments"], json!({ "year": 2026 }));
        s.post(
            s.id,
            page,
            json!({ "jsonrpc": "2.0", "id": request["id"],
                    "result": { "content": [{ "type": "text", "text": "40%" }] } }),
        )
        .await;
    };
    let (result, ()) = tokio::join!(call, answer_page);
    assert_eq!(
        result.expect("the view answered")["content"][0]["text"],
        "40%"
    );

    // The tab closes: the tools go and calls fail with the reason.
    drop(events);
    while published() != [1, 0] {
        assert!(
            std::time::Instant::now() < deadline,
            "tools never withdrawn"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let refused = s
        .server
        .call_app_tool(s.id, "get-allocations", json!({}))
        .await
        .expect_err("no page");
    assert_eq!(refused.message, super::NOT_OPEN);
}
