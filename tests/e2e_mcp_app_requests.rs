//! Issue 17's app requests end to end: the real `@modelcontextprotocol/server-basic-vanillajs`
//! hosted by a real calyx server, its view in headless Chromium, and a client in a PTY. The
//! app's Send Message becomes a request in the client's approval panel (titled by the
//! server), `calyx approve ID` answers it from another terminal, the message is typed into the
//! calling pane and submitted (the pane's shell runs it), and the app hears "accepted"; its
//! Open Link is answered with the panel's `y` in the client.

use std::time::Duration;

use serde_json::Value;

use crate::common::{Client, Env};
use crate::e2e_mcp_hosted::{calyx_ok, eventually, row_when, world};
use crate::e2e_mcp_view_card::wait_screen;
use crate::e2e_mcp_views::{agent_in, call_text, panes, views};
use crate::hosted_support::apps::{apps_server, VANILLA};
use crate::support_browser::{browser, last_line, Browser};

type Agent = rmcp::service::RunningService<rmcp::RoleClient, crate::e2e_mcp_hosted::Listener>;

/// A world with `vanilla` hosted, a client attached in a PTY, and the view of an agent's
/// `vanilla-get-time` in the first pane: (world, client, pane id, view URL, the headless
/// browser, the agent kept connected). None when the browser or npm is missing.
async fn vanilla_view() -> Option<(Env, Client, String, String, Browser, Agent)> {
    let browser = browser()?;
    let index = apps_server(VANILLA)?;
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
    let (pane, surface) = panes(&env)[0].clone();
    let c = env.client(&["attach", "-t", "hosted"], 30, 140);
    c.wait_for("[hosted]");
    let agent = agent_in(&env, &surface).await;
    call_text(&agent, "vanilla-get-time").await;
    let url = views(&env)
        .await
        .last()
        .and_then(|v| v["url"].as_str())
        .expect("the view's URL")
        .to_string();
    Some((env, c, pane, url, browser, agent))
}

/// Runs `tests/views/app_request.mjs` on the view: presses `button` with `text`.
fn press_in_browser(
    browser: &Browser,
    url: &str,
    button: &str,
    text: &str,
) -> tokio::task::JoinHandle<std::process::Output> {
    let run = browser
        .command("app_request.mjs", url, &[button, text])
        .output();
    tokio::spawn(async move {
        tokio::time::timeout(Duration::from_secs(120), run)
            .await
            .expect("the browser run finishes in time")
            .expect("node runs")
    })
}

/// What the app logged of its request's answer.
async fn app_heard(browser: tokio::task::JoinHandle<std::process::Output>) -> Value {
    let output = browser.await.expect("browser task");
    last_line(&output)["answer"].clone()
}

/// The id of the pending app request titled `tool`.
async fn pending_app(env: &Env, tool: &str) -> u64 {
    eventually("the app's request in calyx approvals", || async {
        let out = calyx_ok(env, &["approvals", "--pending", "--json"]).await;
        let listed: Value = serde_json::from_str(&out).ok()?;
        listed["pending"]
            .as_array()?
            .iter()
            .find(|p| p["cli"] == "app" && p["tool"] == tool)
            .and_then(|p| p["id"].as_u64())
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_apps_send_message_waits_in_the_panel_and_calyx_approve_types_it_into_the_pane() {
    let Some((env, c, pane, url, headless, _agent)) = vanilla_view().await else {
        return;
    };
    let browser = press_in_browser(&headless, &url, "message", "echo app-message-$((6*7))");
    // The request waits in the queue as the app's (the app gives up after 5 s: answer fast).
    let id = pending_app(&env, "Vanilla: Send Message").await;
    // Every attached client's panel shows it, titled by the server.
    wait_screen(&c, "the app's request in the panel", |s| {
        s.contains("Vanilla: Send Message") && s.contains("Don't Send")
    });
    calyx_ok(&env, &["approve", &id.to_string()]).await;
    assert_eq!(app_heard(browser).await, "Message accepted");
    // Typed into the pane and submitted: its shell ran it.
    env.wait_capture(&pane, "app-message-42");
    let record =
        std::fs::read_to_string(env.path().join("state/calyx/approvals.jsonl")).unwrap_or_default();
    assert!(record.contains("Vanilla: Send Message"), "{record}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_apps_open_link_is_answered_with_the_panels_y() {
    let Some((env, mut c, _pane, url, headless, _agent)) = vanilla_view().await else {
        return;
    };
    let link = "https://example.com/calyx-app-request";
    let browser = press_in_browser(&headless, &url, "link", link);
    pending_app(&env, "Vanilla: Open Link").await;
    wait_screen(&c, "the link in the panel", |s| {
        s.contains("Vanilla: Open Link") && s.contains(link) && s.contains("Cancel")
    });
    c.send("y");
    assert_eq!(app_heard(browser).await, "Open link request accepted");
    let out = calyx_ok(&env, &["approvals", "--json"]).await;
    let listed: Value = serde_json::from_str(&out).expect("json");
    assert!(
        listed["pending"].as_array().is_some_and(|p| p.is_empty()),
        "{listed}"
    );
    assert!(
        listed["recent"].as_array().is_some_and(|r| r
            .iter()
            .any(|r| r["tool"] == "Vanilla: Open Link"
                && r["state"] == "allow"
                && r["by"] == "human")),
        "{listed}"
    );
}
