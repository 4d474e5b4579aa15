use crate::term::BufWrite as _;
use alloc::{string::String, vec::Vec};

/// calyx: source of row versions, shared by every screen so that a version
/// is never reused (a renderer compares versions across the normal and the
/// alternate grid, and across scrolls that move rows).
static NEXT_VERSION: core::sync::atomic::AtomicU64 =
    core::sync::atomic::AtomicU64::new(1);

/// calyx: `Row::changed` when any column may have changed.
const ANYWHERE: (u16, u16) = (0, u16::MAX);

#[derive(Clone, Debug)]
pub struct Row {
    cells: Vec<crate::Cell>,
    wrapped: bool,
    /// calyx: 0 while the row may have changed since it was last stamped,
    /// else a number no other row content ever had: two rows with the same
    /// non-zero version hold the same cells. Every `&mut self` method clears
    /// it first (a plain store on the hot path); [`Row::stamp`] gives a new
    /// one after each batch of output.
    version: u64,
    /// calyx: the version the row had before the change that `version`
    /// (or, while it is 0, the next stamp) stands for; 0 when unknown (a
    /// new row). With `changed` it says how the cells of version `prior`
    /// became the current ones, so that a renderer that drew `prior`
    /// repaints only those columns (see `Screen::row_change`).
    prior: u64,
    /// calyx: the columns `start..end` whose cells may differ from those
    /// of version `prior` (empty when only the `wrapped` flag changed;
    /// `0..u16::MAX` for anywhere). Cells outside it are the same.
    changed: (u16, u16),
    /// calyx: every cell from here on is blank with default attributes
    /// (`Cell::is_default`), so scrolling the row into the scrollback
    /// (`archive`) and resetting it touch only the cells before it. Text
    /// written through `get_mut` or `write_ascii` moves it exactly; every
    /// other change of the cells sets it to `usize::MAX` (anywhere: read
    /// it through `written_len`).
    written: usize,
}

impl Row {
    pub fn new(cols: u16) -> Self {
        Self {
            cells: vec![crate::Cell::new(); usize::from(cols)],
            wrapped: false,
            version: 0,
            prior: 0,
            changed: ANYWHERE,
            written: 0,
        }
    }

    /// calyx: a row holding `cells`, for rewrapping (see `reflow`).
    pub fn from_cells(cells: Vec<crate::Cell>, wrapped: bool) -> Self {
        Self {
            written: cells.len(),
            cells,
            wrapped,
            version: 0,
            prior: 0,
            changed: ANYWHERE,
        }
    }

    /// calyx: the row's version (0: changed since last stamped).
    pub fn version(&self) -> u64 {
        self.version
    }

    /// calyx: how the row became its current version: the version it had
    /// before and the columns that changed since (see `prior`). None
    /// while the row is not stamped or its previous version is unknown.
    pub fn change(&self) -> Option<(u64, core::ops::Range<u16>)> {
        if self.version == 0 || self.prior == 0 {
            return None;
        }
        let (start, end) = self.changed;
        let end = end.min(self.cols());
        Some((self.prior, start.min(end)..end))
    }

    /// calyx: marks the row changed (its version 0), remembering the
    /// version it had, without widening `changed`: for changes that leave
    /// every cell as it was (the `wrapped` flag).
    #[inline]
    fn changing(&mut self) {
        if self.version != 0 {
            self.prior = self.version;
            self.version = 0;
            self.changed = (u16::MAX, 0);
        }
    }

    /// calyx: marks the row changed in columns `start..end` (see
    /// `changed`); columns past `u16::MAX` count as the last.
    #[inline]
    fn touch(&mut self, start: usize, end: usize) {
        self.changing();
        let clamp = |c: usize| u16::try_from(c).unwrap_or(u16::MAX);
        self.changed.0 = self.changed.0.min(clamp(start));
        self.changed.1 = self.changed.1.max(clamp(end));
    }

    /// calyx: marks the row changed anywhere.
    #[inline]
    fn touch_all(&mut self) {
        self.touch(0, usize::MAX);
    }

    /// calyx: gives a changed row a fresh version.
    pub fn stamp(&mut self) {
        if self.version == 0 {
            self.version = NEXT_VERSION
                .fetch_add(1, core::sync::atomic::Ordering::Relaxed);
        }
    }

    fn cols(&self) -> u16 {
        self.cells
            .len()
            .try_into()
            // we limit the number of cols to a u16 (see Size)
            .unwrap()
    }

