//! Issue 17's first browser test, with the real `@modelcontextprotocol/server-basic-vanillajs`
//! hosted by a real calyx server: an agent in a pane calls `vanilla-get-time` through
//! `/mcp-hosted`; the attached client shows the card (`Completed`, the time as the fallback
//! text); the view's URL in headless Chromium shows that same time in the app's
//! `#server-time`, its "Get Server Time" button makes a second `tools/call get-time`
//! through calyx to the server (a later time appears), and its "Send Log" line is kept with
//! the view (`calyx mcp views --json`).

use crate::e2e_mcp_hosted::{calyx_ok, row_when, world};
use crate::e2e_mcp_view_card::wait_screen;
use crate::e2e_mcp_views::{agent_in, call_text, panes, views};
use crate::hosted_support::apps::{apps_server, VANILLA};
use crate::support_browser::browser;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vanilla_get_time_shows_its_card_and_its_app_calls_the_server_again() {
    let Some(browser) = browser() else {
        return;
    };
    let Some(index) = apps_server(VANILLA) else {
        return;
    };
    let env = world("");
    let index = index.display().to_string();
    calyx_ok(
        &env,
        &[
            "mcp", "add", "vanilla", "--name", "Vanilla", "--", "node", &index, "--stdio",
        ],
    )
    .await;
    row_when(&env, "vanilla", |r| r["state"] == "ready").await;
    let (_, surface) = panes(&env)[0].clone();
    let c = env.client(&["attach", "-t", "hosted"], 30, 140);
    c.wait_for("[hosted]");
    let agent = agent_in(&env, &surface).await;

    let time = call_text(&agent, "vanilla-get-time").await;
    assert!(
        time.contains('T') && time.ends_with('Z'),
        "an ISO time: {time}"
    );
    wait_screen(&c, "the card with the time", |s| {
        s.contains("◆ get-time · vanilla") && s.contains("Completed") && s.contains(&time)
    });

    let rows = views(&env).await;
    let url = rows
        .last()
        .and_then(|v| v["url"].as_str())
        .expect("the view's URL")
        .to_string();
    let seen = browser.run("vanilla.mjs", &url, &[]).await;
    assert_eq!(seen["http"], 200, "{seen}");
    assert_eq!(
        seen["first"],
        time.as_str(),
        "the agent's result in the app: {seen}"
    );
    let second = seen["second"].as_str().unwrap_or_default();
    assert!(
        second > time.as_str(),
        "Get Server Time asked the server again through calyx: {seen}"
    );
    // Send Log's text is kept with the view (the page may already be closed).
    crate::e2e_mcp_hosted::eventually("the app's log line", || async {
        let rows = views(&env).await;
        let logs = rows
            .last()
            .map(|v| v["logs"].to_string())
            .unwrap_or_default();
        logs.contains("This is log text").then_some(())
    })
    .await;
}
