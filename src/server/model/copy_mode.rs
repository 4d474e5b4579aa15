//! Copy mode: the pane's history replayed into a scrollable view with a cursor, search and a
//! selection. Entering replays the byte-log history at the pane's width (see docs/design.md).

use calyx_pty::{all_lines, Terminal};
use calyx_tui::{Highlight, HighlightKind};

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use crate::keys::{Key, KeyCode};

/// A position in the history: line index (0 = oldest) and screen column. Columns are cells, not
/// characters: a wide character (CJK, most emoji) takes two, a combining mark none, so text is
/// read through [`col_char`] and [`char_col`].
pub type Pos = (usize, u16);

/// What a copy-mode key asks the caller to do.
#[derive(Debug, PartialEq, Eq)]
pub enum CopyOutcome {
    Stay,
    Exit,
    /// Copy this text and leave copy mode.
    Copy(String),
    /// Open the search prompt (forward or backward).
    Search {
        forward: bool,
    },
}

/// Copy-mode state of one pane.
pub struct CopyMode {
    parser: calyx_pty::Replay,
    lines: Vec<String>,
    rows: u16,
    cols: u16,
    /// First visible line.
    top: usize,
    pub cursor: Pos,
    pub selection: Option<Pos>,
    pub search: Option<String>,
    last_forward: bool,
}

impl CopyMode {
    /// Enters copy mode over `terminal`'s history at the given content size.
    pub fn enter(terminal: &Terminal, rows: u16, cols: u16) -> Self {
        let mut parser = terminal.replay_history(rows, cols);
        let lines = all_lines(&mut parser);
        let rows_usize = usize::from(rows.max(1));
        let top = lines.len().saturating_sub(rows_usize);
        // Start with the cursor where the program's cursor is.
        let (crow, ccol) = terminal.screen().cursor_position();
        let cursor = (
            (top + usize::from(crow)).min(lines.len().saturating_sub(1)),
            ccol,
        );
        Self {
            parser,
            lines,
            rows: rows.max(1),
            cols: cols.max(1),
            top,
            cursor,
            selection: None,
            search: None,
            last_forward: true,
        }
    }

    fn max_top(&self) -> usize {
        self.lines.len().saturating_sub(usize::from(self.rows))
    }

    /// The screen to draw, scrolled to the current view.
    pub fn screen(&mut self) -> &vt100::Screen {
        let depth = self.max_top();
        self.parser
            .screen_mut()
            .set_scrollback(depth - self.top.min(depth));
        self.parser.screen()
    }

    /// The cursor on screen, when visible.
    pub fn screen_cursor(&self) -> Option<(u16, u16)> {
        let row = self.cursor.0.checked_sub(self.top)?;
        (row < usize::from(self.rows)).then(|| (row as u16, self.cursor.1.min(self.cols - 1)))
    }

    /// "[line/total]" for the border.
    pub fn position_text(&self) -> String {
        let from_bottom = self.max_top() - self.top.min(self.max_top());
        format!("[{}/{}]", from_bottom, self.max_top())
    }

    fn line(&self, line: usize) -> &str {
        self.lines.get(line).map_or("", String::as_str)
    }

    fn scroll_to_cursor(&mut self) {
        let rows = usize::from(self.rows);
        if self.cursor.0 < self.top {
            self.top = self.cursor.0;
        } else if self.cursor.0 >= self.top + rows {
            self.top = self.cursor.0 + 1 - rows;
        }
        self.top = self.top.min(self.max_top());
    }

    fn move_lines(&mut self, delta: isize) {
        let last = self.lines.len().saturating_sub(1);
        self.cursor.0 = self.cursor.0.saturating_add_signed(delta).min(last);
        self.scroll_to_cursor();
    }

    /// Scrolls the view by `delta` lines with the cursor keeping its row on screen, as tmux's
    /// page and half-page keys do; where the view cannot scroll further, the cursor moves
    /// instead (to the first or last line in the end).
    fn page(&mut self, delta: isize) {
        let before = self.top;
        self.top = self.top.saturating_add_signed(delta).min(self.max_top());
        let scrolled = self.top as isize - before as isize;
        if scrolled == 0 {
            self.move_lines(delta);
            return;
        }
        let last = self.lines.len().saturating_sub(1);
        self.cursor.0 = self.cursor.0.saturating_add_signed(scrolled).min(last);
    }

