//! Routes a client's keyboard and mouse input: the prefix and bindings, overlays and prompts,
//! copy mode, mouse focus/resize/scroll, and everything else to the focused pane unchanged.

use crate::commands::Action;
use crate::input::InputEvent;
use crate::keys::{Key, KeyCode};
use crate::layout::PaneId;

use super::key_route::{self, KeyRoute};
use super::prompt::PromptEdit;
use crate::server::model::copy_mode::CopyOutcome;
use crate::server::model::state::{ClientId, ClientMode, PromptKind, SessionId};
use crate::server::owner::Server;

impl Server {
    /// Handles raw input bytes from an attached client.
    pub(crate) fn client_input(&mut self, client: ClientId, bytes: &[u8]) {
        let events = match self.state.clients.get_mut(&client) {
            Some(c) => c.input.feed(bytes),
            None => return,
        };
        for event in events {
            if !self.state.clients.contains_key(&client) {
                return;
            }
            self.client_event(client, event);
        }
    }

    pub(crate) fn focused_pane(&self, client: ClientId) -> Option<PaneId> {
        let session = self.client_session(client)?;
        self.state.sessions.get(&session)?.active_pane()
    }

    fn client_event(&mut self, client: ClientId, event: InputEvent) {
        // The terminal gaining or losing focus is news for the program whatever calyx is doing
        // (a pending prefix, a prompt, an overlay), and changes none of it.
        if let InputEvent::Focus(on) = event {
            self.focus_report(client, on);
            return;
        }
        // The terminal's default colours, asked for at attach: the MCP App pages' theme.
        if let InputEvent::TerminalColour { slot, colour } = &event {
            self.terminal_colour(*slot, colour);
            return;
        }
        let mode = match self.state.clients.get(&client) {
            Some(c) => c.mode.clone(),
            None => return,
        };
        let is_key = matches!(event, InputEvent::Key { .. });
        // Anything but typing into a pane (a binding, a prompt, the panel's answer, a mouse
        // click) may change what a watching machine is sent.
        self.typed_to_pane = false;
        self.route_event(client, mode, event);
        if !self.typed_to_pane {
            self.watch_due = true;
        }
        if is_key {
            if let Some(c) = self.state.clients.get_mut(&client) {
                c.last_key_at = Some(tokio::time::Instant::now());
            }
        }
    }

