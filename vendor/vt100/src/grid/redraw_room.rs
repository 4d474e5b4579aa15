//! calyx: room for a shell's redraw after a resize rewrapped its line.
//!
//! A shell redraws its prompt and input line on SIGWINCH assuming the
//! terminal did not rewrap it: readline moves the cursor up over as many rows
//! as the line took at the width it last drew at, erasing each, and prints
//! the prompt there. When widening joined those rows into fewer, the moves
//! went on into the lines above and erased them: output the user had printed
//! vanished from the screen and from history (issue 15, item 2; tmux 3.3a
//! loses them the same way).
//!
//! So after a resize that left the cursor's line with fewer rows above the
//! cursor than the program last drew, the grid remembers the difference. A
//! cursor-up that would cross the top of that line from a row the program
//! has just erased does not move into the content above: the content moves
//! up instead (its top rows into the scrollback, nothing is lost), and the
//! cursor lands on blank rows, as the program expected. Anything else the
//! program does (a line feed, an absolute move, printing over the row) ends
//! the allowance: a program that does not redraw this way is never affected
//! beyond the first cursor-up from an erased row.

use super::Grid;

/// The rows a program may still move up past the top of the cursor's line
/// (see the module's doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RedrawRoom {
    /// The screen row the allowance starts at (the top of the cursor's line,
    /// then of the blank rows made so far).
    row: u16,
    /// How many more rows the program expects above it.
    spare: u16,
    /// The rows above the cursor in its line as the program last drew it:
    /// kept through several resizes before the program redraws.
    drawn_above: u16,
}

impl Grid {
    /// The rows of the cursor's logical line above the cursor, on screen.
    fn rows_above_cursor_in_line(&self) -> u16 {
        let mut above = 0;
        let mut row = usize::from(self.pos.row);
        while row > 0 && self.rows.get(row - 1).is_some_and(|r| r.wrapped()) {
            above += 1;
            row -= 1;
        }
        above
    }

    /// Before a resize: the rows above the cursor in its line as the
    /// program last drew them (an allowance still unused keeps its count:
    /// the program has not redrawn since).
    pub(super) fn drawn_rows_above(&self) -> u16 {
        self.redraw_room.map_or_else(
            || self.rows_above_cursor_in_line(),
            |room| room.drawn_above,
        )
    }

    /// After a resize: the allowance for a program that drew `drawn_above`
    /// rows above the cursor in its line.
    pub(super) fn make_redraw_room(&mut self, drawn_above: u16) {
        let above = self.rows_above_cursor_in_line();
        let top = self.pos.row - above;
        self.redraw_room =
            (drawn_above > above && top > 0).then(|| RedrawRoom {
                row: top,
                spare: drawn_above - above,
                drawn_above,
            });
    }

    /// Forgets the allowance: the program did something else than redraw.
    pub(super) fn end_redraw_room(&mut self) {
        self.redraw_room = None;
    }

    /// CUU: moves the cursor up `count` rows, within the allowance where it
    /// crosses the top of the cursor's line from an erased row (see the
    /// module's doc); `on_row` gets the rows the scrollback drops.
    pub fn row_dec_redraw<F>(&mut self, count: u16, on_row: F)
    where
        F: FnMut(&crate::row::Row),
    {
        let Some(room) = self.redraw_room else {
            return self.row_dec_clamp(count);
        };
        let target = self.pos.row.saturating_sub(count);
        let crossing = self.pos.row >= room.row && target < room.row;
        if !crossing {
            return self.row_dec_clamp(count);
        }
        let erased = self
            .rows
            .get(usize::from(self.pos.row))
            .is_some_and(|r| r.cells_slice().iter().all(crate::Cell::is_default));
        if !erased || self.scroll_top != 0 {
            self.end_redraw_room();
            return self.row_dec_clamp(count);
        }
        let made = (room.row - target).min(room.spare);
        // The content above the line moves up `made` rows (its top rows
        // into the scrollback); blank rows open just above the line.
        let bottom = self.scroll_bottom;
        self.scroll_bottom = room.row - 1;
        self.scroll_up(made, on_row);
        self.scroll_bottom = bottom;
        self.pos.row = target.max(room.row - made);
        let spare = room.spare - made;
        self.redraw_room = (spare > 0).then_some(RedrawRoom {
            row: room.row - made,
            spare,
            drawn_above: room.drawn_above,
        });
    }
}