    /// Scrolls the view (mouse wheel), dragging the cursor along when it leaves the view.
    pub fn scroll(&mut self, delta: isize) {
        self.top = self.top.saturating_add_signed(delta).min(self.max_top());
        let rows = usize::from(self.rows);
        self.cursor.0 = self
            .cursor
            .0
            .clamp(self.top, self.top + rows - 1)
            .min(self.lines.len().saturating_sub(1));
    }

    /// Whether the view is at the bottom (leaving copy mode on wheel-down there, as tmux -e).
    pub fn at_bottom(&self) -> bool {
        self.top >= self.max_top()
    }

    /// Puts the cursor at a screen cell (mouse).
    pub fn set_cursor_on_screen(&mut self, row: u16, col: u16) {
        let line = (self.top + usize::from(row)).min(self.lines.len().saturating_sub(1));
        self.cursor = (line, col.min(self.cols - 1));
    }

    /// Handles one key.
    pub fn key(&mut self, key: Key) -> CopyOutcome {
        let half = ((self.rows / 2) as isize).max(1);
        let page = (self.rows as isize).max(1);
        let ctrl = key.ctrl;
        match key.code {
            KeyCode::Char('q') if !ctrl => return CopyOutcome::Exit,
            KeyCode::Char('c') if ctrl => return CopyOutcome::Exit,
            // Esc first drops a selection, then leaves.
            KeyCode::Escape if self.selection.take().is_none() => return CopyOutcome::Exit,
            KeyCode::Escape => {}
            KeyCode::Up | KeyCode::Char('k') if !ctrl => self.move_lines(-1),
            KeyCode::Down | KeyCode::Char('j') if !ctrl => self.move_lines(1),
            KeyCode::Left | KeyCode::Char('h') if !ctrl => {
                let line = self.line(self.cursor.0);
                let here = col_char(line, self.cursor.1);
                self.cursor.1 = char_col(line, here.saturating_sub(1));
            }
            KeyCode::Right | KeyCode::Char('l') if !ctrl => {
                let line = self.line(self.cursor.0);
                let next = char_end(line, col_char(line, self.cursor.1));
                self.cursor.1 = char_col(line, next).min(self.cols - 1);
            }
            KeyCode::PageUp | KeyCode::Char('b') if key.code == KeyCode::PageUp || ctrl => {
                self.page(-page)
            }
            KeyCode::PageDown | KeyCode::Char('f') if key.code == KeyCode::PageDown || ctrl => {
                self.page(page)
            }
            KeyCode::Char('u') if ctrl => self.page(-half),
            KeyCode::Char('d') if ctrl => self.page(half),
            KeyCode::Char('g') | KeyCode::Home => {
                self.cursor = (0, 0);
                self.scroll_to_cursor();
            }
            KeyCode::Char('G') | KeyCode::End => {
                self.cursor = (self.lines.len().saturating_sub(1), 0);
                self.scroll_to_cursor();
            }
            KeyCode::Char('0') | KeyCode::Char('^') => self.cursor.1 = 0,
            KeyCode::Char('$') => {
                let line = self.line(self.cursor.0);
                let chars = line.chars().count();
                // The last character's first column.
                let last = (0..chars).rev().find(|&i| char_end(line, i) == chars);
                self.cursor.1 = last.map_or(0, |i| char_col(line, i));
            }
            KeyCode::Char('w') => self.word_forward(),
            KeyCode::Char('b') => self.word_back(),
            KeyCode::Char(' ') | KeyCode::Char('v') => self.selection = Some(self.cursor),
            KeyCode::Enter | KeyCode::Char('y') => {
                return CopyOutcome::Copy(self.selected_text());
            }
            KeyCode::Char('/') => return CopyOutcome::Search { forward: true },
            KeyCode::Char('?') => return CopyOutcome::Search { forward: false },
            KeyCode::Char('n') => self.find_next(self.last_forward),
            KeyCode::Char('N') => self.find_next(!self.last_forward),
            _ => {}
        }
        CopyOutcome::Stay
    }

