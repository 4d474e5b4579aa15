//! Issue 17's second browser test, with the real `@modelcontextprotocol/server-system-monitor`
//! hosted by a real calyx server: its view's poll toggle drives the app-only tool
//! `poll-system-stats` through calyx (the memory figure leaves `--%`), while an agent calling
//! that tool by its published name gets JSON-RPC -32602 (app-only tools are not published).

use std::time::Duration;

use rmcp::model::CallToolRequestParams;
use serde_json::Value;

use crate::e2e_mcp_hosted::{calyx_ok, row_when, world};
use crate::e2e_mcp_view_browser::{chromium, playwright_core};
use crate::e2e_mcp_views::{agent_in, panes, views};
use crate::hosted_support::apps::{apps_server, SYSTEM_MONITOR};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_monitor_polls_its_app_only_tool_through_calyx_which_agents_cannot_call() {
    let (Some(chromium), Some(playwright)) = (chromium(), playwright_core()) else {
        assert!(
            std::env::var_os("CALYX_REQUIRE_BROWSER").is_none(),
            "CALYX_REQUIRE_BROWSER is set but Chromium or playwright-core is missing"
        );
        eprintln!("skipped: Chromium or playwright-core is not installed");
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
    let script = format!(
        "{}/tests/views/system_monitor.mjs",
        env!("CARGO_MANIFEST_DIR")
    );
    let run = tokio::process::Command::new("node")
        .arg(script)
        .arg(&url)
        .arg(&playwright)
        .arg(&chromium)
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .expect("the browser run finishes in time")
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let seen: Value = stdout
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no result line; stdout {stdout}; stderr {stderr}"));
    assert!(seen.get("error").is_none(), "{seen}\n{stderr}");
    assert_eq!(seen["http"], 200, "{seen}");
    let after = seen["after"].as_str().unwrap_or_default();
    assert!(
        after.ends_with('%') && !after.contains("--"),
        "the poll through calyx filled in the memory figure: {seen}\n{stderr}"
    );
}
