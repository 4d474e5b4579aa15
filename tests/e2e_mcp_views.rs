//! End to end: MCP App views created by `/mcp-hosted` in a real calyx server (issue 17, "When a
//! view is created" and "Lifetimes"). The project's fixture server (examples/mcp_fixture) has
//! tools with a `ui://` resource; rmcp's client calls them with a real pane's identity
//! headers, and `calyx mcp views --json` shows the views. Agent conversations come from real
//! `calyx hook` processes playing captured Claude Code payloads.

use std::collections::HashMap;

use crate::common::{self, Env};
use crate::e2e_mcp_hosted::{calyx_ok, eventually, row_when, world, Listener};
use crate::e2e_mcp_view_browser::status_of;
use crate::hosted_support::fixture::mcp_fixture;
use crate::support_view_page::Page;

use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;

/// What the fixture's `show_time` answers.
pub(crate) const TIME_TEXT: &str = "fixture time 12:00";

/// An agent on `/mcp-hosted` in the pane with `surface`.
pub(crate) async fn agent_in(env: &Env, surface: &str) -> RunningService<RoleClient, Listener> {
    let ep = common::mcp::endpoint(env);
    let mut headers = HashMap::new();
    headers.insert(
        "x-calyx-surface-id".parse().expect("name"),
        surface.parse().expect("value"),
    );
    let config = StreamableHttpClientTransportConfig::with_uri(format!(
        "http://127.0.0.1:{}/mcp-hosted",
        ep.port
    ))
    .auth_header(ep.token)
    .custom_headers(headers);
    calyx::hosted::connection::http_client::install_tls_provider();
    Listener::default()
        .serve(StreamableHttpClientTransport::from_config(config))
        .await
        .expect("client connects to /mcp-hosted")
}