    fn route_event(&mut self, client: ClientId, mode: ClientMode, event: InputEvent) {
        match (mode, event) {
            (ClientMode::Help { scroll }, InputEvent::Key { key, .. }) => {
                let next = scroll_key(scroll, key.code);
                // The last page ends with the last row, lines bound with bind-key included
                // (the overlay shows the rows above the status line, less its two borders).
                let shown_rows = self
                    .client_session(client)
                    .and_then(|s| self.state.sessions.get(&s))
                    .map_or(0, |s| s.rows.saturating_sub(3));
                let rows = crate::commands::help_entries(&self.state.config.keymap).len();
                let max = u16::try_from(rows)
                    .unwrap_or(u16::MAX)
                    .saturating_sub(shown_rows);
                self.set_mode(
                    client,
                    match next {
                        Some(s) => ClientMode::Help { scroll: s.min(max) },
                        None => ClientMode::Normal,
                    },
                );
            }
            (ClientMode::Help { .. }, _) => {}
            (ClientMode::Messages { scroll }, InputEvent::Key { key, .. }) => {
                let max = self
                    .client_session(client)
                    .map_or(0, |s| self.messages_scroll_max(s));
                let mode = match scroll_key(scroll, key.code) {
                    Some(s) => ClientMode::Messages { scroll: s.min(max) },
                    None => ClientMode::Normal,
                };
                self.set_mode(client, mode);
            }
            (ClientMode::Messages { .. }, _) => {}
            (ClientMode::DisplayPanes, InputEvent::Key { key, .. }) => {
                self.set_mode(client, ClientMode::Normal);
                let chosen = match key.code {
                    KeyCode::Char(c) if !key.ctrl && !key.alt => c.to_digit(10),
                    _ => None,
                };
                let pane = chosen.and_then(|n| {
                    let session = self.client_session(client)?;
                    let w = self.state.sessions.get(&session)?.window()?;
                    w.layout.panes().get(usize::try_from(n).ok()?).copied()
                });
                if let Some(pane) = pane {
                    self.focus_pane(pane);
                }
            }
            (ClientMode::DisplayPanes, _) => {}
            (ClientMode::Sidebar { selected }, InputEvent::Key { key, .. }) => {
                self.sidebar_key(client, selected, key)
            }
            (ClientMode::Sidebar { .. }, _) => {}
            (ClientMode::ViewCard { pane, .. }, InputEvent::Key { key, .. }) => {
                self.view_card_key(client, pane, key)
            }
            (ClientMode::ViewCard { .. }, _) => {}
            (ClientMode::ViewList { selected }, InputEvent::Key { key, .. }) => {
                self.view_list_key(client, selected, key)
            }
            (ClientMode::ViewList { .. }, _) => {}
            (ClientMode::Tree { selected, expanded }, InputEvent::Key { key, .. }) => {
                self.tree_key(client, selected, expanded, key)
            }
            (ClientMode::Tree { .. }, _) => {}
            (ClientMode::Servers(overlay), InputEvent::Key { key, .. }) => {
                self.servers_key(client, *overlay, key)
            }
            (ClientMode::Servers(_), InputEvent::Paste(data)) => self.servers_paste(client, &data),
            (ClientMode::Servers(_), _) => {}
            (ClientMode::Prompt { kind, text }, event) => {
                self.prompt_event(client, kind, text, event)
            }
            (ClientMode::Prefix { from_sidebar }, InputEvent::Key { key, .. }) => {
                self.set_mode(client, ClientMode::Normal);
                match key_route::after_prefix(&key, &self.state.config.keymap) {
                    KeyRoute::Perform(Action::ToggleSidebar) if from_sidebar => {
                        self.hide_sidebar(client)
                    }
                    KeyRoute::Perform(action) => {
                        let keymap = &self.state.config.keymap;
                        let repeats = key_route::key_repeats(&key, action, keymap);
                        self.perform_bound(client, action, repeats)
                    }
                    KeyRoute::Prefix | KeyRoute::Unbound | KeyRoute::Pass => {}
                }
            }
            (ClientMode::Prefix { .. }, _) => self.set_mode(client, ClientMode::Normal),
            (ClientMode::Normal, InputEvent::Key { key, raw }) => {
                let now = tokio::time::Instant::now();
                let repeat_until = self
                    .state
                    .clients
                    .get_mut(&client)
                    .and_then(|c| c.repeat_until.take());
                match key_route::in_normal(&key, &self.state.config.keymap, repeat_until, now) {
                    KeyRoute::Prefix => {
                        let prefix = ClientMode::Prefix {
                            from_sidebar: false,
                        };
                        self.set_mode(client, prefix);
                        return;
                    }
                    KeyRoute::Perform(action) => {
                        // A repeated key keeps the window open; a key bound with -n opens none.
                        let repeats = self.state.config.keymap.lookup(&key) == Some(action)
                            && key_route::key_repeats(&key, action, &self.state.config.keymap);
                        self.perform_bound(client, action, repeats);
                        return;
                    }
                    KeyRoute::Unbound | KeyRoute::Pass => {}
                }
                // A sign-in prompt takes the keyboard until it is answered or goes.
                if self.sign_in_prompt_key(client, key) {
                    return;
                }
                // So does a hosted server's question (elicitation).
                if self.elicit_key(client, key) {
                    return;
                }
                // A shown approval panel takes the keyboard until it is answered or hidden.
                if self.panel_key(client, key) {
                    return;
                }
                let Some(pane) = self.focused_pane(client) else {
                    return;
                };
                if self
                    .state
                    .panes
                    .get(&pane)
                    .is_some_and(|p| p.copy.is_some())
                {
                    self.copy_key(client, pane, key);
                    return;
                }
                // Peers (none unless synchronized) get copies; the focused pane the original.
                for peer in self.synchronized_peers(client, pane) {
                    self.key_to_pane(peer, key, raw.clone());
                }
                self.key_to_pane(pane, key, raw);
                self.typed_to_pane = true;
            }
            (ClientMode::Normal, InputEvent::Paste(data)) => {
                if let Some(pane) = self.focused_pane(client) {
                    for peer in self.synchronized_peers(client, pane) {
                        self.paste_into(peer, &data);
                    }
                    self.paste_into(pane, &data);
                }
                self.typed_to_pane = true;
            }
            (ClientMode::Normal, InputEvent::Mouse(ev)) => self.mouse(client, ev),
            // Handled above.
            (ClientMode::Normal, InputEvent::Focus(_) | InputEvent::TerminalColour { .. }) => {}
            (ClientMode::Normal, InputEvent::Raw(raw)) => {
                if let Some(pane) = self.focused_pane(client) {
                    let targets = self.synchronized_peers(client, pane);
                    for p in targets.iter().chain([&pane]) {
                        if let Some(p) = self.state.panes.get(p) {
                            p.process.write(raw.clone());
                        }
                    }
                }
                self.typed_to_pane = true;
            }
        }
    }