    pub fn clear(&mut self, attrs: crate::attrs::Attrs) {
        self.touch_all(); // calyx: changed
        self.written = usize::MAX; // calyx: anywhere
        for cell in &mut self.cells {
            cell.clear(attrs);
        }
        self.wrapped = false;
    }

    pub fn reset(&mut self) {
        self.touch_all(); // calyx: changed
        // calyx: the cells from `written` on are blank already.
        let written = self.written_len();
        self.cells[..written].fill(crate::Cell::new());
        self.written = 0;
        self.wrapped = false;
    }

    /// calyx: how many cells from the start may be other than blank with
    /// default attributes (see `written`).
    fn written_len(&self) -> usize {
        self.written.min(self.cells.len())
    }

    fn cells(&self) -> impl Iterator<Item = &crate::Cell> {
        self.cells.iter()
    }

    /// calyx: the row's cells as a slice, for renderers that read a row at a time.
    pub fn cells_slice(&self) -> &[crate::Cell] {
        &self.cells
    }

    /// calyx: mutable cells, for rewriting hyperlink indexes.
    pub fn cells_mut(&mut self) -> &mut [crate::Cell] {
        self.touch_all(); // calyx: changed
        self.written = usize::MAX; // calyx: anywhere
        &mut self.cells
    }

    pub fn get(&self, col: u16) -> Option<&crate::Cell> {
        self.cells.get(usize::from(col))
    }

    pub fn get_mut(&mut self, col: u16) -> Option<&mut crate::Cell> {
        // calyx: only this cell may change (see `written`, `changed`).
        let col = usize::from(col);
        self.touch(col, col + 1);
        if col < self.cells.len() {
            self.written = self.written.max(col + 1);
        }
        self.cells.get_mut(col)
    }

    /// Inserts empty cells without changing the size of the row.
    ///
    /// Cells at the end are dropped.
    pub fn insert(&mut self, i: u16, count: u16) {
        // calyx: the cells from `i` on move.
        self.touch(usize::from(i), usize::MAX);
        self.written = usize::MAX; // calyx: anywhere
        let count = usize::from(count).min(self.cells.len() - usize::from(i));
        if count == 0 {
            // Always "truncate", even when `count` is 0. However, because we
            // didn't actually insert any cells, we don't need to follow the
            // whole truncation procedure in `Self::set_truncated`; we can just
            // clear the `wrapped` flag.
            self.wrapped = false;
            return;
        }

        let is_wide_continuation = self.get_mut(i).is_some_and(|cell| {
            let is_wc = cell.is_wide_continuation();
            if is_wc {
                cell.set_wide_continuation(false);
            }
            is_wc
        });

        let slice = &mut self.cells[usize::from(i)..];
        slice.rotate_right(count);
        slice[..count].fill(crate::Cell::new());
        if is_wide_continuation {
            self.get_mut(i).unwrap().set_wide_continuation(true);
        }
        self.set_truncated();
    }

    /// Removes cells without changing the size of the row.
    ///
    /// Empty cells are added to the end.
    pub fn remove(&mut self, range: core::ops::Range<u16>) {
        // calyx: the cells from the range on move (`clear_wide` marks the
        // one before).
        self.touch(usize::from(range.start), usize::MAX);
        self.written = usize::MAX; // calyx: anywhere
        self.wrapped = false;
        if range.start >= range.end {
            return;
        }

        self.clear_wide(range.start);
        let last = range.end - 1;
        if last != range.start {
            self.clear_wide(last);
        }

        let count = usize::from(range.end - range.start);
        let slice = &mut self.cells[usize::from(range.start)..];
        slice[..count].fill(crate::Cell::new());
        slice.rotate_left(count);
    }

    pub fn erase(&mut self, i: u16, attrs: crate::attrs::Attrs) {
        // calyx: cell `i` (`clear_wide` marks its other half).
        self.touch(usize::from(i), usize::from(i) + 1);
        self.written = usize::MAX; // calyx: anywhere
        let wide = self.cells[usize::from(i)].is_wide();
        self.clear_wide(i);
        self.cells[usize::from(i)].clear(attrs);
        // `wide` is captured pre-erase on purpose: a 2-wide char occupies the
        // logical last column at cols() - 2. saturating_sub guards the
        // degenerate case of an orphaned wide cell in a one-column row, where
        // cols() - 2 would underflow.
        if i == self.cols().saturating_sub(if wide { 2 } else { 1 }) {
            self.wrapped = false;
        }
    }

