//! The approval panel as each client sees it: which pending request it shows, what it draws,
//! and the keys that answer, step through, scroll, reach and hide requests. Requests are
//! global (any pane, any window, any session); the panel state is per client.

use calyx_tui::ApprovalView;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget;
use serde_json::Value;
use tokio::time::Instant;

use crate::approvals::app::{AppKind, PAGE_GONE_KEYS};
use crate::approvals::rules::{always_for_key, choices_line};
use crate::approvals::rules_list::rules_list_key;
use crate::approvals::{visible, Decision};
use crate::keys::{Key, KeyCode};

use crate::server::model::panel::{PanelState, Shown};
use crate::server::model::state::ClientId;
use crate::server::owner::Server;

/// How long a request that appeared while the user typed stays on screen before its answer
/// keys wake (the panel says so meanwhile).
pub(crate) const READ_GRACE: std::time::Duration = std::time::Duration::from_millis(500);
/// Keys this close before a request appeared mean the user was typing when it did.
const TYPING_WINDOW: std::time::Duration = std::time::Duration::from_secs(1);

/// Whether a key pressed at `last_key` means the user is typing at `now`.
fn typing_now(last_key: Option<Instant>, now: Instant) -> bool {
    last_key.is_some_and(|t| now.duration_since(t) < TYPING_WINDOW)
}

/// One frame's panel content.
#[derive(Debug, Clone)]
pub struct PanelData {
    pub cli: String,
    pub pane: String,
    pub tool: String,
    pub headline: String,
    pub lines: Vec<String>,
    pub index: usize,
    pub count: usize,
    pub scroll: u16,
    pub suggestions: Vec<String>,
    pub message: Option<String>,
    /// How many requests a `y` allows while `!` asks to confirm.
    pub confirm_all: Option<usize>,
    pub waited: String,
    /// What `y` means where the CLI's hook cannot allow (Gemini, Hermes).
    pub note: Option<&'static str>,
    /// The answer keys are not live yet (see [`Server::may_answer`]).
    pub keys_asleep: bool,
    /// What of the request is not shown (see [`crate::approvals::Summary::cut`]).
    pub cut: Option<String>,
    /// Which "always" rule each key would make (see [`crate::approvals::rules::choices_line`]).
    pub choices: String,
    /// The rules set, in words, and the selected one, while `r` lists them.
    pub rules_list: Option<(Vec<String>, usize)>,
    /// An MCP App's request: what `y` and `n` do (see [`crate::approvals::app::AppKind`]).
    pub app_keys: Option<(&'static str, &'static str)>,
}

impl PanelData {
    fn view(&self) -> ApprovalView<'_> {
        ApprovalView {
            cli: &self.cli,
            pane: &self.pane,
            tool: &self.tool,
            headline: &self.headline,
            lines: &self.lines,
            index: self.index,
            count: self.count,
            scroll: self.scroll,
            suggestions: &self.suggestions,
            message: self.message.as_deref(),
            confirm_all: self.confirm_all,
            waited: &self.waited,
            note: self.note,
            keys_asleep: self.keys_asleep,
            cut: self.cut.as_deref(),
            app_keys: self.app_keys,
        }
    }

    /// Draws the panel over `area`: the request with the row naming its rules, or the list.
    pub fn render(&self, area: Rect, buf: &mut Buffer) {
        if let Some((rules, selected)) = &self.rules_list {
            calyx_tui::RulesListView {
                rules,
                selected: *selected,
            }
            .render(area, buf);
            return;
        }
        self.view().render(area, buf);
        calyx_tui::RuleChoicesView {
            text: &self.choices,
        }
        .render(area, buf);
    }
}

impl Shown {
    /// When its answer keys wake: None when they never slept (the user was not typing).
    fn wakes_at(&self) -> Option<Instant> {
        self.while_typing.then(|| self.since + READ_GRACE)
    }

    /// Whether its answer keys are still asleep at `now`.
    fn keys_asleep(&self, now: Instant) -> bool {
        self.wakes_at().is_some_and(|t| now < t)
    }
}

/// How a key scrolls the shown request's body (a long command or diff).
enum Scroll {
    /// Rows down (negative: up).
    Lines(i32),
    /// Pages down (negative: up); a page is the rows shown, less one kept for context.
    Pages(i32),
    Top,
    Bottom,
}

