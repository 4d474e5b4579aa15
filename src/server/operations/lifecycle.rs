//! The one way panes go away. Closing a pane, a window or a session (from a key, the `:`
//! prompt, the CLI, MCP, or its program exiting) is one transaction here, so no caller can
//! forget half of it: the layout heals or the window or session goes, and for every pane that
//! went, its agent row is retired, its pending approvals are withdrawn, every waiter hears that
//! the pane closed, its peer inbox and unread count are dropped, and what shows it is redrawn.

use crate::layout::PaneId;

use crate::server::model::state::SessionId;
use crate::server::owner::Server;

/// What to close.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Close {
    /// One pane (its window, and its session, go with their last pane).
    Pane(PaneId),
    /// A window and its panes, by index in its session.
    Window(SessionId, usize),
    /// A session, its windows and panes; its clients are detached with the reason.
    Session(SessionId),
}

impl Server {
    /// Closes `what`; `why` is what detached clients are told when a session goes.
    pub(crate) fn close(&mut self, what: Close, why: &str) {
        let panes = self.panes_in(what);
        match what {
            Close::Pane(pane) => self.state.close_pane(pane),
            Close::Window(session, window) => self.state.remove_window(session, window),
            Close::Session(session) => self.state.remove_session(session, why),
        }
        for pane in panes {
            self.retire_pane(pane);
        }
    }

    /// The panes `what` holds now.
    fn panes_in(&self, what: Close) -> Vec<PaneId> {
        match what {
            Close::Pane(pane) => vec![pane],
            Close::Window(session, window) => self
                .state
                .sessions
                .get(&session)
                .and_then(|s| s.windows.get(window))
                .map(|w| w.layout.panes())
                .unwrap_or_default(),
            Close::Session(session) => self
                .state
                .sessions
                .get(&session)
                .map(|s| s.windows.iter().flat_map(|w| w.layout.panes()).collect())
                .unwrap_or_default(),
        }
    }

    /// Everything kept about a pane outside the layout, once it is closed or its program has
    /// exited (a dead pane kept by `remain_on_exit` keeps its row, done, until it is closed).
    pub(crate) fn retire_pane(&mut self, pane: PaneId) {
        self.forget_owner_reads(pane);
        self.state.unread.remove(&pane);
        self.approvals_pane_closed(pane);
        self.wake_command_waiters(None);
        let now = tokio::time::Instant::now();
        let transitions = self.agents.pane_exited(u64::from(pane), now);
        self.last_output.remove(&pane);
        self.after_transitions(&transitions, now);
        if !self.state.panes.contains_key(&pane) {
            // The pane itself is gone: nothing left to show the row on, no inbox to read.
            self.agents.remove(u64::from(pane));
            self.views_pane_closed(pane);
            self.peers.remove(&crate::mcp::PaneRef {
                pane: format!("%{pane}"),
            });
            self.wake_agent_waiters();
        }
        self.mark_sidebars_dirty();
    }
}
