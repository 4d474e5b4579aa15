//! The usual frame: only pane contents changed since the client's last frame (output, a
//! keystroke's echo). The shown frame is then updated in place: only the pane rows whose
//! version changed are saved, drawn and compared, so echoing one character costs one row, not
//! a whole frame composed and diffed cell by cell. A pane as wide as the terminal whose rows
//! moved up (output scrolling) is scrolled on the client's terminal with a scroll region, as
//! tmux does, so a new line costs one row too instead of the whole pane.

use calyx_tui::CopiedRows;
use ratatui::buffer::{Buffer, Cell};
use ratatui::layout::Rect;

use super::frame_cache::{PaneDrawn, PaneStamp};
use super::pane_rows::{
    changed_columns, drawn_in, pane_cursor, row_versions, rows_to_redraw, CursorSpot,
};
use crate::server::model::state::{lock_for_frame, State};
use crate::server::render::emit::{changed_cells, Span};
use crate::server::view::chrome::{Chrome, PaneSlot};

/// What updating in place did.
pub(super) struct Update {
    /// Scrolls to send before the rows: (first frame row, rows in the region, lines up).
    pub scrolls: Vec<(u16, u16, u16)>,
    /// The cells to send, in order: the changed part of each changed row (whole rows where a
    /// scroll left the border beside the pane wrong).
    pub spans: Vec<Span>,
    /// The panes as now drawn (a busy pane keeps its previous entry).
    pub stamps: Vec<PaneDrawn>,
    pub cursor: Option<CursorSpot>,
    /// A pane was busy: its rows are last frame's, draw again soon.
    pub incomplete: bool,
}

/// What to do with one pane, decided before the frame is touched.
enum Plan {
    /// Mid-parse: keep last frame's cells and stamp, draw again next frame.
    Busy(PaneDrawn),
    /// Nothing changed since the last frame; the cursor where the screen has it.
    Same(PaneDrawn, Option<CursorSpot>),
    /// Draw the rows copied out of the screen (those marked to redraw), after scrolling the
    /// pane up by `shift` rows. The terminal is no longer locked: the copy was taken under the
    /// lock, so the pane's reader goes on parsing while the frame draws.
    Draw {
        copy: CopiedRows,
        stamp: PaneStamp,
        rows: Vec<u64>,
        redraw: Vec<bool>,
        shift: u16,
        cursor: Option<CursorSpot>,
    },
}

/// Updates `buf` (the frame the client shows, drawn with this same `chrome`) to the panes'
/// current contents. None, with `buf` untouched, when the frame has to be composed whole: an
/// overlay or copy mode, a pane not drawn live last time, or hyperlinks in a changed row.
///
/// `copies` are the row copies' buffers, kept by the caller from frame to frame: taken from
/// for each pane drawn, and given back (with any that were not used) when the frame is done.
pub(super) fn update(
    state: &State,
    hyperlinks: bool,
    chrome: &Chrome,
    buf: &mut Buffer,
    previous: &[PaneDrawn],
    copies: &mut Vec<CopiedRows>,
) -> Option<Update> {
    if chrome.overlaid() || chrome.panes.iter().any(|s| s.copy) {
        return None;
    }
    let mut plans = Vec::with_capacity(chrome.panes.len());
    for slot in &chrome.panes {
        match plan(state, slot, previous, hyperlinks, buf.area, copies) {
            Some(plan) => plans.push(plan),
            None => {
                give_back(plans, copies);
                return None;
            }
        }
    }
    let mut update = Update {
        scrolls: Vec::new(),
        spans: Vec::new(),
        stamps: Vec::with_capacity(plans.len()),
        cursor: None,
        incomplete: false,
    };
    // The scratch row `draw_rows` paints into, kept across the frame's panes.
    let mut painted: Vec<Cell> = Vec::new();
    for (slot, plan) in chrome.panes.iter().zip(plans) {
        let (copy, stamp, rows, redraw, shift, cursor) = match plan {
            Plan::Busy(drawn) => {
                update.stamps.push(drawn);
                update.incomplete = true;
                continue;
            }
            Plan::Same(drawn, cursor) => {
                update.stamps.push(drawn);
                if slot.focused && chrome.pane_cursor {
                    update.cursor = cursor;
                }
                continue;
            }
            Plan::Draw {
                copy,
                stamp,
                rows,
                redraw,
                shift,
                cursor,
            } => (copy, stamp, rows, redraw, shift, cursor),
        };
        if shift > 0 {
            let forced = scroll(buf, slot.inner, shift);
            update.spans.extend(forced.into_iter().map(|y| Span {
                y,
                x0: buf.area.x,
                x1: buf.area.right(),
            }));
            update
                .scrolls
                .push((slot.inner.y, slot.inner.height, shift));
        }
        draw_rows(
            buf,
            slot.inner,
            &copy,
            &redraw,
            &mut painted,
            &mut update.spans,
        );
        copies.push(copy);
        if slot.focused && chrome.pane_cursor {
            update.cursor = cursor;
        }
        update.stamps.push(PaneDrawn { stamp, rows });
    }
    // A whole row sent makes any other span of it redundant.
    let whole: Vec<u16> = update
        .spans
        .iter()
        .filter(|s| s.x0 == buf.area.x && s.x1 == buf.area.right())
        .map(|s| s.y)
        .collect();
    update
        .spans
        .retain(|s| (s.x0 == buf.area.x && s.x1 == buf.area.right()) || !whole.contains(&s.y));
    update.spans.sort_unstable();
    update.spans.dedup();
    if let Some((x, y)) = chrome.prompt_cursor {
        update.cursor = Some(CursorSpot { x, y, style: 0 });
    }
    Some(update)
}