fn scroll_for(code: KeyCode) -> Option<Scroll> {
    match code {
        KeyCode::Down => Some(Scroll::Lines(1)),
        KeyCode::Up => Some(Scroll::Lines(-1)),
        KeyCode::PageDown | KeyCode::Char(' ') => Some(Scroll::Pages(1)),
        KeyCode::PageUp => Some(Scroll::Pages(-1)),
        KeyCode::Home => Some(Scroll::Top),
        KeyCode::End => Some(Scroll::Bottom),
        _ => None,
    }
}

impl Server {
    /// The request a client's panel shows: its selection, else the focused pane's, else the
    /// oldest.
    pub(crate) fn panel_request(&self, client: ClientId) -> Option<u64> {
        let c = self.state.clients.get(&client)?;
        if c.panel.hidden {
            return None;
        }
        let pending = self.approvals.pending();
        // This machine's requests first; then the saved machines' (see
        // `approval_panel_remote`).
        if pending.is_empty() {
            let remote = self.remote_panel_ids();
            return c
                .panel
                .selected
                .filter(|id| remote.contains(id))
                .or_else(|| remote.first().copied());
        }
        if let Some(id) = c
            .panel
            .selected
            .filter(|id| pending.iter().any(|p| p.id == *id))
        {
            return Some(id);
        }
        let focused = self
            .state
            .sessions
            .get(&c.session)
            .and_then(|s| s.active_pane());
        pending
            .iter()
            .find(|p| Some(p.pane) == focused)
            .or_else(|| pending.first())
            .map(|p| p.id)
    }

    /// What a client's panel shows this frame (owned, so rendering can borrow the state).
    pub(crate) fn panel_data(&self, client: ClientId) -> Option<PanelData> {
        self.panel_data_of(client, self.panel_request(client)?)
    }

    /// [`Server::panel_data`] for request `id`, already chosen by [`Server::panel_request`].
    pub(crate) fn panel_data_of(&self, client: ClientId, id: u64) -> Option<PanelData> {
        if crate::server::model::panel::is_remote(id) {
            return self.remote_panel_data(client, id);
        }
        let c = self.state.clients.get(&client)?;
        let pending = self.approvals.pending();
        let (index, p) = pending.iter().enumerate().find(|(_, p)| p.id == id)?;
        let pane_label = match self
            .state
            .locate(p.pane)
            .and_then(|(s, w)| self.state.sessions.get(&s).map(|s| (s.name.clone(), w)))
        {
            Some((session, window)) => format!("%{} ({}:{window})", p.pane, visible(&session)),
            None => format!("%{}", p.pane),
        };
        // An app request names its view (a standalone one has no pane).
        let pane_label = match &p.app {
            Some(app) if app.pane.is_none() => format!("view {} (standalone)", app.view),
            Some(app) => format!("{pane_label} view {}", app.view),
            None => pane_label,
        };
        let suggestions: Vec<String> = p
            .suggestions
            .iter()
            .map(|s| visible(&suggestion_label(s)))
            .collect();
        let now = Instant::now();
        let waited = crate::agents::short_duration(now.duration_since(p.created));
        // What `panel_drawn` recorded for this frame, so the footer and the keys agree.
        let keys_asleep = c
            .panel
            .shown
            .filter(|s| s.id == id)
            .is_some_and(|s| s.keys_asleep(now));
        // The numbered choices whole, below the request: the footer may have to cut them.
        let mut lines = p.summary.lines.clone();
        if !suggestions.is_empty() {
            lines.push(String::new());
            lines.extend(
                suggestions
                    .iter()
                    .enumerate()
                    .take(9)
                    .map(|(i, s)| format!("always {}: {s}", i + 1)),
            );
        }
        Some(PanelData {
            cli: p.asker.display_name().to_string(),
            pane: pane_label,
            tool: visible(&p.tool),
            headline: p.summary.headline.clone(),
            lines,
            index: index + 1,
            count: pending.len(),
            scroll: c.panel.scroll,
            suggestions,
            message: c.panel.message.clone(),
            confirm_all: c.panel.confirm_all.as_ref().map(Vec::len),
            waited,
            note: p.schema.allow_note(),
            keys_asleep,
            cut: p.summary.cut.clone(),
            app_keys: p.app.as_ref().map(|a| a.kind.answers()),
            choices: match &p.app {
                Some(app) if app.kind == AppKind::OpenLink && !self.approvals.asker_waits(id) => {
                    PAGE_GONE_KEYS.to_string()
                }
                Some(app) => app.kind.keys_line().to_string(),
                None => choices_line(&p.subject, self.approvals.rules().len()),
            },
            rules_list: c.panel.rules.map(|selected| {
                let rules = self.approvals.rules();
                let words = rules.iter().map(|r| r.describe()).collect();
                (words, selected.min(rules.len().saturating_sub(1)))
            }),
        })
    }