    pub fn truncate(&mut self, len: u16) {
        self.touch_all(); // calyx: changed
        self.written = usize::MAX; // calyx: anywhere
        self.cells.truncate(usize::from(len));
        self.set_truncated();
    }

    fn set_truncated(&mut self) {
        // calyx: the last cell.
        self.touch(self.cells.len().saturating_sub(1), usize::MAX);
        self.written = usize::MAX; // calyx: anywhere
        self.wrapped = false;
        if let Some(last_cell) = self.cells.last_mut() {
            if last_cell.is_wide() {
                last_cell.clear(*last_cell.attrs());
            }
        }
    }

    fn grow_unchecked(&mut self, len: u16, cell: crate::Cell) {
        self.touch_all(); // calyx: changed
        self.written = usize::MAX; // calyx: anywhere
        debug_assert!(self.cells.len() < usize::from(len));
        self.cells.resize(len.into(), cell);
        self.wrapped = false;
    }

    /// Like [`Self::resize`], but never decreases the size of the row.
    pub fn grow(&mut self, len: u16, cell: crate::Cell) {
        self.touch_all(); // calyx: changed
        self.written = usize::MAX; // calyx: anywhere
        if self.cells.len() < usize::from(len) {
            // calyx: keeps `wrapped` (upstream cleared it): a scrollback row
            // trimmed of its trailing blanks and grown back to the screen's
            // width is the same row, still continued by the next one.
            self.cells.resize(len.into(), cell);
        }
    }

    pub fn resize(&mut self, len: u16, cell: crate::Cell) {
        self.touch_all(); // calyx: changed
        self.written = usize::MAX; // calyx: anywhere
        match usize::from(len).cmp(&self.cells.len()) {
            core::cmp::Ordering::Equal => {}
            core::cmp::Ordering::Less => {
                self.truncate(len);
            }
            core::cmp::Ordering::Greater => {
                self.grow_unchecked(len, cell);
            }
        }
    }

    /// calyx: writes printable ASCII `text` (each byte a one-column
    /// character) into the cells from `col` on, exactly as writing it a
    /// character at a time through `Screen::text` would: a wide character
    /// whose right half the first byte covers is cleared, and a wide
    /// character whose left half the last byte covers leaves a blank (with
    /// the pen's attributes) in its right half. The caller keeps `text`
    /// within the row.
    pub fn write_ascii(
        &mut self,
        col: u16,
        text: &[u8],
        attrs: crate::attrs::Attrs,
    ) {
        let start = usize::from(col);
        let end = start + text.len();
        self.touch(start, end); // calyx: changed (`finish_run` marks around)
        // Writing a character over the left half of a wide one blanks its
        // right half; the next character then overwrites that blank, so
        // only the last one can leave it (and a blanked cell is no longer
        // wide). Each cell's old wideness is read just before it is
        // written.
        let mut blanks_next = false;
        for (cell, &byte) in self.cells[start..end].iter_mut().zip(text) {
            blanks_next = !blanks_next && cell.is_wide();
            cell.set_ascii(byte, attrs);
        }
        self.finish_run(start, end, attrs, blanks_next);
    }

    /// calyx: `write_ascii` for one-column characters (their width already
    /// looked up) that are not all ASCII: writes as many as fit from `col`
    /// and returns how many, and the last.
    pub fn write_narrow(
        &mut self,
        col: u16,
        chars: impl Iterator<Item = char>,
        attrs: crate::attrs::Attrs,
    ) -> (usize, Option<char>) {
        let start = usize::from(col).min(self.cells.len());
        let mut count = 0;
        let mut last = None;
        let mut blanks_next = false;
        for (cell, c) in self.cells[start..].iter_mut().zip(chars) {
            blanks_next = !blanks_next && cell.is_wide();
            cell.set_narrow(c, attrs);
            count += 1;
            last = Some(c);
        }
        self.touch(start, start + count); // calyx: changed
        self.finish_run(start, start + count, attrs, blanks_next);
        (count, last)
    }

