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
use crate::e2e_mcp_view_browser::{chromium, playwright_core};
use crate::e2e_mcp_view_card::wait_screen;
use crate::e2e_mcp_views::{agent_in, call_text, panes, views};
use crate::hosted_support::apps::{apps_server, VANILLA};

type Agent = rmcp::service::RunningService<rmcp::RoleClient, crate::e2e_mcp_hosted::Listener>;

/// A world with `vanilla` hosted, a client attached in a PTY, and the view of an agent's
/// `vanilla-get-time` in the first pane: (world, client, pane id, view URL, Chromium,
/// playwright-core, the agent kept connected). None when the browser or npm is missing.
async fn vanilla_view() -> Option<(Env, Client, String, String, String, String, Agent)> {
    let (Some(chromium), Some(playwright)) = (chromium(), playwright_core()) else {
        assert!(
            std::env::var_os("CALYX_REQUIRE_BROWSER").is_none(),
            "CALYX_REQUIRE_BROWSER is set but Chromium or playwright-core is missing"
        );
        eprintln!("skipped: Chromium or playwright-core is not installed");
        return None;
    };
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
    let (chromium, playwright) = (
        chromium.display().to_string(),
        playwright.display().to_string(),
    );
    Some((env, c, pane, url, chromium, playwright, agent))
}

/// Runs `tests/views/app_request.mjs` on the view: presses `button` with `text`.
fn press_in_browser(
    url: &str,
    playwright: &str,
    chromium: &str,
    button: &str,
    text: &str,
) -> tokio::task::JoinHandle<std::process::Output> {
    let script = format!("{}/tests/views/app_request.mjs", env!("CARGO_MANIFEST_DIR"));
    let run = tokio::process::Command::new("node")
        .arg(script)
        .args([url, playwright, chromium, button, text])
        .kill_on_drop(true)
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
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let seen: Value = stdout
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no result line; stdout {stdout}; stderr {stderr}"));
    assert!(seen.get("error").is_none(), "{seen}\n{stderr}");
    seen["answer"].clone()
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
    let Some((env, c, pane, url, chromium, playwright, _agent)) = vanilla_view().await else {
        return;
    };
    let browser = press_in_browser(
        &url,
        &playwright,
        &chromium,
        "message",
        "echo app-message-$((6*7))",
    );
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
    let Some((env, mut c, _pane, url, chromium, playwright, _agent)) = vanilla_view().await else {
        return;
    };
    let link = "https://example.com/calyx-app-request";
    let browser = press_in_browser(&url, &playwright, &chromium, "link", link);
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
