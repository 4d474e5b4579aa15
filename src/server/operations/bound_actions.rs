//! What each bound action does (a key after the prefix, or the same command typed at the `:`
//! prompt): one function per [`Action`], so a command's behaviour reads in one place.
//! [`Server::perform`] is the table from actions to those functions.

use ratatui::layout::Rect;

use crate::commands::Action;
use crate::layout::{neighbour, Direction, PaneId, SplitDir};
use crate::layout_preset::Preset;

use crate::server::model::state::{ClientId, ClientMode, PromptKind, SessionId};
use crate::server::owner::Server;

/// Where an action happens: the client that asked, its session, the session's focused pane and
/// the area its windows' layout trees divide (see `Session::layout_area`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Here {
    pub client: ClientId,
    pub session: SessionId,
    pub active: PaneId,
    pub area: Rect,
}

impl Server {
    /// Where `client`'s actions happen now; None when it is not attached to a session with a
    /// focused pane.
    fn here(&self, client: ClientId) -> Option<Here> {
        let session = self.client_session(client)?;
        let s = self.state.sessions.get(&session)?;
        Some(Here {
            client,
            session,
            active: s.active_pane()?,
            area: s.layout_area(),
        })
    }

    /// Whether `client` was attached by another machine's chooser (`back_to`).
    fn came_from_another_machine(&self, client: ClientId) -> bool {
        self.state
            .clients
            .get(&client)
            .is_some_and(|c| c.back_to.is_some())
    }

    /// Performs a bound action for a client.
    pub(crate) fn perform(&mut self, client: ClientId, action: Action) {
        let Some(here) = self.here(client) else {
            return;
        };
        match action {
            Action::Split(dir) => self.split_focused(here, dir),
            Action::NextPane => self.cycle_pane(here, true),
            Action::PreviousPane => self.cycle_pane(here, false),
            Action::SelectPane(dir) => self.select_neighbour(here, dir),
            Action::ResizePane(dir) => self.resize_focused(here, dir),
            Action::Zoom => self.update_window(here.session, |w| w.toggle_zoom()),
            Action::Equalize => self.update_window(here.session, |w| w.layout.equalize()),
            Action::SelectLayout(preset) => self.select_layout(here.session, Some(preset)),
            Action::NextLayout => self.select_layout(here.session, None),
            Action::DisplayPanes => self.set_mode(client, ClientMode::DisplayPanes),
            Action::KillPane => self.kill_pane_asking(here.client, here.active),
            Action::NewWindow => self.new_window(here),
            Action::RenameWindow => self.prompt_rename_window(here),
            Action::RenameSession => self.prompt_rename_session(here),
            Action::NextWindow => self.cycle_window(here, true),
            Action::PreviousWindow => self.cycle_window(here, false),
            Action::LastWindow => self.select_last_window(here),
            Action::SelectWindow(n) => self.select_window_numbered(here, n),
            Action::KillWindow => self.kill_active_window(here),
            Action::Detach => self.state.detach_client(client, "detached"),
            Action::CopyMode => self.enter_copy_mode(here.active),
            Action::Paste => self.paste_buffer_into(here.active),
            Action::Help => self.set_mode(client, ClientMode::Help { scroll: 0 }),
            Action::RunLine(i) => {
                let line = self.state.config.keymap.lines.get(usize::from(i)).cloned();
                if let Some(line) = line {
                    self.run_prompt_command(client, &line);
                }
            }
            Action::ViewCard => self.focus_view_card(client, here.active),
            Action::ViewList => self.open_view_list(client),
            Action::ShowMessages => {
                // Opened on the newest page.
                let scroll = self.messages_scroll_max(here.session);
                self.set_mode(client, ClientMode::Messages { scroll })
            }
            Action::SwapPaneNext => self.swap_focused(here, true),
            Action::SwapPanePrevious => self.swap_focused(here, false),
            Action::BreakPane => self.break_focused(here),
            Action::ChooseSession => self.open_tree(client, false),
            Action::ChooseWindow => self.open_tree(client, true),
            Action::NextSession => self.cycle_session(client, true),
            Action::PreviousSession => self.cycle_session(client, false),
            // A client another machine's chooser sent here goes back there (the bridge that
            // attached it exits with `remote::switch::BACK_CODE`).
            Action::LastSession if self.came_from_another_machine(client) => {
                self.state
                    .detach_client(client, crate::protocol::BACK_MESSAGE);
                return;
            }
            Action::LastSession => self.last_session(client),
            Action::CommandPrompt => self.open_command_prompt(client),
            Action::SendPrefix => self.send_prefix(here.active),
            Action::ToggleSidebar => self.toggle_sidebar(here),
            Action::JumpBlocked => self.jump_to_blocked(client),
            Action::ShowApprovals => self.show_panel(client),
            Action::ClearHistory => self.clear_history(here),
            Action::ReloadConfig => self.reload_config_for(client),
            Action::ShowMcpServers => self.open_servers(client),
        }
        self.state.mark_session_dirty(here.session);
    }

