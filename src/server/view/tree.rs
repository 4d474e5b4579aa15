//! Moving between sessions from the keyboard: the chooser (`prefix s` / `prefix w`, tmux's
//! choose-tree `-s` / `-w`) lists every session, one row each with `prefix s` (Right or `+`
//! shows a session's windows, Left or `-` hides them) and with every window beneath with
//! `prefix w`, what their agents are doing, and a preview of the selected row's pane (`x`
//! kills the selected session or window after asking, as tmux's does); and
//! `prefix (` / `)` / `L` switch to the previous, next and last session (tmux's switch-client
//! `-p`, `-n`, `-l`). Sessions are in name order, as in tmux. Below them, every saved
//! machine's sessions under its name (`tree_machines`).

use calyx_tui::sidebar::RowState;
use calyx_tui::{PaneView, TreeRow};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget;

use crate::agents::{row_state, AgentState};
use crate::keys::{Key, KeyCode};

use crate::server::model::state::{ClientId, ClientMode, SessionId};
use crate::server::owner::Server;

/// What a chooser row stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Item {
    Session(SessionId),
    Window(SessionId, usize),
    /// A saved session that is not running (its position among them by name): Enter
    /// restores it, `x` forgets it.
    Saved(usize),
    /// A saved machine's heading (see `tree_machines`).
    Machine(usize),
    /// A saved machine's session: Enter attaches there (`remote::switch`).
    Remote(usize, usize),
}

/// The order agent counts are shown in: what needs the user first.
const STATE_ORDER: [AgentState; 4] = [
    AgentState::Blocked,
    AgentState::Working,
    AgentState::Idle,
    AgentState::Done,
];