    fn word_forward(&mut self) {
        let line: Vec<char> = self
            .lines
            .get(self.cursor.0)
            .map(|l| l.chars().collect())
            .unwrap_or_default();
        let text = self.line(self.cursor.0);
        let mut i = col_char(text, self.cursor.1);
        while i < line.len() && !line[i].is_whitespace() {
            i += 1;
        }
        while i < line.len() && line[i].is_whitespace() {
            i += 1;
        }
        if i >= line.len() && self.cursor.0 + 1 < self.lines.len() {
            self.cursor = (self.cursor.0 + 1, 0);
            self.scroll_to_cursor();
        } else {
            self.cursor.1 = char_col(text, i).min(self.cols - 1);
        }
    }

    fn word_back(&mut self) {
        let line: Vec<char> = self
            .lines
            .get(self.cursor.0)
            .map(|l| l.chars().collect())
            .unwrap_or_default();
        let text = self.line(self.cursor.0);
        let mut i = col_char(text, self.cursor.1).min(line.len());
        while i > 0 && line.get(i - 1).is_some_and(|c| c.is_whitespace()) {
            i -= 1;
        }
        while i > 0 && line.get(i - 1).is_some_and(|c| !c.is_whitespace()) {
            i -= 1;
        }
        self.cursor.1 = char_col(text, i);
    }

    /// Starts a search for `term` in the given direction and jumps to the first match.
    pub fn start_search(&mut self, term: String, forward: bool) {
        self.search = (!term.is_empty()).then_some(term);
        self.last_forward = forward;
        self.find_next(forward);
    }

    fn find_next(&mut self, forward: bool) {
        let Some(term) = self.search.clone() else {
            return;
        };
        let (line, col) = self.cursor;
        let col = col_char(self.line(line), col);
        let found = if forward {
            let here = self
                .lines
                .get(line)
                .and_then(|l| char_find(l, &term, col + 1));
            here.map(|c| (line, c)).or_else(|| {
                (line + 1..self.lines.len())
                    .chain(0..=line)
                    .find_map(|i| char_find(&self.lines[i], &term, 0).map(|c| (i, c)))
            })
        } else {
            let here = self.lines.get(line).and_then(|l| char_rfind(l, &term, col));
            here.map(|c| (line, c)).or_else(|| {
                (0..line)
                    .rev()
                    .chain((line..self.lines.len()).rev())
                    .find_map(|i| char_rfind(&self.lines[i], &term, usize::MAX).map(|c| (i, c)))
            })
        };
        if let Some((l, c)) = found {
            self.cursor = (l, char_col(self.line(l), c));
            self.scroll_to_cursor();
        }
    }

    /// Highlights for the visible rows: the selection and search matches.
    pub fn highlights(&self) -> Vec<Highlight> {
        let mut out = Vec::new();
        let rows = usize::from(self.rows);
        if let Some(term) = self.search.as_deref() {
            let width = UnicodeWidthStr::width(term) as u16;
            for row in 0..rows {
                let Some(line) = self.lines.get(self.top + row) else {
                    break;
                };
                let mut from = 0;
                while let Some(c) = char_find(line, term, from) {
                    let col = char_col(line, c);
                    let current = (self.top + row, col) == self.cursor;
                    out.push(Highlight {
                        row: row as u16,
                        start_col: col,
                        end_col: col + width,
                        kind: if current {
                            HighlightKind::CurrentMatch
                        } else {
                            HighlightKind::Match
                        },
                    });
                    from = c + 1;
                }
            }
        }
        if let Some(anchor) = self.selection {
            let (start, end) = ordered(anchor, self.cursor);
            for row in 0..rows {
                let line = self.top + row;
                if line < start.0 || line > end.0 {
                    continue;
                }
                let text = self.line(line);
                let s = if line == start.0 {
                    char_col(text, col_char(text, start.1))
                } else {
                    0
                };
                let e = if line == end.0 {
                    char_col(text, char_end(text, col_char(text, end.1)))
                } else {
                    self.cols
                };
                out.push(Highlight {
                    row: row as u16,
                    start_col: s,
                    end_col: e,
                    kind: HighlightKind::Selection,
                });
            }
        }
        out
    }

