//! `[persistence] scrollback_lines`: at a graceful stop each running pane's last lines of text
//! go into the last save (redacted as `pane_read` redacts). Only that save carries them: the
//! periodic saves of a running server never do, so a crash leaves no history to show.

use crate::persist::history::kept;
use crate::persist::record::now_secs;
use crate::persist::writer::Snapshot;
use crate::server::model::pane_text::logical_lines;
use crate::server::owner::Server;

impl Server {
    /// Adds each running pane's last lines to `snapshot` (nothing when the setting is 0).
    pub(crate) fn add_history(&self, snapshot: &mut Snapshot) {
        let keep = self.state.config.persistence.scrollback_lines;
        if keep == 0 {
            return;
        }
        let now = now_secs();
        let started = std::time::Instant::now();
        let live_panes = snapshot
            .state
            .sessions
            .iter_mut()
            .filter(|s| s.saved_at == 0)
            .flat_map(|s| s.windows.iter_mut())
            .flat_map(|w| w.panes.iter_mut());
        for pane in live_panes {
            let Some(p) = self.state.panes.get(&pane.id) else {
                continue;
            };
            // Whole lines (wrapped rows joined), so a secret the pane's edge cuts is found.
            let lines = logical_lines(&p.term(), p.rows, p.cols, true);
            pane.history = kept(&lines, keep, now, crate::approvals::redact::redact);
        }
        tracing::debug!("history of the panes kept in {:?}", started.elapsed());
    }
}
