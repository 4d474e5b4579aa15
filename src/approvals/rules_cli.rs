//! `calyx approvals --rules`: the "always" rules the running server holds, as a table or JSON.

use std::fmt::Write as _;
use std::io::Write as _;
use std::process::ExitCode;

use serde_json::Value;

use crate::protocol::Response;

/// Prints the `rules` of an approvals response: one row per rule with what it covers.
pub fn print_rules(response: Response, json: bool) -> ExitCode {
    let Response::Json(value) = response else {
        return crate::commands_cli::print_response(response);
    };
    let rules = value
        .get("rules")
        .cloned()
        .unwrap_or(Value::Array(Vec::new()));
    let mut out = String::new();
    if json {
        out =
            calyx_tui::escape::json_safe(&serde_json::to_string_pretty(&rules).unwrap_or_default());
        out.push('\n');
    } else {
        let rows = rules.as_array().cloned().unwrap_or_default();
        if rows.is_empty() {
            out.push_str("no always rules\n");
        } else {
            let _ = writeln!(
                out,
                "{:<5} {:<9} {:<12} {:<10} COVERS",
                "RULE", "PANE", "CLI", "TOOL"
            );
        }
        for r in rows {
            // Tool names and commands come from agents: shown escaped (covers was already).
            let field = |k: &str| match r.get(k) {
                Some(Value::String(s)) => calyx_tui::escape::visible_again(s),
                Some(Value::Null) | None => "every".to_string(),
                Some(v) => v.to_string(),
            };
            let _ = writeln!(
                out,
                "{:<5} {:<9} {:<12} {:<10} {}",
                field("rule"),
                field("pane"),
                field("cli"),
                field("tool"),
                field("covers")
            );
        }
    }
    let _ = std::io::stdout().lock().write_all(out.as_bytes());
    ExitCode::SUCCESS
}