fn plural(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

impl Server {
    /// Sessions in name order.
    fn sessions_by_name(&self) -> Vec<SessionId> {
        let mut ids: Vec<(&str, SessionId)> = self
            .state
            .sessions
            .values()
            .map(|s| (s.name.as_str(), s.id))
            .collect();
        ids.sort();
        ids.into_iter().map(|(_, id)| id).collect()
    }

    /// Every session, followed by its windows when it is in `expanded`.
    fn tree_items(&self, expanded: &[SessionId]) -> Vec<Item> {
        let mut items = Vec::new();
        for id in self.sessions_by_name() {
            items.push(Item::Session(id));
            if expanded.contains(&id) {
                let windows = self.state.sessions.get(&id).map_or(0, |s| s.windows.len());
                items.extend((0..windows).map(|w| Item::Window(id, w)));
            }
        }
        items.extend((0..self.persisted.dormant.len()).map(Item::Saved));
        items.extend(
            self.chooser_machines
                .items()
                .into_iter()
                .map(|(m, s)| match s {
                    Some(s) => Item::Remote(m, s),
                    None => Item::Machine(m),
                }),
        );
        items
    }

    /// The saved sessions that are not running, by name (the chooser's order for them).
    fn saved_by_name(&self) -> Vec<&crate::persist::SavedSession> {
        let mut saved: Vec<_> = self.persisted.dormant.iter().collect();
        saved.sort_by(|a, b| a.name.cmp(&b.name));
        saved
    }

    /// Enter on a saved session's row: it is restored at the client's size and shown.
    fn restore_from_tree(&mut self, client: ClientId, saved: usize) {
        let Some(name) = self.saved_by_name().get(saved).map(|s| s.name.clone()) else {
            return;
        };
        let size = self
            .state
            .clients
            .get(&client)
            .map_or((24, 80), |c| (c.rows, c.cols));
        match self.restore_saved(&name, None, size) {
            Some(Ok(session)) => self.switch_client(client, session),
            Some(Err(e)) => self.message(client, format!("cannot restore {name}: {e}")),
            None => self.message(client, format!("restoring is off: {name} stays saved")),
        }
    }

    /// Opens the chooser on the client's session: with `windows` (`prefix w`) every session's
    /// windows listed and the client's current window selected, else one row per session.
    pub(crate) fn open_tree(&mut self, client: ClientId, windows: bool) {
        let Some(session) = self.client_session(client) else {
            return;
        };
        let window = self.state.sessions.get(&session).map(|s| s.active_window);
        let want = match (windows, window) {
            (true, Some(w)) => Item::Window(session, w),
            _ => Item::Session(session),
        };
        let expanded = if windows {
            self.sessions_by_name()
        } else {
            Vec::new()
        };
        let selected = self
            .tree_items(&expanded)
            .iter()
            .position(|i| *i == want)
            .unwrap_or(0);
        self.ask_chooser_machines(client);
        self.set_mode(client, ClientMode::Tree { selected, expanded });
    }

    /// A key while the chooser is open.
    pub(crate) fn tree_key(
        &mut self,
        client: ClientId,
        selected: usize,
        mut expanded: Vec<SessionId>,
        key: Key,
    ) {
        let items = self.tree_items(&expanded);
        let last = items.len().saturating_sub(1);
        let mut move_to = |to: usize| ClientMode::Tree {
            selected: to.min(last),
            expanded: std::mem::take(&mut expanded),
        };
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => {
                self.set_mode(client, move_to(selected.saturating_sub(1)))
            }
            KeyCode::Down | KeyCode::Char('j') => {
                self.set_mode(client, move_to(selected.saturating_add(1)))
            }
            KeyCode::PageUp => self.set_mode(client, move_to(selected.saturating_sub(10))),
            KeyCode::PageDown => self.set_mode(client, move_to(selected.saturating_add(10))),
            KeyCode::Home | KeyCode::Char('g') => self.set_mode(client, move_to(0)),
            KeyCode::End | KeyCode::Char('G') => self.set_mode(client, move_to(last)),
            KeyCode::Right | KeyCode::Char('+') | KeyCode::Char('l') => {
                self.expand_tree_row(client, items.get(selected).copied(), expanded, true)
            }
            KeyCode::Left | KeyCode::Char('-') | KeyCode::Char('h') => {
                self.expand_tree_row(client, items.get(selected).copied(), expanded, false)
            }
            // tmux's choose-tree `x`: kill the selected session or window, asking first.
            KeyCode::Char('x') => {
                self.set_mode(client, ClientMode::Normal);
                match items.get(selected) {
                    Some(Item::Session(s)) => self.kill_session_asking(client, *s),
                    Some(Item::Window(s, w)) => self.kill_window_asking(client, *s, *w),
                    Some(Item::Saved(i)) => {
                        if let Some(name) = self.saved_by_name().get(*i).map(|s| s.name.clone()) {
                            self.forget_saved(&name);
                            self.message(client, format!("forgot saved session {name}"));
                        }
                    }
                    Some(Item::Machine(_) | Item::Remote(..)) => {
                        self.message(client, "x kills this machine's sessions only")
                    }
                    None => {}
                }
            }
            KeyCode::Enter => {
                self.set_mode(client, ClientMode::Normal);
                match items.get(selected) {
                    Some(Item::Session(s)) => self.switch_client(client, *s),
                    Some(Item::Window(s, w)) => {
                        self.switch_client(client, *s);
                        self.select_window(*s, *w);
                    }
                    Some(Item::Saved(i)) => self.restore_from_tree(client, *i),
                    Some(Item::Remote(m, s)) => self.switch_to_remote(client, *m, *s),
                    Some(Item::Machine(_)) | None => {}
                }
            }
            KeyCode::Escape | KeyCode::Char('q') => self.set_mode(client, ClientMode::Normal),
            _ => {}
        }
    }

    /// Shows (`open`) or hides the windows of the selected row's session; the selection stays
    /// on that row, or goes to its session's row when its window row is hidden.
    fn expand_tree_row(
        &mut self,
        client: ClientId,
        item: Option<Item>,
        mut expanded: Vec<SessionId>,
        open: bool,
    ) {
        let Some(item) = item else {
            return;
        };
        let session = match item {
            Item::Session(s) | Item::Window(s, _) => s,
            Item::Saved(_) | Item::Machine(_) | Item::Remote(..) => return,
        };
        expanded.retain(|s| *s != session);
        if open {
            expanded.push(session);
        }
        let items = self.tree_items(&expanded);
        let selected = items
            .iter()
            .position(|i| *i == item)
            .or_else(|| items.iter().position(|i| *i == Item::Session(session)))
            .unwrap_or(0);
        self.set_mode(client, ClientMode::Tree { selected, expanded });
    }

    /// `prefix )` / `prefix (`: the next or previous session by name, wrapping around.
    pub(crate) fn cycle_session(&mut self, client: ClientId, forward: bool) {
        let Some(current) = self.client_session(client) else {
            return;
        };
        let order = self.sessions_by_name();
        let Some(at) = order.iter().position(|s| *s == current) else {
            return;
        };
        if order.len() < 2 {
            self.message(client, "no other session");
            return;
        }
        let next = if forward {
            (at + 1) % order.len()
        } else {
            (at + order.len() - 1) % order.len()
        };
        self.switch_client(client, order[next]);
    }

    /// `prefix L`: the session this client showed before.
    pub(crate) fn last_session(&mut self, client: ClientId) {
        let last = self
            .state
            .clients
            .get(&client)
            .and_then(|c| c.last_session)
            .filter(|s| self.state.sessions.contains_key(s));
        match last {
            Some(s) => self.switch_client(client, s),
            None => self.message(client, "no last session"),
        }
    }

    /// The chooser's rows, when `client` has it open.
    pub(crate) fn tree_data(&self, client: ClientId) -> Option<Vec<TreeRow>> {
        match self.state.clients.get(&client).map(|c| &c.mode) {
            Some(ClientMode::Tree { expanded, .. }) => Some(self.tree_rows(client, expanded)),
            _ => None,
        }
    }

    fn tree_rows(&self, client: ClientId, expanded: &[SessionId]) -> Vec<TreeRow> {
        let shown = self.client_session(client);
        self.tree_items(expanded)
            .into_iter()
            .filter_map(|item| {
                let (id, window) = match item {
                    Item::Session(id) => (id, None),
                    Item::Window(id, w) => (id, Some(w)),
                    Item::Saved(i) => return self.saved_row(i),
                    Item::Machine(m) => return self.chooser_machines.machine_row(m),
                    Item::Remote(m, s) => return self.chooser_machines.session_row(m, s),
                };
                let session = self.state.sessions.get(&id)?;
                let windows: Vec<_> = match window {
                    Some(w) => session.windows.get(w).into_iter().collect(),
                    None => session.windows.iter().collect(),
                };
                let agents = self.agent_counts_of(windows.iter().flat_map(|w| w.layout.panes()));
                Some(match window {
                    None => TreeRow {
                        window: false,
                        label: session.name.clone(),
                        detail: plural(session.windows.len(), "window"),
                        current: shown == Some(id),
                        attached: self
                            .state
                            .clients
                            .values()
                            .filter(|c| c.session == id)
                            .count(),
                        agents,
                        preview: session.active_pane(),
                    },
                    Some(w) => TreeRow {
                        window: true,
                        label: windows
                            .first()
                            .map(|win| format!("{}: {}", win.number, self.state.window_name(win)))
                            .unwrap_or_default(),
                        detail: plural(
                            windows.first().map_or(0, |win| win.layout.panes().len()),
                            "pane",
                        ),
                        current: session.active_window == w,
                        attached: 0,
                        agents,
                        preview: windows.first().map(|win| win.active),
                    },
                })
            })
            .collect()
    }

    /// A saved session's chooser row: `work  3 windows, saved 14:02, not running`.
    fn saved_row(&self, i: usize) -> Option<TreeRow> {
        let saved = *self.saved_by_name().get(i)?;
        let now = crate::persist::record::now_secs();
        Some(TreeRow {
            window: false,
            label: saved.name.clone(),
            detail: format!(
                "{}, saved {}, not running",
                plural(saved.windows.len(), "window"),
                crate::persist::summary::local_clock(saved.saved_at, now)
            ),
            current: false,
            attached: 0,
            agents: Vec::new(),
            preview: None,
        })
    }

    /// How many of `panes` have an agent in each state, in [`STATE_ORDER`], zeros left out.
    fn agent_counts_of(
        &self,
        panes: impl Iterator<Item = crate::layout::PaneId>,
    ) -> Vec<(RowState, usize)> {
        let mut counts = [0usize; STATE_ORDER.len()];
        for pane in panes {
            if let Some(row) = self.agents.row(u64::from(pane)) {
                if let Some(i) = STATE_ORDER.iter().position(|s| *s == row.state) {
                    counts[i] += 1;
                }
            }
        }
        STATE_ORDER
            .iter()
            .zip(counts)
            .filter(|(_, n)| *n > 0)
            .map(|(s, n)| (row_state(*s), n))
            .collect()
    }
}

