//! The fixture's MCP App view (issue 17): tools whose `_meta.ui.resourceUri` names a `ui://`
//! resource, and that resource, so calyx's view creation can be tested without npm.
//!
//! `show_time` answers at once with the text `fixture time 12:00`; `show_wait` keeps its view
//! running until the call is cancelled. Both use [`VIEW_URI`], an HTML document of the MCP Apps
//! MIME type with a CSP declaring one loopback origin and a `*` entry calyx must drop.

use std::sync::Arc;

use rmcp::model::{
    ErrorData, JsonObject, ListResourcesResult, ReadResourceRequestParams, ReadResourceResult, Tool,
};
use serde_json::{json, Value};

/// The resource both view tools show.
pub const VIEW_URI: &str = "ui://fixture/time.html";
/// The text `show_time` answers with.
pub const TIME_TEXT: &str = "fixture time 12:00";

/// The view tools, with their `_meta.ui.resourceUri`.
pub fn tools(object: impl Fn(Value) -> Arc<JsonObject>) -> Vec<Tool> {
    ["show_time", "show_wait"]
        .into_iter()
        .filter_map(|name| {
            let mut tool: Tool = serde_json::from_value(json!({
                "name": name,
                "description": "Shows the fixture's view.",
                "inputSchema": {"type": "object"},
                "_meta": {"ui": {"resourceUri": VIEW_URI}},
            }))
            .ok()?;
            tool.input_schema = object(json!({}));
            Some(tool)
        })
        .collect()
}

/// `resources/list`: the view.
pub fn list() -> Result<ListResourcesResult, ErrorData> {
    serde_json::from_value(json!({
        "resources": [{
            "uri": VIEW_URI,
            "name": "time",
            "mimeType": "text/html;profile=mcp-app",
        }]
    }))
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

/// `resources/read` of the view.
pub fn read(request: &ReadResourceRequestParams) -> Result<ReadResourceResult, ErrorData> {
    if request.uri != VIEW_URI {
        return Err(ErrorData::invalid_params(
            format!("no resource {:?}", request.uri),
            None,
        ));
    }
    serde_json::from_value(json!({
        "contents": [{
            "uri": VIEW_URI,
            "mimeType": "text/html;profile=mcp-app",
            "text": VIEW_HTML,
            "_meta": {"ui": {"csp": {"connectDomains": ["http://127.0.0.1:9", "*"]}}},
        }]
    }))
    .map_err(|e| ErrorData::internal_error(e.to_string(), None))
}
