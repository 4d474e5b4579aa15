//! The browser test 3 (issue 17, "App context and app-registered tools"):
//! `@modelcontextprotocol/server-budget-allocator@2.0.3`, hosted as `budget` by a real calyx
//! server, opened in Debian's headless Chromium. Its view registers tools of its own; the agent
//! in the calling pane lists and calls `budget-app_get-allocations`, an agent in another pane
//! does not see it, and it goes with a `tools/list_changed` when the tab closes.

use std::process::Stdio;
use std::sync::atomic::Ordering;
use std::time::Duration;

use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::RoleClient;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::e2e_mcp_hosted::{calyx_ok, eventually, row_when, world, Listener};
use crate::e2e_mcp_views::{agent_in, panes, views};
use crate::hosted_support::apps::{apps_server, BUDGET};
use crate::support_browser::browser;

/// The five tools budget-allocator's view registers, as the calling pane's agent sees them.
const APP_TOOLS: [&str; 5] = [
    "budget-app_get-allocations",
    "budget-app_set-allocation",
    "budget-app_set-total-budget",
    "budget-app_set-company-stage",
    "budget-app_get-benchmark-comparison",
];

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

/// The next JSON line the browser script prints.
async fn line_of(lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>) -> Value {
    let line = tokio::time::timeout(Duration::from_secs(90), lines.next_line())
        .await
        .expect("the browser answers in time")
        .expect("read")
        .expect("a line");
    serde_json::from_str(&line).unwrap_or_else(|_| panic!("not JSON: {line}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn budget_allocators_tools_reach_the_calling_panes_agent_while_its_tab_is_open() {
    let Some(browser) = browser() else {
        return;
    };
    let Some(index) = apps_server(BUDGET) else {
        return;
    };
    let env = world("");
    let index = index.display().to_string();
    calyx_ok(
        &env,
        &["mcp", "add", "budget", "--", "node", &index, "--stdio"],
    )
    .await;
    row_when(&env, "budget", |r| r["state"] == "ready").await;
    let (_, surface) = panes(&env)[0].clone();
    env.ok(&["split-window", "-d"]);
    let (_, other_surface) = panes(&env)
        .into_iter()
        .find(|(_, s)| *s != surface)
        .expect("a second pane");
    let agent = agent_in(&env, &surface).await;
    let other = agent_in(&env, &other_surface).await;

    let data = agent
        .peer()
        .call_tool(CallToolRequestParams::new(
            "budget-get-budget-data".to_string(),
        ))
        .await
        .expect("tools/call");
    assert_ne!(data.is_error, Some(true), "{data:?}");
    let rows = views(&env).await;
    let url = rows
        .last()
        .and_then(|v| v["url"].as_str())
        .expect("a view with a URL")
        .to_string();
    assert!(
        !tool_names(&agent).await.iter().any(|n| n.contains("-app_")),
        "no app tools before the page opens"
    );

    let mut browser = browser
        .command("open_until_closed.mjs", &url, &[])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("node runs");
    let mut stdin = browser.stdin.take().expect("stdin");
    let mut lines = BufReader::new(browser.stdout.take().expect("stdout")).lines();
    let opened = line_of(&mut lines).await;
    assert_eq!(opened["opened"], 200, "{opened}");

    // The view registered its tools: the calling pane's agent lists them, another's does not.
    let listed = eventually("budget's app tools listed to the pane's agent", || async {
        let names = tool_names(&agent).await;
        APP_TOOLS
            .iter()
            .all(|t| names.iter().any(|n| n == t))
            .then_some(names)
    })
    .await;
    assert!(listed.contains(&"app_context".to_string()), "{listed:?}");
    let elsewhere = tool_names(&other).await;
    assert!(
        !elsewhere.iter().any(|n| n.contains("-app_")),
        "another pane's agent sees none: {elsewhere:?}"
    );
    assert!(agent.service().list_changed.load(Ordering::SeqCst) > 0);

    // A call runs in the page and returns the allocations (once the app has its data).
    let allocations = eventually("get-allocations answered with the allocations", || async {
        let result = agent
            .peer()
            .call_tool(CallToolRequestParams::new(APP_TOOLS[0].to_string()))
            .await
            .ok()?;
        (result.is_error != Some(true)).then_some(result)
    })
    .await;
    let structured = allocations
        .structured_content
        .clone()
        .expect("structuredContent");
    assert!(
        structured["totalBudget"].as_f64().is_some_and(|b| b > 0.0),
        "{structured}"
    );
    assert!(structured["allocations"].is_object(), "{structured}");
    assert!(
        other
            .peer()
            .call_tool(CallToolRequestParams::new(APP_TOOLS[0].to_string()))
            .await
            .is_err(),
        "another pane's agent cannot call it"
    );

    // The tab closes: the tools go, and the pane's agent is told.
    let told = agent.service().list_changed.load(Ordering::SeqCst);
    stdin.write_all(b"close\n").await.expect("tell the browser");
    let closed = line_of(&mut lines).await;
    assert_eq!(closed["closed"], true, "{closed}");
    eventually("budget's app tools withdrawn", || async {
        let names = tool_names(&agent).await;
        (!names.iter().any(|n| n.contains("-app_"))).then_some(())
    })
    .await;
    eventually("tools/list_changed after the tab closed", || async {
        (agent.service().list_changed.load(Ordering::SeqCst) > told).then_some(())
    })
    .await;
    drop(stdin);
    let _ = tokio::time::timeout(Duration::from_secs(30), browser.wait()).await;
}