    /// Runs a bound action from the keyboard; a repeatable one lets the next repeatable key
    /// run without the prefix for a moment (see `key_route`).
    fn perform_bound(&mut self, client: ClientId, action: crate::commands::Action, repeats: bool) {
        if let Some(c) = self.state.clients.get_mut(&client) {
            c.repeat_until = repeats.then(|| tokio::time::Instant::now() + key_route::REPEAT_TIME);
        }
        self.perform(client, action);
    }

    /// Tells the client's focused pane that the user's terminal gained or lost focus, when the
    /// program asked (mode 1004).
    fn focus_report(&mut self, client: ClientId, on: bool) {
        if let Some(p) = self
            .focused_pane(client)
            .and_then(|p| self.state.panes.get(&p))
        {
            if p.glance.wants_focus_events() {
                p.process.write(if on {
                    b"\x1b[I".to_vec()
                } else {
                    b"\x1b[O".to_vec()
                });
            }
        }
    }

    fn sidebar_key(&mut self, client: ClientId, selected: usize, key: Key) {
        if key == self.state.config.keymap.prefix {
            let prefix = ClientMode::Prefix { from_sidebar: true };
            self.set_mode(client, prefix);
            return;
        }
        let rows: Vec<PaneId> = self
            .agents
            .rows(tokio::time::Instant::now())
            .into_iter()
            .filter_map(|r| PaneId::try_from(r.pane).ok())
            .collect();
        let last = rows.len().saturating_sub(1);
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => self.set_mode(
                client,
                ClientMode::Sidebar {
                    selected: selected.saturating_sub(1),
                },
            ),
            KeyCode::Down | KeyCode::Char('j') => self.set_mode(
                client,
                ClientMode::Sidebar {
                    selected: (selected + 1).min(last),
                },
            ),
            KeyCode::Enter => {
                self.set_mode(client, ClientMode::Normal);
                if let Some(pane) = rows.get(selected) {
                    self.show_pane(client, *pane);
                }
            }
            KeyCode::Char('b') => {
                self.set_mode(client, ClientMode::Normal);
                self.perform(client, crate::commands::Action::JumpBlocked);
            }
            KeyCode::Escape | KeyCode::Char('q') => self.set_mode(client, ClientMode::Normal),
            _ => {}
        }
    }

    /// Sends a key to a pane, re-encoding cursor keys for the pane's cursor mode.
    fn key_to_pane(&mut self, pane: PaneId, key: Key, raw: Vec<u8>) {
        // Output held for the frame is taken first, so that the echo still counts as pending.
        self.release_held_output(pane);
        self.echo_pending.insert(pane);
        let Some(p) = self.state.panes.get(&pane) else {
            return;
        };
        let is_cursor = matches!(
            key.code,
            KeyCode::Up
                | KeyCode::Down
                | KeyCode::Left
                | KeyCode::Right
                | KeyCode::Home
                | KeyCode::End
        );
        let bytes = if is_cursor && !key.ctrl && !key.alt && !key.shift {
            let app = p.glance.application_cursor();
            key.to_bytes(app)
        } else {
            raw
        };
        p.process.write(bytes);
        // After the write, so that taking the echo (a few system calls) overlaps the program's
        // work on it; an echo that came first is read by the reader thread as usual.
        self.watch_echo(pane);
    }

    fn copy_key(&mut self, client: ClientId, pane: PaneId, key: Key) {
        let outcome = match self
            .state
            .panes
            .get_mut(&pane)
            .and_then(|p| p.copy.as_mut())
        {
            Some(copy) => copy.key(key),
            None => return,
        };
        match outcome {
            CopyOutcome::Stay => {}
            CopyOutcome::Exit => {
                if let Some(p) = self.state.panes.get_mut(&pane) {
                    p.copy = None;
                }
            }
            CopyOutcome::Copy(text) => {
                if let Some(p) = self.state.panes.get_mut(&pane) {
                    p.copy = None;
                }
                self.copy_text(client, text);
            }
            CopyOutcome::Search { forward } => {
                let kind = if forward {
                    PromptKind::SearchForward
                } else {
                    PromptKind::SearchBackward
                };
                self.set_mode(
                    client,
                    ClientMode::Prompt {
                        kind,
                        text: String::new(),
                    },
                );
            }
        }
        self.state.mark_pane_dirty(pane);
    }

    fn prompt_event(
        &mut self,
        client: ClientId,
        kind: PromptKind,
        text: String,
        event: InputEvent,
    ) {
        if crate::server::operations::confirm_kill::is_question(kind) {
            return self.confirm_kill_answer(client, kind, &event);
        }
        if kind == PromptKind::Command && self.prompt_aid_key(client, &text, &event) {
            return;
        }
        self.end_tab_cycle(client);
        match super::prompt::edit(text, &event) {
            PromptEdit::Submit(text) => {
                self.reset_prompt_aid(client);
                self.set_mode(client, ClientMode::Normal);
                if kind == PromptKind::Command {
                    self.prompt_history.push(&text);
                }
                self.submit_prompt(client, kind, &text);
            }
            PromptEdit::Cancel => {
                self.reset_prompt_aid(client);
                self.set_mode(client, ClientMode::Normal)
            }
            PromptEdit::Edit(text) => self.set_mode(client, ClientMode::Prompt { kind, text }),
        }
    }

    fn submit_prompt(&mut self, client: ClientId, kind: PromptKind, text: &str) {
        let Some(session) = self.client_session(client) else {
            return;
        };
        match kind {
            PromptKind::Command => self.run_prompt_command(client, text),
            PromptKind::RenameWindow => {
                if !text.trim().is_empty() {
                    self.rename_window(session, None, text.trim());
                }
            }
            PromptKind::RenameSession => {
                if let Err(e) = self.rename_session(session, text.trim()) {
                    self.message(client, e);
                }
            }
            PromptKind::ConfirmKillPane(_)
            | PromptKind::ConfirmKillWindow(..)
            | PromptKind::ConfirmKillSession(_) => {}
            PromptKind::SearchForward | PromptKind::SearchBackward => {
                if let Some(pane) = self.focused_pane(client) {
                    if let Some(copy) = self
                        .state
                        .panes
                        .get_mut(&pane)
                        .and_then(|p| p.copy.as_mut())
                    {
                        copy.start_search(text.to_string(), kind == PromptKind::SearchForward);
                    }
                    self.state.mark_pane_dirty(pane);
                }
            }
        }
    }
}

