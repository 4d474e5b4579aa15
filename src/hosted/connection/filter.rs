//! Which of a server's tools agents see. A tool is published when its
//! `_meta.ui.visibility` includes `"model"` (the default is `["model", "app"]`); a tool for
//! the server's views only (`["app"]`) is kept aside for them; some are excluded with a reason
//! Details shows.

use std::collections::HashSet;

use rmcp::model::Tool;
use serde_json::Value;

use crate::hosted::naming::{name_tools, ServerNames};

/// At most this many tools of one server are published.
pub const MAX_TOOLS: usize = 2_000;

/// Why a tool is not published.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exclusion {
    TaskRequired,
    NotObjectSchema,
    OverLimit,
    NoUniqueName,
}

impl std::fmt::Display for Exclusion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Exclusion::TaskRequired => "needs task support; calyx does not run tools as tasks",
            Exclusion::NotObjectSchema => "its inputSchema is not an object schema",
            Exclusion::OverLimit => "over the limit of 2,000 tools per server",
            Exclusion::NoUniqueName => "no unique published name could be made for it",
        })
    }
}

/// A server's tools, sorted out.
#[derive(Debug, Clone, Default)]
pub struct Classified {
    /// Tools agents see, in the server's order, with their published names.
    pub published: Vec<(String, Tool)>,
    /// Tools only the server's views may call (`visibility: ["app"]`).
    pub app_only: Vec<Tool>,
    /// Tools not published, with the reason.
    pub excluded: Vec<(String, Exclusion)>,
    /// The naming of `published`, both ways.
    pub names: ServerNames,
}

impl Classified {
    /// How many published tools have a view (`_meta.ui.resourceUri` or the older flat key).
    pub fn with_ui(&self) -> usize {
        self.published.iter().filter(|(_, t)| has_ui(t)).count()
    }
}

fn meta(tool: &Tool) -> Option<Value> {
    tool.meta
        .as_ref()
        .and_then(|m| serde_json::to_value(m).ok())
}

/// Whether the tool declares a view.
pub fn has_ui(tool: &Tool) -> bool {
    meta(tool).is_some_and(|m| {
        m.pointer("/ui/resourceUri").is_some() || m.get("ui/resourceUri").is_some()
    })
}

/// Whether agents may see the tool (`_meta.ui.visibility` includes `"model"`, or is absent).
pub fn visible_to_model(tool: &Tool) -> bool {
    match meta(tool).and_then(|m| m.pointer("/ui/visibility").cloned()) {
        Some(Value::Array(items)) => items.iter().any(|v| v == "model"),
        _ => true,
    }
}

/// Sorts `tools` of server `alias`; `task_required` comes from the raw `tools/list` JSON.
pub fn classify(alias: &str, tools: Vec<Tool>, task_required: &HashSet<String>) -> Classified {
    let mut out = Classified::default();
    let mut candidates = Vec::new();
    for tool in tools {
        let name = tool.name.to_string();
        if task_required.contains(&name) {
            out.excluded.push((name, Exclusion::TaskRequired));
        } else if tool.input_schema.get("type").and_then(Value::as_str) != Some("object") {
            out.excluded.push((name, Exclusion::NotObjectSchema));
        } else if !visible_to_model(&tool) {
            out.app_only.push(tool);
        } else if candidates.len() >= MAX_TOOLS {
            out.excluded.push((name, Exclusion::OverLimit));
        } else {
            candidates.push(tool);
        }
    }
    out.names = name_tools(alias, candidates.iter().map(|t| t.name.as_ref()));
    for tool in candidates {
        match out.names.published.get(tool.name.as_ref()) {
            Some(published) if !out.names.unnamed.iter().any(|u| u == tool.name.as_ref()) => {
                out.published.push((published.clone(), tool));
            }
            _ => out
                .excluded
                .push((tool.name.to_string(), Exclusion::NoUniqueName)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(json: Value) -> Tool {
        serde_json::from_value(json).expect("a tool")
    }

    #[test]
    fn sorts_published_app_only_and_excluded() {
        let tools = vec![
            tool(serde_json::json!({"name": "echo", "inputSchema": {"type": "object"}})),
            tool(
                serde_json::json!({"name": "get-time", "inputSchema": {"type": "object"},
                "_meta": {"ui": {"resourceUri": "ui://get-time/mcp-app.html"}, "ui/resourceUri": "ui://get-time/mcp-app.html"}}),
            ),
            tool(
                serde_json::json!({"name": "poll-system-stats", "inputSchema": {"type": "object"},
                "_meta": {"ui": {"visibility": ["app"]}}}),
            ),
            tool(
                serde_json::json!({"name": "both", "inputSchema": {"type": "object"},
                "_meta": {"ui": {"visibility": ["app", "model"]}}}),
            ),
            tool(
                serde_json::json!({"name": "simulate-research-query", "inputSchema": {"type": "object"}}),
            ),
            tool(serde_json::json!({"name": "odd", "inputSchema": {"type": "string"}})),
            tool(serde_json::json!({"name": "a.b", "inputSchema": {"type": "object"}})),
        ];
        let required = HashSet::from(["simulate-research-query".to_string()]);
        let c = classify("ev", tools, &required);
        let published: Vec<&str> = c.published.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(published[..3], ["ev-echo", "ev-get-time", "ev-both"]);
        assert!(published[3].starts_with("ev-a_b_"));
        assert_eq!(c.app_only.len(), 1);
        assert_eq!(c.app_only[0].name, "poll-system-stats");
        assert_eq!(
            c.excluded,
            [
                (
                    "simulate-research-query".to_string(),
                    Exclusion::TaskRequired
                ),
                ("odd".to_string(), Exclusion::NotObjectSchema)
            ]
        );
        assert_eq!(
            Exclusion::TaskRequired.to_string(),
            "needs task support; calyx does not run tools as tasks"
        );
        assert_eq!(c.with_ui(), 1);
        assert_eq!(c.names.original["ev-echo"], "echo");
    }

    #[test]
    fn at_most_2000_published() {
        let tools: Vec<Tool> = (0..2_005)
            .map(|i| {
                tool(
                    serde_json::json!({"name": format!("t{i}"), "inputSchema": {"type": "object"}}),
                )
            })
            .collect();
        let c = classify("ev", tools, &HashSet::new());
        assert_eq!(c.published.len(), MAX_TOOLS);
        assert_eq!(c.excluded.len(), 5);
        assert!(c
            .excluded
            .iter()
            .all(|(_, why)| *why == Exclusion::OverLimit));
    }
}
