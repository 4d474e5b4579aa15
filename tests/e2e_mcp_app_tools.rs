//! End to end: app-registered tools and `app_context` on `/mcp-hosted` (issue 17, "App context
//! and app-registered tools"), in a real calyx server with the project's fixture hosted as
//! `fx`. An agent's call of `fx-show_time` makes a view in its pane; the test plays the view's
//! page over the view server's plain HTTP channel (no browser): it registers a tool, answers
//! the agent's call of it, sets its model context, and closes its stream.

use std::sync::atomic::Ordering;

use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::RoleClient;
use serde_json::{json, Value};

use crate::e2e_mcp_hosted::{eventually, Listener};
use crate::e2e_mcp_views::{agent_in, call_text, panes, views, world_with_fixture, TIME_TEXT};
use crate::support_view_page::Page;

/// The app tool the test's page registers, and its published name.
const APP_TOOL: &str = "get-allocations";
const PUBLISHED: &str = "fx-app_get-allocations";

async fn tool_names(agent: &RunningService<RoleClient, Listener>) -> Vec<String> {
    agent
        .peer()
        .list_all_tools()
        .await
        .expect("tools/list")
        .into_iter()
        .map(|t| t.name.to_string())
        .collect()
}

async fn app_context(agent: &RunningService<RoleClient, Listener>, arguments: Value) -> Value {
    let mut params = CallToolRequestParams::new("app_context".to_string());
    params.arguments = arguments.as_object().cloned();
    let result = agent.peer().call_tool(params).await.expect("tools/call");
    serde_json::to_value(&result).expect("json")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_views_tools_and_context_reach_its_panes_agent_only() {
    let env = world_with_fixture().await;
    let (_, surface) = panes(&env)[0].clone();
    env.ok(&["split-window", "-d"]);
    let (_, other_surface) = panes(&env)
        .into_iter()
        .find(|(_, s)| *s != surface)
        .expect("a second pane");
    let agent = agent_in(&env, &surface).await;
    let other = agent_in(&env, &other_surface).await;
    let outside = agent_in(&env, "").await;

    // Pane-bound sessions have `app_context`; a session without a pane does not.
    assert!(tool_names(&agent).await.contains(&"app_context".into()));
    assert!(tool_names(&other).await.contains(&"app_context".into()));
    assert!(!tool_names(&outside).await.contains(&"app_context".into()));
    let refused = app_context(&outside, json!({})).await;
    assert_eq!(refused["isError"], true, "{refused}");

    assert_eq!(call_text(&agent, "fx-show_time").await, TIME_TEXT);
    let rows = views(&env).await;
    let view = rows.last().expect("a view");
    let view_id = view["id"].as_u64().expect("an id");
    let url = view["url"].as_str().expect("a URL").to_string();

    // No page yet: no app tool, and the view has no context.
    assert!(!tool_names(&agent).await.contains(&PUBLISHED.into()));
    let context = app_context(&agent, json!({})).await;
    assert_eq!(
        context["structuredContent"]["views"][0]["view_id"], view_id,
        "{context}"
    );
    assert_eq!(
        context["structuredContent"]["views"][0]["updated_at"],
        Value::Null
    );

    // The page opens and registers a tool: the pane's agent hears of it and lists it.
    let mut page = Page::open(&url).await;
    let told_before = agent.service().list_changed.load(Ordering::SeqCst);
    let other_told_before = other.service().list_changed.load(Ordering::SeqCst);
    let outside_told_before = outside.service().list_changed.load(Ordering::SeqCst);
    page.initialize(json!({ "tools": { "listChanged": true } }))
        .await;
    let list = page.request("tools/list").await;
    page.answer(
        &list,
        json!({ "tools": [{
            "name": APP_TOOL,
            "description": "The budget's allocations",
            "inputSchema": { "type": "object", "properties": { "year": { "type": "integer" } } },
        }] }),
    )
    .await;
    eventually("the pane's agent told tools/list_changed", || async {
        (agent.service().list_changed.load(Ordering::SeqCst) > told_before).then_some(())
    })
    .await;
    let tools = agent.peer().list_all_tools().await.expect("tools/list");
    let published = tools
        .iter()
        .find(|t| t.name == PUBLISHED)
        .expect("the app tool is listed to the pane's agent");
    assert_eq!(
        published.description.as_deref(),
        Some("The budget's allocations")
    );
    assert!(
        !tool_names(&other).await.contains(&PUBLISHED.into()),
        "another pane's agent does not list it"
    );
    assert!(!tool_names(&outside).await.contains(&PUBLISHED.into()));
    // Another pane's agent hears only what every session hears (a server's tools changing,
    // which may still be under way from `fx` becoming ready): the unbound session is the
    // yardstick.
    eventually(
        "another pane's agent told no more than an unbound one",
        || async {
            let other = other.service().list_changed.load(Ordering::SeqCst) - other_told_before;
            let outside =
                outside.service().list_changed.load(Ordering::SeqCst) - outside_told_before;
            (other == outside).then_some(())
        },
    )
    .await;

    // The agent's call goes to the page, whose result comes back unchanged.
    let peer = agent.peer().clone();
    let call = tokio::spawn(async move {
        let mut params = CallToolRequestParams::new(PUBLISHED.to_string());
        params.arguments = json!({ "year": 2026 }).as_object().cloned();
        peer.call_tool(params).await
    });
    let request = page.request("tools/call").await;
    assert_eq!(request["params"]["name"], APP_TOOL);
    assert_eq!(request["params"]["arguments"], json!({ "year": 2026 }));
    let answer = json!({
        "content": [{ "type": "text", "text": "3 allocations" }],
        "structuredContent": { "allocations": [10, 20, 70] },
    });
    page.answer(&request, answer.clone()).await;
    let result = call
        .await
        .expect("the call task")
        .expect("the call answered");
    let result = serde_json::to_value(&result).expect("json");
    assert_eq!(result["content"], answer["content"]);
    assert_eq!(result["structuredContent"], answer["structuredContent"]);
    assert_ne!(result["isError"], true, "{result}");

    // Another pane's agent cannot call it.
    let mut params = CallToolRequestParams::new(PUBLISHED.to_string());
    params.arguments = Some(Default::default());
    assert!(
        other.peer().call_tool(params).await.is_err(),
        "not a tool of that pane"
    );

    // The view's model context reaches its pane's agent through app_context.
    page.post(
        json!({ "jsonrpc": "2.0", "id": "ctx", "method": "ui/update-model-context",
                      "params": { "content": [{ "type": "text", "text": "70% to payroll" }],
                                  "structuredContent": { "payroll": 70 } } }),
    )
    .await;
    page.until(|name, data| name == "rpc" && data["id"] == "ctx")
        .await;
    let context = app_context(&agent, json!({ "view_id": view_id })).await;
    let entry = &context["structuredContent"]["views"][0];
    assert_eq!(entry["alias"], "fx", "{context}");
    assert_eq!(entry["tool"], "show_time");
    assert_eq!(entry["state"], "completed");
    assert_eq!(entry["content"][0]["text"], "70% to payroll");
    assert_eq!(entry["structuredContent"], json!({ "payroll": 70 }));
    assert!(entry["updated_at"].as_u64().is_some(), "{entry}");
    let text = context["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("70% to payroll"), "{text}");
    let elsewhere = app_context(&other, json!({})).await;
    assert_eq!(
        elsewhere["structuredContent"]["views"],
        json!([]),
        "another pane has no views: {elsewhere}"
    );
    let unknown = app_context(&agent, json!({ "view_id": view_id + 100 })).await;
    assert_eq!(unknown["isError"], true, "{unknown}");

    // The tab closes: the tool goes, and the pane's agent is told.
    let told_before = agent.service().list_changed.load(Ordering::SeqCst);
    drop(page);
    eventually("the app tool withdrawn", || async {
        (!tool_names(&agent).await.contains(&PUBLISHED.into())).then_some(())
    })
    .await;
    eventually("tools/list_changed after the tab closed", || async {
        (agent.service().list_changed.load(Ordering::SeqCst) > told_before).then_some(())
    })
    .await;
}
