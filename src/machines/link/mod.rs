//! Live links to the saved machines (issue 20 §2): the server keeps one background
//! connection per enabled machine (the user's ssh, `BatchMode=yes`, a short connect timeout,
//! keep-alives: see `remote::link`), subscribes to that machine's snapshot
//! (`ClientMessage::Watch`) and keeps the latest one here, in the owner's state. The owner
//! never waits on ssh: each link is a task that reports [`LinkEvent`]s through a sink, and
//! requests for a machine (an approval's answer) go to its task and come back later.
//!
//! - [`state`]: what a link is doing (`connecting`, `live`, `unreachable`, `needs you`);
//! - [`task`]: the connection, its reconnects with backoff, and the requests it carries;
//! - [`Machines`] (here): every machine's link and last snapshot, following `machines.toml`.
//!
//! No saved machine, no link and no task: a server without saved machines does nothing more.

pub mod state;
pub mod task;

use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};

use super::Machine;
use crate::protocol::{MachineSnapshot, Request, Response};
pub use state::LinkState;

/// What a link tells the owner.
#[derive(Debug)]
pub enum LinkEvent {
    State {
        name: String,
        state: LinkState,
    },
    Snapshot {
        name: String,
        snapshot: MachineSnapshot,
    },
}

/// Where a link's events go (the owner's channel, wrapped by the server).
pub type Sink = Arc<dyn Fn(LinkEvent) + Send + Sync>;

/// A request for a machine's server and where its answer goes (an error: the link is down).
#[derive(Debug)]
pub struct Ask {
    pub request: Request,
    pub reply: oneshot::Sender<Result<Response, String>>,
}

/// A running link task; dropping it stops the task (and with it the ssh connection).
struct Handle {
    asks: mpsc::UnboundedSender<Ask>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// One saved machine as the server sees it.
pub struct MachineView {
    pub machine: Machine,
    pub state: LinkState,
    /// The last snapshot it pushed; kept while it is unreachable (shown as stale).
    pub snapshot: Option<MachineSnapshot>,
    /// How many times the link connected again: request ids are only unique within one
    /// remote server's life, and a server that restarted drops the link first, so (this,
    /// id) names one request for good (the panel's guard relies on it).
    pub generation: u64,
    handle: Option<Handle>,
}

impl MachineView {
    /// Whether its snapshot is current (the link is live).
    pub fn live(&self) -> bool {
        self.state == LinkState::Live
    }
}

/// Every enabled saved machine's link and what it last showed, in `machines.toml`'s order.
#[derive(Default)]
pub struct Machines {
    views: Vec<MachineView>,
}

impl Machines {
    /// Follows the saved machines: links to machines removed, disabled or given another
    /// target stop; new ones start (with `sink` for their events).
    pub fn follow(&mut self, saved: &[Machine], sink: &Sink) {
        let wanted: Vec<&Machine> = saved.iter().filter(|m| m.enabled).collect();
        self.views
            .retain(|v| wanted.iter().any(|m| **m == v.machine));
        for machine in wanted {
            if self.views.iter().any(|v| v.machine == *machine) {
                continue;
            }
            let (asks, rx) = mpsc::unbounded_channel();
            let task = tokio::spawn(task::run(machine.clone(), sink.clone(), rx));
            self.views.push(MachineView {
                machine: machine.clone(),
                state: LinkState::Connecting,
                snapshot: None,
                generation: 0,
                handle: Some(Handle { asks, task }),
            });
        }
        // The file's order.
        self.views.sort_by_key(|v| {
            saved
                .iter()
                .position(|m| m.name == v.machine.name)
                .unwrap_or(usize::MAX)
        });
    }

    /// Applies a link's event; returns the machine's snapshot before it, when the event was a
    /// new snapshot (for notifications of what changed), else None.
    pub fn apply(&mut self, event: LinkEvent) -> Option<Option<MachineSnapshot>> {
        match event {
            LinkEvent::State { name, state } => {
                if let Some(v) = self.views.iter_mut().find(|v| v.machine.name == name) {
                    if state == LinkState::Connecting {
                        v.generation += 1;
                    }
                    v.state = state;
                }
                None
            }
            LinkEvent::Snapshot { name, snapshot } => {
                let v = self.views.iter_mut().find(|v| v.machine.name == name)?;
                v.state = LinkState::Live;
                Some(v.snapshot.replace(snapshot))
            }
        }
    }

    /// The machines, in the file's order.
    pub fn views(&self) -> &[MachineView] {
        &self.views
    }

    /// The machine called `name`.
    pub fn get(&self, name: &str) -> Option<&MachineView> {
        self.views.iter().find(|v| v.machine.name == name)
    }

    /// Sends `request` to machine `name`'s server over its link; the answer comes on the
    /// receiver. Refused at once when there is no such machine or its link is not live.
    pub fn ask(
        &self,
        name: &str,
        request: Request,
    ) -> Result<oneshot::Receiver<Result<Response, String>>, String> {
        let view = self.get(name).ok_or_else(|| {
            format!(
                "no saved machine named {} with a link (`calyx machine list`)",
                crate::remote::handshake::printable(name)
            )
        })?;
        if !view.live() {
            return Err(view.state.line(name));
        }
        let handle = view
            .handle
            .as_ref()
            .ok_or_else(|| format!("{name} has no link"))?;
        let (reply, rx) = oneshot::channel();
        handle
            .asks
            .send(Ask { request, reply })
            .map_err(|_| format!("the link to {name} stopped"))?;
        Ok(rx)
    }

    /// A machine as if its link had brought `snapshot` and were in `state`, with no task (for
    /// tests of what the server shows from snapshots).
    #[cfg(test)]
    pub fn insert_for_test(
        &mut self,
        machine: Machine,
        state: LinkState,
        snapshot: MachineSnapshot,
    ) {
        self.views.push(MachineView {
            machine,
            state,
            snapshot: Some(snapshot),
            generation: 0,
            handle: None,
        });
    }

    /// Whether any machine is saved (so the views need a machine column).
    pub fn any(&self) -> bool {
        !self.views.is_empty()
    }
}
