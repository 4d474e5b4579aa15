//! calyx: rewrapping rows at a new width, for `Grid::set_size` on the
//! primary grid.
//!
//! Upstream cut every row to the new width, so narrowing a pane and widening
//! it again lost the cells beyond the narrow width for good. Here the rows
//! are joined back into logical lines (a row continues the line when the row
//! before it is `wrapped`) and laid out again at the new width, as tmux,
//! kitty and other terminals do.

use alloc::vec::Vec;

use crate::cell::Cell;
use crate::row::Row;

/// A position carried through [`rewrap`]: a row index into the rows given
/// to it and a column on the way in, an index into the rows it returns and
/// a column on the way out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mark {
    pub row: usize,
    pub col: u16,
}

/// Where a [`Mark`] falls in the logical line being laid out.
struct Target<'a> {
    mark: &'a mut Mark,
    /// Cell offset into the line.
    offset: usize,
    /// Found a place in the new rows (else it is clamped to the last one).
    placed: bool,
}

/// Rewraps `rows` (oldest first, `old_cols` wide, or shorter when trimmed of
/// trailing blanks) at `cols` columns and returns the new rows, each `cols`
/// wide.
///
/// `cursor` moves to the same cell of its logical line, adding rows to the
/// line when it sat in blank space past the line's text (so the program's
/// next character lands where it would have); when that place is the start
/// of a row it would be alone on, it waits past the end of the row before
/// (column `cols`, as after printing in the last column) instead. Each of
/// `marks` moves the same way but never adds rows: past what the line's new
/// rows show, it is clamped to the end of the line's last row.
///
/// A line's trailing blank cells (no text) are not content: they may fill
/// the rest of its last row but never make a row of their own. Wide
/// characters are never split: one that does not fit at the end of a row
/// leaves a blank cell there and starts the next row. With `cols` < 2 wide
/// characters cannot be shown at all and are dropped (the parser, too,
/// ignores a character wider than the screen).
pub fn rewrap(
    rows: impl IntoIterator<Item = Row>,
    old_cols: u16,
    cols: u16,
    cursor: &mut Mark,
    marks: &mut [&mut Mark],
) -> Vec<Row> {
    let cols = cols.max(1);
    // Where the marks were: they are moved as their lines are laid out, and
    // must not be found again in a later line at their new place.
    let from: Vec<Mark> = core::iter::once(*cursor)
        .chain(marks.iter().map(|m| **m))
        .collect();
    let mut out = Vec::new();
    let mut line = Line::default();
    let mut rows = rows.into_iter().enumerate().peekable();
    while let Some((index, row)) = rows.next() {
        let next = rows.peek().map(|(_, next)| next);
        let ends_line = !row.wrapped() || next.is_none();
        let padded = next.is_some_and(|next| {
            next.cells_slice().first().is_some_and(Cell::is_wide)
        });
        line.push_row(index, &row, ends_line, old_cols, padded);
        if ends_line {
            line.lay_out(cols, &from, cursor, marks, &mut out);
            line.clear();
        }
    }
    out
}

/// The cells of one logical line, gathered from its rows.
#[derive(Default)]
struct Line {
    cells: Vec<Cell>,
    /// Index (into the input rows) of the line's first row.
    first_row: usize,
    /// Offset in `cells` where each of the line's rows starts.
    row_starts: Vec<usize>,
}

impl Line {
    fn clear(&mut self) {
        self.cells.clear();
        self.row_starts.clear();
    }

    /// Adds the next row of the line. A row the line continues past holds
    /// `cols` cells (the scrollback trims its blank ones: they are put
    /// back), but for a blank last one before a wide character that starts
    /// the next row (`padded`): the padding left where it did not fit.
    fn push_row(
        &mut self,
        index: usize,
        row: &Row,
        ends_line: bool,
        cols: u16,
        padded: bool,
    ) {
        if self.row_starts.is_empty() {
            self.first_row = index;
        }
        self.row_starts.push(self.cells.len());
        let cells = row.cells_slice();
        self.cells.extend_from_slice(cells);
        if ends_line {
            return;
        }
        let mut len = usize::from(cols).max(cells.len());
        if padded && cells.get(len - 1).is_none_or(Cell::is_default) {
            len -= 1;
        }
        self.cells.resize(
            self.row_starts[self.row_starts.len() - 1] + len,
            Cell::new(),
        );
    }

    /// The cell offset in this line of `mark`, if the mark is on one of its
    /// rows. On the last row a mark may lie past the stored cells (blank
    /// space); on an earlier row it is clamped to the row's end.
    fn offset_of(&self, mark: &Mark) -> Option<usize> {
        let row = mark.row.checked_sub(self.first_row)?;
        let start = *self.row_starts.get(row)?;
        let col = usize::from(mark.col);
        Some(match self.row_starts.get(row + 1) {
            Some(&next) => (start + col).min(next),
            None => start + col,
        })
    }

    /// Cells up to the end of the last one holding text (a wide character
    /// counts with its continuation cell).
    fn text_len(&self) -> usize {
        self.cells
            .iter()
            .rposition(|c| c.has_contents() || c.is_wide_continuation())
            .map_or(0, |i| i + 1)
    }

