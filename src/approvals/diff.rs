//! An edit's change as the approval panel shows it: its hunks with a few lines of context, the
//! first change first, headed by how many hunks and changed lines there are. Showing the old
//! text's first lines instead hid an edit at line 9,000 of a 10,000-line string entirely. What
//! is left out to keep the panel small is unchanged text, never a changed line silently (the
//! body's cap in [`super::body`] counts any changed line it leaves out).

use std::time::Duration;

use calyx_tui::escape::{visible_line, ELISION_MARK};
use similar::{ChangeTag, DiffOp, TextDiff};

use super::body::MAX_LINES;

/// Lines of context around a change, as in a unified diff; fewer when the diff is too long.
const CONTEXTS: [usize; 3] = [3, 1, 0];
/// How long the diff may take before it settles for a coarser (still correct) answer: two
/// unrelated 10,000-line texts must not stall the server.
const DIFF_TIMEOUT: Duration = Duration::from_millis(250);

/// The change from `old` to `new`: a `N hunks, M lines changed` header (for the headline, where
/// it is seen without scrolling) and the lines: each hunk as `@@ -a,b +c,d @@` and its `- `,
/// `+ ` and context lines, escaped.
pub fn diff_lines(old: &str, new: &str) -> (String, Vec<String>) {
    let diff = TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old, new);
    let changed: usize = diff.ops().iter().map(changed_lines).sum();
    let mut hunks = Vec::new();
    for context in CONTEXTS {
        hunks = diff.grouped_ops(context);
        if rendered(&hunks) <= MAX_LINES {
            break;
        }
    }
    let mut out = Vec::new();
    for hunk in &hunks {
        let (Some(first), Some(last)) = (hunk.first(), hunk.last()) else {
            continue;
        };
        let (old_at, new_at) = (first.old_range().start, first.new_range().start);
        out.push(format!(
            "@@ -{},{} +{},{} @@",
            old_at + 1,
            last.old_range().end - old_at,
            new_at + 1,
            last.new_range().end - new_at
        ));
        for op in hunk {
            for change in diff.iter_changes(op) {
                let prefix = match change.tag() {
                    ChangeTag::Delete => "- ",
                    ChangeTag::Insert => "+ ",
                    ChangeTag::Equal => "  ",
                };
                let text = change.value();
                let text = text.strip_suffix('\n').unwrap_or(text);
                let text = text.strip_suffix('\r').unwrap_or(text);
                out.push(format!("{prefix}{}", visible_line(text)));
            }
        }
    }
    if old.ends_with('\n') != new.ends_with('\n') && !(old.is_empty() || new.is_empty()) {
        let (was, is) = if old.ends_with('\n') {
            ("ends", "does not")
        } else {
            ("does not end", "does")
        };
        out.push(format!(
            "{ELISION_MARK} the old text {was} with a newline, the new one {is} {ELISION_MARK}"
        ));
    }
    (header(hunks.len(), changed, diff.ops()), out)
}

/// `1 hunk, 2 lines changed (-1 +1)`.
fn header(hunks: usize, changed: usize, ops: &[DiffOp]) -> String {
    if changed == 0 {
        return "no change".to_string();
    }
    let (deleted, inserted) = ops.iter().fold((0, 0), |(d, i), op| {
        let (_, old, new) = op.as_tag_tuple();
        match op {
            DiffOp::Equal { .. } => (d, i),
            DiffOp::Delete { .. } => (d + old.len(), i),
            DiffOp::Insert { .. } => (d, i + new.len()),
            DiffOp::Replace { .. } => (d + old.len(), i + new.len()),
        }
    });
    let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    format!(
        "{}, {} changed (-{deleted} +{inserted})",
        plural(hunks, "hunk"),
        plural(changed, "line")
    )
}

fn changed_lines(op: &DiffOp) -> usize {
    match op {
        DiffOp::Equal { .. } => 0,
        op => op.old_range().len() + op.new_range().len(),
    }
}

/// Lines the hunks render to: a header each, and every line they hold.
fn rendered(hunks: &[Vec<DiffOp>]) -> usize {
    hunks
        .iter()
        .map(|h| {
            1 + h
                .iter()
                .map(|op| match op {
                    DiffOp::Equal { .. } => op.old_range().len(),
                    op => changed_lines(op),
                })
                .sum::<usize>()
        })
        .sum()
}

/// What a cut of diff lines left out, counting the changed ones.
pub fn describe_cut(hidden: &[String]) -> String {
    let changed = hidden
        .iter()
        .filter(|l| l.starts_with("- ") || l.starts_with("+ "))
        .count();
    format!(
        "{} lines not shown, {changed} of them changed",
        hidden.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_edit_is_a_unified_hunk() {
        let (header, lines) = diff_lines("a\nb\nc\n", "a\nB\nc\n");
        assert_eq!(header, "1 hunk, 2 lines changed (-1 +1)");
        assert_eq!(lines, vec!["@@ -1,3 +1,3 @@", "  a", "- b", "+ B", "  c"]);
        assert_eq!(
            diff_lines("x", "y").1,
            vec!["@@ -1,1 +1,1 @@", "- x", "+ y"]
        );
        assert_eq!(diff_lines("x", "x").0, "no change");
    }
}