    /// The area a client's panel is drawn in (as the frame draws it: the session's size above
    /// the status line).
    fn panel_area_of(&self, client: ClientId) -> Rect {
        let session = self
            .client_session(client)
            .and_then(|s| self.state.sessions.get(&s));
        match session {
            Some(s) => Rect::new(0, 0, s.cols, s.rows.saturating_sub(1)),
            None => Rect::default(),
        }
    }

    fn update_panel(&mut self, client: ClientId, change: impl FnOnce(&mut PanelState)) {
        if let Some(c) = self.state.clients.get_mut(&client) {
            change(&mut c.panel);
            c.dirty = true;
        }
    }

    /// Records what a frame is about to draw for `client`'s panel (see [`PanelState::shown`]);
    /// called before [`Server::panel_data`], which reads it.
    pub(crate) fn panel_drawn(&mut self, client: ClientId, id: Option<u64>) {
        let now = Instant::now();
        let Some(c) = self.state.clients.get_mut(&client) else {
            return;
        };
        c.panel.shown = match (id, c.panel.shown) {
            (None, _) => None,
            (Some(id), Some(s)) if s.id == id => Some(s),
            (Some(id), _) => Some(Shown {
                id,
                since: now,
                while_typing: typing_now(c.last_key_at, now),
            }),
        };
        // Keys asleep: draw the panel again when they wake.
        if let Some(wake) = c
            .panel
            .shown
            .and_then(|s| s.wakes_at())
            .filter(|t| *t > now)
        {
            self.panel_wake = Some(self.panel_wake.map_or(wake, |t| t.min(wake)));
        }
    }

    /// The panels whose answer keys woke: drawn again, with the keys.
    pub(crate) fn panel_keys_woke(&mut self, now: Instant) {
        if self.panel_wake.is_some_and(|t| t <= now) {
            self.panel_wake = None;
            for c in self.state.clients.values_mut() {
                if c.panel.shown.is_some() {
                    c.dirty = true;
                }
            }
        }
    }

    /// Whether an answer key pressed now may answer request `id`: it is the request the
    /// client's terminal shows (not one that replaced it after the last frame), and the key
    /// was not typed on the way to something else. A request that appears while the user
    /// types takes their keys (so none leaks into a pane), but its answer keys only wake once
    /// it has been on screen for [`READ_GRACE`]: typing `cat` must not set an "always" rule
    /// with its `a`.
    fn may_answer(&self, client: ClientId, id: u64) -> bool {
        let Some(c) = self.state.clients.get(&client) else {
            return false;
        };
        c.panel
            .shown
            .is_some_and(|s| s.id == id && !s.keys_asleep(Instant::now()))
    }

