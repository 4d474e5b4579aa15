//! A readable, safe summary of a tool call for the approval panel: the command for shell tools,
//! the path and a diff preview for edits and writes, the URL for fetches, compact JSON
//! otherwise. Tool inputs come from a model and may carry escape sequences, bidi overrides or
//! invisible characters: every such character is shown visibly escaped, so nothing a tool input
//! contains can reach the terminal as a control sequence or hide what it does.

use serde_json::Value;

/// Longest summary kept (a 1 MB command is shown cut, with its size).
const MAX_CHARS: usize = 64 * 1024;
/// Most diff lines shown.
const MAX_DIFF_LINES: usize = 400;

/// The summary: a headline and body lines, all safe to draw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    pub headline: String,
    pub lines: Vec<String>,
}

/// Makes one line of text safe to show: control characters, bidi controls and invisible
/// format characters become visible escapes like `\x1b` or `\u{202e}`.
pub fn visible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if is_hazard(c) {
            match c {
                '\t' => out.push_str("    "),
                c if (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
                c => out.push_str(&format!("\\u{{{:04x}}}", c as u32)),
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn is_hazard(c: char) -> bool {
    c.is_control()
        || matches!(c as u32,
            0x061c | 0x200b..=0x200f | 0x2028..=0x202e | 0x2060..=0x2069 | 0xfeff | 0xfff9..=0xfffb | 0x180e | 0x00ad)
}

fn lines_of(text: &str) -> Vec<String> {
    let cut: String = text.chars().take(MAX_CHARS).collect();
    let mut lines: Vec<String> = cut
        .split('\n')
        .map(|l| visible(l.trim_end_matches('\r')))
        .collect();
    if text.chars().count() > MAX_CHARS {
        lines.push(format!("… ({} bytes in all)", text.len()));
    }
    lines
}

fn str_field<'a>(input: &'a Value, keys: &[&str]) -> Option<&'a str> {
    keys.iter()
        .find_map(|k| input.get(*k).and_then(Value::as_str))
}

/// Keys of a command's input the summary already shows.
const COMMAND_KEYS: &[&str] = &["command", "cmd", "description", "justification"];
/// Keys of a file edit's input the summary already shows.
const FILE_KEYS: &[&str] = &[
    "file_path",
    "path",
    "filePath",
    "notebook_path",
    "old_string",
    "oldString",
    "new_string",
    "newString",
    "content",
    "contents",
    "text",
    "edits",
];
/// Keys of a fetch's input the summary already shows.
const FETCH_KEYS: &[&str] = &["url", "uri", "prompt"];

/// The arguments the summary does not show otherwise, one `key: value` line each (values as
/// compact JSON, escaped and cut): a human approving `http_request {url}` must also see its
/// method and body, and `pane_run` its target.
fn other_arguments(input: &Value, shown: &[&str]) -> Vec<String> {
    let Some(object) = input.as_object() else {
        return Vec::new();
    };
    let others: Vec<String> = object
        .iter()
        .filter(|(k, _)| !shown.contains(&k.as_str()))
        .map(|(k, v)| {
            let value = match v {
                Value::String(s) => s.clone(),
                v => v.to_string(),
            };
            let cut: String = value.chars().take(300).collect();
            let more = if cut.len() < value.len() { "…" } else { "" };
            format!("{}: {}{more}", visible(k), visible(&cut))
        })
        .collect();
    if others.is_empty() {
        return others;
    }
    let mut lines = vec![String::new()];
    lines.extend(others);
    lines
}

/// Summarizes a tool call.
pub fn summarize(tool: &str, input: &Value) -> Summary {
    let lower = tool.to_ascii_lowercase();
    if let Some(command) = str_field(input, &["command", "cmd"])
        .or_else(|| input.get("command").and_then(Value::as_array).map(|_| ""))
    {
        let command = if command.is_empty() {
            input
                .get("command")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .unwrap_or_default()
        } else {
            command.to_string()
        };
        let mut lines = lines_of(&command);
        if let Some(description) = str_field(input, &["description", "justification"]) {
            lines.push(String::new());
            lines.push(format!("# {}", visible(description)));
        }
        lines.extend(other_arguments(input, COMMAND_KEYS));
        return Summary {
            headline: format!(
                "run: {}",
                visible(
                    &command
                        .lines()
                        .next()
                        .unwrap_or("")
                        .chars()
                        .take(200)
                        .collect::<String>()
                )
            ),
            lines,
        };
    }
    if let Some(path) = str_field(input, &["file_path", "path", "filePath", "notebook_path"]) {
        let mut lines = Vec::new();
        if let (Some(old), Some(new)) = (
            str_field(input, &["old_string", "oldString"]),
            str_field(input, &["new_string", "newString"]),
        ) {
            lines.extend(old.split('\n').map(|l| format!("- {}", visible(l))));
            lines.extend(new.split('\n').map(|l| format!("+ {}", visible(l))));
        } else if let Some(content) = str_field(input, &["content", "contents", "text"]) {
            lines.extend(content.split('\n').map(|l| format!("+ {}", visible(l))));
        } else if let Some(edits) = input.get("edits").and_then(Value::as_array) {
            for e in edits {
                if let (Some(old), Some(new)) =
                    (str_field(e, &["old_string"]), str_field(e, &["new_string"]))
                {
                    lines.extend(old.split('\n').map(|l| format!("- {}", visible(l))));
                    lines.extend(new.split('\n').map(|l| format!("+ {}", visible(l))));
                }
            }
        }
        if lines.len() > MAX_DIFF_LINES {
            let total = lines.len();
            lines.truncate(MAX_DIFF_LINES);
            lines.push(format!("… {} more lines", total - MAX_DIFF_LINES));
        }
        lines.extend(other_arguments(input, FILE_KEYS));
        let verb = if lower.contains("delete") || lower.contains("remove") {
            "delete"
        } else if lower.contains("write") || lower.contains("create") {
            "write"
        } else {
            "edit"
        };
        return Summary {
            headline: format!("{verb}: {}", visible(path)),
            lines,
        };
    }
    if let Some(url) = str_field(input, &["url", "uri"]) {
        return Summary {
            headline: format!("fetch: {}", visible(url)),
            lines: str_field(input, &["prompt"])
                .map(lines_of)
                .unwrap_or_default()
                .into_iter()
                .chain(other_arguments(input, FETCH_KEYS))
                .collect(),
        };
    }
    let json = serde_json::to_string(input).unwrap_or_default();
    Summary {
        headline: format!(
            "{}: {}",
            visible(tool),
            visible(&json.chars().take(120).collect::<String>())
        ),
        lines: lines_of(&json),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hostile_characters_are_shown_escaped() {
        let s = summarize(
            "Bash",
            &json!({"command": "echo \u{1b}[2J\u{1b}]52;c;aGk=\u{7} safe\u{202e}txt.exe\u{200b}"}),
        );
        let all = format!("{}{}", s.headline, s.lines.join(""));
        assert!(
            !all.chars()
                .any(|c| c.is_control() || c == '\u{202e}' || c == '\u{200b}'),
            "{all:?}"
        );
        assert!(
            all.contains("\\x1b[2J") && all.contains("\\u{202e}") && all.contains("\\u{200b}"),
            "{all}"
        );
    }

    #[test]
    fn shell_edit_fetch_and_other_tools() {
        assert_eq!(
            summarize("Bash", &json!({"command": "ls -la"})).headline,
            "run: ls -la"
        );
        let e = summarize(
            "Edit",
            &json!({"file_path": "/a.rs", "old_string": "x", "new_string": "y"}),
        );
        assert_eq!(e.headline, "edit: /a.rs");
        assert_eq!(e.lines, vec!["- x", "+ y"]);
        assert_eq!(
            summarize("WebFetch", &json!({"url": "https://x"})).headline,
            "fetch: https://x"
        );
        assert!(summarize("mcp__x__y", &json!({"a": 1}))
            .headline
            .starts_with("mcp__x__y: {\"a\":1}"));
    }

    #[test]
    fn huge_inputs_are_capped() {
        let big = "x".repeat(1 << 20);
        let s = summarize("Bash", &json!({"command": big}));
        assert!(s.lines.iter().map(|l| l.len()).sum::<usize>() < 100 * 1024);
        let diff = (0..10_000)
            .map(|i| format!("line {i}"))
            .collect::<Vec<_>>()
            .join("\n");
        let s = summarize("Write", &json!({"file_path": "/big", "content": diff}));
        assert_eq!(s.lines.len(), MAX_DIFF_LINES + 1);
    }
}

#[cfg(test)]
mod argument_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arguments_beside_the_command_path_or_url_are_shown_escaped() {
        let s = summarize(
            "mcp__calyx-ipc__pane_run",
            &json!({"command": "make deploy", "pane": "%7", "await": true}),
        );
        assert_eq!(s.headline, "run: make deploy");
        assert!(s.lines.contains(&"pane: %7".to_string()), "{:?}", s.lines);
        assert!(
            s.lines.contains(&"await: true".to_string()),
            "{:?}",
            s.lines
        );
        let s = summarize(
            "http_request",
            &json!({"url": "https://x.test", "method": "DELETE", "body": "a\u{1b}[2Jb"}),
        );
        assert!(
            s.lines.contains(&"method: DELETE".to_string()),
            "{:?}",
            s.lines
        );
        assert!(
            s.lines.iter().any(|l| l == "body: a\\x1b[2Jb"),
            "{:?}",
            s.lines
        );
        let s = summarize("delete_file", &json!({"path": "/etc/hosts", "force": true}));
        assert_eq!(s.headline, "delete: /etc/hosts");
        assert!(
            s.lines.contains(&"force: true".to_string()),
            "{:?}",
            s.lines
        );
        // A command alone adds no empty section.
        assert_eq!(
            summarize("Bash", &json!({"command": "ls"})).lines,
            vec!["ls"]
        );
    }
}
