//! Issue 17's second browser test, with the real `@modelcontextprotocol/server-system-monitor`
//! hosted by a real calyx server: its view's poll toggle drives the app-only tool
//! `poll-system-stats` through calyx (the memory figure leaves `--%`), while an agent calling
//! that tool by its published name gets JSON-RPC -32602 (app-only tools are not published).

use rmcp::model::CallToolRequestParams;

use crate::e2e_mcp_hosted::{calyx_ok, row_when, world};
use crate::e2e_mcp_views::{agent_in, panes, views};
use crate::hosted_support::apps::{apps_server, SYSTEM_MONITOR};
use crate::support_browser::browser;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_monitor_polls_its_app_only_tool_through_calyx_which_agents_cannot_call() {
    let Some(browser) = browser() else {
        return;
    };
    let Some(index) = apps_server(SYSTEM_MONITOR) else {
        return;
    };
    let env = world("");
    let index = index.display().to_string();
    calyx_ok(
        &env,
        &["mcp", "add", "sysmon", "--", "node", &index, "--stdio"],
    )
    .await;
    row_when(&env, "sysmon", |r| r["state"] == "ready").await;
    let (_, surface) = panes(&env)[0].clone();
    let agent = agent_in(&env, &surface).await;

    // The app-only tool is not the agents'.
    let refused = agent
        .peer()
        .call_tool(CallToolRequestParams::new("sysmon-poll-system-stats"))
        .await;
    match refused {
        Err(rmcp::ServiceError::McpError(error)) => {
            assert_eq!(error.code.0, -32602, "{error:?}")
        }
        other => panic!("an agent called the app-only tool: {other:?}"),
    }

    agent
        .peer()
        .call_tool(CallToolRequestParams::new("sysmon-get-system-info"))
        .await
        .expect("get-system-info");
    let rows = views(&env).await;
    let url = rows
        .last()
        .and_then(|v| v["url"].as_str())
        .expect("the view's URL")
        .to_string();
    let seen = browser.run("system_monitor.mjs", &url, &[]).await;
    assert_eq!(seen["http"], 200, "{seen}");
    let after = seen["after"].as_str().unwrap_or_default();
    assert!(
        after.ends_with('%') && !after.contains("--"),
        "the poll through calyx filled in the memory figure: {seen}"
    );
}