    /// The clean-up around cells `start..end` just written as a run: a
    /// wide character whose right half the first covers is cleared, and
    /// the blank a wide character whose left half the last covered leaves
    /// (`blanks_next`).
    fn finish_run(
        &mut self,
        start: usize,
        end: usize,
        attrs: crate::attrs::Attrs,
        blanks_next: bool,
    ) {
        if start == end {
            return;
        }
        if let Some(p) = start.checked_sub(1) {
            if self.cells[p].is_wide() {
                let prev = &mut self.cells[p];
                let prev_attrs = *prev.attrs();
                prev.clear(prev_attrs);
                self.touch(p, p + 1); // calyx: changed
            }
        }
        let mut written = end;
        if blanks_next {
            if let Some(next) = self.cells.get_mut(end) {
                next.set(' ', attrs);
                written = end + 1;
                self.touch(end, end + 1); // calyx: changed
            }
        }
        self.written = self.written.max(written);
    }

    /// calyx: a copy of the row without its trailing blank cells (what
    /// `trim` leaves), for the scrollback, and resets the row. The copy goes
    /// into `recycled`'s buffer, or one of `spares`, when that fits it
    /// without wasting much (rows dropped from a full scrollback), saving an
    /// allocation per scrolled line; a buffer that fits nothing now joins
    /// `spares` (see `Spares`) for a later scroll instead of being freed.
    ///
    /// The row may be left with fewer cells than `cols` (a swapped-in
    /// buffer, still to be blanked): the caller calls `refill(cols)` once it
    /// has stored the archived row. Blanking the buffer last lets the
    /// processor drain those stores while it goes on, instead of waiting
    /// for them to read the archived row back (a tenth of a scrolling
    /// pane's time).
    pub fn archive(
        &mut self,
        recycled: Option<Self>,
        spares: &mut crate::row::Spares,
    ) -> Self {
        // calyx: the cells from `written` on are blank: not looked at.
        let written = self.written_len();
        let blanks = self.cells[..written]
            .iter()
            .rev()
            .take_while(|c| c.is_default())
            .count();
        let len = written - blanks;
        let keeps = |capacity: usize| (len..=2 * len + 8).contains(&capacity);
        // The buffer the full scrollback dropped is used when it fits (the
        // usual case), a kept spare when it does not; an unused one is kept.
        let mut recycled = recycled.map(|row| row.cells);
        // A row that fills most of its width goes to the scrollback as it
        // is (its buffer wastes no more than a copy's may), and a buffer
        // that fits the width without wasting more than a quarter (as
        // `Grid::shrink_storage` allows) becomes the screen row: no copy of
        // the cells.
        let cols = self.cells.len();
        if keeps(self.cells.capacity()) {
            let fits_row = |c: usize| (cols..=cols + cols / 4).contains(&c);
            let screen_row = recycled
                .take_if(|c| fits_row(c.capacity()))
                .or_else(|| spares.take(fits_row));
            if let Some(mut screen_row) = screen_row {
                if let Some(unused) = recycled {
                    spares.give(unused);
                }
                // Filled with blanks by `refill`, after the caller has put
                // the archived row away.
                screen_row.clear();
                let mut cells =
                    core::mem::replace(&mut self.cells, screen_row);
                cells.truncate(len);
                let archived = Self {
                    written: len,
                    cells,
                    wrapped: self.wrapped,
                    version: 0,
                    prior: 0,
                    changed: ANYWHERE,
                };
                self.touch_all();
                self.written = 0;
                self.wrapped = false;
                return archived;
            }
        }
        // A new buffer for a mostly full row is as wide as the screen, so
        // that it can become a screen row in a later swap.
        let mut cells = recycled
            .take_if(|c| keeps(c.capacity()))
            .or_else(|| spares.take(keeps))
            .unwrap_or_else(|| {
                Vec::with_capacity(if keeps(cols) { cols } else { len })
            });
        if let Some(unused) = recycled {
            spares.give(unused);
        }
        cells.clear();
        cells.extend_from_slice(&self.cells[..len]);
        let archived = Self {
            written: cells.len(),
            cells,
            wrapped: self.wrapped,
            version: 0,
            prior: 0,
            changed: ANYWHERE,
        };
        self.reset();
        archived
    }

    /// calyx: gives a row `archive` left short its `cols` blank cells.
    pub fn refill(&mut self, cols: usize) {
        if self.cells.len() < cols {
            self.cells.resize(cols, crate::Cell::new());
        }
    }

    /// calyx: the number of cells in the row.
    pub fn len(&self) -> usize {
        self.cells.len()
    }

    /// calyx: cells the row's storage holds room for (see
    /// `Grid::shrink_storage`).
    pub fn capacity(&self) -> usize {
        self.cells.capacity()
    }

    /// calyx: gives back storage beyond the row's length. Reading the
    /// cells does not change them, so the row's version stays.
    pub fn shrink_to_fit(&mut self) {
        self.cells.shrink_to_fit();
    }

