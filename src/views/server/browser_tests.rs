//! The view page in real headless Chromium (Debian's `chromium`, driven by `playwright-core`
//! from npm through tests/views/browser.mjs): the app renders in host → sandbox → inner frames,
//! gets initialize, tool-input and the result, reaches a declared origin, is blocked from an
//! undeclared one by the sandbox's CSP header, and cannot reach `window.top`. A second run
//! (tests/views/lifecycle.mjs) follows a view's life: a download, an approved link, display modes as declared, a second tab
//! taking over, self-navigation dropped, the app's own teardown, storage cleared by the
//! teardown. Both are skipped with a printed reason when Chromium or playwright-core is not installed (`/work/shared/mcp/
//! browser.sh path` installs both, as CI does).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use super::{start, BoxFuture, ViewUpstream};
use crate::views::hub::ViewHub;
use crate::views::protocol::{HostAction, JsonRpcError};
use crate::views::registry::{NewView, ViewId};
use crate::views::resource::ViewDocument;

struct NoUpstream;

impl ViewUpstream for NoUpstream {
    fn request<'a>(
        &'a self,
        _alias: &'a str,
        _method: &'a str,
        _params: Value,
    ) -> BoxFuture<'a, Result<Value, JsonRpcError>> {
        Box::pin(async { Err(JsonRpcError::new(-32000, "no server in this test")) })
    }

    fn tool(&self, _alias: &str, _name: &str) -> Option<Value> {
        None
    }

    fn action<'a>(
        &'a self,
        _view: ViewId,
        _action: HostAction,
    ) -> BoxFuture<'a, Result<Value, JsonRpcError>> {
        Box::pin(async { Ok(json!({})) })
    }

    fn notifications(&self) -> Option<tokio::sync::broadcast::Receiver<(String, Value)>> {
        None
    }
}

include!("../../../tests/views/browser_paths.rs");

/// The view of test 4's checks (`tests/views/fixture_checks.html`, which the fixture server
/// serves too): the handshake, what it got, a declared and an undeclared origin, `window.top`
/// and `window.open`.
fn view_html(declared: &str) -> String {
    include_str!("../../../tests/views/fixture_checks.html").replace("__DECLARED__", declared)
}

/// Chromium and playwright-core, or the reason the browser tests are skipped.
fn browser() -> Option<(PathBuf, PathBuf)> {
    match (chromium(), playwright_core()) {
        (Some(chromium), Some(playwright)) => Some((chromium, playwright)),
        _ => {
            // CI installs both: there, missing is a failure, not a skip.
            assert!(
                std::env::var_os("CALYX_REQUIRE_BROWSER").is_none(),
                "CALYX_REQUIRE_BROWSER is set but Chromium or playwright-core is missing"
            );
            eprintln!(
                "skipped: Chromium (/usr/bin/chromium) or playwright-core \
                 (~/.cache/calyx-mcp-tools) is not installed; /work/shared/mcp/browser.sh path \
                 installs both"
            );
            None
        }
    }
}

/// A view of server `fixture` with `html`, its CSP allowing `declared` (and a dropped `*`),
/// its call already returned.
fn create_view(hub: &ViewHub, html: String, declared: &str) -> ViewId {
    let created = hub
        .create(
            NewView {
                pane: None,
                alias: "fixture".into(),
                published_tool: "fixture-show".into(),
                original_tool: "show".into(),
                agent: None,
                conversation: None,
            },
            json!({ "name": "show" }),
            json!({ "n": 1 }),
        )
        .expect("random");
    let csp = json!({ "connectDomains": [declared, "*"] });
    hub.resource_read(
        created.id,
        Ok(ViewDocument {
            html,
            ui_meta: Some(json!({ "csp": csp })),
        }),
    );
    hub.tool_result(
        created.id,
        json!({ "content": [{ "type": "text", "text": "the result" }] }),
    );
    created.id
}

