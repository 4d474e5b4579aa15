//! What the `:` prompt and one-shot commands do to the state, and the helpers every action
//! shares (focus, messages, modes, renames). Bound actions are in `bound_actions`.

use base64::Engine;

use crate::layout::PaneId;

use crate::server::model::copy_mode::CopyMode;
use crate::server::model::state::{ClientId, ClientMode, SessionId};
use crate::server::owner::Server;

impl Server {
    /// The session a client is attached to.
    pub(crate) fn client_session(&self, client: ClientId) -> Option<SessionId> {
        self.state.clients.get(&client).map(|c| c.session)
    }

    /// Shows a transient message on a client's status line.
    pub(crate) fn message(&mut self, client: ClientId, text: impl Into<String>) {
        let text = text.into();
        self.state.messages.push(&text);
        if let Some(c) = self.state.clients.get_mut(&client) {
            c.message = Some((text, tokio::time::Instant::now()));
            c.dirty = true;
        }
        self.schedule_message_expiry();
    }

    /// Focuses `pane` (and its window).
    pub(crate) fn focus_pane(&mut self, pane: PaneId) {
        let Some((session, window)) = self.state.locate(pane) else {
            return;
        };
        let previous = self
            .state
            .sessions
            .get(&session)
            .and_then(|s| s.active_pane());
        if let Some(s) = self.state.sessions.get_mut(&session) {
            s.select_window(window);
            if let Some(w) = s.windows.get_mut(window) {
                w.focus(pane);
            }
        }
        // Focus reports to the programs follow in `update_focus` (after every message).
        if previous != Some(pane) {
            self.on_focus_changed(pane);
        }
        self.state.relayout(session);
    }

    /// Shows the client `pane`: switches it to the pane's session first (the sidebar, `prefix b`
    /// and the approval panel's `g` reach agents in every session), then focuses the pane and
    /// its window.
    pub(crate) fn show_pane(&mut self, client: ClientId, pane: PaneId) {
        let Some((session, _)) = self.state.locate(pane) else {
            return;
        };
        if self.client_session(client) != Some(session) {
            self.switch_client(client, session);
        }
        self.focus_pane(pane);
        self.state.mark_session_dirty(session);
    }

    /// Hides the client's session's agents sidebar and gives the keyboard back to the panes.
    pub(crate) fn hide_sidebar(&mut self, client: ClientId) {
        let Some(session) = self.client_session(client) else {
            return;
        };
        if let Some(s) = self.state.sessions.get_mut(&session) {
            s.sidebar = false;
        }
        self.set_mode(client, ClientMode::Normal);
        self.state.relayout(session);
    }

    /// Moves a client to another session (tmux's switch-client): it is drawn whole from the
    /// new session, and both sessions take their size from the clients they now have.
    pub(crate) fn switch_client(&mut self, client: ClientId, session: SessionId) {
        if !self.state.sessions.contains_key(&session) {
            return;
        }
        let Some(c) = self.state.clients.get_mut(&client) else {
            return;
        };
        let old = std::mem::replace(&mut c.session, session);
        if old == session {
            return;
        }
        c.last_session = Some(old);
        c.mode = ClientMode::Normal;
        c.drag = None;
        c.selecting = None;
        c.dirty = true;
        if let Some(frame) = self.frames.get_mut(&client) {
            frame.forget_drawn();
        }
        if let Some(s) = self.state.sessions.get_mut(&session) {
            s.last_used = tokio::time::Instant::now();
        }
        self.state.resize_session_to_clients(old);
        self.state.resize_session_to_clients(session);
    }

    /// Switches a session to the window numbered `number` (what users type and see).
    pub(crate) fn select_window_number(&mut self, session: SessionId, number: usize) -> bool {
        let index = self
            .state
            .sessions
            .get(&session)
            .and_then(|s| s.window_numbered(number));
        index.is_some_and(|i| self.select_window(session, i))
    }

