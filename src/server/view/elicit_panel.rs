//! The elicitation panel (issue 17, "Elicitation"): a hosted server's `elicitation/create`
//! drawn floating over the panes of every attached client (see [`super::elicit_draw`]) until
//! it is answered. It comes and takes the keys the way the sign-in prompt does
//! ([`super::sign_in_prompt`]): the queue's changes arrive as [`Msg::Elicitations`], and while
//! shown it takes the keys of the normal mode (the prefix still works), asleep for 500 ms
//! for a client that was typing when it appeared.
//!
//! Form keys: `Tab`/`Shift-Tab`/`Up`/`Down` move, typing edits (`Backspace`, `Ctrl-U`
//! clears), `Space` toggles, `Left`/`Right` cycle, `Enter` presses the focused button,
//! `Esc` cancels. URL keys: `Left`/`Right`/`Tab` move over Cancel / Decline / Open, `Enter`
//! presses, `Ctrl-Y` copies the address, `Esc` cancels; Open opens the page as the sign-in
//! prompt does (the client's browser, else the address shown) and answers accept, then `Done`
//! (`Enter` or `Esc`) closes it unless the server's `notifications/elicitation/complete`
//! does first.

use crate::hosted::elicit::form::{FormKey, Outcome};
use crate::hosted::elicit::{Answer, Request};
use crate::hosted::oauth::open::{opener, Opener};
use crate::keys::{Key, KeyCode};
use crate::server::messages::Msg;
use crate::server::model::elicit_panel::{merged, ElicitPanel, OpenedVia, UrlButton};
use crate::server::model::state::ClientId;
use crate::server::operations::clipboard::osc52;
use crate::server::owner::Server;

impl Server {
    /// Follows the hosted servers' elicitations for as long as the server runs: each change
    /// comes to the loop as [`Msg::Elicitations`].
    pub(crate) fn watch_elicitations(&self) {
        let Some(hosting) = &self.hosting else {
            return;
        };
        let mut changes = hosting.elicitations().watch();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            while changes.changed().await.is_ok() {
                if tx.send(Msg::Elicitations).is_err() {
                    return;
                }
            }
        });
    }

    /// The questions changed: panels come, keep what was typed, or go, in every client.
    pub(crate) fn elicitations_changed(&mut self) {
        let pending = self
            .hosting
            .as_ref()
            .map(|h| h.elicitations().shown())
            .unwrap_or_default();
        let now = tokio::time::Instant::now();
        let typing = self.typing_clients(now);
        let mut next = merged(&self.state.elicit_panels, &pending, now, &typing);
        for panel in &mut next {
            panel.pane = panel
                .pending
                .surface
                .as_deref()
                .and_then(|surface| self.pane_label(surface));
        }
        if next != self.state.elicit_panels {
            self.state.elicit_panels = next;
            self.redraw_clients();
        }
    }

    /// `%3 (main:1)` for the pane of `surface`, as the approval panel names panes.
    fn pane_label(&self, surface: &str) -> Option<String> {
        let pane = self
            .state
            .panes
            .values()
            .find(|p| p.surface_id == surface)?
            .id;
        let place = self
            .state
            .locate(pane)
            .and_then(|(s, w)| self.state.sessions.get(&s).map(|s| (s.name.clone(), w)));
        Some(match place {
            Some((session, window)) => {
                format!(
                    "%{pane} ({}:{window})",
                    calyx_tui::escape::visible(&session)
                )
            }
            None => format!("%{pane}"),
        })
    }

    fn redraw_clients(&mut self) {
        for c in self.state.clients.values_mut() {
            c.dirty = true;
        }
        self.schedule_render();
    }

    /// A key in the normal mode while a panel is shown; false when none is.
    pub(crate) fn elicit_key(&mut self, client: ClientId, key: Key) -> bool {
        let Some(panel) = self.state.elicit_panels.first().cloned() else {
            return false;
        };
        if panel.keys_asleep(client, tokio::time::Instant::now()) {
            return true;
        }
        if panel.form.is_some() {
            self.form_key(panel, key);
        } else {
            self.url_key(client, panel, key);
        }
        true
    }

    fn form_key(&mut self, mut panel: ElicitPanel, key: Key) {
        let Some(form_key) = form_key(key) else {
            return;
        };
        let Some(form) = panel.form.as_mut() else {
            return;
        };
        let outcome = form.key(form_key);
        let id = panel.pending.id;
        self.replace_panel(panel);
        if let Some(outcome) = outcome {
            let answer = match outcome {
                Outcome::Accept(content) => Answer::Accept(Some(content)),
                Outcome::Decline => Answer::Decline,
                Outcome::Cancel => Answer::Cancel,
            };
            self.answer_elicitation(id, answer);
        }
    }

    fn url_key(&mut self, client: ClientId, mut panel: ElicitPanel, key: Key) {
        let Request::Url { url, .. } = &panel.pending.request else {
            return;
        };
        let url = url.clone();
        let id = panel.pending.id;
        if key.code == KeyCode::Char('y') && key.ctrl {
            if let Some(c) = self.state.clients.get(&client) {
                let _ = c.send_terminal(osc52(url.as_bytes()));
            }
            self.message(client, "copied the address");
            return;
        }
        if panel.pending.opened {
            if matches!(key.code, KeyCode::Enter | KeyCode::Escape) {
                if let Some(hosting) = &self.hosting {
                    hosting.elicitations().done(id);
                }
                self.elicitations_changed();
            }
            return;
        }
        let back = key.shift || matches!(key.code, KeyCode::BackTab | KeyCode::Left | KeyCode::Up);
        match key.code {
            KeyCode::Tab | KeyCode::BackTab | KeyCode::Left | KeyCode::Right => {
                panel.url_focus = panel.url_focus.step(back);
                self.replace_panel(panel);
            }
            KeyCode::Escape => self.answer_elicitation(id, Answer::Cancel),
            KeyCode::Enter => match panel.url_focus {
                UrlButton::Cancel => self.answer_elicitation(id, Answer::Cancel),
                UrlButton::Decline => self.answer_elicitation(id, Answer::Decline),
                UrlButton::Open => {
                    panel.opened_via = Some(self.open_for(client, &url));
                    self.replace_panel(panel);
                    self.answer_elicitation(id, Answer::Accept(None));
                }
            },
            _ => {}
        }
    }

    /// Opens `url` the way `client`'s environment allows (as the sign-in prompt's `s`); also
    /// an allowed Open Link whose page has closed.
    pub(crate) fn open_for(&self, client: ClientId, url: &str) -> OpenedVia {
        let env = self
            .state
            .clients
            .get(&client)
            .map(|c| c.opener_env.clone())
            .unwrap_or_default();
        match opener(|name| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())) {
            Opener::Browser(program) => match super::sign_in_prompt::launch(&program, url, &env) {
                Ok(()) => OpenedVia::Browser,
                Err(e) => {
                    tracing::warn!("elicitation: starting the browser `{program}` failed: {e}");
                    OpenedVia::Shown
                }
            },
            Opener::Print { .. } => OpenedVia::Shown,
        }
    }

    /// Stores the edited panel (still the same question) and redraws.
    fn replace_panel(&mut self, panel: ElicitPanel) {
        if let Some(shown) = self
            .state
            .elicit_panels
            .iter_mut()
            .find(|p| p.pending.id == panel.pending.id)
        {
            *shown = panel;
        }
        self.redraw_clients();
    }

    fn answer_elicitation(&mut self, id: u64, answer: Answer) {
        if let Some(hosting) = &self.hosting {
            hosting.elicitations().answer(id, answer);
        }
        self.elicitations_changed();
    }
}

