use crate::term::BufWrite as _;
use alloc::{string::String, vec::Vec};

mod redraw_room; // calyx: room for a shell's redraw after a rewrap

#[derive(Clone, Debug)]
pub struct Grid {
    size: Size,
    pos: Pos,
    saved_pos: Pos,
    /// calyx: a ring (upstream: a `Vec`), so that a scroll of the whole
    /// screen, one per line of output that reaches the bottom, moves the
    /// ring's start instead of every row (`scroll_up`). Operations on part
    /// of the screen (a scroll region, inserted or deleted lines) work on
    /// `make_contiguous`'s slice, as they did on the `Vec`.
    rows: alloc::collections::VecDeque<crate::row::Row>,
    scroll_top: u16,
    scroll_bottom: u16,
    origin_mode: bool,
    saved_origin_mode: bool,
    scrollback: Option<ScrollbackState>,
    /// calyx: rewrap lines on a width change (the primary grid; the
    /// alternate grid's full-screen programs redraw themselves).
    reflow: bool,
    /// calyx: rows a shell may move up past its rewrapped line (see
    /// `redraw_room`).
    redraw_room: Option<redraw_room::RedrawRoom>,
    /// calyx: cell buffers dropped by the full scrollback, kept for the
    /// next scroll (see `Row::archive`).
    spares: crate::row::Spares,
    /// calyx: whether a scroll of the whole screen moves the ring's start
    /// (`rows`); off, every scroll rotates the rows as upstream did (the
    /// reference path the tests compare with).
    ring: bool,
}

#[derive(Clone, Debug)]
struct ScrollbackState {
    rows: alloc::collections::VecDeque<crate::row::Row>,
    capacity: usize,
    offset: usize,
    // calyx: `unbounded_len` (the scrollback an unbounded terminal would
    // hold) is gone: a height grow pulled that many rows back, blank ones
    // for the rows the bounded scrollback no longer held, which pushed the
    // content down. Only the rows it holds are pulled back now.
}

#[derive(Clone, Copy, Debug)]
pub enum Scrollback {
    Disabled,
    Enabled { capacity: usize },
}

impl Grid {
    pub fn new(size: Size, scrollback: Scrollback) -> Self {
        let scrollback = match scrollback {
            Scrollback::Disabled => None,
            Scrollback::Enabled { capacity } => Some(ScrollbackState {
                rows: alloc::collections::VecDeque::new(),
                capacity,
                offset: 0,
            }),
        };
        Self {
            size,
            pos: Pos::default(),
            saved_pos: Pos::default(),
            rows: alloc::collections::VecDeque::new(),
            scroll_top: 0,
            scroll_bottom: size.rows() - 1,
            origin_mode: false,
            saved_origin_mode: false,
            scrollback,
            reflow: false,
            redraw_room: None,
            spares: crate::row::Spares::default(),
            ring: true,
        }
    }

    /// calyx: makes a width change rewrap the lines of this grid (see
    /// `reflow`) instead of cutting its rows.
    pub fn with_reflow(mut self) -> Self {
        self.reflow = true;
        self
    }

    /// calyx: see `ring`.
    pub fn set_ring(&mut self, ring: bool) {
        self.ring = ring;
    }

    pub fn ring(&self) -> bool {
        self.ring
    }

    pub fn allocate_rows(&mut self) {
        if self.rows.is_empty() {
            self.rows.resize_with(usize::from(self.size.rows()), || {
                crate::row::Row::new(self.size.cols())
            });
        }
    }

    pub fn clear(&mut self) {
        self.end_redraw_room();
        self.pos = Pos::default();
        self.saved_pos = Pos::default();
        for row in self.drawing_rows_mut() {
            row.reset();
        }
        self.scroll_top = 0;
        self.scroll_bottom = self.size.rows() - 1;
        self.origin_mode = false;
        self.saved_origin_mode = false;
    }

    pub fn size(&self) -> Size {
        self.size
    }

