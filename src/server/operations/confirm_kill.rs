//! `prefix x` and `prefix &` ask first, as tmux does: `kill-pane %3? (y/n)` on the status
//! line; `y` closes, any other key keeps it. `confirm_kill = false` in config.toml closes at
//! once.

use crate::input::InputEvent;
use crate::keys::KeyCode;
use crate::layout::PaneId;

use super::lifecycle::Close;
use crate::server::model::state::{ClientId, ClientMode, PromptKind, SessionId};
use crate::server::owner::Server;

/// Whether a prompt of `kind` is a kill question (answered by one key, not typed into).
pub(crate) fn is_question(kind: PromptKind) -> bool {
    matches!(
        kind,
        PromptKind::ConfirmKillPane(_)
            | PromptKind::ConfirmKillWindow(..)
            | PromptKind::ConfirmKillSession(_)
    )
}

impl Server {
    /// `prefix x`: closes `pane`, asking first unless `confirm_kill` is off.
    pub(super) fn kill_pane_asking(&mut self, client: ClientId, pane: PaneId) {
        if !self.state.config.confirm_kill {
            return self.close(Close::Pane(pane), "session ended");
        }
        self.set_mode(
            client,
            ClientMode::Prompt {
                kind: PromptKind::ConfirmKillPane(pane),
                text: format!("kill-pane %{pane}? (y/n)"),
            },
        );
    }

    /// `prefix &`: closes the window at position `index` of `session`, asking first unless
    /// `confirm_kill` is off. The question names (and remembers) the window's number: a window
    /// added meanwhile may move it in the list, never renumber it.
    pub(crate) fn kill_window_asking(
        &mut self,
        client: ClientId,
        session: SessionId,
        index: usize,
    ) {
        if !self.state.config.confirm_kill {
            return self.close(Close::Window(session, index), "session ended");
        }
        let Some(number) = self
            .state
            .sessions
            .get(&session)
            .and_then(|s| s.windows.get(index))
            .map(|w| w.number)
        else {
            return;
        };
        self.set_mode(
            client,
            ClientMode::Prompt {
                kind: PromptKind::ConfirmKillWindow(session, number),
                text: format!("kill-window {number}? (y/n)"),
            },
        );
    }

    /// `x` on a session's row of the chooser: closes the session, asking first unless
    /// `confirm_kill` is off.
    pub(crate) fn kill_session_asking(&mut self, client: ClientId, session: SessionId) {
        if !self.state.config.confirm_kill {
            return self.close(Close::Session(session), "session killed");
        }
        let Some(name) = self.state.sessions.get(&session).map(|s| s.name.clone()) else {
            return;
        };
        self.set_mode(
            client,
            ClientMode::Prompt {
                kind: PromptKind::ConfirmKillSession(session),
                text: format!("kill-session {name}? (y/n)"),
            },
        );
    }

    /// A key while a kill question is shown: `y` closes what it named, anything else not.
    pub(crate) fn confirm_kill_answer(
        &mut self,
        client: ClientId,
        kind: PromptKind,
        event: &InputEvent,
    ) {
        let InputEvent::Key { key, .. } = event else {
            return;
        };
        self.set_mode(client, ClientMode::Normal);
        let yes = matches!(key.code, KeyCode::Char('y' | 'Y')) && !key.ctrl && !key.alt;
        match kind {
            PromptKind::ConfirmKillPane(pane) if yes => {
                self.close(Close::Pane(pane), "session ended");
            }
            PromptKind::ConfirmKillWindow(session, number) if yes => {
                let index = self
                    .state
                    .sessions
                    .get(&session)
                    .and_then(|s| s.window_numbered(number));
                if let Some(index) = index {
                    self.close(Close::Window(session, index), "session ended");
                }
            }
            PromptKind::ConfirmKillSession(session) if yes => {
                self.close(Close::Session(session), "session killed");
            }
            _ => {}
        }
    }
}
