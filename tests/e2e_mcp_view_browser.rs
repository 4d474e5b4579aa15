//! An MCP App view end to end: an agent's call through `/mcp-hosted` on a real calyx server
//! creates the view, and its URL opened in Debian's headless Chromium renders the fixture's
//! app in host page, sandbox and inner frame, which shakes hands with calyx and shows the
//! call's input and result. Then the view is closed and its URL answers 410.

use serde_json::Value;

use crate::e2e_mcp_views::{agent_in, call_text, panes, views, world_with_fixture, TIME_TEXT};
use crate::support_browser::browser;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_view_made_by_an_agents_call_renders_in_chromium_and_is_gone_once_closed() {
    let Some(browser) = browser() else {
        return;
    };
    let env = world_with_fixture().await;
    let (_, surface) = panes(&env)[0].clone();
    let agent = agent_in(&env, &surface).await;
    assert_eq!(call_text(&agent, "fx-show_time").await, TIME_TEXT);
    let rows = views(&env).await;
    let view = rows.last().expect("a view");
    let url = view["url"]
        .as_str()
        .expect("the view server serves it")
        .to_string();
    let id = view["id"].to_string();

    let seen = browser.run("real_view.mjs", &url, &[]).await;
    assert_eq!(seen["http"], 200, "{seen}");
    assert_eq!(
        seen["status"], "host calyx 2026-01-26",
        "ui/initialize answered by calyx: {seen}"
    );
    assert_eq!(
        seen["result"], TIME_TEXT,
        "the tool's result reached the app: {seen}"
    );
    assert_eq!(seen["input"], "{}", "the call's arguments: {seen}");
    // Host page, sandbox (another origin), and the inner frame on the sandbox's origin.
    let frames: Vec<&str> = seen["frames"]
        .as_array()
        .expect("frames")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let host = url
        .trim_end_matches('/')
        .split("/v/")
        .next()
        .expect("origin");
    assert_eq!(frames.len(), 3, "{frames:?}");
    assert_eq!(frames[0], host, "{frames:?}");
    assert_ne!(
        frames[1], host,
        "the sandbox has its own origin: {frames:?}"
    );
    // The inner frame is the about:blank the sandbox writes the app into (its URL has no
    // origin of its own; it runs on the sandbox's, as src/views/server/browser_tests.rs checks).
    assert_eq!(frames[2], "null", "{frames:?}");

    // The app's log line is kept with the view.
    let rows = views(&env).await;
    let logs = rows
        .last()
        .map(|v| v["logs"].to_string())
        .unwrap_or_default();
    assert!(logs.contains("fixture view ready"), "{rows:?}");

    // The server disabled, its views go and their URLs answer 410.
    crate::e2e_mcp_hosted::calyx_ok(&env, &["mcp", "disable", "fx"]).await;
    crate::e2e_mcp_hosted::eventually("the view removed", || async {
        views(&env).await.is_empty().then_some(())
    })
    .await;
    assert_eq!(status_of(&url).await, 410, "view {id} is gone");
}

/// The HTTP status of a GET of `url` (`http://127.0.0.1:PORT/PATH`).
pub(crate) async fn status_of(url: &str) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let rest = url.trim_start_matches("http://");
    let (authority, path) = rest.split_at(rest.find('/').expect("a path"));
    let mut stream = tokio::net::TcpStream::connect(authority)
        .await
        .expect("the view server listens");
    let request = format!("GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("sent");
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.expect("read");
    let head = String::from_utf8_lossy(&answer);
    head.split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {head:?}"))
}
