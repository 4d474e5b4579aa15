//! The fixture's MCP App view (issue 17): tools whose `_meta.ui.resourceUri` names a `ui://`
//! resource, and that resource, so calyx's view creation can be tested without npm.
//!
//! `show_time` answers at once with the text `fixture time 12:00`; `show_wait` keeps its view
//! running until the call is cancelled. Both use [`VIEW_URI`], an HTML document of the MCP Apps
//! MIME type with a CSP declaring one loopback origin and a `*` entry calyx must drop.
//! `show_checks` and `show_life` show the views of issue 17's test 4.

use std::sync::Arc;

use rmcp::model::{
    ErrorData, JsonObject, ListResourcesResult, ReadResourceRequestParams, ReadResourceResult, Tool,
};
use serde_json::{json, Value};

/// The resource both view tools show.
pub const VIEW_URI: &str = "ui://fixture/time.html";
/// The text `show_time` answers with.
pub const TIME_TEXT: &str = "fixture time 12:00";

/// The views of issue 17's test 4 (`tests/views/`, shared with the view server's own browser
/// tests): `show_checks` (CSP, `window.top`, `window.open`) and `show_life` (display modes,
/// storage, download, link, navigation, teardown, theme). Both answer `the result`.
const CHECKS_URI: &str = "ui://fixture/checks.html";
const LIFE_URI: &str = "ui://fixture/life.html";
const CHECKS_HTML: &str = include_str!("../../tests/views/fixture_checks.html");
const LIFE_HTML: &str = include_str!("../../tests/views/fixture_life.html");
/// What `show_checks` and `show_life` answer.
pub const CHECKS_TEXT: &str = "the result";

/// The loopback origin the test views' CSP declares: `FX_DECLARED_ORIGIN` (the test serves
/// something there), else a port nothing answers on.
fn declared_origin() -> String {
    std::env::var("FX_DECLARED_ORIGIN").unwrap_or_else(|_| "http://127.0.0.1:1".into())
}

/// `(tool, resource)` of every view tool.
const VIEW_TOOLS: [(&str, &str); 4] = [
    ("show_time", VIEW_URI),
    ("show_wait", VIEW_URI),
    ("show_checks", CHECKS_URI),
    ("show_life", LIFE_URI),
];

/// The view tools, with their `_meta.ui.resourceUri`.
pub fn tools(object: impl Fn(Value) -> Arc<JsonObject>) -> Vec<Tool> {
    VIEW_TOOLS
        .into_iter()
        .filter_map(|(name, uri)| {
            let mut tool: Tool = serde_json::from_value(json!({
                "name": name,
                "description": "Shows one of the fixture's views.",
                "inputSchema": {"type": "object"},
                "_meta": {"ui": {"resourceUri": uri}},
            }))
            .ok()?;
            tool.input_schema = object(json!({}));
            Some(tool)
        })
        .collect()
}

/// `resources/list`: the views.
pub fn list() -> Result<ListResourcesResult, ErrorData> {
    let resources: Vec<Value> = [
        (VIEW_URI, "time"),
        (CHECKS_URI, "checks"),
        (LIFE_URI, "life"),
    ]
    .into_iter()
    .map(|(uri, name)| json!({"uri": uri, "name": name, "mimeType": "text/html;profile=mcp-app"}))
    .collect();
    serde_json::from_value(json!({ "resources": resources }))
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

/// The view: a minimal MCP App that shakes hands with its host and shows the tool's input
/// and result it is sent (the browser end-to-end test reads `#input` and `#result`).
const VIEW_HTML: &str = r#"<!doctype html><title>fixture time</title>
<p id="time">12:00</p><p id="status"></p><p id="input"></p><p id="result"></p>
<script>
const send = (message) => window.parent.postMessage(message, "*");
const show = (id, text) => { document.getElementById(id).textContent = text; };
window.addEventListener("message", (event) => {
  const m = event.data || {};
  if (m.id === 1 && m.result) {
    show("status", "host " + m.result.hostInfo.name + " " + m.result.protocolVersion);
    send({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} });
    send({ jsonrpc: "2.0", method: "notifications/message",
           params: { level: "info", logger: "fixture", data: "fixture view ready" } });
  } else if (m.method === "ui/notifications/tool-input") {
    show("input", JSON.stringify(m.params.arguments));
  } else if (m.method === "ui/notifications/tool-result") {
    show("result", m.params.content.map((c) => c.text).join(""));
  } else if (m.id !== undefined && m.method === "ui/resource-teardown") {
    send({ jsonrpc: "2.0", id: m.id, result: {} });
  }
});
send({ jsonrpc: "2.0", id: 1, method: "ui/initialize", params: {
  appInfo: { name: "fixture", version: "1" }, appCapabilities: {}, protocolVersion: "2026-01-26" } });
</script>"#;

/// `resources/read` of a view: the time view declares a loopback origin and a `*` entry calyx
/// must drop; the test views declare [`declared_origin`] and `*`.
pub fn read(request: &ReadResourceRequestParams) -> Result<ReadResourceResult, ErrorData> {
    let declared = declared_origin();
    let (html, origin) = match request.uri.as_str() {
        VIEW_URI => (VIEW_HTML.to_string(), "http://127.0.0.1:9".to_string()),
        CHECKS_URI => (CHECKS_HTML.replace("__DECLARED__", &declared), declared),
        LIFE_URI => (LIFE_HTML.replace("__DECLARED__", &declared), declared),
        other => {
            return Err(ErrorData::invalid_params(
                format!("no resource {other:?}"),
                None,
            ))
        }
    };
    serde_json::from_value(json!({
        "contents": [{
            "uri": request.uri,
            "mimeType": "text/html;profile=mcp-app",
            "text": html,
            "_meta": {"ui": {"csp": {"connectDomains": [origin, "*"]}}},
        }]
    }))
    .map_err(|e| ErrorData::internal_error(e.to_string(), None))
}
