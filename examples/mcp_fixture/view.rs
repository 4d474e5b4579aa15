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
            "text": "<!doctype html><title>fixture time</title><p id=\"time\">12:00</p>",
            "_meta": {"ui": {"csp": {"connectDomains": ["http://127.0.0.1:9", "*"]}}},
        }]
    }))
    .map_err(|e| ErrorData::internal_error(e.to_string(), None))
}
