//! The view docks from the owner's side (issue 17, "The TUI card"): the docks rebuilt from the
//! hub when a view changes, and the keys of `prefix v` (the card) and `prefix V` (every view).

use std::collections::HashMap;

use crate::hosted::oauth::open::{launch_with, opener, Opener};
use crate::keys::{Key, KeyCode};
use crate::layout::PaneId;
use crate::server::model::dock::{Card, Dock, ViewRow};
use crate::server::model::ids::ClientId;
use crate::server::model::state::ClientMode;
use crate::server::owner::Server;
use crate::views::registry::ViewId;

/// Body lines a PageUp/PageDown moves.
const PAGE: u16 = 10;

impl Server {
    /// Rebuilds every pane's dock and the `prefix V` rows from the hub; a new view (`created`)
    /// becomes its pane's shown card. Panes whose dock came or went are resized.
    pub(crate) fn rebuild_docks(&mut self, created: Option<ViewId>) {
        let hub = &self.views.hub;
        let views = hub.all();
        let ports = hub.ports().map(|p| (p.host, p.sandbox));
        let mut by_pane: HashMap<PaneId, Vec<Card>> = HashMap::new();
        for view in &views {
            if let Some(pane) = view.view.origin.pane {
                let url = hub.page_url(view.view.id);
                by_pane
                    .entry(pane)
                    .or_default()
                    .push(Card::from_snapshot(view, url, ports));
            }
        }
        self.state.view_rows = views.iter().map(ViewRow::of).collect();
        let docks = &mut self.state.docks;
        docks.retain(|pane, _| by_pane.contains_key(pane));
        for (pane, cards) in by_pane {
            let dock = docks.entry(pane).or_default();
            let shown = dock.card().map(|c| c.id);
            let wanted = created
                .filter(|id| cards.iter().any(|c| c.id == *id))
                .or(shown);
            dock.selected = wanted
                .and_then(|id| cards.iter().position(|c| c.id == id))
                .unwrap_or(cards.len().saturating_sub(1));
            if shown != dock.cards.get(dock.selected).map(|c| c.id) {
                dock.scroll = 0;
            }
            dock.cards = cards;
        }
        // A card that went away gives the keyboard back.
        let gone: Vec<ClientId> = self
            .state
            .clients
            .values()
            .filter(|c| matches!(c.mode, ClientMode::ViewCard { pane, .. } if !self.state.docks.contains_key(&pane)))
            .map(|c| c.id)
            .collect();
        for client in gone {
            self.set_mode(client, ClientMode::Normal);
        }
        let sessions: Vec<_> = self.state.sessions.keys().copied().collect();
        for session in sessions {
            self.state.relayout(session);
        }
    }

    /// `prefix v`: the focused pane's card takes the keyboard (or gives it back).
    pub(crate) fn focus_view_card(&mut self, client: ClientId, pane: PaneId) {
        if !self.state.docks.contains_key(&pane) {
            self.message(
                client,
                "this pane has no MCP App view (prefix V lists them all)",
            );
            return;
        }
        self.set_mode(client, ClientMode::ViewCard { pane, note: None });
    }

    /// `prefix V`.
    pub(crate) fn open_view_list(&mut self, client: ClientId) {
        let selected = self.state.view_rows.len().saturating_sub(1);
        self.set_mode(client, ClientMode::ViewList { selected });
    }

