//! What bound keys, the `:` prompt and one-shot commands do to the state.

use base64::Engine;

use crate::commands::Action;
use crate::layout::{neighbour, Direction, PaneId};

use super::copy_mode::CopyMode;
use super::lifecycle::Close;
use super::prompt::{self, PromptCommand};
use super::state::{ClientId, ClientMode, PromptKind, SessionId};
use super::Server;

impl Server {
    /// The session a client is attached to.
    pub(super) fn client_session(&self, client: ClientId) -> Option<SessionId> {
        self.state.clients.get(&client).map(|c| c.session)
    }

    /// Shows a transient message on a client's status line.
    pub(super) fn message(&mut self, client: ClientId, text: impl Into<String>) {
        if let Some(c) = self.state.clients.get_mut(&client) {
            c.message = Some((text.into(), tokio::time::Instant::now()));
            c.dirty = true;
        }
        self.schedule_message_expiry();
    }

    /// Focuses `pane` (and its window).
    pub(super) fn focus_pane(&mut self, pane: PaneId) {
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
    pub(super) fn show_pane(&mut self, client: ClientId, pane: PaneId) {
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
    pub(super) fn hide_sidebar(&mut self, client: ClientId) {
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
    pub(super) fn switch_client(&mut self, client: ClientId, session: SessionId) {
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
        c.shown = None;
        c.shown_panes.clear();
        c.shown_chrome = None;
        c.drag = None;
        c.selecting = None;
        c.dirty = true;
        if let Some(s) = self.state.sessions.get_mut(&session) {
            s.last_used = tokio::time::Instant::now();
        }
        self.state.resize_session_to_clients(old);
        self.state.resize_session_to_clients(session);
    }

    /// Switches a session to window `index`.
    pub(super) fn select_window(&mut self, session: SessionId, index: usize) -> bool {
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
    pub(super) fn copy_text(&mut self, client: ClientId, text: String) {
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
    pub(super) fn paste_into(&mut self, pane: PaneId, data: &[u8]) {
        let Some(p) = self.state.panes.get(&pane) else {
            return;
        };
        let bracketed = p.term().screen().bracketed_paste();
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
    pub(super) fn enter_copy_mode(&mut self, pane: PaneId) {
        if let Some(p) = self.state.panes.get_mut(&pane) {
            if p.copy.is_none() {
                let copy = CopyMode::enter(&p.term(), p.rows, p.cols);
                p.copy = Some(copy);
            }
        }
        self.state.mark_pane_dirty(pane);
    }

    /// Performs a bound action for a client.
    pub(super) fn perform(&mut self, client: ClientId, action: Action) {
        let Some(session) = self.client_session(client) else {
            return;
        };
        let Some(active) = self
            .state
            .sessions
            .get(&session)
            .and_then(|s| s.active_pane())
        else {
            return;
        };
        let area = self
            .state
            .sessions
            .get(&session)
            .map(|s| s.window_area())
            .unwrap_or_default();
        match action {
            Action::Split(dir) => {
                if let Err(e) =
                    self.state
                        .split_pane(active, dir, false, None, Vec::new(), &self.tx)
                {
                    self.message(client, format!("split failed: {e}"));
                } else if let Some(p) = self
                    .state
                    .sessions
                    .get(&session)
                    .and_then(|s| s.active_pane())
                {
                    self.on_focus_changed(p);
                }
            }
            Action::NextPane | Action::PreviousPane => {
                let forward = action == Action::NextPane;
                if let Some(next) = self.window_of(session).and_then(|w| w.cycle(forward)) {
                    self.focus_pane(next);
                }
            }
            Action::SelectPane(dir) => {
                let rects = self
                    .window_of(session)
                    .map(|w| w.layout.rects(area))
                    .unwrap_or_default();
                if let Some(p) = neighbour(&rects, active, dir) {
                    self.focus_pane(p);
                }
            }
            Action::ResizePane(dir) => {
                let step = match dir {
                    Direction::Left | Direction::Right => 4,
                    Direction::Up | Direction::Down => 2,
                };
                self.update_window(session, |w| {
                    w.layout.resize(active, dir, step, area);
                });
            }
            Action::Zoom => {
                self.update_window(session, |w| w.toggle_zoom());
            }
            Action::Equalize => {
                self.update_window(session, |w| {
                    w.layout.equalize();
                });
            }
            Action::KillPane => self.kill_pane_asking(client, active),
            Action::NewWindow => {
                // The focused pane's directory, unless it has gone (then: the session's).
                let cwd = self
                    .state
                    .panes
                    .get(&active)
                    .map(|p| p.cwd())
                    .filter(|d| std::path::Path::new(d).is_dir());
                if let Err(e) =
                    self.state
                        .add_window(session, None, cwd, Vec::new(), false, &self.tx)
                {
                    self.message(client, format!("new-window failed: {e}"));
                }
                self.state.relayout(session);
            }
            Action::RenameWindow => {
                let name = self
                    .window_of(session)
                    .map(|w| self.state.window_name(w))
                    .unwrap_or_default();
                self.set_mode(
                    client,
                    ClientMode::Prompt {
                        kind: PromptKind::RenameWindow,
                        text: name,
                    },
                );
            }
            Action::RenameSession => {
                let name = self
                    .state
                    .sessions
                    .get(&session)
                    .map(|s| s.name.clone())
                    .unwrap_or_default();
                self.set_mode(
                    client,
                    ClientMode::Prompt {
                        kind: PromptKind::RenameSession,
                        text: name,
                    },
                );
            }
            Action::NextWindow | Action::PreviousWindow => {
                let forward = action == Action::NextWindow;
                if let Some(next) = self
                    .state
                    .sessions
                    .get(&session)
                    .map(|s| s.cycle_window(forward))
                {
                    self.select_window(session, next);
                }
            }
            Action::LastWindow => {
                if let Some(last) = self
                    .state
                    .sessions
                    .get(&session)
                    .and_then(|s| s.last_window)
                {
                    self.select_window(session, last);
                }
            }
            Action::SelectWindow(n) => {
                if !self.select_window(session, usize::from(n)) {
                    self.message(client, format!("no window {n}"));
                }
            }
            Action::KillWindow => {
                let index = self
                    .state
                    .sessions
                    .get(&session)
                    .map(|s| s.active_window)
                    .unwrap_or(0);
                self.kill_window_asking(client, session, index);
            }
            Action::Detach => self.state.detach_client(client, "detached"),
            Action::CopyMode => self.enter_copy_mode(active),
            Action::Paste => {
                if let Some(data) = self.state.paste_buffer.clone() {
                    self.paste_into(active, &data);
                }
            }
            Action::Help => self.set_mode(client, ClientMode::Help { scroll: 0 }),
            Action::SwapPaneNext | Action::SwapPanePrevious => {
                let forward = action == Action::SwapPaneNext;
                let swapped = self
                    .state
                    .sessions
                    .get_mut(&session)
                    .and_then(|s| s.window_mut())
                    .is_some_and(|w| w.swap_focused(forward));
                if swapped {
                    self.state.relayout(session);
                }
            }
            Action::BreakPane => {
                let broke = self
                    .state
                    .sessions
                    .get_mut(&session)
                    .is_some_and(|s| s.break_pane());
                if broke {
                    self.state.relayout(session);
                } else {
                    self.message(client, "the window has only this pane");
                }
            }
            Action::ChooseSession => self.open_tree(client, false),
            Action::ChooseWindow => self.open_tree(client, true),
            Action::NextSession => self.cycle_session(client, true),
            Action::PreviousSession => self.cycle_session(client, false),
            Action::LastSession => self.last_session(client),
            Action::CommandPrompt => self.set_mode(
                client,
                ClientMode::Prompt {
                    kind: PromptKind::Command,
                    text: String::new(),
                },
            ),
            Action::SendPrefix => {
                let bytes = self.state.config.keymap.prefix.to_bytes(false);
                if let Some(p) = self.state.panes.get(&active) {
                    p.process.write(bytes);
                }
            }
            Action::ToggleSidebar => {
                // Hidden or shown -> shown with the keyboard. With the keyboard, the same key
                // hides it (see `ClientMode::Prefix::from_sidebar` for keys after the prefix).
                let focused = matches!(
                    self.state.clients.get(&client).map(|c| &c.mode),
                    Some(ClientMode::Sidebar { .. })
                );
                if focused {
                    self.hide_sidebar(client);
                } else {
                    if let Some(s) = self.state.sessions.get_mut(&session) {
                        s.sidebar = true;
                    }
                    self.set_mode(client, ClientMode::Sidebar { selected: 0 });
                    self.state.relayout(session);
                }
            }
            Action::JumpBlocked => {
                if let Some(pane) = self.oldest_blocked_pane() {
                    self.show_pane(client, pane);
                } else {
                    self.message(client, "no agent is waiting for you");
                }
            }
            Action::ShowApprovals => self.show_panel(client),
            Action::ClearHistory => {
                if let Some(p) = self.state.panes.get(&active) {
                    p.term().clear_history();
                }
                self.message(client, "history cleared");
            }
            Action::ReloadConfig => {
                let (text, errors) = self.reload_config();
                let text = match errors.is_empty() {
                    true => text,
                    false => format!("{text}; {}", errors.join("; ")),
                };
                self.message(client, text);
            }
        }
        self.state.mark_session_dirty(session);
    }

    /// A session's active window.
    fn window_of(&self, session: SessionId) -> Option<&super::state::Window> {
        self.state.sessions.get(&session).and_then(|s| s.window())
    }

    /// Changes the session's active window, then lays the session out again.
    fn update_window(
        &mut self,
        session: SessionId,
        change: impl FnOnce(&mut super::state::Window),
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

    pub(super) fn set_mode(&mut self, client: ClientId, mode: ClientMode) {
        if let Some(c) = self.state.clients.get_mut(&client) {
            c.mode = mode;
            c.dirty = true;
        }
    }

    /// Runs a line typed at the `:` prompt.
    pub(super) fn run_prompt_command(&mut self, client: ClientId, line: &str) {
        let Some(session) = self.client_session(client) else {
            return;
        };
        match prompt::parse_command(line) {
            PromptCommand::Nothing => {}
            PromptCommand::Bound(action) => self.perform(client, action),
            PromptCommand::RenameWindow(name) => self.rename_window(session, None, name),
            PromptCommand::RenameSession(name) => {
                if let Err(e) = self.rename_session(session, name) {
                    self.message(client, e);
                }
            }
            PromptCommand::SelectWindow { index, arg } => {
                if !index.is_some_and(|n| self.select_window(session, n)) {
                    self.message(client, format!("no window {arg}"));
                }
            }
            PromptCommand::KillSession => self.close(Close::Session(session), "session killed"),
            PromptCommand::KillServer => self.state.quit = true,
            // A command from the table with arguments the prompt does not take.
            PromptCommand::Unknown(word) if crate::commands::find(word).is_some() => self.message(
                client,
                format!("{word} takes no arguments here (prefix ? lists the commands)"),
            ),
            PromptCommand::Unknown(word) => self.message(
                client,
                format!("unknown command: {word} (prefix ? lists them)"),
            ),
        }
    }

    pub(super) fn rename_window(&mut self, session: SessionId, index: Option<usize>, name: &str) {
        if let Some(s) = self.state.sessions.get_mut(&session) {
            let i = index.unwrap_or(s.active_window);
            if let Some(w) = s.windows.get_mut(i) {
                w.name = crate::server::render::sanitize_title(name);
                w.auto_name = false;
            }
        }
        self.state.mark_session_dirty(session);
    }

    pub(super) fn rename_session(&mut self, session: SessionId, name: &str) -> Result<(), String> {
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
        if let Some(s) = self.state.sessions.get_mut(&session) {
            s.name = name.to_string();
        }
        self.state.mark_session_dirty(session);
        Ok(())
    }
}
