//! The pane-moving requests (`resize-pane`, `swap-pane`, `join-pane` / `move-pane`,
//! `break-pane`) from the CLI and the `:` prompt. Every target is resolved before anything
//! moves, and an error names the flag and the target it could not use, so a typo never moves
//! the wrong pane.

use crate::layout::{Direction, PaneId, SplitDir};
use crate::layout_size::Size;
use crate::protocol::Response;

use crate::server::model::pane_moves::Placement;
use crate::server::model::state::SessionId;
use crate::server::model::target::Target;
use crate::server::owner::Server;

/// What `resize-pane` asks for besides its target.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Resize {
    pub direction: Option<Direction>,
    pub cells: u16,
    pub width: Option<Size>,
    pub height: Option<Size>,
    pub zoom: bool,
}

impl Server {
    /// Resolves the target given with `flag`; the error says which flag and target failed.
    fn resolve_flag(&self, flag: &str, given: Option<&str>) -> Result<Target, String> {
        self.state.resolve(given).map_err(|e| match given {
            Some(t) => format!("{flag} {t}: {e}"),
            None => format!("{flag}: {e}"),
        })
    }

    /// `resize-pane`.
    pub(crate) fn resize_pane_request(&mut self, target: Option<String>, r: Resize) -> Response {
        let t = match self.resolve_flag("-t", target.as_deref()) {
            Ok(t) => t,
            Err(e) => return Response::Error(e),
        };
        let Some(s) = self.state.sessions.get_mut(&t.session) else {
            return Response::Error("session is gone".into());
        };
        let area = s.layout_area();
        let window_area = s.window_area();
        let Some(w) = s.windows.get_mut(t.window) else {
            return Response::Error("window is gone".into());
        };
        if r.zoom {
            if w.zoomed {
                w.zoomed = false;
            } else {
                w.focus(t.pane);
                w.toggle_zoom();
            }
        } else if let Some(dir) = r.direction {
            w.zoomed = false;
            w.layout.resize(t.pane, dir, r.cells, area);
        }
        self.state.relayout(t.session);
        for (size, dir, whole) in [
            (r.width, SplitDir::Horizontal, window_area.width),
            (r.height, SplitDir::Vertical, window_area.height),
        ] {
            if let Some(size) = size {
                self.set_pane_extent(t.session, t.window, t.pane, dir, size.cells_of(whole));
            }
        }
        if r.zoom {
            self.on_focus_changed(t.pane);
        }
        Response::Ok
    }

    /// Makes `pane`'s content `cells` wide (or high): its side of the nearest split that way
    /// is sized so, counting the border the pane's box takes as it is drawn now.
    fn set_pane_extent(
        &mut self,
        session: SessionId,
        window: usize,
        pane: PaneId,
        dir: SplitDir,
        cells: u16,
    ) {
        let content = self.state.panes.get(&pane).map(|p| match dir {
            SplitDir::Horizontal => p.cols,
            SplitDir::Vertical => p.rows,
        });
        let Some(s) = self.state.sessions.get_mut(&session) else {
            return;
        };
        let area = s.layout_area();
        let Some(w) = s.windows.get_mut(window) else {
            return;
        };
        w.zoomed = false;
        let outer = w
            .layout
            .rects(area)
            .into_iter()
            .find(|(p, _)| *p == pane)
            .map(|(_, r)| match dir {
                SplitDir::Horizontal => r.width,
                SplitDir::Vertical => r.height,
            });
        let (Some(outer), Some(content)) = (outer, content) else {
            return;
        };
        let border = outer.saturating_sub(content);
        w.layout
            .resize_to(pane, dir, cells.saturating_add(border), area);
        self.state.relayout(session);
    }

    /// `swap-pane`: `-s` and `-t` change places, or (`neighbour`) the target and the next or
    /// previous pane of its window.
    pub(crate) fn swap_pane_request(
        &mut self,
        source: Option<String>,
        target: Option<String>,
        neighbour: Option<bool>,
        detached: bool,
    ) -> Response {
        let dst = match self.resolve_flag("-t", target.as_deref()) {
            Ok(t) => t,
            Err(e) => return Response::Error(e),
        };
        let src = match neighbour {
            Some(forward) => {
                let other = self
                    .state
                    .sessions
                    .get(&dst.session)
                    .and_then(|s| s.windows.get(dst.window))
                    .and_then(|w| w.cycle_from(dst.pane, forward));
                match other {
                    Some(p) => p,
                    None => return Response::Error(format!("can't find pane: %{}", dst.pane)),
                }
            }
            None => match self.resolve_flag("-s", source.as_deref()) {
                Ok(t) => t.pane,
                Err(e) => return Response::Error(e),
            },
        };
        match self.state.swap_panes(src, dst.pane, detached) {
            Ok(()) => {
                self.on_focus_changed(dst.pane);
                Response::Ok
            }
            Err(e) => Response::Error(e),
        }
    }

    /// `join-pane` / `move-pane`: the source moves beside the target; `size` is the moved
    /// pane's width (side by side) or height, a percentage being of the target's before.
    pub(crate) fn join_pane_request(
        &mut self,
        source: Option<String>,
        target: Option<String>,
        at: Placement,
        size: Option<Size>,
    ) -> Response {
        let src = match self.resolve_flag("-s", source.as_deref()) {
            Ok(t) => t,
            Err(e) => return Response::Error(e),
        };
        let dst = match self.resolve_flag("-t", target.as_deref()) {
            Ok(t) => t,
            Err(e) => return Response::Error(e),
        };
        // A percentage is of the place the two panes will share: the target's, as tmux's is.
        let whole = self.state.panes.get(&dst.pane).map_or(0, |p| match at.dir {
            SplitDir::Horizontal => p.cols,
            SplitDir::Vertical => p.rows,
        });
        if let Err(e) = self.state.join_pane(src.pane, dst.pane, at) {
            return Response::Error(e);
        }
        if let (Some(size), Some((session, window))) = (size, self.state.locate(src.pane)) {
            self.set_pane_extent(session, window, src.pane, at.dir, size.cells_of(whole));
        }
        if !at.detached {
            self.focus_pane(src.pane);
        }
        self.mark_sidebars_dirty();
        Response::Ok
    }

    /// `break-pane`: the source into a new window of its own; the answer names the pane for
    /// `-P`.
    pub(crate) fn break_pane_request(
        &mut self,
        source: Option<String>,
        name: Option<String>,
        detached: bool,
    ) -> Response {
        let src = match self.resolve_flag("-s", source.as_deref()) {
            Ok(t) => t,
            Err(e) => return Response::Error(e),
        };
        match self.state.break_pane_out(src.pane, name, detached) {
            Ok(session) => {
                if !detached {
                    self.on_focus_changed(src.pane);
                }
                self.created(session, src.pane)
            }
            Err(e) => Response::Error(e),
        }
    }
}