    pub fn set_size<F>(&mut self, size: Size, mut on_row: F)
    where
        F: FnMut(&crate::row::Row),
    {
        if size == self.size {
            return;
        }

        // xterm always resets the scroll region and scrollback offset when the
        // screen is resized.
        self.scroll_top = 0;
        self.scroll_bottom = self.size.rows() - 1;
        if let Some(scrollback) = &mut self.scrollback {
            scrollback.offset = 0;
        }

        // calyx: rewrap at the new width first (at the old height), then
        // change the height as upstream does.
        let rewrapped = self.reflow
            && size.cols() != self.size.cols()
            && !self.rows.is_empty();
        let drawn_above = self.drawn_rows_above();
        if rewrapped {
            self.reflow(size.cols(), &mut on_row);
        }

        let new_row = || crate::row::Row::new(size.cols());
        let diff = self.size.rows().abs_diff(size.rows());
        // `rows` might be empty if this is the alternate screen and the rows
        // haven't been allocated (Self::allocate_rows) yet.
        let is_empty = self.rows.is_empty();
        let pos_diff = if is_empty {
            0
        } else if size.rows() < self.size.rows() {
            let num_excess_bottom = self.size.rows() - self.pos.row - 1;
            let num_pushed = diff.saturating_sub(num_excess_bottom);
            self.scroll_up(num_pushed, on_row);
            self.rows.truncate(size.rows().into());
            num_pushed
        } else if let Some(scrollback) = &mut self.scrollback {
            // calyx: pull back the rows the scrollback holds, and no more:
            // blank rows go at the bottom, and the content stays put.
            let num_pulled = scrollback.rows.len().min(usize::from(diff));
            let pulled = scrollback
                .rows
                .drain(scrollback.rows.len() - num_pulled..);
            let mut rows: alloc::collections::VecDeque<_> = pulled.collect();
            rows.append(&mut self.rows);
            self.rows = rows;
            self.rows.resize_with(size.rows().into(), new_row);
            // at most `diff`, a u16
            u16::try_from(num_pulled).unwrap_or(diff)
        } else {
            self.rows.resize_with(size.rows().into(), new_row);
            0
        };

        if let Some(row) = self.rows.back_mut() {
            // The last row is maintained to always be a valid row
            row.wrap(false);
        }
        for row in &mut self.rows {
            if self.reflow {
                // calyx: the rows are at the new width already, but for
                // scrollback rows pulled back (trimmed): grow them, keeping
                // their `wrapped`.
                row.grow(size.cols(), crate::Cell::new());
            } else {
                row.resize(size.cols(), crate::Cell::new());
            }
        }

        // Maintain the cursor position relative to the bottom-left corner of
        // the screen.
        if size.rows() < self.size.rows() {
            self.pos.row = self.pos.row.saturating_sub(pos_diff);
            self.saved_pos.row = self
                .saved_pos
                .row
                .saturating_sub(pos_diff)
                .min(size.rows() - 1);
        } else {
            self.pos.row += pos_diff;
            self.saved_pos.row += pos_diff;
        }

        // calyx: a rewrapped cursor may wait past the last column (see
        // `reflow`); upstream clamped it onto the last character, where the
        // next one overwrote it.
        let max_col = size.cols() - u16::from(!self.reflow);
        self.pos.col = self.pos.col.min(max_col);
        self.saved_pos.col = self.saved_pos.col.min(size.cols() - 1);
        self.scroll_bottom = size.rows() - 1;
        let shrank =
            size.rows() < self.size.rows() || size.cols() < self.size.cols();
        self.size = size;
        // calyx: buffers kept for scrolling at the old width.
        self.spares.clear();
        if shrank {
            self.shrink_storage();
        }

        if self.reflow && !is_empty {
            self.make_redraw_room(drawn_above);
        }

        if !is_empty {
            debug_assert_eq!(self.rows.len(), usize::from(self.size.rows()));
        }
        debug_assert!(self.pos.row < self.size.rows());
        debug_assert!(self.pos.col <= max_col);
        debug_assert!(self.saved_pos.row < self.size.rows());
        debug_assert!(self.saved_pos.col < self.size.cols());
    }

    /// calyx: hands back the memory a shrink left unused. Upstream truncated
    /// rows and their cells in place, keeping the capacity: a pane that was
    /// once 3000x3000 kept a gigabyte after it shrank (issue 13). Rows whose
    /// storage is at most a quarter over their length are left alone.
    fn shrink_storage(&mut self) {
        let loose = |len: usize, cap: usize| cap > len + len / 4 + 8;
        if loose(self.rows.len(), self.rows.capacity()) {
            self.rows.shrink_to_fit();
        }
        for row in self.all_rows_mut() {
            if loose(row.len(), row.capacity()) {
                row.shrink_to_fit();
            }
        }
        if let Some(scrollback) = &mut self.scrollback {
            if loose(scrollback.rows.len(), scrollback.rows.capacity()) {
                scrollback.rows.shrink_to_fit();
            }
        }
    }

    /// calyx: rewraps the scrollback's and the screen's lines at `cols`
    /// columns, keeping the height, and re-splits them into scrollback and
    /// screen.
    ///
    /// Where the screen lands: blank rows at the bottom (below the cursor
    /// and the last row with anything on it) are free space, left out of
    /// the rewrap. With none (a full screen, the cursor usually on the last
    /// row), the bottom of the content stays on the bottom row: narrowing
    /// pushes rows into the scrollback and widening pulls them back, so the
    /// two undo each other. With some, the line at the top of the screen
    /// stays at the top, and rows go into the scrollback only when the
    /// content outgrows the screen. Either way the cursor stays on screen,
    /// on the same character; rows that end up below the screen (content
    /// under the cursor that grew) are lost, as on a height shrink.
    fn reflow<F>(&mut self, cols: u16, on_row: &mut F)
    where
        F: FnMut(&crate::row::Row),
    {
        let height = usize::from(self.size.rows());
        let content_rows = height - self.free_rows();
        self.rows.truncate(content_rows);
        let old = self
            .scrollback
            .as_mut()
            .map(|s| core::mem::take(&mut s.rows))
            .unwrap_or_default();
        let mut marks = ReflowMarks::new(self, old.len(), content_rows);
        let rows = old.into_iter().chain(self.rows.drain(..));
        let mut rows = crate::reflow::rewrap(
            rows,
            self.size.cols(),
            cols,
            &mut marks.cursor,
            &mut [&mut marks.saved, &mut marks.top],
        );

        let overflow = rows.len().saturating_sub(height);
        let first = if content_rows == height {
            overflow
        } else {
            marks.top.row.max(overflow)
        }
        .min(marks.cursor.row);
        for row in rows.drain((first + height).min(rows.len())..) {
            on_row(&row);
        }
        self.rows = rows.split_off(first).into();
        self.push_scrollback(rows, on_row);
        self.size.cols = core::num::NonZeroU16::new(cols)
            .unwrap_or(core::num::NonZeroU16::MIN);
        self.place_reflowed_cursors(&marks, first);
        self.rows
            .resize_with(height, || crate::row::Row::new(cols));
    }

