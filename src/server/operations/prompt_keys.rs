//! The `:` prompt's keys beyond line editing: Tab completes from the live server (sessions,
//! windows, panes, the focused pane's directory) and Up/Down walk the prompt history. The rules
//! are pure (`input::prompt_tab`, `model::prompt_history`); this gathers their inputs and keeps
//! their state on the client.

use crate::input::InputEvent;
use crate::keys::KeyCode;
use crate::server::input::prompt_complete::Sources;
use crate::server::input::{prompt, prompt_tab};
use crate::server::model::state::{ClientId, ClientMode, PromptAid, PromptKind};
use crate::server::owner::Server;

impl Server {
    /// Handles Tab, Up or Down in an open `:` prompt; false for any other event (which then
    /// edits the text and ends a Tab cycle).
    pub(crate) fn prompt_aid_key(
        &mut self,
        client: ClientId,
        text: &str,
        event: &InputEvent,
    ) -> bool {
        let InputEvent::Key { key, .. } = event else {
            return false;
        };
        if key.ctrl || key.alt {
            return false;
        }
        let Some(mut aid) = self
            .state
            .clients
            .get(&client)
            .map(|c| c.prompt_aid.clone())
        else {
            return false;
        };
        let mut text = match key.code {
            KeyCode::Tab => {
                let sources = self.completion_sources(client);
                let out = prompt_tab::tab(text, aid.tab.as_ref(), &sources);
                aid.tab = out.cycle;
                aid.hint = out.hint;
                out.text
            }
            // At either end of the history the text stays.
            KeyCode::Up => self
                .prompt_history
                .older(&mut aid.walk, text)
                .unwrap_or_else(|| text.to_string()),
            KeyCode::Down => self
                .prompt_history
                .newer(&mut aid.walk)
                .unwrap_or_else(|| text.to_string()),
            _ => return false,
        };
        if key.code != KeyCode::Tab {
            aid.tab = None;
            aid.hint = None;
        }
        prompt::truncate_at_char(&mut text, prompt::MAX_PROMPT_BYTES);
        if let Some(c) = self.state.clients.get_mut(&client) {
            c.prompt_aid = aid;
            c.mode = ClientMode::Prompt {
                kind: PromptKind::Command,
                text,
            };
            c.dirty = true;
        }
        true
    }

    /// Forgets the Tab cycle and its candidates (the text was edited), keeping the history walk.
    pub(crate) fn end_tab_cycle(&mut self, client: ClientId) {
        if let Some(c) = self.state.clients.get_mut(&client) {
            c.prompt_aid.tab = None;
            if c.prompt_aid.hint.take().is_some() {
                c.dirty = true;
            }
        }
    }

    /// A prompt opened or closed: nothing of the last one's Tab cycle or history walk remains.
    pub(crate) fn reset_prompt_aid(&mut self, client: ClientId) {
        if let Some(c) = self.state.clients.get_mut(&client) {
            c.prompt_aid = PromptAid::default();
        }
    }

    /// What Tab completes from: every session, window (`SESSION:N`) and pane (`%N`) target,
    /// the client's focused pane's directory, and the option names.
    fn completion_sources(&self, client: ClientId) -> Sources {
        let mut targets = Vec::new();
        for s in self.state.sessions.values() {
            targets.push(s.name.clone());
            for w in &s.windows {
                targets.push(format!("{}:{}", s.name, w.number));
                targets.extend(w.layout.panes().iter().map(|p| format!("%{p}")));
            }
        }
        let cwd = self
            .focused_pane(client)
            .and_then(|p| self.state.panes.get(&p))
            .map(|p| std::path::PathBuf::from(p.cwd()));
        Sources {
            targets,
            cwd,
            options: crate::config::option_names(),
        }
    }
}