    /// A key while the panel is shown. Returns false when the key is not the panel's.
    pub(crate) fn panel_key(&mut self, client: ClientId, key: Key) -> bool {
        let Some(id) = self.panel_request(client) else {
            return false;
        };
        if let Some(selected) = self.state.clients.get(&client).and_then(|c| c.panel.rules) {
            let next = rules_list_key(&mut self.approvals, selected, &key);
            self.update_panel(client, |p| p.rules = next);
            // A revoked anywhere rule is revoked on every linked machine.
            self.anywhere_sync();
            return true;
        }
        let answers = matches!(
            key.code,
            KeyCode::Char(
                'y' | 'n' | 'x' | 'm' | 'a' | 'A' | 'p' | 'P' | 'e' | 'E' | '!' | '1'..='9'
            )
        ) && !key.ctrl
            && !key.alt;
        let typing_message = self
            .state
            .clients
            .get(&client)
            .is_some_and(|c| c.panel.message.is_some() || c.panel.confirm_all.is_some());
        if answers && !typing_message && !self.may_answer(client, id) {
            self.message(
                client,
                "a request just appeared while you typed: read it, then answer",
            );
            return true;
        }
        if crate::server::model::panel::is_remote(id) && !typing_message {
            self.remote_panel_key(client, id, key);
            return true;
        }
        let Some(panel) = self.state.clients.get(&client).map(|c| c.panel.clone()) else {
            return false;
        };
        if let Some(message) = panel.message {
            self.message_key(client, id, message, key);
            return true;
        }
        if let Some(ids) = panel.confirm_all {
            self.update_panel(client, |p| p.confirm_all = None);
            if key.code == KeyCode::Char('y') && !key.ctrl && !key.alt {
                // Requests answered or withdrawn meanwhile are skipped by answer_request.
                for id in ids {
                    self.answer_request(id, Decision::Allow, None);
                }
            }
            return true;
        }
        let pending: Vec<u64> = self.approvals.pending().iter().map(|p| p.id).collect();
        let at = pending.iter().position(|p| *p == id).unwrap_or(0);
        let n = pending.len().max(1);
        if let Some(scroll) = scroll_for(key.code) {
            self.scroll_panel(client, scroll);
            return true;
        }
        match key.code {
            KeyCode::Char('y') => {
                self.answer_request_by(Some(client), id, Decision::Allow, None);
            }
            KeyCode::Char('n') => {
                self.answer_request_by(Some(client), id, Decision::Deny { message: None }, None);
            }
            KeyCode::Char('x') => {
                self.answer_request(id, Decision::DenyAndStop { message: None }, None);
            }
            KeyCode::Char('c') if self.copy_app_link(client, id) => {}
            KeyCode::Char('m') => self.update_panel(client, |p| p.message = Some(String::new())),
            KeyCode::Char(k @ ('a' | 'A' | 'p' | 'P' | 'e' | 'E')) => {
                self.answer_always(client, id, k)
            }
            KeyCode::Char('r') => self.update_panel(client, |p| p.rules = Some(0)),
            KeyCode::Char('!') => {
                // MCP Apps' requests are each the user's own choice: `!` leaves them.
                let gates: Vec<u64> = pending
                    .into_iter()
                    .filter(|id| self.approvals.app_of(*id).is_none())
                    .collect();
                self.update_panel(client, |p| p.confirm_all = Some(gates));
            }
            KeyCode::Char(d @ '1'..='9') => {
                let index = usize::from(d as u8 - b'1');
                let suggestion = self
                    .approvals
                    .pending()
                    .iter()
                    .find(|p| p.id == id)
                    .and_then(|p| p.suggestions.get(index).cloned());
                if let Some(suggestion) = suggestion {
                    self.answer_request(id, Decision::AllowRemember { suggestion }, None);
                }
            }
            KeyCode::Tab | KeyCode::Char('j') => {
                let next = pending.get((at + 1) % n).copied();
                self.update_panel(client, |p| {
                    p.selected = next;
                    p.scroll = 0;
                });
            }
            KeyCode::BackTab | KeyCode::Char('k') => {
                let prev = pending.get((at + n - 1) % n).copied();
                self.update_panel(client, |p| {
                    p.selected = prev;
                    p.scroll = 0;
                });
            }
            KeyCode::Char('g') => {
                let pane = self
                    .approvals
                    .pending()
                    .iter()
                    .find(|p| p.id == id)
                    .map(|p| p.pane);
                if let Some(pane) = pane {
                    self.show_pane(client, pane);
                    // The panel keeps showing the request it was on.
                    self.update_panel(client, |p| p.selected = Some(id));
                }
            }
            KeyCode::Escape => self.update_panel(client, |p| p.hidden = true),
            // Everything else waits: while a request is shown, keys do not leak into panes.
            _ => {}
        }
        true
    }