    /// A key while the card of `pane` has the keyboard.
    pub(crate) fn view_card_key(&mut self, client: ClientId, pane: PaneId, key: Key) {
        let Some(dock) = self.state.docks.get(&pane) else {
            return self.set_mode(client, ClientMode::Normal);
        };
        let Some(card) = dock.card().cloned() else {
            return self.set_mode(client, ClientMode::Normal);
        };
        let note = |this: &mut Self, text: String| {
            this.set_mode(
                client,
                ClientMode::ViewCard {
                    pane,
                    note: Some(text),
                },
            )
        };
        if key == self.state.config.keymap.prefix {
            return self.set_mode(client, ClientMode::Normal);
        }
        match key.code {
            KeyCode::Escape | KeyCode::Char('v') => self.set_mode(client, ClientMode::Normal),
            KeyCode::Char('o') => {
                let said = self.open_view_page(client, &card);
                note(self, said);
            }
            KeyCode::Char('c') => match card.url.clone() {
                Some(url) => {
                    self.copy_text(client, url);
                    note(self, "URL copied (OSC 52)".into());
                }
                None => note(self, "no URL yet: the view server is not running".into()),
            },
            KeyCode::Char('r') => {
                let registry = self.hosted_registry.clone();
                if self.views.reload(&registry, card.id) {
                    note(self, "reloading".into());
                }
            }
            KeyCode::Char('x') => {
                self.views.hub.remove(card.id);
            }
            KeyCode::Tab => self.with_dock(client, pane, |d| {
                d.selected = (d.selected + 1) % d.cards.len().max(1);
                d.scroll = 0;
            }),
            KeyCode::Char(c @ '1'..='9') => {
                let index = usize::from(c as u8 - b'1');
                self.with_dock(client, pane, |d| {
                    if index < d.cards.len() {
                        d.selected = index;
                        d.scroll = 0;
                    }
                })
            }
            KeyCode::Char('<') => {
                self.with_dock(client, pane, |d| d.widen(-1));
                self.relayout_pane(pane);
            }
            KeyCode::Char('>') => {
                self.with_dock(client, pane, |d| d.widen(1));
                self.relayout_pane(pane);
            }
            KeyCode::Up | KeyCode::Char('k') => {
                self.with_dock(client, pane, |d| d.scroll = d.scroll.saturating_sub(1))
            }
            KeyCode::Down | KeyCode::Char('j') => {
                self.with_dock(client, pane, |d| d.scroll = d.scroll.saturating_add(1))
            }
            KeyCode::PageUp => {
                self.with_dock(client, pane, |d| d.scroll = d.scroll.saturating_sub(PAGE))
            }
            KeyCode::PageDown => {
                self.with_dock(client, pane, |d| d.scroll = d.scroll.saturating_add(PAGE))
            }
            _ => {}
        }
    }

    /// Changes `pane`'s dock and redraws `client` and the others.
    fn with_dock(&mut self, client: ClientId, pane: PaneId, change: impl FnOnce(&mut Dock)) {
        if let Some(dock) = self.state.docks.get_mut(&pane) {
            change(dock);
            let body = dock.card().map_or(0, |c| c.body.len());
            dock.scroll = dock
                .scroll
                .min(u16::try_from(body.saturating_sub(1)).unwrap_or(u16::MAX));
        }
        if let Some(c) = self.state.clients.get_mut(&client) {
            c.dirty = true;
        }
        self.state.mark_pane_dirty(pane);
    }

    fn relayout_pane(&mut self, pane: PaneId) {
        if let Some((session, _)) = self.state.locate(pane) {
            self.state.relayout(session);
        }
    }

    /// `o`: opens the view's page in the browser of `client` when it is local; what the card
    /// says about it.
    fn open_view_page(&mut self, client: ClientId, card: &Card) -> String {
        let Some(url) = card.url.clone() else {
            return "cannot open: the view server is not running".into();
        };
        let env = self
            .state
            .clients
            .get(&client)
            .map(|c| c.opener_env.clone())
            .unwrap_or_default();
        let lookup = |name: &str| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        match opener(lookup) {
            Opener::Browser(program) => match launch_with(&program, &url, &env) {
                Ok(()) => "opened in the browser".into(),
                Err(e) => {
                    tracing::warn!("MCP App view {}: starting `{program}`: {e}", card.id);
                    "the browser did not start: open the URL below".into()
                }
            },
            Opener::Print { forward: Some(_) } => {
                "attached over SSH: run the ssh -L line below, then open the URL".into()
            }
            Opener::Print { forward: None } => {
                "no local browser (no DISPLAY): open the URL below".into()
            }
        }
    }

    /// A key in `prefix V`.
    pub(crate) fn view_list_key(&mut self, client: ClientId, selected: usize, key: Key) {
        let last = self.state.view_rows.len().saturating_sub(1);
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => self.set_mode(
                client,
                ClientMode::ViewList {
                    selected: selected.saturating_sub(1),
                },
            ),
            KeyCode::Down | KeyCode::Char('j') => self.set_mode(
                client,
                ClientMode::ViewList {
                    selected: (selected + 1).min(last),
                },
            ),
            KeyCode::Enter => {
                self.set_mode(client, ClientMode::Normal);
                let Some(row) = self.state.view_rows.get(selected).cloned() else {
                    return;
                };
                let Some(pane) = row.pane.filter(|p| self.state.panes.contains_key(p)) else {
                    self.message(client, "a standalone view has no pane: open its URL");
                    return;
                };
                self.show_pane(client, pane);
                if let Some(dock) = self.state.docks.get_mut(&pane) {
                    if let Some(i) = dock.cards.iter().position(|c| c.id == row.id) {
                        dock.selected = i;
                        dock.scroll = 0;
                    }
                }
                self.set_mode(client, ClientMode::ViewCard { pane, note: None });
            }
            KeyCode::Escape | KeyCode::Char('q') => self.set_mode(client, ClientMode::Normal),
            _ => {}
        }
    }
}