    /// `split-window`: a new pane beside or below the focused one, which takes the focus.
    fn split_focused(&mut self, here: Here, dir: SplitDir) {
        let split = self
            .state
            .split_pane(here.active, dir, false, None, Vec::new(), &self.tx);
        if let Err(e) = split {
            self.message(here.client, format!("split failed: {e}"));
        } else if let Some(p) = self
            .state
            .sessions
            .get(&here.session)
            .and_then(|s| s.active_pane())
        {
            self.on_focus_changed(p);
        }
    }

    /// `select-pane -t :.+` / `:.-`: the next or previous pane of the window.
    fn cycle_pane(&mut self, here: Here, forward: bool) {
        if let Some(next) = self.window_of(here.session).and_then(|w| w.cycle(forward)) {
            self.focus_pane(next);
        }
    }

    /// `select-pane -L/-R/-U/-D`: the neighbouring pane in that direction.
    fn select_neighbour(&mut self, here: Here, dir: Direction) {
        let rects = self
            .window_of(here.session)
            .map(|w| w.layout.rects(here.area))
            .unwrap_or_default();
        if let Some(p) = neighbour(&rects, here.active, dir) {
            self.focus_pane(p);
        }
    }

    /// `resize-pane`: moves the focused pane's border by a step (wider across than down).
    fn resize_focused(&mut self, here: Here, dir: Direction) {
        let step = match dir {
            Direction::Left | Direction::Right => 4,
            Direction::Up | Direction::Down => 2,
        };
        self.update_window(here.session, |w| {
            w.layout.resize(here.active, dir, step, here.area);
        });
    }

    /// `new-window`: starts in the focused pane's directory, unless it has gone (then: the
    /// session's).
    fn new_window(&mut self, here: Here) {
        let cwd = self
            .state
            .panes
            .get(&here.active)
            .map(|p| p.cwd())
            .filter(|d| std::path::Path::new(d).is_dir());
        let added = self
            .state
            .add_window(here.session, None, cwd, Vec::new(), false, &self.tx);
        if let Err(e) = added {
            self.message(here.client, format!("new-window failed: {e}"));
        }
        self.state.relayout(here.session);
    }

    /// `rename-window`: the prompt, filled with the window's name as shown.
    fn prompt_rename_window(&mut self, here: Here) {
        let name = self
            .window_of(here.session)
            .map(|w| self.state.window_name(w))
            .unwrap_or_default();
        let mode = ClientMode::Prompt {
            kind: PromptKind::RenameWindow,
            text: name,
        };
        self.set_mode(here.client, mode);
    }

    /// `rename-session`: the prompt, filled with the session's name.
    fn prompt_rename_session(&mut self, here: Here) {
        let name = self
            .state
            .sessions
            .get(&here.session)
            .map(|s| s.name.clone())
            .unwrap_or_default();
        let mode = ClientMode::Prompt {
            kind: PromptKind::RenameSession,
            text: name,
        };
        self.set_mode(here.client, mode);
    }

    /// `next-window` / `previous-window`, wrapping around.
    fn cycle_window(&mut self, here: Here, forward: bool) {
        let next = self
            .state
            .sessions
            .get(&here.session)
            .map(|s| s.cycle_window(forward));
        if let Some(next) = next {
            self.select_window(here.session, next);
        }
    }

    /// `last-window`: the window shown before this one.
    fn select_last_window(&mut self, here: Here) {
        let last = self
            .state
            .sessions
            .get(&here.session)
            .and_then(|s| s.last_window);
        if let Some(last) = last {
            self.select_window(here.session, last);
        }
    }