    /// Trims trailing blank cells from the row.
    pub fn trim(&mut self) {
        self.touch_all(); // calyx: changed
        self.written = usize::MAX; // calyx: anywhere
        let excess = self
            .cells
            .iter()
            .rev()
            .take_while(|c| **c == crate::cell::Cell::DEFAULT)
            .count();
        self.cells.truncate(self.cells.len() - excess);
        self.cells.shrink_to_fit();
    }

    pub fn wrap(&mut self, wrap: bool) {
        // calyx: no cell changes.
        self.changing();
        self.wrapped = wrap;
    }

    pub fn wrapped(&self) -> bool {
        self.wrapped
    }

    /// calyx: whether every cell is blank with default attributes (an erase
    /// with a background colour leaves cells that still show).
    pub fn is_blank(&self) -> bool {
        !self.wrapped && self.cells.iter().all(crate::Cell::is_default)
    }

    pub fn clear_wide(&mut self, col: u16) {
        // calyx: the cell and its other half, on either side.
        let at = usize::from(col);
        self.touch(at.saturating_sub(1), at + 2);
        self.written = usize::MAX; // calyx: anywhere
        let col_idx = usize::from(col);
        let cell = &self.cells[col_idx];
        let other = if cell.is_wide() {
            let next = col_idx + 1;
            if next >= self.cells.len() {
                // Wide char at the last column with no continuation
                // (e.g. a shrinking resize that split the pair).
                // Clear the cell in place instead of indexing past
                // the end.
                let attrs = *self.cells[col_idx].attrs();
                self.cells[col_idx].clear(attrs);
                return;
            }
            &mut self.cells[next]
        } else if cell.is_wide_continuation() {
            &mut self.cells[usize::from(col - 1)]
        } else {
            return;
        };
        other.clear(*other.attrs());
    }

    pub fn write_contents(
        &self,
        contents: &mut String,
        start: u16,
        width: u16,
        wrapping: bool,
    ) {
        let mut prev_was_wide = false;

        let mut prev_col = start;
        for (col, cell) in self
            .cells()
            .enumerate()
            .skip(usize::from(start))
            .take(usize::from(width))
        {
            if prev_was_wide {
                prev_was_wide = false;
                continue;
            }
            prev_was_wide = cell.is_wide();

            // we limit the number of cols to a u16 (see Size)
            let col: u16 = col.try_into().unwrap();
            if cell.has_contents() {
                for _ in 0..(col - prev_col) {
                    contents.push(' ');
                }
                prev_col += col - prev_col;

                contents.push_str(cell.contents());
                prev_col += if cell.is_wide() { 2 } else { 1 };
            }
        }
        if prev_col == start && wrapping {
            contents.push('\n');
        }
    }

