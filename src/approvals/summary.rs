//! A readable, safe summary of a tool call for the approval panel: the command for shell tools,
//! the path and the diff for edits and writes, the URL for fetches, compact JSON otherwise, and
//! every other argument beside it. Tool inputs come from a model and may be hostile: every
//! character is escaped by [`calyx_tui::escape`], a long run of whitespace is a counted label,
//! an edit shows its changed hunks, and nothing is left out silently: an argument the summary
//! did not use is listed, and the one size cap ([`super::body`]) cuts the middle, keeps the
//! tail, and says so.

use serde_json::Value;

use calyx_tui::escape::shorten_middle;
pub use calyx_tui::escape::visible;

use super::body::{cap_middle, text_lines};
use super::diff::{describe_cut, diff_lines};

/// Longest headline, in characters (its middle is cut: how a command ends shows too).
const HEADLINE_CHARS: usize = 200;

/// The summary: a headline and body lines, all safe to draw.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    pub headline: String,
    pub lines: Vec<String>,
    /// What of the body is not shown (its middle, past the size cap), for the panel's title.
    pub cut: Option<String>,
}

/// The first of `keys` holding a string, with its key.
fn str_field<'a>(input: &'a Value, keys: &[&'static str]) -> Option<(&'static str, &'a str)> {
    keys.iter()
        .find_map(|k| input.get(*k).and_then(Value::as_str).map(|v| (*k, v)))
}

/// The arguments the summary did not show otherwise (`used`), one `key: value` entry each,
/// whole (values as compact JSON unless strings, escaped, multi-line values on their own
/// lines): a human approving `http_request {url}` must also see its method and body, and a
/// command with a second `cmd` key must not hide it.
fn other_arguments(input: &Value, used: &[&str]) -> Vec<String> {
    let Some(object) = input.as_object() else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    for (key, value) in object.iter().filter(|(k, _)| !used.contains(&k.as_str())) {
        let value = match value {
            Value::String(s) => s.clone(),
            v => v.to_string(),
        };
        let mut value_lines = text_lines(&value).into_iter();
        let first = value_lines.next().unwrap_or_default();
        lines.push(format!("{}: {first}", visible(key)));
        lines.extend(value_lines);
    }
    if lines.is_empty() {
        return lines;
    }
    lines.insert(0, String::new());
    lines
}

/// A shell tool's command: `command` or `cmd` as a string, or `command` as an argv array.
fn command_of(input: &Value) -> Option<(&'static str, String)> {
    if let Some((key, command)) = str_field(input, &["command", "cmd"]) {
        return Some((key, command.to_string()));
    }
    let argv = input.get("command")?.as_array()?;
    let words: Vec<String> = argv
        .iter()
        .map(|w| match w {
            Value::String(s) => s.clone(),
            v => v.to_string(),
        })
        .collect();
    Some(("command", words.join(" ")))
}

fn headline(verb: &str, what: &str) -> String {
    shorten_middle(&format!("{verb}: {}", visible(what)), HEADLINE_CHARS)
}

/// Summarizes a tool call.
pub fn summarize(tool: &str, input: &Value) -> Summary {
    let lower = tool.to_ascii_lowercase();
    let mut used: Vec<&str> = Vec::new();
    let (headline, mut lines, diff) = if let Some((key, command)) = command_of(input) {
        used.push(key);
        let mut lines = text_lines(&command);
        if let Some((key, description)) = str_field(input, &["description", "justification"]) {
            used.push(key);
            lines.push(String::new());
            lines.extend(
                text_lines(description)
                    .into_iter()
                    .map(|l| format!("# {l}")),
            );
        }
        (headline("run", &command), lines, false)
    } else if let Some((key, path)) =
        str_field(input, &["file_path", "path", "filePath", "notebook_path"])
    {
        used.push(key);
        let (what, lines) = file_change(input, &mut used);
        let verb = if lower.contains("delete") || lower.contains("remove") {
            "delete"
        } else if lower.contains("write") || lower.contains("create") {
            "write"
        } else {
            "edit"
        };
        let headline = match what {
            Some(what) => format!("{} · {what}", headline(verb, path)),
            None => headline(verb, path),
        };
        (headline, lines, true)
    } else if let Some((key, url)) = str_field(input, &["url", "uri"]) {
        used.push(key);
        let mut lines = Vec::new();
        if let Some((key, prompt)) = str_field(input, &["prompt"]) {
            used.push(key);
            lines = text_lines(prompt);
        }
        (headline("fetch", url), lines, false)
    } else {
        let json = serde_json::to_string(input).unwrap_or_default();
        used.extend(
            input
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, _)| k.as_str()),
        );
        // (The tool's name comes from the agent too.)
        (headline(&visible(tool), &json), text_lines(&json), false)
    };
    lines.extend(other_arguments(input, &used));
    let (lines, cut) = if diff {
        cap_middle(lines, describe_cut)
    } else {
        cap_middle(lines, |hidden| format!("{} lines not shown", hidden.len()))
    };
    Summary {
        headline,
        lines,
        cut,
    }
}

/// The body of a file change: the diff of an edit (or of each of several), or the content
/// written; with how big it is, for the headline. The keys it used are added to `used`.
fn file_change<'a>(input: &'a Value, used: &mut Vec<&'a str>) -> (Option<String>, Vec<String>) {
    if let (Some((old_key, old)), Some((new_key, new))) = (
        str_field(input, &["old_string", "oldString"]),
        str_field(input, &["new_string", "newString"]),
    ) {
        used.extend([old_key, new_key]);
        let (header, lines) = diff_lines(old, new);
        return (Some(header), lines);
    }
    if let Some((key, content)) = str_field(input, &["content", "contents", "text"]) {
        used.push(key);
        let count = content.lines().count();
        let what = format!("{count} line{}", if count == 1 { "" } else { "s" });
        let lines = text_lines(content).into_iter().map(|l| format!("+ {l}"));
        return (Some(what), lines.collect());
    }
    let Some(edits) = input.get("edits").and_then(Value::as_array) else {
        return (None, Vec::new());
    };
    used.push("edits");
    let mut lines = Vec::new();
    for (i, edit) in edits.iter().enumerate() {
        let mut shown: Vec<&str> = Vec::new();
        if let (Some((old_key, old)), Some((new_key, new))) = (
            str_field(edit, &["old_string", "oldString"]),
            str_field(edit, &["new_string", "newString"]),
        ) {
            shown.extend([old_key, new_key]);
            let (header, diff) = diff_lines(old, new);
            lines.push(format!("edit {} of {}: {header}", i + 1, edits.len()));
            lines.extend(diff);
        } else {
            lines.push(format!("edit {} of {}:", i + 1, edits.len()));
        }
        // Its other fields (replace_all, a range), or the whole edit when it is no object.
        if edit.is_object() {
            lines.extend(other_arguments(edit, &shown).into_iter().skip(1));
        } else {
            lines.extend(text_lines(&edit.to_string()));
        }
    }
    let what = format!(
        "{} edit{}",
        edits.len(),
        if edits.len() == 1 { "" } else { "s" }
    );
    (Some(what), lines)
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
        assert_eq!(e.headline, "edit: /a.rs · 1 hunk, 2 lines changed (-1 +1)");
        assert_eq!(e.lines, vec!["@@ -1,1 +1,1 @@", "- x", "+ y"]);
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
        assert!(s.lines.len() <= super::super::body::MAX_LINES + 1);
        assert_eq!(s.lines.last().map(String::as_str), Some("+ line 9999"));
        assert!(s.cut.is_some());
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
