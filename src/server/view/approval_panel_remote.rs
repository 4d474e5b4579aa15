//! Saved machines' pending requests in the local approval panel (issue 20 §3). They come
//! after this machine's own (shown once none of those waits), each under a panel id of its
//! own (`model::panel::REMOTE_IDS` and up, never a local id), so the panel's guard holds for them too: a
//! key answers only the request on screen, and not while it just appeared under the user's
//! typing. `y` and `n` answer over the machine's link (`Server::decide_remote`); the waiting
//! hook on that machine gets the answer, its record names this machine. A machine whose link
//! is down shows none: its requests cannot be answered, and nothing answers them here.
//!
//! The request's texts are that machine's word: shown through `visible`. `a`/`A`/`p`/`P`
//! allow and set the "always" rule on the machine that asked (rules are per machine); the
//! panel names that rule in that machine's words (its snapshot carries them).

use crate::approvals::visible;
use crate::keys::{Key, KeyCode};
use crate::protocol::SnapshotApproval;
use crate::server::model::panel::REMOTE_IDS;
use crate::server::model::state::ClientId;
use crate::server::owner::Server;

use super::approval_panel::PanelData;

/// The panel id of request `id` of the machine at `machine` (its index) in the link's
/// `generation`: 8 bits of machine, 14 of generation, 40 of id under [`REMOTE_IDS`], so a
/// request of a restarted remote server that reuses an id is a new request to the panel.
fn panel_id(machine: usize, generation: u64, id: u64) -> u64 {
    REMOTE_IDS
        + (((machine as u64) & 0xff) << 54)
        + ((generation & 0x3fff) << 40)
        + (id & ((1 << 40) - 1))
}

impl Server {
    /// The live machines' pending requests, as panel ids, in machine order.
    pub(crate) fn remote_panel_ids(&self) -> Vec<u64> {
        self.machines
            .views()
            .iter()
            .enumerate()
            .filter(|(_, v)| v.live())
            .flat_map(|(i, v)| {
                v.snapshot
                    .iter()
                    .flat_map(|s| &s.approvals)
                    .map(move |a| panel_id(i, v.generation, a.id))
            })
            .collect()
    }

    /// The machine name and request behind a panel id, while its link is live.
    fn remote_request(&self, id: u64) -> Option<(String, SnapshotApproval)> {
        self.machines
            .views()
            .iter()
            .enumerate()
            .filter(|(_, v)| v.live())
            .find_map(|(i, v)| {
                let a = v
                    .snapshot
                    .as_ref()?
                    .approvals
                    .iter()
                    .find(|a| panel_id(i, v.generation, a.id) == id)?;
                Some((v.machine.name.clone(), a.clone()))
            })
    }

    /// What the panel shows for a saved machine's request.
    pub(crate) fn remote_panel_data(&self, client: ClientId, id: u64) -> Option<PanelData> {
        let c = self.state.clients.get(&client)?;
        let (machine, a) = self.remote_request(id)?;
        let ids = self.remote_panel_ids();
        let index = ids.iter().position(|i| *i == id).unwrap_or(0);
        let keys_asleep = c.panel.shown.filter(|s| s.id == id).is_some_and(now_asleep);
        Some(PanelData {
            cli: visible(&a.cli),
            pane: format!("{machine}:{}", visible(&a.pane)),
            tool: visible(&a.tool),
            headline: visible(&a.summary),
            lines: vec![
                visible(&a.summary),
                String::new(),
                format!("asked on {machine}: the answer goes back over its link"),
            ],
            index: index + 1,
            count: ids.len(),
            scroll: 0,
            suggestions: Vec::new(),
            message: c.panel.message.clone(),
            confirm_all: None,
            waited: String::new(),
            note: None,
            keys_asleep,
            cut: None,
            choices: if a.choices.is_empty() {
                format!("y allow · n deny · Tab next · Esc hide (on {machine})")
            } else {
                format!("{}  ·  a/A/p/P set {machine}'s rules", visible(&a.choices))
            },
            rules_list: None,
            app_keys: None,
        })
    }

    /// A key on a saved machine's request (the panel's guard already passed).
    pub(crate) fn remote_panel_key(&mut self, client: ClientId, id: u64, key: Key) {
        let ids = self.remote_panel_ids();
        let at = ids.iter().position(|i| *i == id).unwrap_or(0);
        let n = ids.len().max(1);
        let plain = !key.ctrl && !key.alt;
        let decided = match key.code {
            KeyCode::Char('y') if plain => Some((true, None)),
            KeyCode::Char('n') if plain => Some((false, None)),
            KeyCode::Char(k @ ('a' | 'A' | 'p' | 'P' | 'e' | 'E')) if plain => {
                Some((true, Some(k)))
            }
            // A deny message, typed as for a local request; Enter sends it with the deny.
            KeyCode::Char('m') if plain => {
                if let Some(c) = self.state.clients.get_mut(&client) {
                    c.panel.message = Some(String::new());
                    c.dirty = true;
                }
                None
            }
            KeyCode::Tab | KeyCode::Char('j') => {
                let next = ids.get((at + 1) % n).copied();
                self.remote_select(client, next);
                None
            }
            KeyCode::BackTab | KeyCode::Char('k') => {
                let prev = ids.get((at + n - 1) % n).copied();
                self.remote_select(client, prev);
                None
            }
            KeyCode::Escape => {
                if let Some(c) = self.state.clients.get_mut(&client) {
                    c.panel.hidden = true;
                    c.dirty = true;
                }
                None
            }
            _ => None,
        };
        let Some((allow, always)) = decided else {
            return;
        };
        self.remote_answer(client, id, allow, None, always);
    }

    /// Sends the answer for the saved machine's request behind panel id `id` over its link,
    /// and says so on the client's status line.
    pub(crate) fn remote_answer(
        &mut self,
        client: ClientId,
        id: u64,
        allow: bool,
        message: Option<String>,
        always: Option<char>,
    ) {
        let Some((machine, a)) = self.remote_request(id) else {
            return;
        };
        if always.is_some() && a.choices.is_empty() {
            self.message(client, "no rule for this request: y allows it once");
            return;
        }
        if matches!(always, Some('p' | 'P' | 'E')) && !a.choices.contains("p/P") {
            self.message(
                client,
                "no wider rule for this request: a/A allow it always",
            );
            return;
        }
        let response = self.decide_remote(None, &machine, a.id, allow, message, always);
        let said = match response {
            crate::protocol::Response::Error(e) => e,
            _ => format!("{} sent to {machine}", if allow { "allow" } else { "deny" }),
        };
        self.message(client, &said);
    }

    fn remote_select(&mut self, client: ClientId, id: Option<u64>) {
        if let Some(c) = self.state.clients.get_mut(&client) {
            c.panel.selected = id;
            c.panel.scroll = 0;
            c.dirty = true;
        }
    }
}

/// Whether a shown request's answer keys still sleep now.
fn now_asleep(s: crate::server::model::panel::Shown) -> bool {
    s.while_typing && tokio::time::Instant::now() < s.since + super::approval_panel::READ_GRACE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panel_ids_tell_machines_generations_and_ids_apart_and_are_never_local() {
        let a = panel_id(0, 1, 7);
        assert!(crate::server::model::panel::is_remote(a));
        assert_ne!(a, panel_id(1, 1, 7), "machines");
        assert_ne!(
            a,
            panel_id(0, 2, 7),
            "a restarted server's request with the same id"
        );
        assert_ne!(a, panel_id(0, 1, 8), "ids");
        assert!(!crate::server::model::panel::is_remote(u64::from(u32::MAX)));
    }
}