    /// calyx: moves the cursor and the saved cursor to where `marks` (of
    /// `reflow`) say, the screen now starting at row `first` of the
    /// rewrapped rows, of which it holds `self.rows`.
    fn place_reflowed_cursors(&mut self, marks: &ReflowMarks, first: usize) {
        let to_screen = |row: usize| {
            u16::try_from(row)
                .unwrap_or(u16::MAX)
                .min(self.size.rows() - 1)
        };
        self.pos = Pos {
            // on screen: `first` was chosen so
            row: to_screen(marks.cursor.row.saturating_sub(first)),
            col: (marks.cursor.col + u16::from(marks.pending))
                .min(self.size.cols()),
        };
        let saved_row = match marks.saved_below {
            Some(below) => self.rows.len() + below,
            None => marks.saved.row.saturating_sub(first),
        };
        self.saved_pos = Pos {
            row: to_screen(saved_row),
            col: marks.saved.col.min(self.size.cols() - 1),
        };
    }

    /// calyx: the blank rows at the bottom of the screen, below the cursor.
    fn free_rows(&self) -> usize {
        let below_cursor = self.rows.len() - usize::from(self.pos.row) - 1;
        self.rows
            .iter()
            .rev()
            .take(below_cursor)
            .take_while(|row| row.is_blank())
            .count()
    }

    /// calyx: appends `rows` to the scrollback (trimmed, as `scroll_up`
    /// keeps them), dropping its oldest rows beyond the capacity; without
    /// a scrollback the rows are lost.
    fn push_scrollback<F>(
        &mut self,
        rows: Vec<crate::row::Row>,
        on_row: &mut F,
    ) where
        F: FnMut(&crate::row::Row),
    {
        let Some(scrollback) = &mut self.scrollback else {
            rows.iter().for_each(&mut *on_row);
            return;
        };
        scrollback.rows.extend(rows.into_iter().map(|mut row| {
            row.trim();
            row
        }));
        let excess =
            scrollback.rows.len().saturating_sub(scrollback.capacity);
        for row in scrollback.rows.drain(..excess) {
            on_row(&row);
        }
    }

    pub fn pos(&self) -> Pos {
        self.pos
    }

    pub fn set_pos(&mut self, mut pos: Pos) {
        self.end_redraw_room();
        if self.origin_mode {
            pos.row = pos.row.saturating_add(self.scroll_top);
        }
        self.pos = pos;
        self.row_clamp_top(self.origin_mode);
        self.row_clamp_bottom(self.origin_mode);
        self.col_clamp();
    }

    pub fn save_cursor(&mut self) {
        self.saved_pos = self.pos;
        self.saved_origin_mode = self.origin_mode;
    }

    pub fn restore_cursor(&mut self) {
        self.pos = self.saved_pos;
        self.origin_mode = self.saved_origin_mode;
    }

    pub fn visible_rows(&self) -> impl Iterator<Item = &crate::row::Row> {
        self.scrollback
            .as_ref()
            .map(|s| s.rows.iter().skip(s.rows.len() - s.offset))
            .into_iter()
            .flatten()
            .chain(&self.rows)
            .take(self.rows.len())
    }

    pub fn drawing_rows_mut(
        &mut self,
    ) -> impl Iterator<Item = &mut crate::row::Row> {
        self.rows.iter_mut()
    }

    // calyx: indexes directly instead of walking `visible_rows()` (a chained, skipping
    // iterator): renderers call this once per cell.
    pub fn visible_row(&self, row: u16) -> Option<&crate::row::Row> {
        let row = usize::from(row);
        if row >= self.rows.len() {
            return None;
        }
        match &self.scrollback {
            Some(s) if row < s.offset => {
                s.rows.get(s.rows.len() - s.offset + row)
            }
            Some(s) => self.rows.get(row - s.offset),
            None => self.rows.get(row),
        }
    }

    /// calyx: gives every changed screen row a fresh version (see
    /// `Row::version`). Scrollback rows were stamped while on screen.
    pub fn stamp_rows(&mut self) {
        for row in &mut self.rows {
            row.stamp();
        }
    }

    pub fn drawing_row(&self, row: u16) -> Option<&crate::row::Row> {
        self.rows.get(usize::from(row))
    }

    /// calyx: every row, screen and scrollback, for finding the hyperlinks in use.
    pub fn all_rows(&self) -> impl Iterator<Item = &crate::row::Row> {
        self.scrollback
            .as_ref()
            .map(|s| s.rows.iter())
            .into_iter()
            .flatten()
            .chain(self.rows.iter())
    }

    /// calyx: every row, screen and scrollback, for rewriting hyperlink indexes.
    pub fn all_rows_mut(
        &mut self,
    ) -> impl Iterator<Item = &mut crate::row::Row> {
        self.scrollback
            .as_mut()
            .map(|s| s.rows.iter_mut())
            .into_iter()
            .flatten()
            .chain(self.rows.iter_mut())
    }

