//! What a live pane contributes to a frame beyond its cells: which of its rows changed since it
//! was drawn (row versions), what it was drawn in a slot before, and where its cursor is. Shared
//! by the whole-frame composer (`mod.rs`) and the in-place update (`in_place.rs`).

use std::ops::Range;

use ratatui::layout::Rect;

use super::frame_cache::PaneDrawn;
use crate::server::view::chrome::PaneSlot;

/// Where the terminal cursor goes and how it looks.
pub(super) struct CursorSpot {
    pub(super) x: u16,
    pub(super) y: u16,
    pub(super) style: u8,
}

fn cursor_style_code(style: vt100::CursorStyle) -> u8 {
    match style {
        vt100::CursorStyle::Default => 0,
        vt100::CursorStyle::BlinkBlock => 1,
        vt100::CursorStyle::SteadyBlock => 2,
        vt100::CursorStyle::BlinkUnderline => 3,
        vt100::CursorStyle::SteadyUnderline => 4,
        vt100::CursorStyle::BlinkVerticalBar => 5,
        vt100::CursorStyle::SteadyVerticalBar => 6,
    }
}

/// The cursor of a live pane's screen, in frame coordinates, when it is shown and inside.
pub(super) fn pane_cursor(screen: &vt100::Screen, inner: Rect) -> Option<CursorSpot> {
    if screen.hide_cursor() {
        return None;
    }
    let (r, c) = screen.cursor_position();
    (r < inner.height && c < inner.width).then(|| CursorSpot {
        x: inner.x + c,
        y: inner.y + r,
        style: cursor_style_code(screen.cursor_style()),
    })
}

/// The version of each screen row drawn into `inner` (0 where there is no row).
pub(super) fn row_versions(screen: &vt100::Screen, inner: Rect) -> Vec<u64> {
    (0..inner.height).map(|r| screen.row_version(r)).collect()
}

/// Which rows to draw again: those whose version is unknown (0) or not the one drawn before.
pub(super) fn rows_to_redraw(now: &[u64], then: &[u64]) -> Vec<bool> {
    now.iter()
        .enumerate()
        .map(|(i, v)| *v == 0 || then.get(i) != Some(v))
        .collect()
}

/// For each row to redraw, the columns that changed since the version drawn (`then`), when the
/// row knows (`vt100::Screen::row_change`): only those need painting. None: draw it whole.
pub(super) fn changed_columns(
    screen: &vt100::Screen,
    then: &[u64],
    redraw: &[bool],
) -> Vec<Option<Range<u16>>> {
    redraw
        .iter()
        .enumerate()
        .map(|(r, draw)| {
            let drawn = then.get(r).copied().filter(|v| *draw && *v != 0)?;
            let (prior, columns) = screen.row_change(u16::try_from(r).ok()?)?;
            (prior == drawn).then_some(columns)
        })
        .collect()
}

/// What a frame drew live in `slot`'s place with the same settings (of any screen and
/// generation: callers that need the same screen compare `stamp.screen`).
pub(super) fn drawn_in<'a>(
    panes: &'a [PaneDrawn],
    slot: &'a PaneSlot,
    hyperlinks: bool,
) -> impl Iterator<Item = &'a PaneDrawn> + 'a {
    panes.iter().filter(move |d| {
        d.stamp.pane == slot.id && d.stamp.inner == slot.inner && d.stamp.hyperlinks == hyperlinks
    })
}
