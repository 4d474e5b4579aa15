//! A pane's saved lines of text (`[persistence] scrollback_lines`): kept at a graceful stop,
//! shown again when the pane is restored, dimmed and under a `── restored <date time> ──`
//! line, so they read as the past and not as the restarted program's output, and so copy mode
//! and `capture` find them in the pane's history like any other line.

use super::record::SavedHistory;

/// The last `keep` of `lines` (a pane's logical lines, oldest first), redacted by `redact` as
/// `pane_read` redacts (the lines joined, so a secret spanning two is found whole); None when
/// nothing is kept or there is no text.
pub fn kept(
    lines: &[String],
    keep: usize,
    saved_at: u64,
    redact: impl Fn(&str) -> String,
) -> Option<SavedHistory> {
    if keep == 0 {
        return None;
    }
    let redacted = redact(&lines.join("\n"));
    let all: Vec<&str> = redacted.lines().collect();
    let first_text = all.iter().position(|l| !l.trim().is_empty())?;
    let from = all.len().saturating_sub(keep).max(first_text);
    Some(SavedHistory {
        saved_at,
        lines: all[from..].iter().map(|l| l.to_string()).collect(),
    })
}

/// The bytes that show `history` in a fresh terminal: each line dimmed (control characters
/// made visible: the lines come from programs' output), then the `── restored ──` line with
/// the stop's local `date_time`.
pub fn shown(history: &SavedHistory, date_time: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for line in &history.lines {
        let clean = calyx_tui::escape::visible(line);
        out.extend_from_slice(format!("\x1b[2m{clean}\x1b[0m\r\n").as_bytes());
    }
    out.extend_from_slice(format!("\x1b[2m── restored {date_time} ──\x1b[0m\r\n").as_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &[&str]) -> Vec<String> {
        text.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn keeps_the_last_lines_redacted_and_nothing_when_off_or_blank() {
        let text = lines(&["", "one", "token=SECRET", "three"]);
        let redact = |t: &str| t.replace("SECRET", "[redacted]");
        let kept = kept(&text, 2, 7, redact).expect("history");
        assert_eq!(kept.lines, ["token=[redacted]", "three"]);
        assert_eq!(kept.saved_at, 7);
        // Leading blank lines are not history.
        let all = super::kept(&text, 100, 7, redact).expect("history");
        assert_eq!(all.lines, ["one", "token=[redacted]", "three"]);
        assert_eq!(super::kept(&text, 0, 7, redact), None);
        assert_eq!(super::kept(&lines(&["", "  "]), 10, 7, redact), None);
    }

    #[test]
    fn shown_dims_each_line_escapes_controls_and_ends_with_the_restored_line() {
        let history = SavedHistory {
            saved_at: 0,
            lines: lines(&["plain", "bell\x07here"]),
        };
        let text = String::from_utf8(shown(&history, "2026-12-02 00:40")).expect("utf-8");
        assert!(text.starts_with("\x1b[2mplain\x1b[0m\r\n"), "{text:?}");
        assert!(!text.contains('\x07'), "{text:?}");
        assert!(
            text.ends_with("\x1b[2m── restored 2026-12-02 00:40 ──\x1b[0m\r\n"),
            "{text:?}"
        );
    }
}