    pub fn drawing_row_mut(
        &mut self,
        row: u16,
    ) -> Option<&mut crate::row::Row> {
        // calyx: indexes the ring (upstream walked an iterator to the row).
        self.rows.get_mut(usize::from(row))
    }

    pub fn current_row_mut(&mut self) -> &mut crate::row::Row {
        self.drawing_row_mut(self.pos.row)
            // we assume self.pos.row is always valid
            .unwrap()
    }

    pub fn visible_cell(&self, pos: Pos) -> Option<&crate::Cell> {
        self.visible_row(pos.row).and_then(|r| r.get(pos.col))
    }

    pub fn drawing_cell(&self, pos: Pos) -> Option<&crate::Cell> {
        self.drawing_row(pos.row).and_then(|r| r.get(pos.col))
    }

    pub fn drawing_cell_mut(&mut self, pos: Pos) -> Option<&mut crate::Cell> {
        self.drawing_row_mut(pos.row)
            .and_then(|r| r.get_mut(pos.col))
    }

    /// calyx: cells the buffers kept for scrolling have room for.
    pub fn spares_capacity(&self) -> usize {
        self.spares.capacity()
    }

    pub fn scrollback_capacity(&self) -> usize {
        self.scrollback.as_ref().map_or(0, |s| s.capacity)
    }

    pub fn scrollback_len(&self) -> usize {
        self.scrollback.as_ref().map_or(0, |s| s.rows.len())
    }

    pub fn scrollback(&self) -> usize {
        self.scrollback.as_ref().map_or(0, |s| s.offset)
    }

    /// Ensures every visible row of scrollback is at least the width of the
    /// screen.
    fn grow_visible_scrollback(scrollback: &mut ScrollbackState, size: Size) {
        let scrollback_len = scrollback.rows.len();
        scrollback
            .rows
            .iter_mut()
            .skip(scrollback_len - scrollback.offset)
            .take(size.rows().into())
            .for_each(|row| {
                row.grow(size.cols(), crate::cell::Cell::new());
            });
    }

    pub fn set_scrollback(&mut self, rows: usize) {
        let Some(scrollback) = &mut self.scrollback else {
            return;
        };
        scrollback.offset = rows.min(scrollback.rows.len());
        Self::grow_visible_scrollback(scrollback, self.size);
    }

    pub fn write_contents(&self, contents: &mut String) {
        let mut wrapping = false;
        for row in self.visible_rows() {
            row.write_contents(contents, 0, self.size.cols(), wrapping);
            if !row.wrapped() {
                contents.push('\n');
            }
            wrapping = row.wrapped();
        }

        while contents.ends_with('\n') {
            contents.truncate(contents.len() - 1);
        }
    }

    pub fn write_contents_formatted(
        &self,
        contents: &mut String,
    ) -> crate::attrs::Attrs {
        crate::term::ClearAttrs.write_buf(contents);
        crate::term::ClearScreen.write_buf(contents);

        let mut prev_attrs = crate::attrs::Attrs::default();
        let mut prev_pos = Pos::default();
        let mut wrapping = false;

        for (i, row) in self.visible_rows().enumerate() {
            // we limit the number of cols to a u16 (see Size), so
            // visible_rows() can never return more rows than will fit
            let i = i.try_into().unwrap();
            let (new_pos, new_attrs) = row.write_contents_formatted(
                contents,
                0,
                self.size.cols(),
                i,
                wrapping,
                Some(prev_pos),
                Some(prev_attrs),
                None,
            );
            prev_pos = new_pos;
            prev_attrs = new_attrs;
            wrapping = row.wrapped();
        }

        self.write_cursor_position_formatted(
            contents,
            Some(prev_pos),
            Some(prev_attrs),
        );

        prev_attrs
    }