    /// The selected text (the cursor's line when nothing is selected).
    pub fn selected_text(&self) -> String {
        let (start, end) = match self.selection {
            Some(anchor) => ordered(anchor, self.cursor),
            None => ((self.cursor.0, 0), (self.cursor.0, u16::MAX - 1)),
        };
        let mut out = Vec::new();
        for line in start.0..=end.0 {
            let text = self.line(line);
            let s = if line == start.0 {
                col_char(text, start.1)
            } else {
                0
            };
            let e = if line == end.0 {
                char_end(text, col_char(text, end.1))
            } else {
                usize::MAX
            };
            out.push(
                text.chars()
                    .skip(s)
                    .take(e.saturating_sub(s))
                    .collect::<String>(),
            );
        }
        out.join("\n")
    }
}

fn ordered(a: Pos, b: Pos) -> (Pos, Pos) {
    if a <= b {
        (a, b)
    } else {
        (b, a)
    }
}

/// The cells a character takes on screen (0 for combining marks).
fn char_width(c: char) -> u16 {
    UnicodeWidthChar::width(c).unwrap_or(0) as u16
}

/// The screen column where character `idx` of `line` starts (past the end, the line goes on in
/// single-width blanks, as the screen does).
fn char_col(line: &str, idx: usize) -> u16 {
    let mut col = 0u16;
    let mut count = 0;
    for c in line.chars().take(idx) {
        col = col.saturating_add(char_width(c));
        count += 1;
    }
    col.saturating_add((idx - count) as u16)
}

/// The index of the character covering screen column `col` (both cells of a wide character
/// give that character; past the end, as [`char_col`]).
fn col_char(line: &str, col: u16) -> usize {
    let mut at = 0u16;
    let mut count = 0;
    for (i, c) in line.chars().enumerate() {
        let w = char_width(c);
        if w > 0 && col < at + w {
            return i;
        }
        at = at.saturating_add(w);
        count = i + 1;
    }
    count + usize::from(col.saturating_sub(at))
}

/// The index just after character `idx` and the combining marks that belong to it.
fn char_end(line: &str, idx: usize) -> usize {
    let rest = line.chars().skip(idx + 1);
    idx + 1 + rest.take_while(|&c| char_width(c) == 0).count()
}

/// Char index of `needle` in `hay` at or after char index `from`.
fn char_find(hay: &str, needle: &str, from: usize) -> Option<usize> {
    let start = hay.char_indices().nth(from).map(|(b, _)| b)?;
    hay[start..]
        .find(needle)
        .map(|b| hay[..start + b].chars().count())
}

/// Char index of the last `needle` in `hay` starting before char index `before`.
fn char_rfind(hay: &str, needle: &str, before: usize) -> Option<usize> {
    let end = hay.char_indices().nth(before).map_or(hay.len(), |(b, _)| b);
    let limit = (end + needle.len()).min(hay.len());
    let mut limit = limit;
    while !hay.is_char_boundary(limit) {
        limit -= 1;
    }
    hay[..limit]
        .rfind(needle)
        .map(|b| hay[..b].chars().count())
        .filter(|&c| c < before)
}

#[cfg(test)]
mod tests {
    use super::*;
    use calyx_pty::HistoryLimits;

    fn sample() -> CopyMode {
        let mut t = Terminal::new(5, 30, HistoryLimits::default());
        for i in 0..50 {
            t.process(format!("row {i} alpha beta\r\n").as_bytes());
        }
        CopyMode::enter(&t, 5, 30)
    }

