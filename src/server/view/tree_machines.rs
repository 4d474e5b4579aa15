//! The chooser's saved machines (issue 20 §2): below this server's sessions, every enabled
//! saved machine's sessions under the machine's name. A machine with a live link shows the
//! sessions of its last snapshot at once (no ssh); any other is asked when the chooser opens,
//! one bridged `ListSessions` per machine off the loop (as `calyx ls --all` does), so a slow
//! machine fills in later and an unreachable one shows `unreachable: NAME (reason)` or
//! `needs you: ...` instead of holding the chooser back (rows: `model::chooser_machines`).
//! Enter on one of its sessions switches the client there (`remote::switch`).

use crate::machines::all;
use crate::protocol::{Response, ServerMessage};
use crate::server::messages::Msg;
use crate::server::model::chooser_machines::{
    drawable, Listed, Listing, MachineAnswer, RemoteSession,
};
use crate::server::model::state::{ClientId, ClientMode};
use crate::server::owner::Server;

impl Server {
    /// Asks every enabled saved machine for its sessions, off the loop; a chooser open for
    /// another client keeps what it shows until the answers come.
    pub(crate) fn ask_chooser_machines(&mut self, client: ClientId) {
        let machines = match crate::machines::store::load() {
            Ok(machines) => machines,
            Err(e) => {
                self.chooser_machines.listings.clear();
                self.message(client, drawable(&format!("saved machines: {e:#}")));
                return;
            }
        };
        let chooser = &mut self.chooser_machines;
        chooser.asked += 1;
        chooser.listings.clear();
        for machine in machines.into_iter().filter(|m| m.enabled) {
            // A live link's snapshot carries the machine's sessions as they are now.
            let linked = self
                .machines
                .get(&machine.name)
                .filter(|v| v.live() && v.machine == machine)
                .and_then(|v| v.snapshot.as_ref());
            if let Some(snapshot) = linked {
                chooser.listings.push(Listing {
                    machine: machine.name.clone(),
                    state: Listed::Sessions(
                        snapshot
                            .sessions
                            .iter()
                            .map(|s| RemoteSession {
                                name: s.name.clone(),
                                windows: s.windows,
                                attached: s.attached,
                            })
                            .collect(),
                    ),
                });
                continue;
            }
            chooser.listings.push(Listing {
                machine: machine.name.clone(),
                state: Listed::Asking,
            });
            let tx = self.tx.clone();
            let asked = chooser.asked;
            tokio::spawn(async move {
                let answer = all::ask(&machine, crate::protocol::Request::ListSessions).await;
                let _ = tx.send(Msg::ChooserMachine(MachineAnswer {
                    asked,
                    machine: machine.name,
                    answer,
                }));
            });
        }
    }

    /// One machine answered: its rows fill in for every open chooser.
    pub(crate) fn chooser_machine_answered(&mut self, done: MachineAnswer) {
        if done.asked != self.chooser_machines.asked {
            return;
        }
        let Some(listing) = self
            .chooser_machines
            .listings
            .iter_mut()
            .find(|l| l.machine == done.machine)
        else {
            return;
        };
        listing.state = match done.answer {
            Ok(Some(Response::Sessions(sessions))) => Listed::Sessions(
                sessions
                    .into_iter()
                    .map(|s| RemoteSession {
                        name: s.name,
                        windows: s.windows,
                        attached: s.attached,
                    })
                    .collect(),
            ),
            Ok(Some(_)) => Listed::Failed(format!(
                "unreachable: {} (its server answered something else)",
                done.machine
            )),
            // No server runs there: nothing to attach to.
            Ok(None) => Listed::Sessions(Vec::new()),
            Err(failure) => Listed::Failed(drawable(&failure.line(&done.machine))),
        };
        for c in self.state.clients.values_mut() {
            if matches!(c.mode, ClientMode::Tree { .. }) {
                c.dirty = true;
            }
        }
    }

    /// Enter on a saved machine's session: this client leaves for it. It is told where to go,
    /// then detached (this server and its sessions keep running); `prefix L` there brings it
    /// back to the session it showed.
    pub(crate) fn switch_to_remote(&mut self, client: ClientId, m: usize, s: usize) {
        let Some((machine, session)) = self.chooser_machines.chosen(m, s) else {
            return;
        };
        let Some(back) = self
            .client_session(client)
            .and_then(|id| self.state.sessions.get(&id))
            .map(|s| s.name.clone())
        else {
            return;
        };
        self.send_to(
            client,
            &ServerMessage::SwitchRemote {
                machine: machine.clone(),
                session,
                back,
            },
        );
        self.state
            .detach_client(client, &format!("switched to machine {machine}"));
    }
}