/// Draws the rows of `copy` marked in `redraw` into the pane's place `inner` of `buf`, and adds
/// the cells that changed to `spans`. Each row is painted aside (into `painted`) and compared
/// with the row shown, and only the cells that differ are copied in; a row copied in part (its
/// changed columns) is painted and compared there only. For an echo that is its one cell, not
/// the whole row copied, painted and compared three times over: on a machine whose caches the
/// typing went cold, those 26 KB of cells were most of the echo's frame.
fn draw_rows(
    buf: &mut Buffer,
    inner: Rect,
    copy: &CopiedRows,
    redraw: &[bool],
    painted: &mut Vec<Cell>,
    spans: &mut Vec<Span>,
) {
    let width = usize::from(buf.area.width);
    for (r, _) in redraw.iter().enumerate().filter(|(_, d)| **d) {
        let Ok(row) = u16::try_from(r) else {
            continue;
        };
        let y = inner.y.saturating_add(row);
        let Some(span) = span(buf.area, inner, y) else {
            continue;
        };
        // A row the copy does not hold (past the screen's rows) is drawn blank; one copied in
        // part is painted and compared in its changed columns only.
        let columns = copy.columns(row, span.len()).unwrap_or(0..span.len());
        painted.clear();
        painted.resize(columns.len(), Cell::EMPTY);
        copy.paint(row, painted);
        let shown = span.start + columns.start..span.start + columns.end;
        let Some(cells) = buf.content.get_mut(shown.clone()) else {
            continue;
        };
        if let Some((a, b)) = changed_cells(cells, painted) {
            cells[a..b].clone_from_slice(&painted[a..b]);
            let x = buf.area.x + (shown.start % width) as u16;
            spans.push(Span {
                y,
                x0: x + a as u16,
                x1: x + b as u16,
            });
        }
    }
}

/// The row copies' buffers of plans not drawn, back to the caller's store.
fn give_back(plans: Vec<Plan>, copies: &mut Vec<CopiedRows>) {
    copies.extend(plans.into_iter().filter_map(|plan| match plan {
        Plan::Draw { copy, .. } => Some(copy),
        _ => None,
    }));
}

/// Decides what to do with a pane, and copies the rows to draw (into a buffer from `copies`)
/// while the terminal is locked; None when the frame must be composed whole.
fn plan(
    state: &State,
    slot: &PaneSlot,
    previous: &[PaneDrawn],
    hyperlinks: bool,
    frame: Rect,
    copies: &mut Vec<CopiedRows>,
) -> Option<Plan> {
    let pane = state.panes.get(&slot.id)?;
    let locked = lock_for_frame(&pane.terminal, slot.focused);
    state.counts.lock(locked.is_some());
    let Some(term) = locked else {
        return Some(Plan::Busy(
            drawn_in(previous, slot, hyperlinks).next()?.clone(),
        ));
    };
    let screen = term.screen();
    let stamp = PaneStamp::of(slot, screen, hyperlinks);
    let drawn = drawn_in(previous, slot, hyperlinks).find(|d| d.stamp.screen == stamp.screen)?;
    if drawn.stamp == stamp {
        return Some(Plan::Same(drawn.clone(), pane_cursor(screen, slot.inner)));
    }
    let rows = row_versions(screen, slot.inner);
    // The client's terminal can scroll a region of whole lines only: the pane must span it.
    // (A lone pane's cell with separators ends one column past the frame: its separator
    // column is off screen.)
    let whole_width = slot.rect.x == frame.x && slot.rect.right() >= frame.right();
    let shift = if whole_width && screen.size().0.get() == slot.inner.height {
        upward_shift(&rows, &drawn.rows)
    } else {
        0
    };
    let then: Vec<u64> = drawn
        .rows
        .iter()
        .skip(usize::from(shift))
        .copied()
        .collect();
    let redraw = rows_to_redraw(&rows, &then);
    let changed = changed_columns(screen, &then, &redraw);
    let screen_rows = usize::from(screen.size().0.get());
    // Links need the frame's link table: compose the whole frame for them.
    // (A screen whose link table is empty has no linked cell to look for.)
    if hyperlinks
        && screen.link_table_len() > 0
        && redraw
            .iter()
            .enumerate()
            .filter(|(r, d)| **d && *r < screen_rows)
            .any(|(r, _)| {
                screen
                    .row_cells(r as u16)
                    .is_some_and(|cells| cells.iter().any(|c| c.link() != 0))
            })
    {
        return None;
    }
    let mut copy = copies.pop().unwrap_or_default();
    copy.copy_changes(screen, slot.inner, &redraw, &changed);
    let cursor = pane_cursor(screen, slot.inner);
    // The lock is held for the row copy only: drawing happens after it is let go.
    drop(term);
    Some(Plan::Draw {
        copy,
        stamp,
        rows,
        redraw,
        shift,
        cursor,
    })
}