    /// `select-window -t N` (`prefix 0`..`9`): the window numbered N.
    fn select_window_numbered(&mut self, here: Here, n: u8) {
        if !self.select_window_number(here.session, usize::from(n)) {
            self.message(here.client, format!("no window {n}"));
        }
    }

    /// `kill-window`: the active window, through the one close transaction.
    fn kill_active_window(&mut self, here: Here) {
        let index = self
            .state
            .sessions
            .get(&here.session)
            .map(|s| s.active_window)
            .unwrap_or(0);
        self.kill_window_asking(here.client, here.session, index);
    }

    /// `paste-buffer`: the last copied text into the focused pane.
    fn paste_buffer_into(&mut self, pane: PaneId) {
        if let Some(data) = self.state.paste_buffer.clone() {
            self.paste_into(pane, &data);
        }
    }

    /// `swap-pane -D` / `-U`: the focused pane changes places with the next or previous one.
    fn swap_focused(&mut self, here: Here, forward: bool) {
        let swapped = self
            .state
            .sessions
            .get_mut(&here.session)
            .and_then(|s| s.window_mut())
            .is_some_and(|w| w.swap_focused(forward));
        if swapped {
            self.state.relayout(here.session);
        }
    }

    /// `break-pane`: the focused pane leaves for a window of its own.
    fn break_focused(&mut self, here: Here) {
        let base_index = self.state.config.base_index;
        let broke = self
            .state
            .sessions
            .get_mut(&here.session)
            .is_some_and(|s| s.break_pane(base_index));
        if broke {
            self.state.relayout(here.session);
        } else {
            self.message(here.client, "the window has only this pane");
        }
    }

    /// `command-prompt`: an empty `:` prompt.
    fn open_command_prompt(&mut self, client: ClientId) {
        self.reset_prompt_aid(client);
        let mode = ClientMode::Prompt {
            kind: PromptKind::Command,
            text: String::new(),
        };
        self.set_mode(client, mode);
    }

    /// `send-prefix`: the prefix key itself, to the focused pane.
    fn send_prefix(&mut self, pane: PaneId) {
        let bytes = self.state.config.keymap.prefix.to_bytes(false);
        if let Some(p) = self.state.panes.get(&pane) {
            p.process.write(bytes);
        }
    }

    /// The agents sidebar: hidden or shown -> shown with the keyboard. With the keyboard, the
    /// same key hides it (see `ClientMode::Prefix::from_sidebar` for keys after the prefix).
    fn toggle_sidebar(&mut self, here: Here) {
        let focused = matches!(
            self.state.clients.get(&here.client).map(|c| &c.mode),
            Some(ClientMode::Sidebar { .. })
        );
        if focused {
            self.hide_sidebar(here.client);
            return;
        }
        if let Some(s) = self.state.sessions.get_mut(&here.session) {
            s.sidebar = true;
        }
        self.set_mode(here.client, ClientMode::Sidebar { selected: 0 });
        self.state.relayout(here.session);
    }

    /// `prefix b`: the agent that has waited longest for the human, in whatever session.
    fn jump_to_blocked(&mut self, client: ClientId) {
        match self.oldest_blocked_pane() {
            Some(pane) => self.show_pane(client, pane),
            None => self.message(client, "no agent is waiting for you"),
        }
    }

    /// `clear-history`: the focused pane's scrollback.
    fn clear_history(&mut self, here: Here) {
        if let Some(p) = self.state.panes.get(&here.active) {
            p.term().clear_history();
        }
        self.message(here.client, "history cleared");
    }

    /// `source-file`: the config read again; the client hears what changed and what failed.
    fn reload_config_for(&mut self, client: ClientId) {
        let (text, errors) = self.reload_config();
        let text = match errors.is_empty() {
            true => text,
            false => format!("{text}; {}", errors.join("; ")),
        };
        self.message(client, text);
    }

    /// `select-layout NAME` (or, with None, the next preset after the window's last one):
    /// the panes keep their order and the focused pane; a zoom ends.
    pub(crate) fn select_layout(&mut self, session: SessionId, preset: Option<Preset>) {
        self.update_window(session, |w| {
            w.apply_preset(preset.unwrap_or_else(|| Preset::after(w.preset)));
        });
    }
}
