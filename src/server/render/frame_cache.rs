//! What a client's terminal shows now, kept between frames so the next frame sends only what
//! changed: the frame itself, its hyperlinks, what each live pane was drawn from, and the
//! chrome around them. One per attached client, owned by the renderer's caller (the owner
//! keeps them by client), not by the model: clients in the model know nothing of frames.

use calyx_tui::FrameLinks;
use ratatui::buffer::Buffer;

use ratatui::layout::Rect;

use crate::layout::PaneId;
use crate::server::view::chrome::{Chrome, PaneSlot};

/// A client's last frame and what it was drawn from.
#[derive(Default)]
pub struct FrameCache {
    /// The frame this client's terminal shows now, to send only differences.
    pub(super) buf: Option<Buffer>,
    /// The hyperlinks of `buf` (ratatui cells cannot hold them).
    pub(super) links: FrameLinks,
    /// The panes of `buf` drawn live, with what they were drawn from.
    pub(super) panes: Vec<PaneDrawn>,
    /// Everything but pane contents in `buf`: while it stays the same, frames only redraw the
    /// pane rows that changed.
    pub(super) chrome: Option<Chrome>,
    /// The frame before `buf`, kept to be reset and drawn into instead of allocating a new one.
    pub(super) spare: Option<Buffer>,
    /// Buffers for the pane rows a frame copies out of locked terminals (one per pane drawn),
    /// kept so a frame allocates none.
    pub(super) copies: Vec<calyx_tui::CopiedRows>,
    /// Where the last in-place frame put the client's cursor (position and style; None:
    /// hidden). None here when unknown (a whole frame came since): a frame writes it again.
    pub(super) cursor_sent: Option<Option<(u16, u16, u8)>>,
    /// `render_early` just updated `buf` in place with `chrome`: the frame `render_client`
    /// draws next need not update the panes again if the chrome is still the same.
    pub(super) drawn_early: bool,
}

impl FrameCache {
    /// Forgets what the terminal shows, so the next frame clears it and is sent whole (its
    /// size changed, or it fell behind and frames were dropped).
    pub fn redraw_whole(&mut self) {
        self.buf = None;
    }

    /// Forgets the frame and what it was drawn from (the client moved to another session).
    pub fn forget_drawn(&mut self) {
        self.buf = None;
        self.panes.clear();
        self.chrome = None;
    }
}

/// What a pane's cells in a frame were drawn from: while all of it is the same, so are the cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PaneStamp {
    pub(super) pane: PaneId,
    /// The address of the screen (a pane whose terminal was replaced is not the same pane).
    pub(super) screen: usize,
    pub(super) generation: u64,
    pub(super) inner: Rect,
    pub(super) hyperlinks: bool,
}

/// A pane drawn live in a frame: its stamp, and the version of each of its screen rows then
/// (see `vt100::Screen::row_version`).
#[derive(Debug, Clone)]
pub struct PaneDrawn {
    pub(super) stamp: PaneStamp,
    pub(super) rows: Vec<u64>,
}

impl PaneStamp {
    pub(super) fn of(slot: &PaneSlot, screen: &vt100::Screen, hyperlinks: bool) -> Self {
        PaneStamp {
            pane: slot.id,
            screen: std::ptr::from_ref(screen) as usize,
            generation: screen.generation(),
            inner: slot.inner,
            hyperlinks,
        }
    }
}
