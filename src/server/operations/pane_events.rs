//! What a pane's reader thread reports: new output (bells, clipboard writes, waiters to wake,
//! a redraw) and the program's exit (the pane closes, or stays with `remain-on-exit`).

use crate::layout::PaneId;
use crate::server::messages::Msg;
use crate::server::operations::lifecycle::Close;
use crate::server::owner::{Server, FRAME_INTERVAL, PANE_RETRY};

impl Server {
    /// A pane's reader parsed output: taken now, or with the next frame if one is pending.
    pub(crate) fn pane_output(&mut self, pane: PaneId) {
        self.state.counts.notification();
        if !self.fold_into_frame(pane) {
            self.take_pane_output(pane);
        }
    }

    /// Holds `pane`'s output for the frame that is pending, unless a keystroke waits for its
    /// echo; returns whether it did. The pane's notifier stays unarmed meanwhile, so its reader
    /// parses on without waking the owner: a flooding pane costs the owner one notification
    /// and one terminal lock per frame instead of one per read (about 4 KiB; 17,000 for 64 MB,
    /// see docs/performance.md). Nothing shows sooner either way: the screen is drawn at the
    /// frame. Bells, clipboard writes and command waiters wait for it too (at most a frame).
    fn fold_into_frame(&mut self, pane: PaneId) -> bool {
        // Only the owner loop draws frames on a timer (tests on fakes take output at once).
        if !self.owner_loop || !self.fold_output || self.echo_pending.contains(&pane) {
            return false;
        }
        let due = self.render_at.unwrap_or(self.last_render + FRAME_INTERVAL);
        if due <= tokio::time::Instant::now() {
            return false;
        }
        // The frame's timer takes the held output even when no client shows this pane.
        self.render_at = Some(due);
        if self.output_held.insert(pane) {
            self.state.counts.held();
        }
        true
    }

    /// Takes the output held for the frame about to be drawn (see `fold_into_frame`).
    pub(crate) fn take_held_output(&mut self) {
        for pane in std::mem::take(&mut self.output_held) {
            self.take_pane_output(pane);
        }
    }

    /// A keystroke goes to `pane`: output held for the next frame is taken now, and the
    /// reader's notifier armed again, so the echo is drawn at once, not at the frame.
    pub(crate) fn release_held_output(&mut self, pane: PaneId) {
        if self.output_held.remove(&pane) {
            self.take_pane_output(pane);
        }
    }

    /// Acts on `pane`'s new output: the notifier armed again, waiters woken, bells and
    /// clipboard writes taken, the pane marked for redrawing.
    fn take_pane_output(&mut self, pane: PaneId) {
        if let Some(n) = self.state.notifiers.get(&pane) {
            n.rearm();
        }
        self.note_pane_output(pane);
        self.wake_command_waiters(Some(pane));
        if self.echo_pending.remove(&pane) {
            self.render_now = true;
        }
        let Some(p) = self.state.panes.get(&pane) else {
            return;
        };
        // A busy reader holds the terminal for a moment; its events (bells, clipboard writes)
        // wait in the terminal till they are taken.
        let events = p.try_term().map(|mut t| t.take_events());
        self.state.counts.lock(events.is_some());
        let Some((bells, clipboard)) = events else {
            self.state.mark_pane_dirty(pane);
            self.look_again_soon(pane);
            return;
        };
        let session = p.session;
        if bells > 0 || !clipboard.is_empty() {
            let visible = self
                .state
                .locate(pane)
                .and_then(|(s, w)| self.state.sessions.get(&s).map(|s| s.active_window == w))
                .unwrap_or(false);
            if bells > 0 && !visible {
                if let Some((s, w)) = self.state.locate(pane) {
                    if let Some(win) = self
                        .state
                        .sessions
                        .get_mut(&s)
                        .and_then(|s| s.windows.get_mut(w))
                    {
                        win.bell = true;
                    }
                }
            }
            if bells > 0 && self.state.config.bell {
                for c in self.state.clients.values().filter(|c| c.session == session) {
                    let _ = c.send_terminal(vec![0x07]);
                }
            }
            if !clipboard.is_empty() {
                self.pane_clipboard(pane, clipboard);
            }
            self.state.mark_session_dirty(session);
        }
        self.state.mark_pane_dirty(pane);
    }

    /// Handles `pane`'s output again in a moment. The reader notifies and then takes the lock
    /// once more for its next read, which may find nothing: a try in that moment used to leave
    /// the chunk's events untaken until the pane printed again, which may be never (a clipboard
    /// write or a bell lost; tests/e2e_clipboard.rs failed about one run in three).
    pub(crate) fn look_again_soon(&self, pane: PaneId) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let tx = self.tx.clone();
        runtime.spawn(async move {
            tokio::time::sleep(PANE_RETRY).await;
            let _ = tx.send(Msg::PaneOutput { pane });
        });
    }

    pub(crate) fn pane_exited(&mut self, pane: PaneId, status: Option<u32>) {
        let Some(p) = self.state.panes.get_mut(&pane) else {
            return;
        };
        p.exited = Some(status);
        if self.state.config.remain_on_exit {
            self.state.mark_pane_dirty(pane);
            self.retire_pane(pane);
        } else {
            self.close(Close::Pane(pane), "session ended");
        }
    }
}
