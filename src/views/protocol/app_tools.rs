//! App-registered tools (issue 17, "App context and app-registered tools"): a view that sets
//! `appCapabilities.tools` is asked `tools/list` after `initialized` and again on its
//! `notifications/tools/list_changed`; calyx publishes what it lists and sends the agents'
//! calls to it as `tools/call`. These are the only requests calyx sends a view besides the
//! teardown, so their answers are told apart by their ids.

use std::collections::HashMap;

use serde_json::{json, Value};

use super::super::rules::truncate;
use super::super::{HostAction, JsonRpcError, Output};
use super::Session;

/// The most tools a view may register (more are cut, so a view cannot flood the tool list).
pub const MAX_APP_TOOLS: usize = 64;

/// The session's part of app-registered tools.
#[derive(Debug, Default)]
pub struct AppTools {
    /// The id of the `tools/list` in flight.
    listing: Option<Value>,
    /// `tools/call` ids in flight → the caller's key.
    calls: HashMap<String, u64>,
    next_id: u64,
    /// Whether tools were ever published for this page (so they can be withdrawn).
    published: bool,
}

impl AppTools {
    fn next_id(&mut self, kind: &str) -> String {
        self.next_id += 1;
        format!("calyx-{kind}-{}", self.next_id)
    }
}

impl Session {
    /// Whether the view declared tools of its own.
    fn has_app_tools_capability(&self) -> bool {
        self.app_capabilities
            .get("tools")
            .is_some_and(Value::is_object)
    }

    /// Whether tools of this page were published (the server withdraws them when it goes).
    pub fn published_app_tools(&self) -> bool {
        self.app_tools.published
    }

    /// Asks the view for its tools, when it has any and messages flow.
    pub(super) fn list_app_tools(&mut self, out: &mut Vec<Output>) {
        if !self.initialized || !self.has_app_tools_capability() {
            return;
        }
        let id = json!(self.app_tools.next_id("tools"));
        self.app_tools.listing = Some(id.clone());
        out.push(Output::ToView(json!({
            "jsonrpc": "2.0",
            "id": id,
            "method": "tools/list",
            "params": {},
        })));
    }

    /// An agent's call of an app-registered tool, answered with [`Output::AppToolResult`].
    pub(super) fn call_app_tool(
        &mut self,
        key: u64,
        name: String,
        arguments: Value,
        out: &mut Vec<Output>,
    ) {
        if !self.initialized || !self.app_tools.published {
            out.push(Output::AppToolResult {
                key,
                result: Err(JsonRpcError::new(
                    super::super::codes::SERVER_ERROR,
                    "the view is not open in a browser",
                )),
            });
            return;
        }
        let id = self.app_tools.next_id("call");
        self.app_tools.calls.insert(id.clone(), key);
        out.push(Output::ToView(json!({
            "jsonrpc": "2.0",
            "id": id,
            "method": "tools/call",
            "params": { "name": name, "arguments": arguments },
        })));
    }

    /// A response of the view to one of calyx's requests; false when it answers none.
    pub(super) fn app_tools_response(
        &mut self,
        id: &Value,
        message: &Value,
        out: &mut Vec<Output>,
    ) -> bool {
        let result = match (message.get("result"), message.get("error")) {
            (Some(result), _) => Ok(result.clone()),
            (None, Some(error)) => Err(JsonRpcError {
                code: error["code"]
                    .as_i64()
                    .unwrap_or(super::super::codes::SERVER_ERROR),
                message: truncate(error["message"].as_str().unwrap_or("error"), 1024).to_string(),
                data: error.get("data").cloned(),
            }),
            (None, None) => return false,
        };
        if self.app_tools.listing.as_ref() == Some(id) {
            self.app_tools.listing = None;
            let tools: Vec<Value> = result
                .ok()
                .and_then(|r| r.get("tools").and_then(Value::as_array).cloned())
                .unwrap_or_default()
                .into_iter()
                .filter(|t| t.get("name").is_some_and(Value::is_string))
                .take(MAX_APP_TOOLS)
                .collect();
            self.app_tools.published = true;
            out.push(Output::Action {
                key: None,
                action: HostAction::AppTools { tools },
            });
            return true;
        }
        let Some(key) = id.as_str().and_then(|id| self.app_tools.calls.remove(id)) else {
            return false;
        };
        out.push(Output::AppToolResult { key, result });
        true
    }
}
