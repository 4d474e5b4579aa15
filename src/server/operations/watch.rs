//! `ClientMessage::Watch`: connections (saved machines' links from other servers) that get
//! this machine's [`MachineSnapshot`] pushed whenever it changes. The snapshot is worked out
//! after each message the owner handles (but pane output and keys typed into a pane, which
//! change none of it) only
//! while someone watches, and sent only when its bytes differ from the last one that watcher
//! got: an idle machine pushes nothing, and a server nobody watches does no work at all.

use tokio::time::Instant;

use crate::protocol::{
    encode_message, MachineSnapshot, ServerMessage, SnapshotAgent, SnapshotApproval,
};
use crate::server::io::terminal::Outgoing;
use crate::server::model::ids::ClientId;
use crate::server::owner::Server;

impl Server {
    /// `id` watches from now on; it gets the snapshot at once.
    pub(crate) fn watch_start(&mut self, id: ClientId) {
        self.watchers.insert(id, Vec::new());
        self.watch_due = true;
        self.push_watch();
    }

    /// This machine now, without clocks (see [`MachineSnapshot`]).
    pub(crate) fn machine_snapshot(&self) -> MachineSnapshot {
        let agents = self
            .agents
            .rows(Instant::now())
            .into_iter()
            .map(|r| SnapshotAgent {
                pane: format!("%{}", r.pane),
                agent: r.kind.as_str().to_string(),
                agent_name: r.kind.display_name().to_string(),
                state: r.state.as_str().to_string(),
                cwd: r.cwd.clone(),
                last_tool: r.last_tool.clone(),
            })
            .collect();
        let approvals = self
            .approvals
            .pending()
            .iter()
            .map(|p| SnapshotApproval {
                id: p.id,
                pane: match &p.app {
                    Some(app) if app.pane.is_none() => format!("view {}", app.view),
                    _ => format!("%{}", p.pane),
                },
                cli: p.asker.as_str().to_string(),
                tool: p.tool.clone(),
                summary: crate::approvals::redact::redact(&p.summary.headline),
                choices: match &p.app {
                    Some(_) => String::new(),
                    None => crate::approvals::rules::rule_choices(&p.subject),
                },
            })
            .collect();
        MachineSnapshot {
            version: env!("CARGO_PKG_VERSION").to_string(),
            sessions: self.session_infos(),
            agents,
            approvals,
        }
    }

    /// Sends the snapshot to each watcher whose last one differs, when a message since the
    /// last look may have changed it. Returns how many watchers were sent one.
    pub(crate) fn push_watch(&mut self) -> usize {
        if self.watchers.is_empty() || !std::mem::take(&mut self.watch_due) {
            return 0;
        }
        self.watch_computed += 1;
        let frame = encode_message(&ServerMessage::Snapshot(self.machine_snapshot()));
        let mut sent = 0;
        for (id, last) in &mut self.watchers {
            if *last == frame {
                continue;
            }
            if let Some(tx) = self.connections.get(id) {
                // A watcher too far behind misses this one; the next change sends it all
                // again (each snapshot is whole).
                if tx.try_send(Outgoing::Message(frame.clone())).is_ok() {
                    *last = frame.clone();
                    sent += 1;
                }
            }
        }
        sent
    }
}
