//! Rows of a pane's screen copied out while its terminal is locked, and drawn after the lock is
//! let go. A flooding pane's reader thread needs that lock to parse every read; a frame that
//! drew the rows (a style and a symbol compare per cell) while holding it kept the reader
//! waiting for the drawing, when all the frame needs under the lock is the cells themselves: a
//! `memcpy` of each changed row. The buffers are reused from frame to frame.
//!
//! A row whose change is known to the column (`vt100::Screen::row_change`) is copied only in
//! the columns that changed: an echoed character copies and paints one cell, not the row.
//!
//! Hyperlinks are not carried: a frame that shows a pane's links resolves them through the
//! screen's link table, so it draws with `PaneView` under the lock.

use std::ops::Range;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::pane::paint_row;

/// Where one copied row's cells are.
#[derive(Debug, Clone, Copy)]
struct CopiedRow {
    /// The screen row.
    row: u16,
    /// The first column copied (0 for a whole row).
    col: u16,
    /// Whether the whole row was copied (else only the columns that changed).
    whole: bool,
    /// Where the cells start in `CopiedRows::cells`, and how many.
    start: usize,
    len: usize,
}

/// Copies of some of a screen's rows, cut to the width of the area they will be drawn in.
#[derive(Debug, Default)]
pub struct CopiedRows {
    /// The rows copied, in screen order.
    rows: Vec<CopiedRow>,
    cells: Vec<vt100::Cell>,
    /// The columns drawn (the area's width, or the screen's when narrower).
    cols: u16,
    /// The rows drawn (the area's height, or the screen's when lower).
    height: u16,
}

impl CopiedRows {
    /// Replaces the copy with `screen`'s rows that `PaneView::render_rows(area, .., redraw)`
    /// would draw: those whose entry in `redraw` is true, and every row past its end. Keeps
    /// the buffers' memory.
    pub fn copy_from(&mut self, screen: &vt100::Screen, area: Rect, redraw: &[bool]) {
        self.copy_changes(screen, area, redraw, &[]);
    }

    /// Like [`CopiedRows::copy_from`], but a row whose entry in `changed` is a range of
    /// columns is copied only there: the caller drew that row before as it was until those
    /// columns changed (see `vt100::Screen::row_change`). The range grows by a cell where a
    /// wide character straddles its edge, so the copy paints whole characters.
    pub fn copy_changes(
        &mut self,
        screen: &vt100::Screen,
        area: Rect,
        redraw: &[bool],
        changed: &[Option<Range<u16>>],
    ) {
        self.rows.clear();
        self.cells.clear();
        let (rows, cols) = screen.size();
        self.height = area.height.min(rows.get());
        self.cols = area.width.min(cols.get());
        for row in 0..self.height {
            if redraw.get(usize::from(row)) == Some(&false) {
                continue;
            }
            let Some(cells) = screen.row_cells(row) else {
                break;
            };
            let cells = &cells[..cells.len().min(usize::from(self.cols))];
            let (columns, whole) = match changed.get(usize::from(row)) {
                Some(Some(range)) => (whole_characters(cells, range), false),
                _ => (0..cells.len(), true),
            };
            self.rows.push(CopiedRow {
                row,
                whole,
                col: u16::try_from(columns.start).unwrap_or(u16::MAX),
                start: self.cells.len(),
                len: columns.len(),
            });
            self.cells.extend_from_slice(&cells[columns]);
        }
    }

    /// The columns of a row `width` cells wide that [`CopiedRows::paint`] paints for screen
    /// row `row`: all of them for a whole row, the copied ones for a part; None when the copy
    /// does not hold the row.
    pub fn columns(&self, row: u16, width: usize) -> Option<Range<usize>> {
        let copied = self.find(row)?;
        if copied.whole {
            return Some(0..width);
        }
        let start = usize::from(copied.col).min(width);
        Some(start..(start + copied.len).min(width))
    }

    /// How many rows the copy holds.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether the copy holds no row.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The copied row `row`, when the copy holds it.
    fn find(&self, row: u16) -> Option<&CopiedRow> {
        if row >= self.height {
            return None;
        }
        let at = self.rows.binary_search_by_key(&row, |r| r.row).ok()?;
        self.rows.get(at)
    }

    /// Paints copied screen row `row` into `targets`, the cells of its row from the first of
    /// [`CopiedRows::columns`] on, as [`CopiedRows::draw`] would (cells past the copy's columns
    /// are left as they are); false when the copy does not hold that row.
    pub fn paint(&self, row: u16, targets: &mut [ratatui::buffer::Cell]) -> bool {
        let Some(copied) = self.find(row) else {
            return false;
        };
        let Some(cells) = self.cells.get(copied.start..copied.start + copied.len) else {
            return false;
        };
        // The columns from the first painted one to the area's edge, where a wide character
        // is cut.
        let mut edge = usize::from(self.cols).saturating_sub(usize::from(copied.col));
        if copied.whole {
            edge = edge.min(targets.len());
        }
        let reach = targets.len().min(edge);
        let cells = &cells[..cells.len().min(reach)];
        paint_row(cells, edge, &mut targets[..reach], |_, _, _| {});
        true
    }

