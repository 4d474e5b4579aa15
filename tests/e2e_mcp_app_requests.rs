//! Issue 17's app requests end to end: the real `@modelcontextprotocol/server-basic-vanillajs`
//! hosted by a real calyx server, its view in headless Chromium, and a client in a PTY. The
//! app's Send Message becomes a request in the client's approval panel (titled by the
//! server), `calyx approve ID` answers it from another terminal, the message is typed into the
//! calling pane and submitted (the pane's shell runs it), and the app hears "accepted".

use std::time::Duration;

use serde_json::Value;

use crate::e2e_mcp_hosted::{calyx_ok, eventually, row_when, world};
use crate::e2e_mcp_view_browser::{chromium, playwright_core};
use crate::e2e_mcp_view_card::wait_screen;
use crate::e2e_mcp_views::{agent_in, call_text, panes, views};
use crate::hosted_support::apps::{apps_server, VANILLA};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_apps_send_message_waits_in_the_panel_and_calyx_approve_types_it_into_the_pane() {
    let (Some(chromium), Some(playwright)) = (chromium(), playwright_core()) else {
        assert!(
            std::env::var_os("CALYX_REQUIRE_BROWSER").is_none(),
            "CALYX_REQUIRE_BROWSER is set but Chromium or playwright-core is missing"
        );
        eprintln!("skipped: Chromium or playwright-core is not installed");
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

    let script = format!("{}/tests/views/app_request.mjs", env!("CARGO_MANIFEST_DIR"));
    let run = tokio::process::Command::new("node")
        .arg(script)
        .arg(&url)
        .arg(&playwright)
        .arg(&chromium)
        .arg("echo app-message-$((6*7))")
        .kill_on_drop(true)
        .output();
    let browser = tokio::spawn(async move {
        tokio::time::timeout(Duration::from_secs(120), run)
            .await
            .expect("the browser run finishes in time")
            .expect("node runs")
    });

    // The request waits in the queue as the app's (the app gives up after 5 s: answer fast).
    let id = eventually("the app's request in calyx approvals", || async {
        let out = calyx_ok(&env, &["approvals", "--pending", "--json"]).await;
        let listed: Value = serde_json::from_str(&out).ok()?;
        listed["pending"]
            .as_array()?
            .iter()
            .find(|p| p["cli"] == "app" && p["tool"] == "vanilla: Send Message")
            .and_then(|p| p["id"].as_u64())
    })
    .await;
    // Every attached client's panel shows it, titled by the server.
    wait_screen(&c, "the app's request in the panel", |s| {
        s.contains("vanilla: Send Message") && s.contains("Don't Send")
    });
    calyx_ok(&env, &["approve", &id.to_string()]).await;

    let output = browser.await.expect("browser task");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let seen: Value = stdout
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no result line; stdout {stdout}; stderr {stderr}"));
    assert!(seen.get("error").is_none(), "{seen}\n{stderr}");
    assert_eq!(seen["answer"], "Message accepted", "{seen}\n{stderr}");
    // Typed into the pane and submitted: its shell ran it.
    env.wait_capture(&pane, "app-message-42");
    let record =
        std::fs::read_to_string(env.path().join("state/calyx/approvals.jsonl")).unwrap_or_default();
    assert!(record.contains("vanilla: Send Message"), "{record}");
}
