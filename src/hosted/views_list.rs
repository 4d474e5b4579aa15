//! `calyx mcp views [--json]`: every view of the server, standalone ones included, as rows a
//! script can read (`--json`) and as a table. Server-provided names are escaped for the table.

use serde_json::{json, Value};

use crate::views::hub::{ViewHub, ViewSnapshot};
use crate::views::registry::ViewState;

/// The word for a view's state (`rejected` keeps its reason in `reason`).
pub fn state_word(state: &ViewState) -> &'static str {
    match state {
        ViewState::Loading => "loading",
        ViewState::Running => "running",
        ViewState::Completed => "completed",
        ViewState::Cancelled => "cancelled",
        ViewState::Rejected(_) => "rejected",
    }
}

/// What the view server keeps of a view's page beyond the hub: its log lines.
pub type Logs<'a> = &'a dyn Fn(crate::views::registry::ViewId) -> Vec<Value>;

/// One view as a `--json` row (`logs`: its page's last `notifications/message` lines).
pub fn row(hub: &ViewHub, view: &ViewSnapshot, logs: Logs<'_>) -> Value {
    let origin = &view.view.origin;
    let reason = match &view.view.state {
        ViewState::Rejected(why) => Some(why.clone()),
        _ => view.call.cancelled.clone(),
    };
    let ignored: Vec<&str> = view
        .call
        .csp
        .as_ref()
        .map(|csp| csp.ignored.iter().map(String::as_str).collect())
        .unwrap_or_default();
    json!({
        "id": view.view.id.0,
        "pane": origin.pane.map(|p| format!("%{p}")),
        "alias": origin.alias,
        "tool": origin.original_tool,
        "published_tool": origin.published_tool,
        "agent": origin.agent.map(|k| k.as_str()),
        "state": state_word(&view.view.state),
        "reason": reason,
        "url": hub.page_url(view.view.id),
        "page_open": view.call.page_open,
        "ignored_csp": ignored,
        "logs": logs(view.view.id),
    })
}

/// The rows and the table of every view.
pub fn list(hub: &ViewHub, logs: Logs<'_>) -> (Value, String) {
    let views = hub.all();
    let rows: Vec<Value> = views.iter().map(|v| row(hub, v, logs)).collect();
    if views.is_empty() {
        return (Value::Array(rows), "no views\n".to_string());
    }
    let mut table = crate::cli_table::Table::new(&[
        "ID", "PANE", "ALIAS", "TOOL", "AGENT", "STATE", "PAGE", "URL",
    ]);
    for row in &rows {
        let text = |key: &str| {
            row[key]
                .as_str()
                .map(calyx_tui::escape::visible)
                .unwrap_or_else(|| "-".to_string())
        };
        table.row(vec![
            row["id"].to_string(),
            row["pane"]
                .as_str()
                .map_or_else(|| "standalone".to_string(), str::to_string),
            text("alias"),
            text("tool"),
            text("agent"),
            text("state"),
            if row["page_open"] == true {
                "open"
            } else {
                "-"
            }
            .to_string(),
            text("url"),
        ]);
    }
    (Value::Array(rows), table.render())
}
