//! `calyx approvals --rules`: the "always" rules the running server holds, as a table or JSON.

use serde_json::Value;

use crate::cli_table::Table;

/// The text for the `rules` of an approvals answer: JSON, or one row per rule with what it
/// covers. Tool names and commands come from agents: shown escaped, never raw.
pub fn rules_text(answer: &Value, json: bool) -> String {
    let rules = answer
        .get("rules")
        .cloned()
        .unwrap_or(Value::Array(Vec::new()));
    if json {
        let mut out =
            calyx_tui::escape::json_safe(&serde_json::to_string_pretty(&rules).unwrap_or_default());
        out.push('\n');
        return out;
    }
    let rows = rules.as_array().cloned().unwrap_or_default();
    if rows.is_empty() {
        return "no always rules\n".into();
    }
    let mut table = Table::new(&["RULE", "PANE", "MACHINES", "CLI", "TOOL", "COVERS"]);
    for r in rows {
        // `covers` was escaped by the server already: its labels stay as they are.
        let field = |k: &str| match r.get(k) {
            Some(Value::String(s)) => calyx_tui::escape::visible_again(s),
            Some(Value::Null) | None => "every".to_string(),
            Some(v) => v.to_string(),
        };
        table.row(vec![
            field("rule"),
            field("pane"),
            match r.get("machines") {
                Some(Value::String(s)) => calyx_tui::escape::visible_again(s),
                _ => "here".to_string(),
            },
            field("cli"),
            field("tool"),
            field("covers"),
        ]);
    }
    table.render()
}