    pub fn write_contents_formatted(
        &self,
        contents: &mut String,
        start: u16,
        width: u16,
        row: u16,
        wrapping: bool,
        prev_pos: Option<crate::grid::Pos>,
        prev_attrs: Option<crate::attrs::Attrs>,
        links: Option<&crate::link::LinkTable>,
    ) -> (crate::grid::Pos, crate::attrs::Attrs) {
        let mut prev_was_wide = false;

        let mut prev_pos = prev_pos.unwrap_or_else(|| {
            if wrapping {
                crate::grid::Pos {
                    row: row - 1,
                    col: self.cols(),
                }
            } else {
                crate::grid::Pos { row, col: start }
            }
        });
        let mut prev_attrs = prev_attrs.unwrap_or_default();

        let first_cell = &self.cells[usize::from(start)];
        if wrapping && first_cell == &crate::cell::Cell::DEFAULT {
            let default_attrs = crate::cell::Cell::DEFAULT.attrs();
            if prev_attrs != *default_attrs {
                default_attrs.write_escape_code_diff(contents, &prev_attrs);
                crate::link::write_change(contents, links, prev_attrs.link(), default_attrs.link());
                prev_attrs = *default_attrs;
            }
            contents.push(' ');
            crate::term::Backspace.write_buf(contents);
            crate::term::EraseChar::new(1).write_buf(contents);
            prev_pos = crate::grid::Pos { row, col: 0 };
        }

        let mut erase: Option<(u16, &crate::attrs::Attrs)> = None;
        for (col, cell) in self
            .cells()
            .enumerate()
            .skip(usize::from(start))
            .take(usize::from(width))
        {
            if prev_was_wide {
                prev_was_wide = false;
                continue;
            }
            prev_was_wide = cell.is_wide();

            // we limit the number of cols to a u16 (see Size)
            let col: u16 = col.try_into().unwrap();
            let pos = crate::grid::Pos { row, col };

            if let Some((prev_col, attrs)) = erase {
                if cell.has_contents() || cell.attrs() != attrs {
                    let new_pos = crate::grid::Pos { row, col: prev_col };
                    if wrapping
                        && prev_pos.row + 1 == new_pos.row
                        && prev_pos.col >= self.cols()
                    {
                        if new_pos.col > 0 {
                            contents.push_str(
                                &" ".repeat(usize::from(new_pos.col)),
                            );
                        } else {
                            contents.push(' ');
                            crate::term::Backspace.write_buf(contents);
                        }
                    } else {
                        crate::term::MoveFromTo::new(prev_pos, new_pos)
                            .write_buf(contents);
                    }
                    prev_pos = new_pos;
                    if &prev_attrs != attrs {
                        attrs.write_escape_code_diff(contents, &prev_attrs);
                        crate::link::write_change(contents, links, prev_attrs.link(), attrs.link());
                        prev_attrs = *attrs;
                    }
                    crate::term::EraseChar::new(pos.col - prev_col)
                        .write_buf(contents);
                    erase = None;
                }
            }

            if *cell != crate::cell::Cell::DEFAULT {
                let attrs = cell.attrs();
                if cell.has_contents() {
                    if pos != prev_pos {
                        if !wrapping
                            || prev_pos.row + 1 != pos.row
                            || prev_pos.col
                                < self.cols() - u16::from(cell.is_wide())
                            || pos.col != 0
                        {
                            crate::term::MoveFromTo::new(prev_pos, pos)
                                .write_buf(contents);
                        }
                        prev_pos = pos;
                    }

                    if &prev_attrs != attrs {
                        attrs.write_escape_code_diff(contents, &prev_attrs);
                        crate::link::write_change(contents, links, prev_attrs.link(), attrs.link());
                        prev_attrs = *attrs;
                    }

                    prev_pos.col += if cell.is_wide() { 2 } else { 1 };
                    let cell_contents = cell.contents();
                    contents.push_str(cell_contents);
                } else if erase.is_none() {
                    erase = Some((pos.col, attrs));
                }
            }
        }
        if let Some((prev_col, attrs)) = erase {
            let new_pos = crate::grid::Pos { row, col: prev_col };
            if wrapping
                && prev_pos.row + 1 == new_pos.row
                && prev_pos.col >= self.cols()
            {
                if new_pos.col > 0 {
                    contents.push_str(&" ".repeat(usize::from(new_pos.col)));
                } else {
                    contents.push(' ');
                    crate::term::Backspace.write_buf(contents);
                }
            } else {
                crate::term::MoveFromTo::new(prev_pos, new_pos)
                    .write_buf(contents);
            }
            prev_pos = new_pos;
            if &prev_attrs != attrs {
                attrs.write_escape_code_diff(contents, &prev_attrs);
                crate::link::write_change(contents, links, prev_attrs.link(), attrs.link());
                prev_attrs = *attrs;
            }
            crate::term::ClearRowForward.write_buf(contents);
        }

        // calyx: with links, every row closes its own (rows are written one by one).
        if links.is_some() && prev_attrs.link() != 0 {
            crate::link::write_change(contents, links, prev_attrs.link(), 0);
            prev_attrs.set_link(0);
        }
        (prev_pos, prev_attrs)
    }

    pub fn write_contents_formatted_basic(
        &self,
        writer: &mut impl alloc::fmt::Write,
        current_attrs: &mut crate::attrs::Attrs,
    ) -> alloc::fmt::Result {
        let mut prev_was_wide = false;
        let mut num_empty = 0;

        for cell in self.cells() {
            if core::mem::take(&mut prev_was_wide) {
                continue;
            }
            prev_was_wide = cell.is_wide();

            if *cell == crate::cell::Cell::DEFAULT {
                num_empty += 1;
                continue;
            }

            for _ in 0..core::mem::take(&mut num_empty) {
                writer.write_char(' ')?;
            }

            let new_attrs = *cell.attrs();
            new_attrs.write_escape_code_diff_fmt(writer, current_attrs)?;
            *current_attrs = new_attrs;
            if cell.has_contents() {
                writer.write_str(cell.contents())?;
            } else {
                writer.write_char(' ')?;
            }
        }
        Ok(())
    }

