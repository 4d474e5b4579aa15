//! The chooser's saved machines (issue 20 §2): below this server's sessions, every enabled
//! saved machine's sessions under the machine's name. They are asked when the chooser opens,
//! one bridged `ListSessions` per machine off the loop (as `calyx ls --all` does), so a slow
//! machine fills in later and an unreachable one shows `unreachable: NAME (reason)` or
//! `needs you: ...` instead of holding the chooser back. Enter on one of its sessions
//! switches the client there (`remote::switch`).
//!
//! Session names and failure reasons come from another machine: control characters are
//! stripped before they reach a row.

use calyx_tui::TreeRow;

use crate::machines::{all, probe};
use crate::protocol::{Response, ServerMessage};
use crate::server::messages::Msg;
use crate::server::model::state::ClientId;
use crate::server::owner::Server;

/// The longest session name or reason drawn from another machine.
const MAX_TEXT: usize = 200;

/// What the chooser knows of the saved machines, asked when it last opened.
#[derive(Debug, Default)]
pub(crate) struct ChooserMachines {
    /// Which asking the listings belong to: answers to an older one are dropped.
    asked: u64,
    listings: Vec<Listing>,
}

#[derive(Debug)]
struct Listing {
    machine: String,
    state: Listed,
}

#[derive(Debug)]
enum Listed {
    Asking,
    Sessions(Vec<RemoteSession>),
    /// The line to show: `unreachable: NAME (reason)` or `needs you: ...`.
    Failed(String),
}

#[derive(Debug)]
struct RemoteSession {
    /// As the remote server names it, for the attach.
    name: String,
    windows: usize,
    attached: usize,
}

/// An answer about one machine, brought back to the loop.
#[derive(Debug)]
pub struct MachineAnswer {
    asked: u64,
    machine: String,
    answer: all::Answer,
}

/// `text` without control characters, cut to [`MAX_TEXT`] characters: it is drawn as is.
pub(crate) fn drawable(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control())
        .take(MAX_TEXT)
        .collect()
}

impl ChooserMachines {
    /// The chooser's rows after this server's: one per machine, then its sessions.
    pub(crate) fn items(&self) -> Vec<(usize, Option<usize>)> {
        let mut items = Vec::new();
        for (m, listing) in self.listings.iter().enumerate() {
            items.push((m, None));
            if let Listed::Sessions(sessions) = &listing.state {
                items.extend((0..sessions.len()).map(|s| (m, Some(s))));
            }
        }
        items
    }

    /// A machine's row: its name, and how its asking went.
    pub(crate) fn machine_row(&self, m: usize) -> Option<TreeRow> {
        let listing = self.listings.get(m)?;
        let detail = match &listing.state {
            Listed::Asking => "asking…".to_string(),
            Listed::Sessions(s) if s.is_empty() => "no sessions".to_string(),
            Listed::Sessions(s) => {
                format!("{} session{}", s.len(), if s.len() == 1 { "" } else { "s" })
            }
            Listed::Failed(line) => line.clone(),
        };
        Some(TreeRow {
            window: false,
            label: format!("{}:", drawable(&listing.machine)),
            detail,
            current: false,
            attached: 0,
            agents: Vec::new(),
            preview: None,
        })
    }

    /// A remote session's row, indented under its machine.
    pub(crate) fn session_row(&self, m: usize, s: usize) -> Option<TreeRow> {
        let Listed::Sessions(sessions) = &self.listings.get(m)?.state else {
            return None;
        };
        let session = sessions.get(s)?;
        Some(TreeRow {
            window: true,
            label: drawable(&session.name),
            detail: format!(
                "{} window{}",
                session.windows,
                if session.windows == 1 { "" } else { "s" }
            ),
            current: false,
            attached: session.attached,
            agents: Vec::new(),
            preview: None,
        })
    }

    /// The machine and the session's name as its server knows it.
    fn chosen(&self, m: usize, s: usize) -> Option<(String, String)> {
        let listing = self.listings.get(m)?;
        let Listed::Sessions(sessions) = &listing.state else {
            return None;
        };
        Some((listing.machine.clone(), sessions.get(s)?.name.clone()))
    }
}

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
            Err(failure @ probe::Failure::NeedsYou { .. })
            | Err(failure @ probe::Failure::Unreachable(_)) => {
                Listed::Failed(drawable(&failure.line(&done.machine)))
            }
        };
        for c in self.state.clients.values_mut() {
            if matches!(c.mode, crate::server::model::state::ClientMode::Tree { .. }) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::SessionInfo;

    #[test]
    fn rows_follow_the_answers_and_draw_no_control_characters() {
        let mut chooser = ChooserMachines {
            asked: 1,
            listings: vec![
                Listing {
                    machine: "build".into(),
                    state: Listed::Asking,
                },
                Listing {
                    machine: "far".into(),
                    state: Listed::Failed("unreachable: far (refused)".into()),
                },
            ],
        };
        assert_eq!(chooser.items(), [(0, None), (1, None)]);
        assert_eq!(
            chooser.machine_row(0).map(|r| r.detail),
            Some("asking…".into())
        );
        let info = SessionInfo {
            id: 1,
            name: "api\u{1b}]2;pwned\u{7}".into(),
            windows: 2,
            panes: 3,
            attached: 1,
            rows: 24,
            cols: 80,
        };
        chooser.listings[0].state = Listed::Sessions(vec![RemoteSession {
            name: info.name.clone(),
            windows: info.windows,
            attached: info.attached,
        }]);
        assert_eq!(chooser.items(), [(0, None), (0, Some(0)), (1, None)]);
        let row = chooser.session_row(0, 0).expect("a session row");
        assert_eq!(row.label, "api]2;pwned");
        assert!(row.window);
        assert_eq!(row.detail, "2 windows");
        assert_eq!(
            chooser.machine_row(1).map(|r| r.detail),
            Some("unreachable: far (refused)".into())
        );
        // The attach uses the name as the remote server knows it.
        assert_eq!(
            chooser.chosen(0, 0),
            Some(("build".to_string(), info.name.clone()))
        );
        assert_eq!(chooser.chosen(1, 0), None);
    }
}
