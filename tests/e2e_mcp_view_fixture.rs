//! Issue 17's test 4 through a real calyx server: the fixture server's own views
//! (`tests/views/fixture_checks.html`, `fixture_life.html`, also run against the view server
//! alone by src/views/server/browser_tests.rs) are created by an agent's calls on
//! `/mcp-hosted` and opened in Debian's headless Chromium. The CSP comes from the resource's
//! `_meta.ui.csp` as calyx read it upstream: a loopback origin the test serves is declared, and
//! the `*` beside it dropped. The app's Open Link waits in calyx's approval queue until
//! `calyx approve`; its teardown removes the view; a theme changed in the config reaches the
//! open page with `calyx reload-config`.

use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::common::Env;
use crate::e2e_mcp_hosted::Listener;
use crate::e2e_mcp_hosted::{calyx_ok, eventually, row_when, world};
use crate::e2e_mcp_views::{agent_in, call_text, panes, views};
use crate::hosted_support::fixture::mcp_fixture;
use crate::support_browser::{browser, last_line, Browser};
use rmcp::service::RunningService;
use rmcp::RoleClient;

/// What the fixture's test views answer.
const RESULT: &str = "the result";

/// Serves a tiny page on a new loopback port (the origin the views' CSP declares) until the
/// test ends.
async fn declared_origin() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let _ = stream.read(&mut buf).await;
                let body = "<!doctype html><title>declared</title><p>declared origin</p>";
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    body.len()
                );
                let _ = stream.write_all(head.as_bytes()).await;
                let _ = stream.write_all(body.as_bytes()).await;
            });
        }
    });
    format!("http://127.0.0.1:{port}")
}

/// A world (theme `dark`) hosting the fixture as `fx`, its views declaring `declared`.
async fn world_declaring(declared: &str) -> Env {
    let env = world("[mcp_apps]\ntheme = \"dark\"\n");
    let fixture = mcp_fixture().display().to_string();
    let env_flag = format!("FX_DECLARED_ORIGIN={declared}");
    calyx_ok(
        &env,
        &["mcp", "add", "fx", "--env", &env_flag, "--", &fixture],
    )
    .await;
    row_when(&env, "fx", |r| r["state"] == "ready").await;
    env
}

/// A world (theme `dark`) hosting the fixture, whose views declare a loopback origin the test
/// serves, with an agent in its pane and the browser; None (skipped) without Chromium.
struct World {
    browser: Browser,
    declared: String,
    env: Env,
    agent: RunningService<RoleClient, Listener>,
}

impl World {
    async fn new() -> Option<World> {
        let browser = browser()?;
        let declared = declared_origin().await;
        let env = world_declaring(&declared).await;
        let (_, surface) = panes(&env)[0].clone();
        let agent = agent_in(&env, &surface).await;
        Some(World {
            browser,
            declared,
            env,
            agent,
        })
    }
}

include!("views/lifecycle_seen.rs");

/// The URL of the view `id` (from `calyx mcp views --json`).
async fn url_of(env: &Env, id: u64) -> String {
    views(env)
        .await
        .into_iter()
        .find(|v| v["id"] == id)
        .and_then(|v| v["url"].as_str().map(str::to_string))
        .expect("the view has a URL")
}

/// The id of the newest view.
async fn newest_view(env: &Env) -> u64 {
    views(env)
        .await
        .iter()
        .filter_map(|v| v["id"].as_u64())
        .max()
        .expect("a view")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fixture_views_csp_sandbox_and_storage_hold_through_calyx() {
    let Some(World {
        browser,
        env,
        agent,
        ..
    }) = World::new().await
    else {
        return;
    };
    assert_eq!(call_text(&agent, "fx-show_checks").await, RESULT);
    let id = newest_view(&env).await;
    let url = url_of(&env, id).await;

    let seen = browser.run("browser.mjs", &url, &[]).await;
    assert_eq!(seen["status"], "initialized 2026-01-26", "{seen}");
    assert_eq!(seen["input"], "{}", "{seen}");
    assert_eq!(seen["result"], RESULT, "{seen}");
    assert_eq!(seen["declared"], "reached", "the declared origin: {seen}");
    assert_eq!(
        seen["undeclared"], "blocked connect-src",
        "an undeclared loopback port: {seen}"
    );
    assert_eq!(seen["top"], "SecurityError", "{seen}");
    assert_eq!(seen["popup"], "blocked", "window.open: {seen}");
    assert!(
        seen["ignored"]
            .as_str()
            .unwrap_or_default()
            .contains("Ignored CSP entries: *"),
        "the page header lists the dropped entry: {seen}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fixture_views_life_through_calyx_with_its_link_approved_and_its_theme_followed() {
    let Some(World {
        browser,
        declared,
        env,
        agent,
    }) = World::new().await
    else {
        return;
    };
    assert_eq!(call_text(&agent, "fx-show_life").await, RESULT);
    let a = newest_view(&env).await;
    // B from an agent outside calyx (a standalone view): a second view in A's pane would
    // replace A, which has finished.
    let outside = agent_in(&env, "").await;
    assert_eq!(call_text(&outside, "fx-show_life").await, RESULT);
    let b = newest_view(&env).await;
    assert_ne!(a, b);
    let (url_a, url_b) = (url_of(&env, a).await, url_of(&env, b).await);

    let script = browser
        .command("lifecycle.mjs", &url_a, &[&url_b, "light"])
        .output();
    let run = tokio::spawn(async move {
        tokio::time::timeout(Duration::from_secs(180), script)
            .await
            .expect("the browser run finishes in time")
            .expect("node runs")
    });

    // The app's Open Link waits in calyx's queue for a human: here `calyx approve`.
    let request = eventually("the app's Open Link in calyx approvals", || async {
        let out = calyx_ok(&env, &["approvals", "--pending", "--json"]).await;
        let listed: Value = serde_json::from_str(&out).ok()?;
        listed["pending"]
            .as_array()?
            .iter()
            .find(|p| p["cli"] == "app" && p["tool"] == "fx: Open Link")
            .and_then(|p| p["id"].as_u64())
    })
    .await;
    calyx_ok(&env, &["approve", &request.to_string()]).await;

    // The app's own teardown removes its view; then the theme changes under the open page.
    eventually("view A removed by its teardown", || async {
        views(&env).await.iter().all(|v| v["id"] != a).then_some(())
    })
    .await;
    env.write_config("[mcp]\nsecret_store = \"file\"\n[mcp_apps]\ntheme = \"light\"\n");
    env.ok(&["reload-config"]);

    let seen = last_line(&run.await.expect("browser task"));
    assert_lifecycle_seen(&seen, &declared, "{}");
    assert_eq!(seen["theme"], "light", "host-context-changed: {seen}");
    let record =
        std::fs::read_to_string(env.path().join("state/calyx/approvals.jsonl")).unwrap_or_default();
    assert!(record.contains("fx: Open Link"), "{record}");
    let left: Vec<u64> = views(&env)
        .await
        .iter()
        .filter_map(|v| v["id"].as_u64())
        .collect();
    assert_eq!(left, vec![b], "only view B is left");
}
