//! Bells and desktop notifications for saved machines' agents: a new snapshot compared with
//! the one before gives the transitions (to blocked, working to idle or done), decided by the
//! same [`crate::agents::Notifier`] as local ones, so the same quiet period and rate limit
//! hold across machines. A remote row gets a pane number of its own in the notifier's memory
//! (above any local pane's), so `build` `%3` and local `%3` are told apart, and no local pane
//! counts as focused for it.

use std::collections::HashMap;
use std::str::FromStr;

use calyx_integrations::AgentKind;
use tokio::time::Instant;

use crate::agents::{osc_sequences, AgentState, Notification, Transition};
use crate::protocol::MachineSnapshot;
use crate::server::owner::Server;

/// Remote rows' pane numbers in the notifier start here (local panes are `u32`).
const REMOTE_PANES: u64 = 1 << 40;

impl Server {
    /// Notifies for machine `name`'s agents that changed state since `before`.
    pub(crate) fn notify_remote(&mut self, name: &str, before: Option<&MachineSnapshot>) {
        let Some(index) = self
            .machines
            .views()
            .iter()
            .position(|v| v.machine.name == name)
        else {
            return;
        };
        let Some(after) = self.machines.views()[index].snapshot.as_ref() else {
            return;
        };
        // The first snapshot of a link is what is, not news.
        let Some(before) = before else { return };
        let mut labels: HashMap<u64, String> = HashMap::new();
        let mut transitions = Vec::new();
        for row in &after.agents {
            let Some(number) = row
                .pane
                .strip_prefix('%')
                .and_then(|n| n.parse::<u64>().ok())
            else {
                continue;
            };
            let (Some(to), Ok(kind)) = (
                AgentState::from_name(&row.state),
                AgentKind::from_str(&row.agent),
            ) else {
                continue;
            };
            let from = before
                .agents
                .iter()
                .find(|b| b.pane == row.pane)
                .and_then(|b| AgentState::from_name(&b.state))
                .unwrap_or(to);
            let pane = REMOTE_PANES + ((index as u64) << 24) + (number & 0xff_ffff);
            labels.insert(pane, format!("{name} %{number}"));
            transitions.push(Transition {
                pane,
                kind,
                subagent: None,
                from,
                to,
                tool: row.last_tool.clone(),
            });
        }
        let notifications = self
            .notifier
            .decide(&transitions, &|_| false, Instant::now());
        for n in notifications {
            let label = labels.get(&n.pane).cloned().unwrap_or_default();
            let remote = Notification {
                title: format!("{label}: {}", n.title),
                body: n.body.replacen(&format!("pane {}", n.pane), &label, 1),
                ..n
            };
            // `osc_sequences` drops control characters from the remote text.
            let bytes = osc_sequences(&remote, self.notifier.config());
            if bytes.is_empty() {
                continue;
            }
            for c in self.state.clients.values() {
                let _ = c.send_terminal(bytes.clone());
            }
        }
    }
}