    /// Lays the line out in rows of `cols` cells, appended to `out`, and
    /// moves the cursor and the marks that were on it (at `from`: the
    /// cursor's place, then each mark's).
    fn lay_out(
        &self,
        cols: u16,
        from: &[Mark],
        cursor: &mut Mark,
        marks: &mut [&mut Mark],
        out: &mut Vec<Row>,
    ) {
        let mut targets: Vec<Target<'_>> = Vec::new();
        let mut needed = self.text_len();
        let (cursor_from, marks_from) = from.split_first().unzip();
        if let Some(offset) = cursor_from.and_then(|m| self.offset_of(m)) {
            needed = needed.max(offset);
            targets.push(Target {
                mark: cursor,
                offset,
                placed: false,
            });
        }
        let marks_from = marks_from.unwrap_or_default();
        for (mark, from) in marks.iter_mut().zip(marks_from) {
            if let Some(offset) = self.offset_of(from) {
                targets.push(Target {
                    mark,
                    offset,
                    placed: false,
                });
            }
        }
        let mut layout = Layout::new(cols, out, targets);
        let mut i = 0;
        while i < needed {
            i = layout.place(&self.cells, i, true);
        }
        layout.mark_end(i);
        // Trailing blanks only fill what is left of the last row.
        while i < self.cells.len() && layout.has_room() {
            i = layout.place(&self.cells, i, false);
        }
        layout.finish();
    }
}

/// Rows being filled with one logical line's cells.
struct Layout<'a, 'm> {
    cols: usize,
    out: &'a mut Vec<Row>,
    row: Vec<Cell>,
    targets: Vec<Target<'m>>,
}

impl<'a, 'm> Layout<'a, 'm> {
    fn new(
        cols: u16,
        out: &'a mut Vec<Row>,
        targets: Vec<Target<'m>>,
    ) -> Self {
        Self {
            cols: usize::from(cols),
            out,
            row: Vec::with_capacity(usize::from(cols)),
            targets,
        }
    }

    fn has_room(&self) -> bool {
        self.row.len() < self.cols
    }

    /// Places the cell at `i` of `cells` (blank past their end) and returns
    /// the index of the next one. A wide cell takes its continuation with
    /// it; a continuation whose wide cell is gone becomes a plain blank.
    /// `wrap`: start a new row when this one is full (else the caller has
    /// checked there is room).
    fn place(&mut self, cells: &[Cell], i: usize, wrap: bool) -> usize {
        let mut cell = cells.get(i).cloned().unwrap_or_else(Cell::new);
        if !cell.is_wide() {
            cell.set_wide_continuation(false);
            if wrap && !self.has_room() {
                self.break_row();
            }
            self.put(cell, i);
            return i + 1;
        }
        let next = cells.get(i + 1).filter(|c| c.is_wide_continuation());
        let after = if next.is_some() { i + 2 } else { i + 1 };
        if self.cols < 2 {
            // Cannot be shown at this width: the marks on it stay here.
            self.mark_here(i);
            self.mark_here(i + 1);
            return after;
        }
        if self.row.len() + 2 > self.cols {
            self.break_row();
        }
        let continuation = next.cloned().unwrap_or_else(|| {
            let mut c = Cell::new();
            c.set_wide_continuation(true);
            c
        });
        self.put(cell, i);
        self.put(continuation, i + 1);
        after
    }

    /// Places the cursor when it is past the cells laid out (at `offset`):
    /// on the next free cell, or waiting past the end of a full row.
    fn mark_end(&mut self, offset: usize) {
        if self.has_room() {
            self.mark_here(offset);
            return;
        }
        let row = self.out.len();
        let col = u16::try_from(self.cols).unwrap_or(u16::MAX);
        for t in &mut self.targets {
            if !t.placed && t.offset == offset {
                *t.mark = Mark { row, col };
                t.placed = true;
            }
        }
    }

    fn put(&mut self, cell: Cell, offset: usize) {
        self.mark_here(offset);
        self.row.push(cell);
    }

    /// Places the marks at `offset` on the next free cell of the row (the
    /// last column, when the row is full).
    fn mark_here(&mut self, offset: usize) {
        let col = self.row.len().min(self.cols - 1);
        let row = self.out.len();
        for t in &mut self.targets {
            if !t.placed && t.offset == offset {
                t.mark.row = row;
                t.mark.col = u16::try_from(col).unwrap_or(u16::MAX);
                t.placed = true;
            }
        }
    }

    /// Ends the current row (padding it with blanks) as wrapped.
    fn break_row(&mut self) {
        self.push_row(true);
    }

    fn push_row(&mut self, wrapped: bool) {
        let mut cells =
            core::mem::replace(&mut self.row, Vec::with_capacity(self.cols));
        cells.resize(self.cols, Cell::new());
        self.out.push(Row::from_cells(cells, wrapped));
    }

    /// Ends the line's last row; marks not placed yet (past what the rows
    /// show) go to the end of it.
    fn finish(mut self) {
        let offset = usize::MAX;
        for t in &mut self.targets {
            if !t.placed {
                t.offset = offset;
            }
        }
        self.mark_here(offset);
        self.push_row(false);
    }
}