    pub fn write_contents_formatted_basic(
        &self,
        writer: &mut impl alloc::fmt::Write,
        range: crate::capture::BasicFormattedCaptureRange<'_>,
    ) -> alloc::fmt::Result {
        fn write<'a>(
            rows: impl Iterator<Item = &'a crate::row::Row>,
            writer: &mut impl alloc::fmt::Write,
            state: &mut crate::capture::BasicFormattedCaptureState,
        ) -> alloc::fmt::Result {
            rows.map(crate::capture::RowContents)
                .try_for_each(|row| row.write_formatted_basic(writer, state))
        }
        match range {
            crate::capture::BasicFormattedCaptureRange::Full(state) => {
                if let Some(scrollback) = &self.scrollback {
                    write(scrollback.rows.iter(), writer, state)?;
                }
                write(self.rows.iter(), writer, state)
            }
            crate::capture::BasicFormattedCaptureRange::Visible => write(
                self.visible_rows(),
                writer,
                &mut crate::capture::BasicFormattedCaptureState::new(),
            ),
        }
    }

    pub fn write_contents_diff(
        &self,
        contents: &mut String,
        prev: &Self,
        mut prev_attrs: crate::attrs::Attrs,
    ) -> crate::attrs::Attrs {
        let mut prev_pos = prev.pos;
        let mut wrapping = false;
        let mut prev_wrapping = false;
        for (i, (row, prev_row)) in
            self.visible_rows().zip(prev.visible_rows()).enumerate()
        {
            // we limit the number of cols to a u16 (see Size), so
            // visible_rows() can never return more rows than will fit
            let i = i.try_into().unwrap();
            let (new_pos, new_attrs) = row.write_contents_diff(
                contents,
                prev_row,
                0,
                self.size.cols(),
                i,
                wrapping,
                prev_wrapping,
                prev_pos,
                prev_attrs,
            );
            prev_pos = new_pos;
            prev_attrs = new_attrs;
            wrapping = row.wrapped();
            prev_wrapping = prev_row.wrapped();
        }

        self.write_cursor_position_formatted(
            contents,
            Some(prev_pos),
            Some(prev_attrs),
        );

        prev_attrs
    }

    pub fn write_cursor_position_formatted(
        &self,
        contents: &mut String,
        prev_pos: Option<Pos>,
        prev_attrs: Option<crate::attrs::Attrs>,
    ) {
        let prev_attrs = prev_attrs.unwrap_or_default();
        // writing a character to the last column of a row doesn't wrap the
        // cursor immediately - it waits until the next character is actually
        // drawn. it is only possible for the cursor to have this kind of
        // position after drawing a character though, so if we end in this
        // position, we need to redraw the character at the end of the row.
        if prev_pos != Some(self.pos) && self.pos.col >= self.size.cols() {
            let mut pos = Pos {
                row: self.pos.row,
                col: self.size.cols() - 1,
            };
            if self
                .drawing_cell(pos)
                // we assume self.pos.row is always valid, and self.size.cols
                // - 1 is always a valid column
                .unwrap()
                .is_wide_continuation()
            {
                pos.col = self.size.cols() - 2;
            }
            let cell =
                // we assume self.pos.row is always valid, and self.size.cols
                // - 2 must be a valid column because self.size.cols - 1 is
                // always valid and we just checked that the cell at
                // self.size.cols - 1 is a wide continuation character, which
                // means that the first half of the wide character must be
                // before it
                self.drawing_cell(pos).unwrap();
            if cell.has_contents() {
                if let Some(prev_pos) = prev_pos {
                    crate::term::MoveFromTo::new(prev_pos, pos)
                        .write_buf(contents);
                } else {
                    crate::term::MoveTo::new(pos).write_buf(contents);
                }
                cell.attrs().write_escape_code_diff(contents, &prev_attrs);
                contents.push_str(cell.contents());
                prev_attrs.write_escape_code_diff(contents, cell.attrs());
            } else {
                // if the cell doesn't have contents, we can't have gotten
                // here by drawing a character in the last column. this means
                // that as far as i'm aware, we have to have reached here from
                // a newline when we were already after the end of an earlier
                // row. in the case where we are already after the end of an
                // earlier row, we can just write a few newlines, otherwise we
                // also need to do the same as above to get ourselves to after
                // the end of a row.
                let mut found = false;
                for i in (0..self.pos.row).rev() {
                    pos.row = i;
                    pos.col = self.size.cols() - 1;
                    if self
                        .drawing_cell(pos)
                        // i is always less than self.pos.row, which we assume
                        // to be always valid, so it must also be valid.
                        // self.size.cols - 1 is always a valid col.
                        .unwrap()
                        .is_wide_continuation()
                    {
                        pos.col = self.size.cols() - 2;
                    }
                    let cell = self
                        .drawing_cell(pos)
                        // i is always less than self.pos.row, which we assume
                        // to be always valid, so it must also be valid.
                        // self.size.cols - 2 is valid because self.size.cols
                        // - 1 is always valid, and col gets set to
                        // self.size.cols - 2 when the cell at self.size.cols
                        // - 1 is a wide continuation character, meaning that
                        // the first half of the wide character must be before
                        // it
                        .unwrap();
                    if cell.has_contents() {
                        if let Some(prev_pos) = prev_pos {
                            if prev_pos.row != i
                                || prev_pos.col < self.size.cols()
                            {
                                crate::term::MoveFromTo::new(prev_pos, pos)
                                    .write_buf(contents);
                                cell.attrs().write_escape_code_diff(
                                    contents,
                                    &prev_attrs,
                                );
                                contents.push_str(cell.contents());
                                prev_attrs.write_escape_code_diff(
                                    contents,
                                    cell.attrs(),
                                );
                            }
                        } else {
                            crate::term::MoveTo::new(pos).write_buf(contents);
                            cell.attrs().write_escape_code_diff(
                                contents,
                                &prev_attrs,
                            );
                            contents.push_str(cell.contents());
                            prev_attrs.write_escape_code_diff(
                                contents,
                                cell.attrs(),
                            );
                        }
                        contents.push_str(
                            &"\n".repeat(usize::from(self.pos.row - i)),
                        );
                        found = true;
                        break;
                    }
                }

                // this can happen if you get the cursor off the end of a row,
                // and then do something to clear the end of the current row
                // without moving the cursor (IL, DL, ED, EL, etc). we know
                // there can't be something in the last column because we
                // would have caught that above, so it should be safe to
                // overwrite it.
                if !found {
                    pos = Pos {
                        row: self.pos.row,
                        col: self.size.cols() - 1,
                    };
                    if let Some(prev_pos) = prev_pos {
                        crate::term::MoveFromTo::new(prev_pos, pos)
                            .write_buf(contents);
                    } else {
                        crate::term::MoveTo::new(pos).write_buf(contents);
                    }
                    contents.push(' ');
                    // we know that the cell has no contents, but it still may
                    // have drawing attributes (background color, etc)
                    let end_cell = self
                        .drawing_cell(pos)
                        // we assume self.pos.row is always valid, and
                        // self.size.cols - 1 is always a valid column
                        .unwrap();
                    end_cell
                        .attrs()
                        .write_escape_code_diff(contents, &prev_attrs);
                    crate::term::SaveCursor.write_buf(contents);
                    crate::term::Backspace.write_buf(contents);
                    crate::term::EraseChar::new(1).write_buf(contents);
                    crate::term::RestoreCursor.write_buf(contents);
                    prev_attrs
                        .write_escape_code_diff(contents, end_cell.attrs());
                }
            }
        } else if let Some(prev_pos) = prev_pos {
            crate::term::MoveFromTo::new(prev_pos, self.pos)
                .write_buf(contents);
        } else {
            crate::term::MoveTo::new(self.pos).write_buf(contents);
        }
    }

    pub fn erase_all(&mut self, attrs: crate::attrs::Attrs) {
        for row in self.drawing_rows_mut() {
            row.clear(attrs);
        }
        self.end_scrollback_line();
    }

    /// calyx: the screen's first row was erased whole, so the scrollback's
    /// last row no longer wraps into anything; left wrapped, a rewrap would
    /// glue it to whatever is printed there next.
    fn end_scrollback_line(&mut self) {
        if let Some(last) = self
            .scrollback
            .as_mut()
            .and_then(|scrollback| scrollback.rows.back_mut())
        {
            last.wrap(false);
        }
    }

    pub fn erase_all_forward(&mut self, attrs: crate::attrs::Attrs) {
        let pos = self.pos;
        for row in self.drawing_rows_mut().skip(usize::from(pos.row) + 1) {
            row.clear(attrs);
        }

        self.erase_row_forward(attrs);
    }

    pub fn erase_all_backward(&mut self, attrs: crate::attrs::Attrs) {
        let pos = self.pos;
        for row in self.drawing_rows_mut().take(usize::from(pos.row)) {
            row.clear(attrs);
        }
        if pos.row > 0 {
            self.end_scrollback_line();
        }

        self.erase_row_backward(attrs);
    }

    pub fn erase_all_scrollback<F>(&mut self, mut on_row: F)
    where
        F: FnMut(&crate::row::Row),
    {
        if let Some(scrollback) = &mut self.scrollback {
            for row in scrollback.rows.drain(..) {
                on_row(&row);
            }
            scrollback.offset = 0;
        }
        self.spares.clear(); // calyx: the history's memory goes back whole
    }

    pub fn erase_row(&mut self, attrs: crate::attrs::Attrs) {
        self.current_row_mut().clear(attrs);
    }

    pub fn erase_row_forward(&mut self, attrs: crate::attrs::Attrs) {
        let size = self.size;
        let pos = self.pos;
        let row = self.current_row_mut();
        for col in pos.col..size.cols() {
            row.erase(col, attrs);
        }
    }

    pub fn erase_row_backward(&mut self, attrs: crate::attrs::Attrs) {
        let size = self.size;
        let pos = self.pos;
        let row = self.current_row_mut();
        for col in 0..=pos.col.min(size.cols() - 1) {
            row.erase(col, attrs);
        }
    }

    pub fn insert_cells(&mut self, count: u16) {
        let pos = self.pos;
        let row = self.current_row_mut();
        row.insert(pos.col, count);
    }

    pub fn delete_cells(&mut self, count: u16) {
        let size = self.size;
        let pos = self.pos;
        let row = self.current_row_mut();
        row.remove(pos.col..pos.col.saturating_add(count).min(size.cols()));
    }

    pub fn erase_cells(&mut self, count: u16, attrs: crate::attrs::Attrs) {
        let size = self.size;
        let pos = self.pos;
        let row = self.current_row_mut();
        for col in pos.col..((pos.col.saturating_add(count)).min(size.cols()))
        {
            row.erase(col, attrs);
        }
    }

    pub fn insert_lines(&mut self, count: u16) {
        if count == 0 {
            return;
        }
        if !(self.scroll_top..=self.scroll_bottom).contains(&self.pos.row) {
            return;
        }
        let between = &mut self.rows.make_contiguous()
            [usize::from(self.pos.row)..=usize::from(self.scroll_bottom)];
        let num_between = between.len();
        let num_removed = usize::from(count).min(num_between);
        between.rotate_right(num_removed);
        for row in &mut between[..num_removed] {
            row.reset();
        }
        // self.scroll_bottom is maintained to always be a valid row
        self.rows[usize::from(self.scroll_bottom)].wrap(false);
    }

    pub fn delete_lines(&mut self, count: u16) {
        if !(self.scroll_top..=self.scroll_bottom).contains(&self.pos.row) {
            return;
        }
        let between = &mut self.rows.make_contiguous()
            [usize::from(self.pos.row)..=usize::from(self.scroll_bottom)];
        let num_between = between.len();
        let num_removed = usize::from(count).min(num_between);
        for row in &mut between[..num_removed] {
            row.reset();
        }
        between.rotate_left(num_removed);
    }

    pub fn scroll_up<F>(&mut self, count: u16, mut on_row: F)
    where
        F: FnMut(&crate::row::Row),
    {
        // This can be true even when `self.scrollback` is `None`; it controls
        // whether we call the `on_row` callback.
        let scrollback_enabled = self.scroll_top == 0;
        let top = usize::from(self.scroll_top);
        let bottom = usize::from(self.scroll_bottom);
        let num_between = bottom + 1 - top;
        let count = usize::from(count).min(num_between);

        // Number of to-be-removed rows.
        let num_removed = count.min(num_between);

        // calyx: the rows are rotated first, so the removed ones (reset or
        // archived below, in their order) are at the bottom: the rotation
        // then moves rows none of whose fields were just written, and the
        // cells the archive writes are not read back at once (a scroll per
        // line spent a tenth of its time waiting for them). A scroll of the
        // whole screen moves the ring's start (copying at most the removed
        // rows' 48-byte headers); upstream moved all of them, every line.
        if self.ring && top == 0 && bottom + 1 == self.rows.len() {
            self.rows.rotate_left(num_removed);
        } else {
            self.rows.make_contiguous()[top..=bottom]
                .rotate_left(num_removed);
        }
        let first_removed = bottom + 1 - num_removed;

        if let Some(scrollback) =
            self.scrollback.as_mut().filter(|_| scrollback_enabled)
        {
            // Number of rows that will be pushed to the scrollback.
            let num_pushed = count.min(scrollback.capacity);

            // Number of rows that will simply be reset rather than pushed to
            // the scrollback.
            let num_reset = num_removed - num_pushed;

            let first_pushed = first_removed + num_reset;
            for row in self.rows.range_mut(first_removed..first_pushed) {
                on_row(row);
                row.reset();
            }

            // calyx: each row goes into the scrollback without its trailing
            // blanks, its buffer swapped with a spare one or its cells
            // copied into one (`Row::archive`), and the row is left blank
            // where it is. Upstream moved the row there, trimmed it (a
            // reallocation) and allocated a new screen row: with a
            // scrollback, output that scrolls ran at a third of the speed.
            let cols = usize::from(self.size.cols());
            for row in self.rows.range_mut(first_pushed..=bottom) {
                let recycled = if scrollback.rows.len() >= scrollback.capacity
                {
                    scrollback.rows.pop_front().inspect(|row| on_row(row))
                } else {
                    None
                };
                scrollback
                    .rows
                    .push_back(row.archive(recycled, &mut self.spares));
                row.refill(cols);
            }

            if scrollback.offset > 0 {
                scrollback.offset = scrollback
                    .offset
                    .saturating_add(count)
                    .min(scrollback.rows.len());
            }
            Self::grow_visible_scrollback(scrollback, self.size);
        } else {
            for row in self.rows.range_mut(first_removed..=bottom) {
                if scrollback_enabled {
                    on_row(row);
                }
                row.reset();
            }
        }
    }

    pub fn scroll_down(&mut self, count: u16) {
        if count == 0 {
            return;
        }
        let top = usize::from(self.scroll_top);
        let bottom = usize::from(self.scroll_bottom);
        let num_removed = usize::from(count).min(bottom + 1 - top);
        // calyx: the whole screen moves the ring's start (see `scroll_up`).
        if self.ring && top == 0 && bottom + 1 == self.rows.len() {
            self.rows.rotate_right(num_removed);
        } else {
            self.rows.make_contiguous()[top..=bottom]
                .rotate_right(num_removed);
        }
        for row in self.rows.range_mut(top..top + num_removed) {
            row.reset();
        }
        // self.scroll_bottom is maintained to always be a valid row
        self.rows[usize::from(self.scroll_bottom)].wrap(false);
    }

    pub fn set_scroll_region(&mut self, top: u16, bottom: u16) {
        let bottom = bottom.min(self.size().rows() - 1);
        if top < bottom {
            self.scroll_top = top;
            self.scroll_bottom = bottom;
        } else {
            self.scroll_top = 0;
            self.scroll_bottom = self.size().rows() - 1;
        }
        self.pos.row = self.scroll_top;
        self.pos.col = 0;
    }

    fn in_scroll_region(&self) -> bool {
        self.pos.row >= self.scroll_top && self.pos.row <= self.scroll_bottom
    }

    pub fn set_origin_mode(&mut self, mode: bool) {
        self.origin_mode = mode;
        self.set_pos(Pos { row: 0, col: 0 });
    }

    pub fn row_inc_clamp(&mut self, count: u16) {
        let in_scroll_region = self.in_scroll_region();
        self.pos.row = self.pos.row.saturating_add(count);
        self.row_clamp_bottom(in_scroll_region);
    }

    pub fn row_inc_scroll<F>(&mut self, count: u16, on_row: F) -> u16
    where
        F: FnMut(&crate::row::Row),
    {
        self.end_redraw_room();
        let in_scroll_region = self.in_scroll_region();
        self.pos.row = self.pos.row.saturating_add(count);
        let lines = self.row_clamp_bottom(in_scroll_region);
        if in_scroll_region {
            self.scroll_up(lines, on_row);
            lines
        } else {
            0
        }
    }

    pub fn row_dec_clamp(&mut self, count: u16) {
        let in_scroll_region = self.in_scroll_region();
        self.pos.row = self.pos.row.saturating_sub(count);
        self.row_clamp_top(in_scroll_region);
    }

    pub fn row_dec_scroll(&mut self, count: u16) {
        let in_scroll_region = self.in_scroll_region();
        // need to account for clamping by both row_clamp_top and by
        // saturating_sub
        let extra_lines = count.saturating_sub(self.pos.row);
        self.pos.row = self.pos.row.saturating_sub(count);
        let lines = self.row_clamp_top(in_scroll_region);
        self.scroll_down(lines + extra_lines);
    }

    pub fn row_set(&mut self, i: u16) {
        self.end_redraw_room();
        self.pos.row = i;
        self.row_clamp();
    }

    pub fn col_inc(&mut self, count: u16) {
        self.pos.col = self.pos.col.saturating_add(count);
    }

    pub fn col_inc_clamp(&mut self, count: u16) {
        self.pos.col = self.pos.col.saturating_add(count);
        self.col_clamp();
    }

    pub fn col_dec(&mut self, count: u16) {
        self.pos.col = self.pos.col.saturating_sub(count);
    }

    pub fn col_tab(&mut self) {
        self.pos.col -= self.pos.col % 8;
        self.pos.col = self.pos.col.saturating_add(8);
        self.col_clamp();
    }

    pub fn col_set(&mut self, i: u16) {
        self.pos.col = i;
        self.col_clamp();
    }

    pub fn col_wrap<F>(&mut self, width: u16, wrap: bool, on_row: F)
    where
        F: FnMut(&crate::row::Row),
    {
        if self.pos.col <= self.size.cols() - width {
            // we haven't reached the end of the row yet
            return;
        }

        let mut prev_pos = self.pos;
        self.pos.col = 0;
        let scrolled = self.row_inc_scroll(1, on_row);
        if prev_pos.row == 0 && scrolled > 0 {
            // we're trying to scroll but we're already at the top of the
            // grid - this can happen when the grid height is set to 1. in
            // this case, we want to do the scrolling (via row_inc_scroll)
            // but don't want to set the wrap state (since it never makes
            // sense on a 1-height grid).
            return;
        }

        prev_pos.row -= scrolled;
        let new_pos = self.pos;
        self.drawing_row_mut(prev_pos.row)
            // we assume self.pos.row is always valid, and so prev_pos.row
            // must be valid because it is always less than or equal to
            // self.pos.row
            .unwrap()
            .wrap(wrap && prev_pos.row + 1 == new_pos.row);
    }

    fn row_clamp_top(&mut self, limit_to_scroll_region: bool) -> u16 {
        if limit_to_scroll_region && self.pos.row < self.scroll_top {
            let rows = self.scroll_top - self.pos.row;
            self.pos.row = self.scroll_top;
            rows
        } else {
            0
        }
    }

    fn row_clamp_bottom(&mut self, limit_to_scroll_region: bool) -> u16 {
        let bottom = if limit_to_scroll_region {
            self.scroll_bottom
        } else {
            self.size.rows() - 1
        };
        if self.pos.row > bottom {
            let rows = self.pos.row - bottom;
            self.pos.row = bottom;
            rows
        } else {
            0
        }
    }

    fn row_clamp(&mut self) {
        if self.pos.row > self.size.rows() - 1 {
            self.pos.row = self.size.rows() - 1;
        }
    }

    fn col_clamp(&mut self) {
        if self.pos.col > self.size.cols() - 1 {
            self.pos.col = self.size.cols() - 1;
        }
    }
}