    /// `a`/`A`/`p`/`P`: allows request `id` and sets the rule the key makes (the panel named
    /// it); says so when the request has no such rule (no prefix to offer).
    fn answer_always(&mut self, client: ClientId, id: u64, key: char) {
        if !self.answer_request_by(Some(client), id, Decision::Allow, always_for_key(key)) {
            self.message(
                client,
                "no wider rule for this request: a/A allow it always",
            );
        }
    }

    /// Typing a deny message (after `m`): Enter sends it, Esc goes back to the keys.
    fn message_key(&mut self, client: ClientId, id: u64, mut message: String, key: Key) {
        match key.code {
            KeyCode::Enter if crate::server::model::panel::is_remote(id) => {
                self.update_panel(client, |p| p.message = None);
                self.remote_answer(client, id, false, Some(message), None);
            }
            KeyCode::Enter => {
                self.update_panel(client, |p| p.message = None);
                self.answer_request(
                    id,
                    Decision::Deny {
                        message: Some(message),
                    },
                    None,
                );
            }
            KeyCode::Escape => self.update_panel(client, |p| p.message = None),
            KeyCode::Backspace => {
                message.pop();
                self.update_panel(client, |p| p.message = Some(message));
            }
            KeyCode::Char(ch) if !key.ctrl && !key.alt => {
                if message.len() < 2000 {
                    message.push(ch);
                }
                self.update_panel(client, |p| p.message = Some(message));
            }
            _ => {}
        }
    }

    /// Scrolls the shown request's body, never past its last page for this client's size.
    fn scroll_panel(&mut self, client: ClientId, scroll: Scroll) {
        let area = self.panel_area_of(client);
        let Some(data) = self.panel_data(client) else {
            return;
        };
        let view = data.view();
        let max = view.max_scroll(area);
        let page = i32::try_from(view.body_rows(area).saturating_sub(1).max(1)).unwrap_or(1);
        let now = i32::from(data.scroll.min(max));
        let next = match scroll {
            Scroll::Lines(rows) => now + rows,
            Scroll::Pages(pages) => now + pages * page,
            Scroll::Top => 0,
            Scroll::Bottom => i32::from(max),
        };
        let next = u16::try_from(next.clamp(0, i32::from(max))).unwrap_or(0);
        self.update_panel(client, |p| p.scroll = next);
    }

    /// `prefix i`: show the panel again.
    pub(crate) fn show_panel(&mut self, client: ClientId) {
        self.update_panel(client, |p| p.hidden = false);
        if self.approvals.pending().is_empty() {
            self.message(client, "no approvals pending");
        }
    }
}

/// A short label for one of Claude Code's permission suggestions.
/// A Claude Code suggestion as its numbered choice reads: its type, what it adds (directories
/// or rules, with the rules' behavior) or the mode it switches to, and where it is kept. All of
/// it, so the human sees what the number would do.
fn suggestion_label(s: &Value) -> String {
    let field = |k: &str| s.get(k).and_then(Value::as_str);
    let kind = field("type").unwrap_or("rule");
    let what = s
        .get("directories")
        .or_else(|| s.get("rules"))
        .map(|v| v.to_string())
        .or_else(|| field("mode").map(|m| format!("to {m}")))
        .unwrap_or_default();
    let behavior = field("behavior")
        .map(|b| format!(" {b}"))
        .unwrap_or_default();
    let scope = field("destination").unwrap_or("");
    format!("{kind}{behavior} {what} ({scope})")
}

#[cfg(test)]
mod tests {
    use super::suggestion_label;
    use serde_json::json;

    #[test]
    fn suggestions_say_what_they_would_do() {
        let dirs =
            json!({"type": "addDirectories", "directories": ["/w"], "destination": "session"});
        assert_eq!(
            suggestion_label(&dirs),
            r#"addDirectories ["/w"] (session)"#
        );
        let mode =
            json!({"type": "setMode", "mode": "bypassPermissions", "destination": "session"});
        assert_eq!(
            suggestion_label(&mode),
            "setMode to bypassPermissions (session)"
        );
        let rule = json!({"type": "addRules", "behavior": "allow",
            "rules": [{"toolName": "Bash", "ruleContent": "npm test"}], "destination": "localSettings"});
        assert_eq!(
            suggestion_label(&rule),
            r#"addRules allow [{"ruleContent":"npm test","toolName":"Bash"}] (localSettings)"#
        );
    }
}