/// `(id, surface)` of every pane.
pub(crate) fn panes(env: &Env) -> Vec<(String, String)> {
    env.panes()
        .iter()
        .map(|p| {
            (
                p["id"].as_str().unwrap_or_default().to_string(),
                p["surface_id"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// The text of a tool call's result.
pub(crate) async fn call_text(client: &RunningService<RoleClient, Listener>, tool: &str) -> String {
    let result = client
        .peer()
        .call_tool(CallToolRequestParams::new(tool.to_string()))
        .await
        .expect("tools/call");
    let value = serde_json::to_value(&result).expect("json");
    value["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// `calyx mcp views --json`.
pub(crate) async fn views(env: &Env) -> Vec<Value> {
    let out = calyx_ok(env, &["mcp", "views", "--json"]).await;
    match serde_json::from_str::<Value>(&out) {
        Ok(Value::Array(rows)) => rows,
        other => panic!("mcp views --json is not a list: {other:?} from {out:?}"),
    }
}

/// Waits until the views `wanted` accepts.
async fn views_when(env: &Env, what: &str, wanted: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    eventually(what, || async {
        let rows = views(env).await;
        wanted(&rows).then_some(rows)
    })
    .await
}

/// A world with the fixture hosted as `fx`, ready.
pub(crate) async fn world_with_fixture() -> Env {
    let env = world("");
    let fixture = mcp_fixture();
    calyx_ok(
        &env,
        &["mcp", "add", "fx", "--", &fixture.display().to_string()],
    )
    .await;
    row_when(&env, "fx", |r| r["state"] == "ready").await;
    env
}

/// Plays a captured Claude Code payload of `event` with `session` through a real `calyx hook`.
pub(crate) fn hook(env: &Env, surface: &str, event: &str, session: &str) {
    let path = format!(
        "{}/fixtures/payloads/claude-2.1.197-{event}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let captured: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("json");
    let mut payload = captured["payload"].clone();
    payload["session_id"] = Value::from(session);
    env.hook_event(surface, "claude-code", &payload);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ui_tool_call_creates_a_view_in_the_callers_pane_and_keeps_its_result() {
    let env = world_with_fixture().await;
    let (pane, surface) = panes(&env)[0].clone();
    let agent = agent_in(&env, &surface).await;

    assert_eq!(call_text(&agent, "fx-echo").await, "", "a plain tool");
    assert!(views(&env).await.is_empty(), "a plain tool makes no view");
    assert_eq!(
        calyx_ok(&env, &["mcp", "views"]).await,
        "no views\n",
        "the table says so"
    );

    assert_eq!(
        call_text(&agent, "fx-show_time").await,
        TIME_TEXT,
        "the agent's result is the server's, unchanged"
    );
    let rows = views_when(&env, "a completed view", |rows| {
        rows.len() == 1 && rows[0]["state"] == "completed"
    })
    .await;
    let view = &rows[0];
    assert_eq!(view["pane"], pane.as_str(), "{view}");
    assert_eq!(view["alias"], "fx");
    assert_eq!(view["tool"], "show_time");
    assert_eq!(view["published_tool"], "fx-show_time");
    assert_eq!(view["page_open"], false);
    assert!(
        view["ignored_csp"]
            .as_array()
            .is_some_and(|i| i.iter().any(|e| e == "*")),
        "the `*` connect domain is dropped and listed: {view}"
    );
    let table = calyx_ok(&env, &["mcp", "views"]).await;
    assert!(
        table.starts_with("ID") && table.contains("show_time") && table.contains("completed"),
        "{table}"
    );

    // A caller without pane identity gets a standalone view.
    let outside = agent_in(&env, "").await;
    assert_eq!(call_text(&outside, "fx-show_time").await, TIME_TEXT);
    let rows = views_when(&env, "a standalone view", |rows| rows.len() == 2).await;
    assert_eq!(rows[1]["pane"], Value::Null, "{rows:?}");
    assert_eq!(rows[1]["state"], "completed", "{rows:?}");
    let table = calyx_ok(&env, &["mcp", "views"]).await;
    assert!(
        table
            .lines()
            .any(|l| l.starts_with('2') && l.contains("standalone")),
        "{table}"
    );
    drop(outside);

    // A server that drops and reconnects keeps its views. (`exit` ends the fixture without
    // an answer: the call fails once the connection is gone.)
    let exit = agent
        .peer()
        .call_tool(CallToolRequestParams::new("fx-exit".to_string()))
        .await
        .expect("an answer");
    assert_eq!(exit.is_error, Some(true), "{exit:?}");
    eventually("fx answering again", || async {
        let answer = agent
            .peer()
            .call_tool(CallToolRequestParams::new("fx-echo".to_string()))
            .await
            .ok()?;
        (answer.is_error != Some(true)).then_some(())
    })
    .await;
    assert_eq!(views(&env).await.len(), 2, "a reconnect keeps the views");

    // `[mcp_apps] views = false`: the same tool is a plain tool.
    env.write_config("[mcp]\nsecret_store = \"file\"\n[mcp_apps]\nviews = false\n");
    env.ok(&["reload-config"]);
    assert_eq!(call_text(&agent, "fx-show_time").await, TIME_TEXT);
    assert_eq!(views(&env).await.len(), 2, "no new view with views off");
}

/// The newest view's page, opened and initialized as an app would (so a removal must send it
/// `ui/resource-teardown`), and its URL.
async fn newest_page(env: &Env) -> (Page, String) {
    let url = views(env)
        .await
        .iter()
        .max_by_key(|v| v["id"].as_u64())
        .and_then(|v| v["url"].as_str().map(str::to_string))
        .expect("a view URL");
    let mut page = Page::open(&url).await;
    page.initialize(serde_json::json!({})).await;
    (page, url)
}

/// After a removal: the open page was asked `ui/resource-teardown` (answered as an app does)
/// and the URL answers 410 Gone.
async fn torn_down(mut page: Page, url: &str, trigger: &str) {
    let teardown = page.request("ui/resource-teardown").await;
    page.answer(&teardown, serde_json::json!({})).await;
    eventually(&format!("410 for the view after {trigger}"), || async {
        (status_of(url).await == 410).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn views_go_with_their_conversation_their_server_and_their_pane() {
    let env = world_with_fixture().await;
    let (_, surface) = panes(&env)[0].clone();
    let agent = agent_in(&env, &surface).await;

    // A new conversation (SessionStart with another session_id) removes the old one's views.
    hook(&env, &surface, "SessionStart", "conv-1");
    call_text(&agent, "fx-show_time").await;
    views_when(&env, "the first conversation's view", |rows| {
        rows.len() == 1 && rows[0]["agent"] == "claude-code"
    })
    .await;
    hook(&env, &surface, "SessionStart", "conv-1");
    assert_eq!(views(&env).await.len(), 1, "the same conversation keeps it");
    let (page, url) = newest_page(&env).await;
    hook(&env, &surface, "SessionStart", "conv-2");
    views_when(&env, "no views after a new conversation", |rows| {
        rows.is_empty()
    })
    .await;
    torn_down(page, &url, "a new conversation").await;

    // SessionEnd removes the pane's views.
    call_text(&agent, "fx-show_time").await;
    views_when(&env, "a view in conv-2", |rows| rows.len() == 1).await;
    let (page, url) = newest_page(&env).await;
    hook(&env, &surface, "SessionEnd", "conv-2");
    views_when(&env, "no views after SessionEnd", |rows| rows.is_empty()).await;
    torn_down(page, &url, "SessionEnd").await;

    // Disabling the server removes its views, running ones too.
    let peer = agent.peer().clone();
    let waiting = tokio::spawn(async move {
        peer.call_tool(CallToolRequestParams::new("fx-show_wait".to_string()))
            .await
    });
    views_when(&env, "a running view", |rows| {
        rows.len() == 1 && rows[0]["state"] == "running"
    })
    .await;
    let (page, url) = newest_page(&env).await;
    calyx_ok(&env, &["mcp", "disable", "fx"]).await;
    views_when(&env, "no views after disabling", |rows| rows.is_empty()).await;
    torn_down(page, &url, "disabling the server").await;
    waiting.abort();
    calyx_ok(&env, &["mcp", "enable", "fx"]).await;
    row_when(&env, "fx", |r| r["state"] == "ready").await;

    // Closing the pane removes its views; another pane's stay.
    env.ok(&["split-window", "-d"]);
    let (second, second_surface) = panes(&env)
        .into_iter()
        .find(|(_, s)| *s != surface)
        .expect("a second pane");
    let other = agent_in(&env, &second_surface).await;
    call_text(&other, "fx-show_time").await;
    let (page, url) = newest_page(&env).await;
    call_text(&agent, "fx-show_time").await;
    views_when(&env, "a view in each pane", |rows| rows.len() == 2).await;
    env.ok(&["kill-pane", "-t", &second]);
    let rows = views_when(&env, "the second pane's view gone", |rows| rows.len() == 1).await;
    assert_ne!(rows[0]["pane"], second.as_str(), "{rows:?}");
    torn_down(page, &url, "closing the pane").await;

    // `[mcp] host_servers = false` at reload-config stops every server: their views go.
    let (page, url) = newest_page(&env).await;
    env.write_config("[mcp]\nsecret_store = \"file\"\nhost_servers = false\n");
    env.ok(&["reload-config"]);
    views_when(&env, "no views with hosting off", |rows| rows.is_empty()).await;
    torn_down(page, &url, "hosting off").await;
}
