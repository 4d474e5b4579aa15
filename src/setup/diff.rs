//! Unified diffs of planned file changes, as `calyx setup` prints them. The bearer token is
//! masked: the diff lands in terminal scrollback and CI logs, the token does not need to.

use calyx_integrations::setup::FileChange;
use similar::TextDiff;

/// What the token is shown as.
const MASK: &str = "<calyx token>";

/// The diff of one change, with `--- path` / `+++ path` headers (`/dev/null` for a file that
/// is created or deleted), ending in a newline, then a line saying so when the file's mode is
/// tightened because it will hold the token (a change may be only that).
pub fn unified(change: &FileChange, token: &str) -> String {
    let mut text = if change.edits_text() {
        text_diff(change, token)
    } else {
        String::new()
    };
    if let Some(old) = change.old_mode {
        text.push_str(&format!(
            "{}: mode {old:04o} -> {:04o}: it holds calyx's token\n",
            change.path.display(),
            change.new_mode
        ));
    }
    text
}

fn text_diff(change: &FileChange, token: &str) -> String {
    let mask = |s: &Option<String>| {
        let s = s.as_deref().unwrap_or("");
        if token.is_empty() {
            s.to_string()
        } else {
            s.replace(token, MASK)
        }
    };
    let before = mask(&change.before);
    let after = mask(&change.after);
    let path = change.path.display().to_string();
    let old = if change.before.is_some() {
        path.as_str()
    } else {
        "/dev/null"
    };
    let new = if change.after.is_some() {
        path.as_str()
    } else {
        "/dev/null"
    };
    let diff = TextDiff::from_lines(&before, &after);
    let mut text = diff
        .unified_diff()
        .context_radius(3)
        .header(old, new)
        .missing_newline_hint(true)
        .to_string();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_the_token_and_marks_new_files() {
        let change = FileChange {
            path: "/h/.claude.json".into(),
            before: None,
            after: Some("{\"a\": \"Bearer 1234\"}\n".into()),
            new_mode: 0o600,
            old_mode: None,
        };
        let text = unified(&change, "1234");
        assert!(
            text.starts_with("--- /dev/null\n+++ /h/.claude.json\n"),
            "{text}"
        );
        assert!(text.contains("+{\"a\": \"Bearer <calyx token>\"}"));
        assert!(!text.contains("1234"));
    }

    #[test]
    fn says_when_a_file_is_tightened_even_with_no_text_to_change() {
        let change = FileChange {
            path: "/h/.claude.json".into(),
            before: Some("{}\n".into()),
            after: Some("{}\n".into()),
            new_mode: 0o600,
            old_mode: Some(0o644),
        };
        assert_eq!(
            unified(&change, "1234"),
            "/h/.claude.json: mode 0644 -> 0600: it holds calyx's token\n"
        );
    }
}
