//! A pane's own tools on `/mcp-hosted` (issue 17, "App context and app-registered tools"): the
//! tools its MCP App views registered, as `<alias>-app_<name>`, and `app_context`, the views'
//! latest model context. Only sessions whose caller's identity headers resolve to the pane see
//! and can call them; an agent outside calyx, or in another pane, never does.

use std::sync::Arc;
use std::time::UNIX_EPOCH;

use rmcp::model::{CallToolResult, ContentBlock, Tool};
use rmcp::service::Peer;
use rmcp::RoleServer;
use serde_json::{json, Map, Value};

use super::app_tools::{AppTools, PaneTool};
use super::publish::{Caller, PaneFuture, PaneToolSource, Registry};
use super::views::ViewWire;
use super::views_list::state_word;
use crate::layout::PaneId;
use crate::views::registry::ViewId;
use crate::views::server::NOT_OPEN;

/// The tool that returns the pane's views' model context.
pub const APP_CONTEXT: &str = "app_context";

/// `app_context` from a caller that has no pane.
const NO_PANE: &str = "app_context answers agents in a calyx pane only: this session's \
identity headers name no pane (run the agent in calyx, or `calyx setup` it)";

/// The pane tools of every `/mcp-hosted` session: the app tools table, the views (their hub
/// and the caller lookup) and the published servers (whose names app tools yield to).
#[derive(Clone)]
pub struct PaneTools {
    pub apps: AppTools,
    pub views: ViewWire,
    pub registry: Registry,
}

impl PaneTools {
    /// The app tools `pane`'s sessions see.
    fn app_tools(&self, pane: PaneId) -> Vec<PaneTool> {
        self.apps
            .in_pane(pane, |name| self.registry.publishes(name))
    }

    async fn list_for(&self, caller: Option<Caller>) -> Vec<Tool> {
        let Some(pane) = self.views.caller_pane(caller).await else {
            return Vec::new();
        };
        let mut tools = vec![app_context_tool()];
        tools.extend(self.app_tools(pane).iter().filter_map(published_tool));
        tools
    }

    async fn call_for(
        &self,
        caller: Option<Caller>,
        name: &str,
        arguments: Option<Map<String, Value>>,
    ) -> Option<CallToolResult> {
        let arguments = arguments.unwrap_or_default();
        if name == APP_CONTEXT {
            return Some(match self.views.caller_pane(caller).await {
                Some(pane) => self.app_context(pane, &arguments),
                None => error(NO_PANE),
            });
        }
        let pane = self.views.caller_pane(caller).await?;
        let tool = self
            .app_tools(pane)
            .into_iter()
            .find(|t| t.published == name)?;
        let Some(apps) = self.apps.apps() else {
            return Some(error(NOT_OPEN));
        };
        let answer = apps
            .call_app_tool(tool.view, &tool.name, Value::Object(arguments))
            .await;
        Some(match answer {
            // The view's result, unchanged.
            Ok(result) => serde_json::from_value(result)
                .unwrap_or_else(|e| error(&format!("the view answered with no tool result: {e}"))),
            // The page went, or the session has none open yet (its own shorter sentence).
            Err(e) if e.message.starts_with(not_open_sentence()) => error(NOT_OPEN),
            Err(e) => error(&format!("the view failed the call: {}", e.message)),
        })
    }

    /// `app_context` for `pane`: every view's latest context (or the one `view_id` names).
    fn app_context(&self, pane: PaneId, arguments: &Map<String, Value>) -> CallToolResult {
        let wanted = match arguments.get("view_id") {
            None | Some(Value::Null) => None,
            Some(id) => match id
                .as_u64()
                .or_else(|| id.as_str().and_then(|s| s.trim().parse().ok()))
            {
                Some(id) => Some(ViewId(id)),
                None => return error(&format!("view_id must be a view's number, not {id}")),
            },
        };
        let apps = self.apps.apps();
        let views: Vec<Value> = self
            .views
            .hub
            .in_pane(pane)
            .iter()
            .filter(|v| wanted.is_none_or(|id| v.view.id == id))
            .map(|v| {
                let context = apps
                    .as_ref()
                    .and_then(|a| a.notes(v.view.id))
                    .and_then(|n| n.model_context);
                let updated_at = context.as_ref().map(|(_, at)| {
                    at.duration_since(UNIX_EPOCH)
                        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
                });
                let params = context.map(|(p, _)| p).unwrap_or(Value::Null);
                json!({
                    "view_id": v.view.id.0,
                    "alias": v.view.origin.alias,
                    "tool": v.view.origin.original_tool,
                    "state": state_word(&v.view.state),
                    "updated_at": updated_at,
                    "content": params.get("content").cloned().unwrap_or(Value::Null),
                    "structuredContent": params.get("structuredContent").cloned().unwrap_or(Value::Null),
                })
            })
            .collect();
        if let (Some(id), true) = (wanted, views.is_empty()) {
            return error(&format!("no view {id} in this pane"));
        }
        let mut result = CallToolResult::success(vec![ContentBlock::text(render(&views))]);
        result.structured_content = Some(json!({ "views": views }));
        result
    }
}