/// Runs `tests/views/<script>` with `args` and returns its JSON line.
async fn run_script(script: &str, args: &[&std::ffi::OsStr]) -> Value {
    let path = format!("{}/tests/views/{script}", env!("CARGO_MANIFEST_DIR"));
    let run = tokio::process::Command::new("node")
        .arg(path)
        .args(args)
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
    eprintln!("the browser saw: {seen}");
    assert!(seen.get("error").is_none(), "{seen}\n{stderr}");
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_view_renders_in_chromium_under_its_csp() {
    let Some((chromium, playwright)) = browser() else {
        return;
    };
    let hub = ViewHub::new();
    let server = start(hub.clone(), Arc::new(NoUpstream), 0)
        .await
        .expect("view server starts");
    let declared = format!("http://127.0.0.1:{}", server.ports().host);
    let id = create_view(&hub, view_html(&declared), &declared);
    let url = hub.page_url(id).expect("a page url");
    let seen = run_script(
        "browser.mjs",
        &[url.as_ref(), playwright.as_os_str(), chromium.as_os_str()],
    )
    .await;
    assert_eq!(seen["status"], "initialized 2026-01-26", "{seen}");
    assert_eq!(seen["input"], r#"{"n":1}"#);
    assert_eq!(seen["result"], "the result");
    assert_eq!(seen["declared"], "reached", "{seen}");
    assert_eq!(seen["undeclared"], "blocked connect-src", "{seen}");
    assert_eq!(seen["top"], "SecurityError");
    assert_eq!(seen["popup"], "blocked", "{seen}");
    let ports = server.ports();
    let frames: Vec<String> = seen["frames"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        frames.first(),
        Some(&format!("http://127.0.0.1:{}", ports.host))
    );
    assert!(
        frames.contains(&format!("http://127.0.0.1:{}", ports.sandbox)),
        "{frames:?}"
    );
    assert!(
        seen["ignored"]
            .as_str()
            .unwrap_or_default()
            .contains("Ignored CSP entries: *"),
        "{seen}"
    );
}

/// The lifecycle view (`tests/views/fixture_life.html`, which the fixture server serves too):
/// handshake with fullscreen declared, a storage probe, and buttons for a display-mode request,
/// self-navigation and its own teardown.
fn lifecycle_html(declared: &str) -> String {
    include_str!("../../../tests/views/fixture_life.html").replace("__DECLARED__", declared)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_views_life_in_chromium() {
    let Some((chromium, playwright)) = browser() else {
        return;
    };
    let hub = ViewHub::new();
    let server = start(hub.clone(), Arc::new(NoUpstream), 0)
        .await
        .expect("view server starts");
    let declared = format!("http://127.0.0.1:{}", server.ports().host);
    let a = create_view(&hub, lifecycle_html(&declared), &declared);
    let b = create_view(&hub, lifecycle_html(&declared), &declared);
    let url_a = hub.page_url(a).expect("a page url");
    let url_b = hub.page_url(b).expect("a page url");
    let seen = run_script(
        "lifecycle.mjs",
        &[
            url_a.as_ref(),
            playwright.as_os_str(),
            chromium.as_os_str(),
            url_b.as_ref(),
        ],
    )
    .await;
    assert_lifecycle_seen(&seen, &declared, r#"{"n":1}"#);
    assert!(hub.get(a).is_none(), "the app's teardown removed its view");
    assert!(hub.get(b).is_some());
}

include!("../../../tests/views/lifecycle_seen.rs");

/// Serves `html` to every request on a new loopback port (another origin than the view
/// server's two), until the task is dropped.
async fn foreign_origin(html: String) -> (u16, tokio::task::JoinHandle<()>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let task = tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let html = html.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let _ = stream.read(&mut buf).await;
                let response = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\
                     Connection: close\r\n\r\n{html}",
                    html.len()
                );
                let _ = stream.write_all(response.as_bytes()).await;
            });
        }
    });
    (port, task)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sandbox_ignores_a_page_of_another_origin() {
    let Some((chromium, playwright)) = browser() else {
        return;
    };
    let hub = ViewHub::new();
    let server = start(hub.clone(), Arc::new(NoUpstream), 0)
        .await
        .expect("view server starts");
    let declared = format!("http://127.0.0.1:{}", server.ports().host);
    let id = create_view(&hub, view_html(&declared), &declared);
    let view = hub.get(id).expect("view").view;
    let sandbox = format!(
        "http://127.0.0.1:{}/s/{}/{}/",
        server.ports().sandbox,
        id,
        view.sandbox_token.as_str()
    );
    let html = format!(
        r#"<!doctype html><html><body><iframe id="s" src="{sandbox}"></iframe><p id="got"></p>
<script>
const got = [];
window.addEventListener("message", (e) => {{
  got.push(String(e.data && e.data.method));
  document.getElementById("got").textContent = got.join(",");
}});
const frame = document.getElementById("s");
frame.addEventListener("load", () => {{
  frame.contentWindow.postMessage({{ jsonrpc: "2.0", method: "ui/notifications/sandbox-resource-ready",
    params: {{ html: "<p>injected by another origin</p>" }} }}, "*");
  frame.contentWindow.postMessage({{ jsonrpc: "2.0", id: 1, method: "ping" }}, "*");
  setTimeout(() => {{ document.title = "posted"; }}, 500);
}});
</script></body></html>"#
    );
    let (port, _task) = foreign_origin(html).await;
    let url = format!("http://127.0.0.1:{port}/");
    let seen = run_script(
        "foreign.mjs",
        &[url.as_ref(), playwright.as_os_str(), chromium.as_os_str()],
    )
    .await;
    assert_eq!(
        seen["received"], "",
        "the sandbox spoke to another origin: {seen}"
    );
    assert_eq!(
        seen["frames"], 2,
        "the sandbox wrote another origin's document: {seen}"
    );
    assert!(
        !seen["sandboxText"]
            .as_str()
            .unwrap_or_default()
            .contains("injected"),
        "{seen}"
    );
}