/// Draws a pane's `screen` in the chooser's preview box (`inside`), cropped to it: from the
/// top-left, or, when the cursor is below the box, from the row that puts the cursor's row at
/// the box's bottom (where a shell's prompt or an agent's latest output is).
pub(crate) fn draw_preview(screen: &vt100::Screen, inside: Rect, buf: &mut Buffer) {
    let view = PaneView {
        screen,
        highlights: &[],
    };
    let (cursor_row, _) = screen.cursor_position();
    let top = cursor_row.saturating_add(1).saturating_sub(inside.height);
    if top == 0 {
        view.render(inside, buf);
        return;
    }
    let (rows, cols) = screen.size();
    let whole = Rect::new(0, 0, cols.get(), rows.get());
    let mut scratch = Buffer::empty(whole);
    view.render(whole, &mut scratch);
    for y in 0..inside.height {
        for x in 0..inside.width.min(whole.width) {
            let from = scratch.cell((x, top.saturating_add(y))).cloned();
            if let (Some(from), Some(to)) = (from, buf.cell_mut((inside.x + x, inside.y + y))) {
                *to = from;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(buf: &Buffer, area: Rect) -> Vec<String> {
        (area.y..area.bottom())
            .map(|y| {
                (area.x..area.right())
                    .map(|x| buf[(x, y)].symbol().to_string())
                    .collect::<String>()
                    .trim_end()
                    .to_string()
            })
            .collect()
    }

    #[test]
    fn the_preview_keeps_the_cursor_s_row_in_the_box() {
        let nz = |n: u16| std::num::NonZeroU16::new(n).expect("not zero");
        let mut parser = vt100::Parser::new(nz(10), nz(20), 0);
        parser.process(b"top line\r\n");
        let area = Rect::new(0, 0, 30, 6);
        let inside = Rect::new(2, 1, 8, 3);
        // The cursor near the top: the screen from its first row, cut to the box's width.
        let mut buf = Buffer::empty(area);
        draw_preview(parser.screen(), inside, &mut buf);
        assert_eq!(text(&buf, inside), ["top line", "", ""]);
        // The cursor on row 6: rows 4 to 6 shown, the cursor's last.
        parser.process(b"a\r\nb\r\nc\r\nd\r\ne\r\nf prompt-and-more");
        let mut buf = Buffer::empty(area);
        draw_preview(parser.screen(), inside, &mut buf);
        assert_eq!(text(&buf, inside), ["d", "e", "f prompt"]);
        // Nothing drawn outside the box.
        assert_eq!(buf[(1, 1)].symbol(), " ");
        assert_eq!(buf[(10, 3)].symbol(), " ");
    }
}