/// How many rows the screen moved up since it was drawn (0: it did not, or not clearly): the
/// top row now was row `k` then, and at least half of the rows below it follow.
fn upward_shift(now: &[u64], then: &[u64]) -> u16 {
    let Some(&first) = now.first().filter(|v| **v != 0) else {
        return 0;
    };
    let Some(k) = then.iter().position(|v| *v == first).filter(|k| *k > 0) else {
        return 0;
    };
    let kept = now.len() - k;
    let following = (0..kept)
        .filter(|&i| now[i] != 0 && then.get(i + k) == Some(&now[i]))
        .count();
    if following * 2 >= kept {
        u16::try_from(k).unwrap_or(0)
    } else {
        0
    }
}

/// The cells of frame row `y` that `inner` covers, as a range of `buf.content`.
fn span(frame: Rect, inner: Rect, y: u16) -> Option<std::ops::Range<usize>> {
    if y < frame.y || y >= frame.bottom() || inner.x < frame.x {
        return None;
    }
    let start =
        usize::from(y - frame.y) * usize::from(frame.width) + usize::from(inner.x - frame.x);
    Some(start..start + usize::from(inner.width))
}

/// Mirrors, in `buf`, the client's terminal scrolling the lines of `inner` up by `shift`: the
/// pane's cells move up and its bottom rows go blank. The cells beside the pane (its border)
/// stay as the frame wants them; the rows where the terminal's moved copy differs from them
/// are returned, to be sent whole.
fn scroll(buf: &mut Buffer, inner: Rect, shift: u16) -> Vec<u16> {
    let frame = buf.area;
    let width = usize::from(frame.width);
    let row_range = |y: u16| {
        let start = usize::from(y - frame.y) * width;
        start..start + width
    };
    let left = usize::from(inner.x - frame.x);
    let right = left + usize::from(inner.width);
    // The cells of row `y` beside the pane (its border), without copying them.
    let outside = |y: u16| {
        let row = &buf.content[row_range(y)];
        row[..left].iter().chain(&row[right..])
    };
    let (top, bottom) = (inner.y, inner.bottom());
    let mut forced = Vec::new();
    for y in top..bottom {
        let moved = y + shift;
        let differs = if moved < bottom {
            !outside(y).eq(outside(moved))
        } else {
            outside(y).any(|c| *c != Cell::EMPTY)
        };
        if differs {
            forced.push(y);
        }
    }
    for y in top..bottom.saturating_sub(shift) {
        let (Some(a), Some(b)) = (span(frame, inner, y), span(frame, inner, y + shift)) else {
            continue;
        };
        let (head, tail) = buf.content.split_at_mut(b.start);
        if let (Some(a), Some(b)) = (head.get_mut(a), tail.get_mut(..b.len())) {
            a.swap_with_slice(b);
        }
    }
    for y in bottom.saturating_sub(shift)..bottom {
        if let Some(cells) = span(frame, inner, y).and_then(|s| buf.content.get_mut(s)) {
            cells.iter_mut().for_each(Cell::reset);
        }
    }
    forced
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scroll_is_found_when_most_rows_moved_up_together() {
        assert_eq!(upward_shift(&[2, 3, 4, 9], &[1, 2, 3, 4]), 1);
        assert_eq!(upward_shift(&[3, 4, 8, 9], &[1, 2, 3, 4]), 2);
        // A new screen, an unchanged one, or one that changed at the top: no scroll.
        assert_eq!(upward_shift(&[7, 8, 9, 10], &[1, 2, 3, 4]), 0);
        assert_eq!(upward_shift(&[1, 2, 3, 4], &[1, 2, 3, 4]), 0);
        assert_eq!(upward_shift(&[0, 2, 3, 4], &[1, 2, 3, 4]), 0);
        // The top row came from far below, and the rest did not follow.
        assert_eq!(upward_shift(&[4, 8, 9, 10, 11, 12], &[1, 2, 3, 4, 5, 6]), 0);
    }

    #[test]
    fn scrolling_moves_the_pane_cells_and_blanks_its_bottom_rows() {
        let area = Rect::new(0, 0, 4, 4);
        let mut buf = Buffer::empty(area);
        for y in 0..4 {
            buf[(0, y)].set_symbol("|");
            buf[(3, y)].set_symbol("|");
            buf[(1, y)].set_symbol(&y.to_string());
        }
        let inner = Rect::new(1, 0, 2, 4);
        let forced = scroll(&mut buf, inner, 1);
        let col: Vec<&str> = (0..4).map(|y| buf[(1, y)].symbol()).collect();
        assert_eq!(col, ["1", "2", "3", " "]);
        // The borders are the same on every row but the blank one the terminal leaves.
        assert_eq!(forced, [3]);
        assert_eq!(buf[(0, 3)].symbol(), "|");
    }
}