/// What a terminal key means to a form; None for keys it ignores.
fn form_key(key: Key) -> Option<FormKey> {
    Some(match key.code {
        KeyCode::Tab if key.shift => FormKey::Prev,
        KeyCode::Tab | KeyCode::Down => FormKey::Next,
        KeyCode::BackTab | KeyCode::Up => FormKey::Prev,
        KeyCode::Left => FormKey::Left,
        KeyCode::Right => FormKey::Right,
        KeyCode::Enter => FormKey::Enter,
        KeyCode::Escape => FormKey::Escape,
        KeyCode::Backspace => FormKey::Backspace,
        KeyCode::Char('u') if key.ctrl => FormKey::Clear,
        KeyCode::Char(' ') if !key.ctrl && !key.alt => FormKey::Space,
        KeyCode::Char(c) if !key.ctrl && !key.alt => FormKey::Char(c),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_keys_map_to_the_form_keys_the_issue_names() {
        let plain = |code| Key {
            code,
            ctrl: false,
            alt: false,
            shift: false,
        };
        let ctrl = |c| Key {
            code: KeyCode::Char(c),
            ctrl: true,
            alt: false,
            shift: false,
        };
        assert_eq!(form_key(plain(KeyCode::Tab)), Some(FormKey::Next));
        assert_eq!(form_key(plain(KeyCode::BackTab)), Some(FormKey::Prev));
        assert_eq!(form_key(plain(KeyCode::Up)), Some(FormKey::Prev));
        assert_eq!(form_key(plain(KeyCode::Down)), Some(FormKey::Next));
        assert_eq!(form_key(ctrl('u')), Some(FormKey::Clear));
        assert_eq!(form_key(plain(KeyCode::Char(' '))), Some(FormKey::Space));
        assert_eq!(
            form_key(plain(KeyCode::Char('é'))),
            Some(FormKey::Char('é'))
        );
        assert_eq!(form_key(ctrl('x')), None, "other control keys do nothing");
        assert_eq!(form_key(plain(KeyCode::Escape)), Some(FormKey::Escape));
    }
}