/// Where a scrolling overlay's key moves it (None: the key closes it).
fn scroll_key(scroll: u16, code: KeyCode) -> Option<u16> {
    match code {
        KeyCode::Up | KeyCode::Char('k') => Some(scroll.saturating_sub(1)),
        KeyCode::Down | KeyCode::Char('j') => Some(scroll.saturating_add(1)),
        KeyCode::PageUp => Some(scroll.saturating_sub(10)),
        KeyCode::PageDown | KeyCode::Char(' ') => Some(scroll.saturating_add(10)),
        _ => None,
    }
}

impl Server {
    /// The message log's last scroll offset: its newest line on the overlay's last row (each
    /// message takes the rows its wrapped text needs in the overlay's width).
    pub(crate) fn messages_scroll_max(&self, session: SessionId) -> u16 {
        let Some(s) = self.state.sessions.get(&session) else {
            return 0;
        };
        let shown_rows = usize::from(s.rows.saturating_sub(3));
        let width = usize::from(s.cols.min(120).saturating_sub(2)).max(1);
        let lines: usize = self
            .state
            .messages
            .shown()
            .iter()
            .map(|(time, text)| {
                let cells = time.len() + 2 + unicode_width::UnicodeWidthStr::width(text.as_str());
                cells.div_ceil(width)
            })
            .sum();
        u16::try_from(lines.saturating_sub(shown_rows)).unwrap_or(u16::MAX)
    }

    /// The other panes what is typed into the client's focused `pane` also goes to: with
    /// synchronize-panes on its window, every other live pane there not in copy mode (tmux's
    /// rule); none otherwise, found without a search and without allocating (every keystroke
    /// comes through here).
    fn synchronized_peers(&self, client: ClientId, pane: PaneId) -> Vec<PaneId> {
        let window = self
            .client_session(client)
            .and_then(|s| self.state.sessions.get(&s))
            .and_then(|s| s.window());
        let Some(w) = window.filter(|w| w.synchronized) else {
            return Vec::new();
        };
        w.layout
            .panes()
            .into_iter()
            .filter(|p| {
                *p != pane
                    && self
                        .state
                        .panes
                        .get(p)
                        .is_some_and(|p| p.copy.is_none() && p.exited.is_none())
            })
            .collect()
    }
}