    /// Switches a session to the window at position `index` in its list.
    pub(crate) fn select_window(&mut self, session: SessionId, index: usize) -> bool {
        let pane = self
            .state
            .sessions
            .get(&session)
            .and_then(|s| s.windows.get(index))
            .map(|w| w.active);
        match pane {
            Some(p) => {
                self.focus_pane(p);
                true
            }
            None => false,
        }
    }

    /// Puts text in the paste buffer and on the outer terminal's clipboard (OSC 52), which over
    /// SSH reaches the user's own machine.
    pub(crate) fn copy_text(&mut self, client: ClientId, text: String) {
        let b64 = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
        let osc = format!("\x1b]52;c;{b64}\x07");
        if let Some(session) = self.client_session(client) {
            for c in self.state.clients.values().filter(|c| c.session == session) {
                let _ = c.send_terminal(osc.as_bytes().to_vec());
            }
        }
        let n = text.len();
        self.state.paste_buffer = Some(text.into_bytes());
        self.message(client, format!("copied {n} bytes"));
    }

    /// Writes the paste buffer into a pane, bracketed when the program asked for it.
    pub(crate) fn paste_into(&mut self, pane: PaneId, data: &[u8]) {
        let Some(p) = self.state.panes.get(&pane) else {
            return;
        };
        let bracketed = p.glance.bracketed_paste();
        let mut bytes = Vec::with_capacity(data.len() + 12);
        if bracketed {
            bytes.extend_from_slice(b"\x1b[200~");
        }
        // A paste must not be able to end the bracket early.
        let cleaned: Vec<u8> = if bracketed {
            String::from_utf8_lossy(data)
                .replace("\x1b[201~", "")
                .into_bytes()
        } else {
            data.to_vec()
        };
        bytes.extend_from_slice(&cleaned);
        if bracketed {
            bytes.extend_from_slice(b"\x1b[201~");
        }
        p.process.write(bytes);
    }

    /// Enters copy mode on a pane.
    pub(crate) fn enter_copy_mode(&mut self, pane: PaneId) {
        if let Some(p) = self.state.panes.get_mut(&pane) {
            if p.copy.is_none() {
                let copy = CopyMode::enter(&p.term(), p.rows, p.cols);
                p.copy = Some(copy);
            }
        }
        self.state.mark_pane_dirty(pane);
    }

    /// A session's active window.
    pub(crate) fn window_of(
        &self,
        session: SessionId,
    ) -> Option<&crate::server::model::state::Window> {
        self.state.sessions.get(&session).and_then(|s| s.window())
    }

    /// Changes the session's active window, then lays the session out again.
    pub(crate) fn update_window(
        &mut self,
        session: SessionId,
        change: impl FnOnce(&mut crate::server::model::state::Window),
    ) {
        if let Some(w) = self
            .state
            .sessions
            .get_mut(&session)
            .and_then(|s| s.window_mut())
        {
            change(w);
        }
        self.state.relayout(session);
    }

    pub(crate) fn set_mode(&mut self, client: ClientId, mode: ClientMode) {
        if let Some(c) = self.state.clients.get_mut(&client) {
            c.mode = mode;
            c.dirty = true;
        }
    }

    pub(crate) fn rename_window(&mut self, session: SessionId, index: Option<usize>, name: &str) {
        if let Some(s) = self.state.sessions.get_mut(&session) {
            let i = index.unwrap_or(s.active_window);
            if let Some(w) = s.windows.get_mut(i) {
                w.name = crate::server::model::label::sanitize_title(name);
                w.auto_name = false;
            }
        }
        self.state.mark_session_dirty(session);
    }

    pub(crate) fn rename_session(&mut self, session: SessionId, name: &str) -> Result<(), String> {
        if name.is_empty() || name.contains(':') || name.contains('.') {
            return Err(format!("bad session name {name:?}"));
        }
        if self
            .state
            .sessions
            .values()
            .any(|s| s.name == name && s.id != session)
        {
            return Err(format!("duplicate session: {name}"));
        }
        if let Some(clash) = self.saved_name_taken(name) {
            return Err(clash);
        }
        if let Some(s) = self.state.sessions.get_mut(&session) {
            s.name = name.to_string();
        }
        self.state.mark_session_dirty(session);
        Ok(())
    }
}