impl PaneToolSource for PaneTools {
    fn bind<'a>(&'a self, caller: Option<Caller>, peer: Peer<RoleServer>) -> PaneFuture<'a, ()> {
        Box::pin(async move {
            if let Some(pane) = self.views.caller_pane(caller).await {
                self.apps.bind_session(pane, peer);
            }
        })
    }

    fn list<'a>(&'a self, caller: Option<Caller>) -> PaneFuture<'a, Vec<Tool>> {
        Box::pin(self.list_for(caller))
    }

    fn call<'a>(
        &'a self,
        caller: Option<Caller>,
        name: &'a str,
        arguments: Option<Map<String, Value>>,
    ) -> PaneFuture<'a, Option<CallToolResult>> {
        Box::pin(self.call_for(caller, name, arguments))
    }
}

/// Shares one [`PaneTools`] among the sessions.
pub fn shared(tools: PaneTools) -> Arc<dyn PaneToolSource> {
    Arc::new(tools)
}

/// [`NOT_OPEN`] up to its advice.
fn not_open_sentence() -> &'static str {
    NOT_OPEN.split(':').next().unwrap_or(NOT_OPEN)
}

fn error(text: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// The `app_context` tool.
pub fn app_context_tool() -> Tool {
    let schema = json!({
        "type": "object",
        "properties": {
            "view_id": {
                "type": "integer",
                "minimum": 0,
                "description": "Only this view (its number in `calyx mcp views`)."
            }
        },
        "additionalProperties": false,
    });
    let mut tool = Tool::new(
        APP_CONTEXT,
        "What the MCP App views in this pane last told the model (ui/update-model-context): \
         for each view its id, server alias, tool, state, when it was updated (ms since the \
         epoch), its content and structuredContent.",
        Arc::new(schema.as_object().cloned().unwrap_or_default()),
    );
    tool.title = Some("MCP App views' context".to_string());
    tool
}

/// An app tool as the pane's sessions see it: as the view listed it, renamed; a tool that
/// does not parse as an MCP tool is published with its name, description and an object schema.
pub fn published_tool(tool: &PaneTool) -> Option<Tool> {
    let mut value = tool.tool.clone();
    value["name"] = Value::String(tool.published.clone());
    if !value.get("inputSchema").is_some_and(Value::is_object) {
        value["inputSchema"] = json!({ "type": "object" });
    }
    serde_json::from_value(value.clone()).ok().or_else(|| {
        serde_json::from_value(json!({
            "name": tool.published,
            "description": value.get("description").and_then(Value::as_str),
            "inputSchema": value["inputSchema"],
        }))
        .ok()
    })
}

/// The text rendering of `app_context`'s views.
fn render(views: &[Value]) -> String {
    if views.is_empty() {
        return "No MCP App views in this pane.".to_string();
    }
    let mut out = String::new();
    for view in views {
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(&format!(
            "view {} · {} · {} · {}",
            view["view_id"],
            view["alias"].as_str().unwrap_or_default(),
            view["tool"].as_str().unwrap_or_default(),
            view["state"].as_str().unwrap_or_default(),
        ));
        if view["updated_at"].is_null() {
            out.push_str("\n(no context yet)");
            continue;
        }
        let texts: Vec<&str> = view["content"]
            .as_array()
            .map(|blocks| {
                blocks
                    .iter()
                    .filter(|b| b["type"] == "text")
                    .filter_map(|b| b["text"].as_str())
                    .collect()
            })
            .unwrap_or_default();
        for text in texts {
            out.push('\n');
            out.push_str(text);
        }
        if !view["structuredContent"].is_null() {
            out.push('\n');
            out.push_str(
                &serde_json::to_string_pretty(&view["structuredContent"]).unwrap_or_default(),
            );
        }
    }
    out
}

#[cfg(test)]
#[path = "pane_tools_tests.rs"]
mod tests;