    #[test]
    fn search_moves_cursor_and_highlights() {
        let mut c = sample();
        c.start_search("row 7 ".into(), false);
        assert_eq!(c.cursor, (7, 0));
        assert!(c
            .highlights()
            .iter()
            .any(|h| h.kind == HighlightKind::CurrentMatch));
        c.start_search("alpha".into(), true);
        assert_eq!(c.cursor, (7, 6));
        c.key(Key::plain(KeyCode::Char('n')));
        assert_eq!(c.cursor, (8, 6));
        c.key(Key::plain(KeyCode::Char('N')));
        c.key(Key::plain(KeyCode::Char('N')));
        assert_eq!(c.cursor, (6, 6));
    }

    #[test]
    fn select_and_copy() {
        let mut c = sample();
        c.start_search("row 3 ".into(), false);
        c.key(Key::plain(KeyCode::Char(' ')));
        c.key(Key::plain(KeyCode::Down));
        c.key(Key::plain(KeyCode::Char('$')));
        assert_eq!(
            c.key(Key::plain(KeyCode::Enter)),
            CopyOutcome::Copy("row 3 alpha beta\nrow 4 alpha beta".into())
        );
    }

    #[test]
    fn columns_are_cells_with_wide_characters() {
        let mut t = Terminal::new(5, 30, HistoryLimits::default());
        t.process("中文 2beta gamma\r\ne\u{301}x wide\r\n".as_bytes());
        let mut c = CopyMode::enter(&t, 5, 30);
        // Screen columns 6..=9 are "beta" (中 and 文 take two cells each).
        c.cursor = (0, 6);
        c.key(Key::plain(KeyCode::Char('v')));
        c.cursor = (0, 9);
        assert_eq!(c.selected_text(), "beta");
        // The right half of a wide character selects all of it.
        c.selection = Some((0, 1));
        c.cursor = (0, 3);
        assert_eq!(c.selected_text(), "中文");
        // $ goes to the last character's column; w and b move by words in columns.
        c.selection = None;
        c.key(Key::plain(KeyCode::Char('$')));
        assert_eq!(c.cursor, (0, 15));
        c.key(Key::plain(KeyCode::Char('0')));
        c.key(Key::plain(KeyCode::Char('w')));
        assert_eq!(c.cursor, (0, 5));
        c.key(Key::plain(KeyCode::Right));
        assert_eq!(c.cursor, (0, 6));
        c.key(Key::plain(KeyCode::Char('0')));
        c.key(Key::plain(KeyCode::Right));
        assert_eq!(c.cursor, (0, 2), "Right steps over a wide character");
        // Search lands on the match's column; a combining mark stays with its letter.
        c.start_search("gamma".into(), true);
        assert_eq!(c.cursor, (0, 11));
        c.selection = Some((1, 0));
        c.cursor = (1, 0);
        assert_eq!(c.selected_text(), "e\u{301}");
    }

    #[test]
    fn a_page_key_scrolls_a_whole_page_and_the_cursor_keeps_its_row() {
        let mut c = sample();
        let (top, cursor) = (c.top, c.cursor.0);
        assert!(cursor >= top);
        c.key(Key::plain(KeyCode::PageUp));
        assert_eq!((c.top, c.cursor.0), (top - 5, cursor - 5));
        let ctrl_u = Key {
            ctrl: true,
            ..Key::plain(KeyCode::Char('u'))
        };
        c.key(ctrl_u);
        assert_eq!((c.top, c.cursor.0), (top - 7, cursor - 7));
        c.key(Key::plain(KeyCode::PageDown));
        assert_eq!((c.top, c.cursor.0), (top - 2, cursor - 2));
    }

    #[test]
    fn paging_stays_in_bounds() {
        let mut c = sample();
        for _ in 0..100 {
            c.key(Key::plain(KeyCode::PageUp));
        }
        assert_eq!(c.cursor.0, 0);
        assert_eq!(
            c.position_text(),
            format!("[{}/{}]", c.max_top(), c.max_top())
        );
        for _ in 0..100 {
            c.key(Key::plain(KeyCode::PageDown));
        }
        assert!(c.at_bottom());
        assert_eq!(c.key(Key::plain(KeyCode::Char('q'))), CopyOutcome::Exit);
    }
}
