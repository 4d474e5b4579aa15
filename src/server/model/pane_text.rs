//! A pane's text as logical lines, for `pane_read`: the rows a long line wrapped across are
//! joined back into that line before secrets are redacted, so a secret cut in two by the pane's
//! right edge is still found (and removed) whole.

use calyx_pty::Terminal;

/// The visible screen's logical lines, or with `scrollback` the whole retained history's, oldest
/// first and without trailing blank lines. The live screen keeps no rows above it, so a line
/// that began above the screen starts with its first visible row.
pub fn logical_lines(term: &Terminal, rows: u16, cols: u16, scrollback: bool) -> Vec<String> {
    let mut lines = Lines::default();
    if !scrollback {
        lines.push_rows(term.screen(), usize::from(rows), cols);
        return lines.finish();
    }
    let mut parser = term.replay_history(rows, cols);
    calyx_pty::for_each_page(&mut parser, |screen, take| {
        lines.push_rows(screen, take, cols)
    });
    lines.finish()
}

/// Lines being assembled from rows; `open` while the last row wrapped into the next.
#[derive(Default)]
struct Lines {
    lines: Vec<String>,
    open: bool,
}

impl Lines {
    /// Adds the first `take` visible rows of `screen`.
    fn push_rows(&mut self, screen: &vt100::Screen, take: usize, cols: u16) {
        for (i, row) in screen.rows(0, cols).take(take).enumerate() {
            let wrapped = u16::try_from(i).is_ok_and(|i| screen.row_wrapped(i));
            let text = if wrapped {
                row.as_str()
            } else {
                row.trim_end()
            };
            match self.lines.last_mut() {
                Some(line) if self.open => line.push_str(text),
                _ => self.lines.push(text.to_string()),
            }
            self.open = wrapped;
        }
    }

    fn finish(mut self) -> Vec<String> {
        while self.lines.last().is_some_and(|l| l.trim().is_empty()) {
            self.lines.pop();
        }
        self.lines
    }
}

#[cfg(test)]
mod tests {
    use calyx_pty::{HistoryLimits, Terminal};

    use super::logical_lines;

    #[test]
    fn wrapped_rows_are_one_line_on_screen_and_in_the_history() {
        // Six rows: "short" scrolls off the screen into the history.
        let mut term = Terminal::new(
            6,
            10,
            HistoryLimits {
                lines: 100,
                bytes: 1 << 20,
            },
        );
        term.process(b"short\r\nAPI_KEY=0123456789abcdef\r\n\r\nlast  \r\n");
        assert_eq!(
            logical_lines(&term, 6, 10, false),
            ["API_KEY=0123456789abcdef", "", "last"]
        );
        assert_eq!(
            logical_lines(&term, 6, 10, true),
            ["short", "API_KEY=0123456789abcdef", "", "last"]
        );
    }
}