    /// Draws the copied rows into `area` of `buf` as `PaneView::render_rows` would have drawn
    /// them from the screen (without hyperlinks), leaving the other rows' cells (and a partly
    /// copied row's other columns) as they are.
    pub fn draw(&self, area: Rect, buf: &mut Buffer) {
        let frame = buf.area;
        let area = area.intersection(frame);
        let cols = area.width.min(self.cols);
        for copied in &self.rows {
            if copied.row >= area.height.min(self.height) {
                break;
            }
            let Some(cells) = self.cells.get(copied.start..copied.start + copied.len) else {
                break;
            };
            let edge = usize::from(cols).saturating_sub(usize::from(copied.col));
            let cells = &cells[..cells.len().min(edge)];
            let y = area.y + copied.row;
            let at = usize::from(y - frame.y) * usize::from(frame.width)
                + usize::from(area.x - frame.x)
                + usize::from(copied.col);
            let Some(targets) = buf.content.get_mut(at..at + edge) else {
                break;
            };
            paint_row(cells, edge, targets, |_, _, _| {});
        }
    }
}

/// Columns `range` of a row's `cells`, widened by a cell where a wide character straddles
/// either edge: painted from its first column, the part then shows what painting the whole
/// row shows there.
fn whole_characters(cells: &[vt100::Cell], range: &Range<u16>) -> Range<usize> {
    let len = cells.len();
    let mut start = usize::from(range.start).min(len);
    let mut end = usize::from(range.end).min(len);
    if start >= end {
        return start..start;
    }
    if start > 0 && cells[start - 1].is_wide() {
        start -= 1;
    }
    if end < len && cells[end - 1].is_wide() {
        end += 1;
    }
    start..end
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PaneView;
    use std::num::NonZeroU16;

    fn parser(rows: u16, cols: u16, bytes: &[u8]) -> vt100::Parser {
        let nz = |n: u16| NonZeroU16::new(n).unwrap_or(NonZeroU16::MIN);
        let mut parser = vt100::Parser::new(nz(rows), nz(cols), 0);
        parser.process(bytes);
        parser
    }

    /// What `PaneView::render_rows` draws and what a copy draws after the screen changed
    /// again must be the same: the copy is of the screen as it was.
    #[test]
    fn a_copy_draws_what_render_rows_drew_from_the_screen_then() {
        let mut p = parser(
            4,
            8,
            "ab\x1b[1;31mcd\x1b[0m\r\n中文x\x1b[4mu\r\n\x1b[7mrev\x1b[0m\r\nlast line!".as_bytes(),
        );
        let frame = Rect::new(0, 0, 10, 6);
        let area = Rect::new(1, 1, 7, 4);
        let redraw = [true, false, true];
        let mut expected = Buffer::with_lines([".........."; 6]);
        let mut got = expected.clone();
        assert_eq!(got.area, frame);
        PaneView {
            screen: p.screen(),
            highlights: &[],
        }
        .render_rows(area, &mut expected, None, &redraw);
        let mut copy = CopiedRows::default();
        copy.copy_from(p.screen(), area, &redraw);
        // Rows 0 and 2 are asked for, and row 3 is past the list.
        assert_eq!(copy.len(), 3);
        p.process(b"\x1b[2J\x1b[Hchanged");
        copy.draw(area, &mut got);
        assert_eq!(got, expected);
    }

    /// Painting one copied row into a row of cells gives what drawing the copy puts on that
    /// row (styles and wide characters included); a row the copy does not hold is not painted.
    #[test]
    fn painting_a_row_gives_the_row_the_copy_draws() {
        let p = parser(
            3,
            8,
            "ab\x1b[1;31mcd\x1b[0m\r\n中文x\x1b[4mu\r\nrest".as_bytes(),
        );
        let area = Rect::new(0, 0, 8, 3);
        let mut copy = CopiedRows::default();
        copy.copy_from(p.screen(), area, &[true, true, false]);
        let mut drawn = Buffer::empty(area);
        copy.draw(area, &mut drawn);
        for row in 0..2u16 {
            let mut cells = vec![ratatui::buffer::Cell::EMPTY; 8];
            assert!(copy.paint(row, &mut cells), "row {row} is in the copy");
            let start = usize::from(row) * 8;
            assert_eq!(cells, drawn.content[start..start + 8], "row {row}");
        }
        let mut cells = vec![ratatui::buffer::Cell::EMPTY; 8];
        assert!(!copy.paint(2, &mut cells), "row 2 was not copied");
        assert!(!copy.paint(7, &mut cells), "row 7 is past the screen");
        assert!(cells.iter().all(|c| *c == ratatui::buffer::Cell::EMPTY));
    }

    #[test]
    fn a_copy_reuses_its_buffers_and_forgets_the_last_rows() {
        let p = parser(3, 5, b"aaaaa\r\nbbbbb\r\nccccc");
        let area = Rect::new(0, 0, 5, 3);
        let mut copy = CopiedRows::default();
        copy.copy_from(p.screen(), area, &[true, true, true]);
        assert_eq!(copy.len(), 3);
        copy.copy_from(p.screen(), area, &[false, true, false]);
        assert_eq!(copy.len(), 1);
        let mut buf = Buffer::with_lines([".....", ".....", "....."]);
        copy.draw(area, &mut buf);
        assert_eq!(buf, Buffer::with_lines([".....", "bbbbb", "....."]));
        copy.copy_from(p.screen(), area, &[false, false, false]);
        assert!(copy.is_empty());
    }

    #[test]
    fn a_wide_character_cut_by_the_area_edge_shows_a_blank_as_pane_view_does() {
        let p = parser(1, 6, "abc中".as_bytes());
        let area = Rect::new(0, 0, 4, 1);
        let mut expected = Buffer::empty(area);
        PaneView {
            screen: p.screen(),
            highlights: &[],
        }
        .render_rows(area, &mut expected, None, &[true]);
        let mut copy = CopiedRows::default();
        copy.copy_from(p.screen(), area, &[true]);
        let mut got = Buffer::empty(area);
        copy.draw(area, &mut got);
        assert_eq!(got, expected);
        assert_eq!(got[(3, 0)].symbol(), " ");
    }
}
