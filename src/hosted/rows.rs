//! How hosted servers are shown by `calyx mcp list` and `calyx mcp details`: the JSON of a row
//! (no secret values, only their names) and the text made from it. Text from a server (names,
//! instructions, stderr) is printed with control characters made visible.

use serde_json::{json, Value};

use super::connection::state::ServerState;
use super::entry::ServerEntry;

/// One server as `calyx mcp list --json` shows it (no secret values, only their names).
pub fn row(entry: &ServerEntry, state: &ServerState) -> Value {
    let (state_name, tools, with_ui) = match state {
        ServerState::Disabled => ("disabled", None, None),
        ServerState::Connecting => ("connecting", None, None),
        ServerState::Ready { tools, with_ui } => ("ready", Some(*tools), Some(*with_ui)),
        ServerState::Reconnecting { .. } => ("reconnecting", None, None),
        ServerState::Failed { .. } => ("failed", None, None),
        ServerState::SignInRequired => ("sign-in required", None, None),
        ServerState::SigningIn => ("signing in", None, None),
    };
    json!({
        "alias": entry.alias,
        "name": entry.name,
        "transport": entry.transport_name(),
        "target": entry.target(),
        "enabled": entry.enabled,
        "state": state_name,
        "status": state.status_line(),
        "tools": tools,
        "with_ui": with_ui,
        "signed_in": false,
        "note": entry.note,
    })
}

fn text(value: &Value, key: &str) -> String {
    match &value[key] {
        Value::String(s) => calyx_tui::escape::visible(s),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The rows as a table.
pub fn render_rows(rows: &[Value]) -> String {
    if rows.is_empty() {
        return "no hosted MCP servers: add one with `calyx mcp add`\n".into();
    }
    let mut table = crate::cli_table::Table::new(&[
        "ALIAS",
        "NAME",
        "TRANSPORT",
        "TARGET",
        "ENABLED",
        "STATUS",
    ]);
    for r in rows {
        let status = text(r, "status");
        let first = status.lines().next().unwrap_or("").to_string();
        table.row(vec![
            text(r, "alias"),
            text(r, "name"),
            text(r, "transport"),
            calyx_tui::sidebar::truncate(&text(r, "target"), 50),
            if r["enabled"] == json!(true) {
                "yes".into()
            } else {
                "no".into()
            },
            first,
        ]);
    }
    table.render()
}

/// Details as text.
pub fn render_details(d: &Value) -> String {
    let mut out = format!(
        "{} ({})  {}  {}\nstatus: {}\n",
        text(d, "alias"),
        text(d, "name"),
        text(d, "transport"),
        text(d, "target"),
        text(d, "status")
    );
    for (label, key) in [
        ("server", "server_name"),
        ("version", "server_version"),
        ("protocol", "protocol_version"),
        ("note", "note"),
        ("last failure", "last_failure"),
    ] {
        let value = text(d, key);
        if !value.is_empty() {
            out.push_str(&format!("{label}: {value}\n"));
        }
    }
    let empty = Vec::new();
    let items = |key: &str| d[key].as_array().unwrap_or(&empty).clone();
    out.push_str("tools:\n");
    for t in items("published") {
        let ui = if t["ui"] == json!(true) { "  [UI]" } else { "" };
        out.push_str(&format!(
            "  {}  <- {}{ui}\n",
            text(&t, "name"),
            text(&t, "original")
        ));
    }
    for t in items("app_only") {
        out.push_str(&format!(
            "  {}  [app only]\n",
            calyx_tui::escape::visible(t.as_str().unwrap_or(""))
        ));
    }
    for t in items("excluded") {
        out.push_str(&format!(
            "  {}  excluded: {}\n",
            text(&t, "name"),
            text(&t, "reason")
        ));
    }
    let instructions = text(d, "instructions");
    if !instructions.is_empty() {
        out.push_str(&format!("instructions:\n{instructions}\n"));
    }
    let stderr = items("stderr_tail");
    if !stderr.is_empty() {
        out.push_str("stderr:\n");
        for line in stderr {
            out.push_str(&format!(
                "  {}\n",
                calyx_tui::escape::visible(line.as_str().unwrap_or(""))
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn details_mark_views_app_only_and_excluded_tools() {
        let details = json!({
            "alias": "vanilla", "name": "Vanilla", "transport": "stdio", "target": "node x.js",
            "status": "1 tool, 1 with UI", "protocol_version": "2025-11-25",
            "server_name": "basic", "server_version": "2.0.3", "note": null,
            "last_failure": "the server's connection ended",
            "published": [{"name": "vanilla-get-time", "original": "get-time", "ui": true}],
            "app_only": ["poll-system-stats"],
            "excluded": [{"name": "research", "reason": "needs task support; calyx does not run tools as tasks"}],
            "instructions": "Ask for the time.",
            "stderr_tail": ["listening\u{1b}[31m"],
        });
        let text = render_details(&details);
        assert!(
            text.contains("vanilla-get-time  <- get-time  [UI]"),
            "{text}"
        );
        assert!(text.contains("poll-system-stats  [app only]"), "{text}");
        assert!(
            text.contains("research  excluded: needs task support"),
            "{text}"
        );
        assert!(text.contains("protocol: 2025-11-25") && text.contains("version: 2.0.3"));
        assert!(text.contains("last failure: the server's connection ended"));
        assert!(text.contains("instructions:\nAsk for the time."));
        assert!(
            !text.contains('\u{1b}'),
            "control characters are made visible"
        );
    }

    #[test]
    fn rows_hold_names_of_secrets_only() {
        let entry = ServerEntry {
            alias: "ev".into(),
            name: "Everything".into(),
            enabled: true,
            transport: crate::hosted::entry::Transport::Stdio(crate::hosted::entry::StdioTarget {
                command: "node".into(),
                args: vec!["a b.js".into()],
                cwd: None,
                env: vec!["API_KEY".into()],
            }),
            note: None,
        };
        let r = row(
            &entry,
            &ServerState::Ready {
                tools: 3,
                with_ui: 1,
            },
        );
        assert_eq!(r["state"], "ready");
        assert_eq!(r["tools"], 3);
        assert_eq!(r["status"], "3 tools, 1 with UI");
        assert_eq!(r["target"], "node 'a b.js'");
        let table = render_rows(&[r]);
        assert!(
            table.contains("ALIAS") && table.contains("3 tools, 1 with UI"),
            "{table}"
        );
        assert_eq!(
            render_rows(&[]),
            "no hosted MCP servers: add one with `calyx mcp add`\n"
        );
    }
}
