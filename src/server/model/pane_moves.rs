//! Moving panes with their programs still running (tmux's `swap-pane`, `join-pane` /
//! `move-pane`, `break-pane`): a pane keeps its id, process, screen and history, only its place
//! changes, possibly into a window of another session. A window a pane leaves empty closes
//! (the others keep their numbers unless `renumber_windows`), and a session left without
//! windows ends as if its last pane had exited.

use crate::layout::{PaneId, SplitDir};

use super::state::{SessionId, State, Window};

/// Where `join_pane` puts the pane it moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    /// Side by side (`-h`) rather than stacked.
    pub dir: SplitDir,
    /// Left of or above the target (`-b`) rather than right or below.
    pub before: bool,
    /// Leave focus as it is (`-d`) instead of showing the moved pane.
    pub detached: bool,
}

impl State {
    /// Exchanges the places of `src` and `dst`, in one window or across windows and sessions
    /// (tmux's swap-pane). Without `detached` the pane `dst` takes the focus where it lands;
    /// with it the focus stays on the place it was (the pane that arrives there gets it).
    pub fn swap_panes(&mut self, src: PaneId, dst: PaneId, detached: bool) -> Result<(), String> {
        let (src_session, src_window) = self
            .locate(src)
            .ok_or_else(|| format!("can't find pane: %{src}"))?;
        let (dst_session, dst_window) = self
            .locate(dst)
            .ok_or_else(|| format!("can't find pane: %{dst}"))?;
        if src == dst {
            return Ok(());
        }
        if (src_session, src_window) == (dst_session, dst_window) {
            let w = self
                .window_at_mut(src_session, src_window)
                .ok_or("window is gone")?;
            w.layout.swap(src, dst);
            w.zoomed = false;
            if !detached {
                w.focus(dst);
            } else if w.active == src || w.active == dst {
                w.active = if w.active == src { dst } else { src };
            }
        } else {
            // Each window gets the other's pane in place of its own.
            for (session, window, leaving, arriving) in [
                (src_session, src_window, src, dst),
                (dst_session, dst_window, dst, src),
            ] {
                let w = self
                    .window_at_mut(session, window)
                    .ok_or("window is gone")?;
                w.layout.replace(leaving, arriving);
                w.zoomed = false;
                if w.last_active == Some(leaving) {
                    w.last_active = None;
                }
                if !detached || w.active == leaving {
                    w.active = arriving;
                }
                if let Some(p) = self.panes.get_mut(&arriving) {
                    p.session = session;
                }
            }
        }
        self.relayout(src_session);
        self.relayout(dst_session);
        Ok(())
    }

    /// Moves `src` beside `dst` (tmux's join-pane): out of its window, which heals (or closes
    /// when `src` was its only pane), into `dst`'s window, maybe in another session. Refused
    /// when `dst` has no room to share; nothing moves then.
    pub fn join_pane(&mut self, src: PaneId, dst: PaneId, at: Placement) -> Result<(), String> {
        let (src_session, src_window) = self
            .locate(src)
            .ok_or_else(|| format!("can't find pane: %{src}"))?;
        let Some((dst_session_of, _)) = self.locate(dst) else {
            return Err(format!("can't find pane: %{dst}"));
        };
        if src == dst {
            return Err(format!("can't join pane %{src} to itself"));
        }
        let (rows, cols) = self
            .panes
            .get(&dst)
            .map(|p| (p.rows, p.cols))
            .unwrap_or((0, 0));
        // The same room a split needs: each half its border and a cell.
        let frame = self
            .sessions
            .get(&dst_session_of)
            .map_or(2, |s| s.pane_borders.frame_cells());
        let room = match at.dir {
            SplitDir::Horizontal => cols + frame >= 6,
            SplitDir::Vertical => rows + frame >= 6,
        };
        if !room {
            return Err(format!("no space for a pane beside %{dst}"));
        }
        let alone = self
            .window_at_mut(src_session, src_window)
            .is_some_and(|w| w.layout.panes().len() == 1);
        if alone {
            self.take_emptied_window(src_session, src_window);
        } else if let Some(w) = self.window_at_mut(src_session, src_window) {
            w.remove_pane(src);
        }
        // Positions may have moved with the window taken out: look the target up again.
        let (dst_session, dst_window) = self
            .locate(dst)
            .ok_or_else(|| format!("can't find pane: %{dst}"))?;
        if let Some(p) = self.panes.get_mut(&src) {
            p.session = dst_session;
        }
        let w = self
            .window_at_mut(dst_session, dst_window)
            .ok_or("window is gone")?;
        w.layout.split_beside(dst, src, at.dir, at.before);
        w.zoomed = false;
        w.preset = None;
        if !at.detached {
            w.focus(src);
            if let Some(s) = self.sessions.get_mut(&dst_session) {
                s.select_window(dst_window);
            }
        }
        if self
            .sessions
            .get(&src_session)
            .is_some_and(|s| s.windows.is_empty())
        {
            self.remove_session(src_session, "session ended");
        } else {
            self.relayout(src_session);
        }
        self.relayout(dst_session);
        Ok(())
    }

    /// Moves `pane` into a new window of its own in its session (tmux's break-pane), named
    /// `name` (else after its command), shown unless `detached`. Returns the session.
    pub fn break_pane_out(
        &mut self,
        pane: PaneId,
        name: Option<String>,
        detached: bool,
    ) -> Result<SessionId, String> {
        let (session, window) = self
            .locate(pane)
            .ok_or_else(|| format!("can't find pane: %{pane}"))?;
        let base_index = self.config.base_index;
        let s = self.sessions.get_mut(&session).ok_or("session is gone")?;
        let w = s.windows.get_mut(window).ok_or("window is gone")?;
        if !w.remove_pane(pane) {
            return Err(format!(
                "can't break pane %{pane}: it is its window's only pane"
            ));
        }
        let auto_name = name.is_none();
        let at = s.insert_window(
            Window::new(name.unwrap_or_default(), auto_name, pane),
            base_index,
        );
        if !detached {
            s.select_window(at);
        }
        self.relayout(session);
        Ok(session)
    }

    /// The window at position `window` of `session`.
    fn window_at_mut(&mut self, session: SessionId, window: usize) -> Option<&mut Window> {
        self.sessions.get_mut(&session)?.windows.get_mut(window)
    }

    /// Takes out a window whose only pane is moving elsewhere (so nothing is killed), and
    /// numbers the rest as closing it would.
    fn take_emptied_window(&mut self, session: SessionId, window: usize) {
        let renumber = self.config.renumber_windows;
        let base_index = self.config.base_index;
        if let Some(s) = self.sessions.get_mut(&session) {
            s.take_window(window);
            if renumber {
                s.renumber_windows(base_index);
            }
        }
    }
}