    // while it's true that most of the logic in this is identical to
    // write_contents_formatted, i can't figure out how to break out the
    // common parts without making things noticeably slower.
    pub fn write_contents_diff(
        &self,
        contents: &mut String,
        prev: &Self,
        start: u16,
        width: u16,
        row: u16,
        wrapping: bool,
        prev_wrapping: bool,
        mut prev_pos: crate::grid::Pos,
        mut prev_attrs: crate::attrs::Attrs,
    ) -> (crate::grid::Pos, crate::attrs::Attrs) {
        let mut prev_was_wide = false;

        let first_cell = &self.cells[usize::from(start)];
        let prev_first_cell = &prev.cells[usize::from(start)];
        if wrapping
            && !prev_wrapping
            && first_cell == prev_first_cell
            && prev_pos.row + 1 == row
            && prev_pos.col
                >= self.cols() - u16::from(prev_first_cell.is_wide())
        {
            let first_cell_attrs = first_cell.attrs();
            if &prev_attrs != first_cell_attrs {
                first_cell_attrs
                    .write_escape_code_diff(contents, &prev_attrs);
                prev_attrs = *first_cell_attrs;
            }
            let mut cell_contents = prev_first_cell.contents();
            let need_erase = if cell_contents.is_empty() {
                cell_contents = " ";
                true
            } else {
                false
            };
            contents.push_str(cell_contents);
            crate::term::Backspace.write_buf(contents);
            if prev_first_cell.is_wide() {
                crate::term::Backspace.write_buf(contents);
            }
            if need_erase {
                crate::term::EraseChar::new(1).write_buf(contents);
            }
            prev_pos = crate::grid::Pos { row, col: 0 };
        }

        let mut erase: Option<(u16, &crate::attrs::Attrs)> = None;
        for (col, (cell, prev_cell)) in self
            .cells()
            .zip(prev.cells())
            .enumerate()
            .skip(usize::from(start))
            .take(usize::from(width))
        {
            if prev_was_wide {
                prev_was_wide = false;
                continue;
            }
            prev_was_wide = cell.is_wide();

            // we limit the number of cols to a u16 (see Size)
            let col: u16 = col.try_into().unwrap();
            let pos = crate::grid::Pos { row, col };

            if let Some((prev_col, attrs)) = erase {
                if cell.has_contents() || cell.attrs() != attrs {
                    let new_pos = crate::grid::Pos { row, col: prev_col };
                    if wrapping
                        && prev_pos.row + 1 == new_pos.row
                        && prev_pos.col >= self.cols()
                    {
                        if new_pos.col > 0 {
                            contents.push_str(
                                &" ".repeat(usize::from(new_pos.col)),
                            );
                        } else {
                            contents.push(' ');
                            crate::term::Backspace.write_buf(contents);
                        }
                    } else {
                        crate::term::MoveFromTo::new(prev_pos, new_pos)
                            .write_buf(contents);
                    }
                    prev_pos = new_pos;
                    if &prev_attrs != attrs {
                        attrs.write_escape_code_diff(contents, &prev_attrs);
                        prev_attrs = *attrs;
                    }
                    crate::term::EraseChar::new(pos.col - prev_col)
                        .write_buf(contents);
                    erase = None;
                }
            }

            if cell != prev_cell {
                let attrs = cell.attrs();
                if cell.has_contents() {
                    if pos != prev_pos {
                        if !wrapping
                            || prev_pos.row + 1 != pos.row
                            || prev_pos.col
                                < self.cols() - u16::from(cell.is_wide())
                            || pos.col != 0
                        {
                            crate::term::MoveFromTo::new(prev_pos, pos)
                                .write_buf(contents);
                        }
                        prev_pos = pos;
                    }

                    if &prev_attrs != attrs {
                        attrs.write_escape_code_diff(contents, &prev_attrs);
                        prev_attrs = *attrs;
                    }

                    prev_pos.col += if cell.is_wide() { 2 } else { 1 };
                    contents.push_str(cell.contents());
                } else if erase.is_none() {
                    erase = Some((pos.col, attrs));
                }
            }
        }
        if let Some((prev_col, attrs)) = erase {
            let new_pos = crate::grid::Pos { row, col: prev_col };
            if wrapping
                && prev_pos.row + 1 == new_pos.row
                && prev_pos.col >= self.cols()
            {
                if new_pos.col > 0 {
                    contents.push_str(&" ".repeat(usize::from(new_pos.col)));
                } else {
                    contents.push(' ');
                    crate::term::Backspace.write_buf(contents);
                }
            } else {
                crate::term::MoveFromTo::new(prev_pos, new_pos)
                    .write_buf(contents);
            }
            prev_pos = new_pos;
            if &prev_attrs != attrs {
                attrs.write_escape_code_diff(contents, &prev_attrs);
                prev_attrs = *attrs;
            }
            crate::term::ClearRowForward.write_buf(contents);
        }

        // if this row is going from wrapped to not wrapped, we need to erase
        // and redraw the last character to break wrapping. if this row is
        // wrapped, we need to redraw the last character without erasing it to
        // position the cursor after the end of the line correctly so that
        // drawing the next line can just start writing and be wrapped.
        if (!self.wrapped && prev.wrapped) || (!prev.wrapped && self.wrapped)
        {
            let end_pos = if self.cells[usize::from(self.cols() - 1)]
                .is_wide_continuation()
            {
                crate::grid::Pos {
                    row,
                    col: self.cols() - 2,
                }
            } else {
                crate::grid::Pos {
                    row,
                    col: self.cols() - 1,
                }
            };
            crate::term::MoveFromTo::new(prev_pos, end_pos)
                .write_buf(contents);
            prev_pos = end_pos;
            if !self.wrapped {
                crate::term::EraseChar::new(1).write_buf(contents);
            }
            let end_cell = &self.cells[usize::from(end_pos.col)];
            if end_cell.has_contents() {
                let attrs = end_cell.attrs();
                if &prev_attrs != attrs {
                    attrs.write_escape_code_diff(contents, &prev_attrs);
                    prev_attrs = *attrs;
                }
                contents.push_str(end_cell.contents());
                prev_pos.col += if end_cell.is_wide() { 2 } else { 1 };
            }
        }

        (prev_pos, prev_attrs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // An orphaned wide cell (wide flag set, no continuation) in a
    // one-column row must not make Row::erase underflow when it derives the
    // logical last column as cols() - 2. Covers the Copilot review note on
    // the clear_wide OOB fix: clear_wide itself was hardened, but its caller
    // erase computed cols() - 2 == 1 - 2 from the captured `wide` value.
    #[test]
    fn erase_wide_cell_in_one_column_row_does_not_underflow() {
        let attrs = crate::attrs::Attrs::default();
        let mut row = Row::new(1);
        // A 2-wide char in the only column: a wide cell with no room for a
        // continuation cell.
        row.get_mut(0).unwrap().set('中', attrs);
        assert!(row.get(0).unwrap().is_wide());

        row.erase(0, attrs);

        let cell = row.get(0).unwrap();
        assert!(!cell.is_wide(), "erased cell must no longer be wide");
        assert!(!cell.has_contents(), "erased cell must be empty");
    }
}

/// calyx: cell buffers of rows the full scrollback dropped that the row
/// being archived could not use (a short row's buffer when a full row
/// scrolls, or the other way round), kept for the next scroll instead of
/// being freed and allocated again: alternating long and short lines cost
/// an allocation and a free per line. At most `Spares::MAX` buffers, each
/// one a scrollback row held a moment ago, so the memory kept is bounded by
/// a few rows; `Grid::set_size` empties it.
#[derive(Clone, Debug, Default)]
pub struct Spares {
    buffers: Vec<Vec<crate::Cell>>,
}

impl Spares {
    /// More buffers than this are freed.
    const MAX: usize = 4;

    /// Keeps `cells` for later, freeing the longest kept one when enough
    /// are kept already (the newest is the likeliest to fit the next row).
    fn give(&mut self, cells: Vec<crate::Cell>) {
        if self.buffers.len() >= Self::MAX {
            self.buffers.remove(0);
        }
        self.buffers.push(cells);
    }

    /// A kept buffer whose capacity `fits`, the most recently kept first.
    fn take(
        &mut self,
        fits: impl Fn(usize) -> bool,
    ) -> Option<Vec<crate::Cell>> {
        let at = self.buffers.iter().rposition(|c| fits(c.capacity()))?;
        Some(self.buffers.remove(at))
    }

    /// Frees every kept buffer.
    pub fn clear(&mut self) {
        self.buffers = Vec::new();
    }

    /// Cells the kept buffers have room for.
    pub fn capacity(&self) -> usize {
        self.buffers.iter().map(Vec::capacity).sum()
    }
}
