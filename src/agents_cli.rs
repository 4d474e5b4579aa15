//! Printing `calyx agents`.

use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use serde_json::Value;

use crate::agents::short_duration;
use crate::approvals::visible;
use crate::protocol::Response;

/// Prints the agent rows as a table or JSON.
pub fn print(response: Response, json: bool) -> ExitCode {
    match response {
        Response::Json(value) => {
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&value).unwrap_or_default()
                );
            } else {
                let rows = value
                    .get("agents")
                    .and_then(|a| a.as_array())
                    .cloned()
                    .unwrap_or_default();
                // With saved machines the server names each row's machine, and says which
                // machines are not live (their rows, if any, are the last ones seen).
                match value.get("machines_down").and_then(Value::as_array) {
                    Some(down) => print!("{}", machines_table(&rows, down)),
                    None => print!("{}", table(&rows)),
                }
            }
            ExitCode::SUCCESS
        }
        Response::Error(e) => {
            eprintln!("calyx: {e}");
            ExitCode::FAILURE
        }
        _ => ExitCode::FAILURE,
    }
}

/// A field as text, made safe to print: titles, tools and paths come from programs and agents,
/// so control characters are shown escaped rather than sent to the user's terminal.
fn text(row: &Value, key: &str) -> String {
    match row.get(key) {
        Some(Value::String(s)) => visible(s),
        Some(Value::Null) | None => String::new(),
        Some(v) => visible(&v.to_string()),
    }
}

/// The row's state; a saved machine's row whose link is down is marked `(stale)`.
fn state(row: &Value) -> String {
    let state = text(row, "state");
    if row.get("stale").and_then(Value::as_bool) == Some(true) {
        format!("{state} (stale)")
    } else {
        state
    }
}

fn seconds(row: &Value, key: &str) -> String {
    row.get(key)
        .and_then(Value::as_u64)
        .map(|s| short_duration(Duration::from_secs(s)))
        .unwrap_or_default()
}

/// One line per agent (pane, CLI, state and for how long, last tool, directory, title), its
/// running subagents indented beneath.
fn table(rows: &[Value]) -> String {
    if rows.is_empty() {
        return "no agents have reported\n".to_string();
    }
    header(false) + &lines(rows, false)
}

/// [`table`] with a MACHINE column, then a line for each machine that is not live.
fn machines_table(rows: &[Value], down: &[Value]) -> String {
    let mut out = header(true) + &lines(rows, true);
    for machine in down {
        let _ = writeln!(out, "{}", text(machine, "line"));
    }
    out
}

/// The table's first line; `machine`: with a MACHINE column first (`calyx agents --all`).
pub fn header(machine: bool) -> String {
    let first = if machine {
        format!("{:<12} ", "MACHINE")
    } else {
        String::new()
    };
    format!(
        "{first}{:<6} {:<14} {:<8} {:>5}  {:<14} {:<28} {}\n",
        "PANE", "AGENT", "STATE", "FOR", "LAST TOOL", "CWD", "TITLE"
    )
}

/// The table's lines for `rows`; `machine`: each row's `machine` field first.
pub fn lines(rows: &[Value], machine: bool) -> String {
    let mut out = String::new();
    for row in rows {
        let first = if machine {
            format!("{:<12} ", text(row, "machine"))
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "{first}{:<6} {:<14} {:<8} {:>5}  {:<14} {:<28} {}",
            text(row, "pane"),
            text(row, "agent_name"),
            state(row),
            seconds(row, "seconds_in_state"),
            text(row, "last_tool"),
            text(row, "cwd"),
            text(row, "title"),
        );
        let indent = if machine { 13 } else { 0 };
        for sub in row
            .get("subagents")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let _ = writeln!(
                out,
                "{:indent$}{:<6} └ {:<12} {:<8} {:>5}  {}",
                "",
                "",
                text(sub, "agent_type"),
                "running",
                seconds(sub, "seconds"),
                text(sub, "last_tool"),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rows_print_as_a_table_with_subagents_and_no_escapes() {
        let rows = vec![json!({
            "pane": "%3", "agent_name": "Claude Code", "state": "working",
            "seconds_in_state": 185, "last_tool": "Bash", "cwd": "/src/app",
            "title": "fix \u{1b}]2;evil\u{7} tests",
            "subagents": [{"agent_type": "general-purpose", "seconds": 40, "last_tool": "Read"}],
        })];
        let out = table(&rows);
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[0].starts_with("PANE   AGENT"), "{out}");
        assert!(
            lines[1].starts_with("%3     Claude Code    working"),
            "{out}"
        );
        assert!(
            lines[1].contains("3m") && lines[1].contains("Bash") && lines[1].contains("/src/app")
        );
        assert!(!out.contains('\u{1b}') && out.contains("\\x1b"), "{out:?}");
        assert!(
            lines[2].contains("└ general-purpose") && lines[2].contains("40s"),
            "{out}"
        );
        assert_eq!(table(&[]), "no agents have reported\n");
    }
}
