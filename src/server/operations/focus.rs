//! Which panes have focus: the active pane of each session's active window. Every message that
//! can move focus (keys, commands, a pane exiting) ends here, so however focus moved (a binding,
//! a split, a new window, a closed pane, `calyx select`), the programs that asked for focus
//! events (mode 1004) hear `CSI O` when they lose it and `CSI I` when they gain it, and panes
//! without focus drop to background priority.

use std::collections::HashSet;

use crate::layout::PaneId;

use crate::server::owner::Server;

const FOCUS_IN: &[u8] = b"\x1b[I";
const FOCUS_OUT: &[u8] = b"\x1b[O";

impl Server {
    /// Brings focus reports and pane priorities up to date with the sessions' active panes.
    pub(crate) fn update_focus(&mut self) {
        let focused: HashSet<PaneId> = self
            .state
            .sessions
            .values()
            .filter_map(|s| s.active_pane())
            .collect();
        // Runs after every keystroke: nothing to do while focus and the set of panes stay. The
        // set, not a count: a pane closed and another opened by one message change no count.
        let same_panes = self.state.panes.len() == self.prioritized_panes.len()
            && self
                .state
                .panes
                .keys()
                .all(|id| self.prioritized_panes.contains(id));
        if focused == self.focused_panes && same_panes {
            return;
        }
        if focused != self.focused_panes {
            for (id, report) in self
                .focused_panes
                .difference(&focused)
                .map(|id| (id, FOCUS_OUT))
                .chain(
                    focused
                        .difference(&self.focused_panes)
                        .map(|id| (id, FOCUS_IN)),
                )
            {
                if let Some(p) = self.state.panes.get(id) {
                    if p.glance.wants_focus_events() {
                        p.process.write(report.to_vec());
                    }
                }
            }
        }
        // Every pane's priority, also when only the panes changed: a new pane (`split -d`)
        // starts at normal priority.
        for (id, p) in &self.state.panes {
            p.process.set_background(!focused.contains(id));
        }
        self.focused_panes = focused;
        self.prioritized_panes = self.state.panes.keys().copied().collect();
    }
}
