//! What a pane's reader thread reports: new output (bells, clipboard writes, waiters to wake,
//! a redraw) and the program's exit (the pane closes, or stays with `remain-on-exit`).

use crate::layout::PaneId;
use crate::server::messages::Msg;
use crate::server::operations::lifecycle::Close;
use crate::server::owner::{Server, PANE_RETRY};

impl Server {
    pub(crate) fn pane_output(&mut self, pane: PaneId) {
        self.state.counts.notification();
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