/// calyx: the positions `Grid::reflow` carries through a rewrap.
struct ReflowMarks {
    cursor: crate::reflow::Mark,
    /// The cursor waited past a character in the last column (col ==
    /// cols) for the next one; `cursor` is on that character, and the
    /// cursor goes back to waiting after it.
    pending: bool,
    saved: crate::reflow::Mark,
    /// The saved cursor was this many rows below the content (in the blank
    /// rows left out of the rewrap).
    saved_below: Option<usize>,
    /// The first cell of the screen's top row.
    top: crate::reflow::Mark,
}

impl ReflowMarks {
    /// The marks of `grid`, whose screen starts at row `top_row` of the
    /// rows to rewrap and holds `content_rows` of them.
    fn new(grid: &Grid, top_row: usize, content_rows: usize) -> Self {
        let pending = grid.pos.col >= grid.size.cols();
        let saved_row = usize::from(grid.saved_pos.row);
        Self {
            cursor: crate::reflow::Mark {
                row: top_row + usize::from(grid.pos.row),
                col: grid.pos.col.min(grid.size.cols()) - u16::from(pending),
            },
            pending,
            saved: crate::reflow::Mark {
                row: top_row + saved_row,
                col: grid.saved_pos.col,
            },
            saved_below: saved_row.checked_sub(content_rows),
            top: crate::reflow::Mark {
                row: top_row,
                col: 0,
            },
        }
    }
}

#[derive(Copy, Clone, Debug, Eq, PartialEq)]
pub struct Size {
    pub rows: core::num::NonZeroU16,
    pub cols: core::num::NonZeroU16,
}

impl Size {
    pub fn rows(self) -> u16 {
        self.rows.get()
    }

    pub fn cols(self) -> u16 {
        self.cols.get()
    }
}

#[derive(Copy, Clone, Debug, Default, Eq, PartialEq)]
pub struct Pos {
    pub row: u16,
    pub col: u16,
}
