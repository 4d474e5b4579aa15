//! Everything in a client's frame that is not pane content, gathered as plain data: the dotted
//! area outside the session's size, the agents sidebar, the pane borders, the status line and
//! the overlays. The frame is drawn from this data, so two frames with equal `Chrome` have the
//! same cells outside the panes: that is what lets a frame redraw only the pane rows whose
//! content changed (see `render`), which is the whole cost of a keystroke's echo.

use calyx_tui::sidebar::{SidebarRow, SidebarView};
use calyx_tui::{
    BorderView, ServersOverlay, ServersView, StatusView, TreeRow, TreeView, WindowTab,
};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::widgets::Widget;

use crate::layout::PaneId;

use super::separators::{self, SeparatedPane};
use super::sidebar::AgentsView;
use crate::pane_borders::PaneBorders;
use crate::server::model::label::sanitize_title;
use crate::server::model::state::{ClientId, ClientMode, PromptKind, State};

/// A pane's place in the frame and what its border shows.
#[derive(Debug, Clone, PartialEq)]
pub struct PaneSlot {
    pub id: PaneId,
    /// The layout's cell: the border's rectangle, or with separators the content plus the
    /// separator column to its right and row below (which may lie past the window's edge).
    pub rect: Rect,
    /// Inside the border: where the pane's screen is drawn.
    pub inner: Rect,
    pub focused: bool,
    /// The pane is in copy mode (its screen is a snapshot with highlights).
    pub copy: bool,
    border: BorderKey,
}

/// The inputs of a pane's `BorderView`.
#[derive(Debug, Clone, PartialEq)]
struct BorderKey {
    index: usize,
    title: String,
    focused: bool,
    badge: Option<(String, Color)>,
    footer: Option<String>,
    zoomed: bool,
}

/// The inputs of the sidebar.
#[derive(Debug, Clone, PartialEq)]
struct SidebarKey {
    area: Rect,
    rows: Vec<SidebarRow>,
    selected: Option<usize>,
    focused: bool,
}

/// The inputs of the session chooser.
#[derive(Debug, Clone, PartialEq)]
struct TreeKey {
    rows: Vec<TreeRow>,
    selected: usize,
}

/// One window's tab on the status line.
#[derive(Debug, Clone, PartialEq)]
struct TabKey {
    index: usize,
    name: String,
    active: bool,
    bell: bool,
    last: bool,
    zoomed: bool,
}

/// A window's tab name, with `◆` when a view in one of its panes is running.
fn view_mark(state: &State, window: &crate::server::model::state::Window, name: String) -> String {
    let running = window.layout.panes().iter().any(|p| {
        state
            .docks
            .get(p)
            .is_some_and(|d| d.cards.iter().any(|c| c.running))
    });
    if running {
        format!("{name} ◆")
    } else {
        name
    }
}

/// The inputs of the status line.
#[derive(Debug, Clone, PartialEq)]
struct StatusKey {
    area: Rect,
    session: String,
    /// (index, name, active, bell)
    windows: Vec<TabKey>,
    pane: String,
    mode: Option<&'static str>,
    blocked: usize,
    working: usize,
    approvals: usize,
    message: Option<String>,
    prompt: Option<(&'static str, String)>,
    /// Tab's candidates, after the prompt's cursor.
    prompt_hint: Option<String>,
}

/// A client's frame minus pane contents.
#[derive(Debug, Clone, PartialEq)]
pub struct Chrome {
    /// The client's whole terminal.
    pub area: Rect,
    /// How panes are framed, and the window area they tile.
    borders: PaneBorders,
    window: Rect,
    /// The part of it the session uses (the smallest attached client's size).
    session_rows: u16,
    session_cols: u16,
    sidebar: Option<SidebarKey>,
    pub panes: Vec<PaneSlot>,
    status: StatusKey,
    /// Where the cursor goes while a status-line prompt is open.
    pub prompt_cursor: Option<(u16, u16)>,
    /// The approval panel covers the panes.
    pub panel: bool,
    /// The key help covers the panes (at this scroll offset).
    help: Option<u16>,
    /// The message log covers the panes (at this scroll offset).
    messages: Option<u16>,
    /// `prefix q`: each pane shows its number.
    display_panes: bool,
    /// The session chooser covers the panes.
    tree: Option<TreeKey>,
    /// The hosted MCP servers overlay covers the panes.
    servers: Option<ServersOverlay>,
    /// The sign-in prompt floats over everything (every client shows it).
    sign_in: Option<crate::server::model::sign_in_prompt::SignInPrompt>,
    /// A hosted server's question floats over the panes (every client shows it).
    elicit: Option<crate::server::model::elicit_panel::ElicitPanel>,
    /// Whether the focused pane's cursor is shown (not while a prompt or overlay has it).
    pub pane_cursor: bool,
    /// The view docks of the panes shown (see `view_card`).
    pub docks: Vec<super::view_card::DockSlot>,
    /// `prefix V`: every view of the server covers the panes.
    pub view_list: Option<super::view_list::ViewListKey>,
}

impl Chrome {
    /// Gathers the chrome of `client`'s frame; None when the client or its session is gone.
    pub fn gather(
        state: &State,
        agents: &AgentsView,
        client: ClientId,
        panel: bool,
        tree_rows: Option<Vec<TreeRow>>,
    ) -> Option<Chrome> {
        let c = state.clients.get(&client)?;
        let (rows, cols) = (c.rows, c.cols);
        let mode = &c.mode;
        let session = state.sessions.get(&c.session)?;
        let session_rows = session.rows.min(rows);
        let session_cols = session.cols.min(cols);
        let status_y = session_rows.saturating_sub(1);
        let area = session
            .window_area()
            .intersection(Rect::new(0, 0, session_cols, status_y));
        let window = session.window()?;
        let zoomed = window.zoomed;
        let active = window.active;
        let borders = session.pane_borders;
        let layout_area = borders.layout_area(area);
        let rects: Vec<(PaneId, Rect)> = if zoomed {
            vec![(active, layout_area)]
        } else {
            window.layout.rects(layout_area)
        };
        // Borders number panes by their place in the window (as `:W.P` targets do), also when
        // a zoom shows just one of them.
        let order = window.layout.panes();
        let panes: Vec<PaneSlot> = rects
            .iter()
            .enumerate()
            .filter_map(|(drawn, (id, rect))| {
                let index = order.iter().position(|p| p == id).unwrap_or(drawn);
                let pane = state.panes.get(id)?;
                let focused = *id == active;
                // From the glance: no pane's reader is waited for to read a title.
                let title = pane
                    .glance
                    .title()
                    .map(|t| t.to_string())
                    .filter(|t| !t.trim().is_empty())
                    .unwrap_or_else(|| pane.command_label());
                let exited = pane.exited.map(|s| match s {
                    Some(code) => format!("[exited {code}]"),
                    None => "[exited]".to_string(),
                });
                let footer = pane.copy.as_ref().map(|c| c.position_text()).or(exited);
                Some(PaneSlot {
                    id: *id,
                    rect: *rect,
                    inner: borders.content(*rect),
                    focused,
                    copy: pane.copy.is_some(),
                    border: BorderKey {
                        index,
                        title: sanitize_title(&title),
                        focused,
                        badge: agents.badges.get(id).cloned(),
                        footer,
                        zoomed,
                    },
                })
            })
            .collect();
        let mut panes = panes;
        let docks = super::view_card::dock_slots(
            state,
            c,
            panes.iter_mut().map(|slot| (slot.id, &mut slot.inner)),
        );
        let view_list = match mode {
            ClientMode::ViewList { selected } => Some(super::view_list::ViewListKey {
                rows: state.view_rows.iter().map(|r| r.text.clone()).collect(),
                selected: *selected,
            }),
            _ => None,
        };
        let sidebar = session.sidebar.then(|| {
            let (selected, focused) = match mode {
                ClientMode::Sidebar { selected } => (Some(*selected), true),
                _ => (None, false),
            };
            SidebarKey {
                area: Rect::new(0, 0, area.x, status_y),
                rows: agents
                    .rows
                    .iter()
                    .map(|(_, r)| r.clone())
                    .chain(agents.remote_rows.iter().cloned())
                    .collect(),
                selected,
                focused,
            }
        });
        let windows = session
            .windows
            .iter()
            .enumerate()
            .map(|(i, w)| TabKey {
                index: w.number,
                name: view_mark(state, w, state.window_name(w)),
                active: i == session.active_window,
                bell: w.bell,
                last: session.last_window == Some(i),
                zoomed: w.zoomed,
            })
            .collect();
        let in_copy = state.panes.get(&active).is_some_and(|p| p.copy.is_some());
        let prompt = match mode {
            ClientMode::Prompt { kind, text } => Some((prompt_label(*kind), text.clone())),
            _ => None,
        };
        let prompt_cursor = prompt.as_ref().map(|(label, text)| {
            let x = (label.chars().count() as u16 + 1 + text.chars().count() as u16 + 1)
                .min(session_cols.saturating_sub(1));
            (x, status_y)
        });
        let help = match mode {
            ClientMode::Help { scroll } => Some(*scroll),
            _ => None,
        };
        let display_panes = matches!(mode, ClientMode::DisplayPanes);
        let messages = match mode {
            ClientMode::Messages { scroll } => Some(*scroll),
            _ => None,
        };
        let tree = match (mode, tree_rows) {
            (ClientMode::Tree { selected, .. }, Some(rows)) => Some(TreeKey {
                rows,
                selected: *selected,
            }),
            _ => None,
        };
        let servers = match mode {
            ClientMode::Servers(overlay) => Some((**overlay).clone()),
            _ => None,
        };
        let status = StatusKey {
            area: Rect::new(0, status_y, session_cols, 1),
            session: session.name.clone(),
            windows,
            // The focused pane's border label: its OSC title, else its command.
            pane: panes
                .iter()
                .find(|slot| slot.id == active)
                .map(|slot| status_pane(slot, borders, area))
                .unwrap_or_default(),
            mode: match mode {
                ClientMode::Prefix { .. } => Some("PREFIX"),
                ClientMode::Help { .. } => Some("HELP"),
                ClientMode::Messages { .. } => Some("MESSAGES"),
                ClientMode::DisplayPanes => Some("PANES"),
                ClientMode::Tree { .. } => Some("CHOOSE"),
                ClientMode::Servers(_) => Some("SERVERS"),
                ClientMode::Sidebar { .. } => Some("AGENTS"),
                ClientMode::ViewCard { .. } => Some("VIEW"),
                ClientMode::ViewList { .. } => Some("VIEWS"),
                _ if in_copy => Some("COPY"),
                _ if window.synchronized => Some("SYNC"),
                _ => None,
            },
            blocked: agents.blocked,
            working: agents.working,
            approvals: agents.approvals,
            message: c.message.as_ref().map(|m| m.0.clone()),
            prompt_hint: prompt.as_ref().and(c.prompt_aid.hint.clone()),
            prompt,
        };
        let sign_in = state.sign_in_prompts.first().cloned();
        let elicit = state.elicit_panels.first().cloned();
        let pane_cursor = matches!(mode, ClientMode::Normal | ClientMode::Prefix { .. })
            && !(panel && matches!(mode, ClientMode::Normal))
            && sign_in.is_none()
            && elicit.is_none()
            && help.is_none()
            && messages.is_none()
            && tree.is_none()
            && servers.is_none()
            && view_list.is_none();
        Some(Chrome {
            area: Rect::new(0, 0, cols, rows),
            borders,
            window: area,
            session_rows,
            session_cols,
            sidebar,
            panes,
            status,
            prompt_cursor,
            panel,
            help,
            messages,
            display_panes,
            tree,
            servers,
            sign_in,
            elicit,
            pane_cursor,
            docks,
            view_list,
        })
    }

    /// Whether an overlay covers pane cells.
    pub fn overlaid(&self) -> bool {
        self.panel
            || self.help.is_some()
            || self.messages.is_some()
            || self.tree.is_some()
            || self.servers.is_some()
            || self.view_list.is_some()
            || self.sign_in.is_some()
            || self.elicit.is_some()
            || self.display_panes
    }

    /// The sign-in prompt, when an agent's call waits for a server's sign-in.
    pub fn sign_in(&self) -> Option<&crate::server::model::sign_in_prompt::SignInPrompt> {
        self.sign_in.as_ref()
    }

    /// The hosted server's question, when one waits for the user.
    pub fn elicit(&self) -> Option<&crate::server::model::elicit_panel::ElicitPanel> {
        self.elicit.as_ref()
    }

    /// The area between the panes and the status line that overlays cover.
    pub fn overlay_area(&self) -> Rect {
        Rect::new(0, 0, self.session_cols, self.session_rows.saturating_sub(1))
    }

    /// Draws what lies under the panes' contents: the dots outside the session's size, the
    /// sidebar and the borders.
    pub fn draw_under(&self, buf: &mut Buffer) {
        let (rows, cols) = (self.area.height, self.area.width);
        // Outside the session's size (a bigger client than the smallest one): dotted, as tmux.
        if self.session_cols < cols || self.session_rows < rows {
            let dots = Style::default().fg(Color::DarkGray);
            for y in 0..rows {
                for x in 0..cols {
                    if x >= self.session_cols || y >= self.session_rows {
                        if let Some(cell) = buf.cell_mut((x, y)) {
                            cell.set_symbol("·").set_style(dots);
                        }
                    }
                }
            }
        }
        if let Some(side) = &self.sidebar {
            SidebarView {
                rows: &side.rows,
                selected: side.selected,
                focused: side.focused,
            }
            .render(side.area, buf);
        }
        if self.borders == PaneBorders::Separators {
            let labels: Vec<String> = self
                .panes
                .iter()
                .map(|slot| format!("{}: {}", slot.border.index, slot.border.title))
                .collect();
            let separated: Vec<SeparatedPane<'_>> = self
                .panes
                .iter()
                .zip(&labels)
                .map(|(slot, label)| SeparatedPane {
                    cell: slot.rect,
                    content: slot.inner,
                    focused: slot.focused,
                    label,
                    badge: slot.border.badge.as_ref().map(|(t, c)| (t.as_str(), *c)),
                    footer: slot.border.footer.as_deref(),
                })
                .collect();
            separators::draw(self.window, &separated, buf);
            return;
        }
        for slot in &self.panes {
            let b = &slot.border;
            BorderView {
                index: b.index,
                title: &b.title,
                focused: b.focused,
                badge: b.badge.as_ref().map(|(t, c)| (t.as_str(), *c)),
                footer: b.footer.as_deref(),
                zoomed: b.zoomed,
            }
            .render(slot.rect, buf);
        }
    }

    /// Draws the status line.
    pub fn draw_status(&self, buf: &mut Buffer) {
        let s = &self.status;
        StatusView {
            session: &s.session,
            windows: s
                .windows
                .iter()
                .map(|t| WindowTab {
                    index: t.index,
                    name: &t.name,
                    active: t.active,
                    bell: t.bell,
                    last: t.last,
                    zoomed: t.zoomed,
                })
                .collect(),
            pane: &s.pane,
            mode: s.mode,
            blocked: s.blocked,
            working: s.working,
            approvals: s.approvals,
            message: s.message.as_deref(),
            prompt: s.prompt.as_ref().map(|(l, t)| (*l, t.as_str())),
        }
        .render(s.area, buf);
        self.draw_prompt_hint(buf);
    }

    /// Tab's candidates on the status line, dimmed, after the prompt's cursor and cut at the
    /// line's end (tmux shows a menu; one line keeps the panes uncovered).
    fn draw_prompt_hint(&self, buf: &mut Buffer) {
        let (Some(hint), Some((x, y))) = (&self.status.prompt_hint, self.prompt_cursor) else {
            return;
        };
        let area = self.status.area;
        let x = x.saturating_add(2);
        let end = area.x.saturating_add(area.width);
        if x >= end {
            return;
        }
        let style = Style::default().bg(Color::Indexed(236)).fg(Color::Gray);
        buf.set_stringn(x, y, hint, usize::from(end - x), style);
    }

    /// The key help's scroll offset, when it is open.
    pub fn help(&self) -> Option<u16> {
        self.help
    }

    /// Whether each pane shows its number (`prefix q`).
    pub fn display_panes(&self) -> bool {
        self.display_panes
    }

    /// The message log's scroll offset, when it is open.
    pub fn messages(&self) -> Option<u16> {
        self.messages
    }

    /// The hosted MCP servers overlay, when it is open.
    pub fn servers(&self) -> Option<ServersView<'_>> {
        self.servers.as_ref().map(|overlay| ServersView { overlay })
    }

    /// The session chooser, when it is open.
    pub fn tree(&self) -> Option<TreeView<'_>> {
        self.tree.as_ref().map(|t| TreeView {
            rows: &t.rows,
            selected: t.selected,
        })
    }
}

/// The focused pane's label on the status line: "%3 vim". With separators, a pane with no
/// separator line above it shows its title nowhere else, so its agent badge and copy-mode
/// position (or exit status) come along: "%3 claude · Claude Code ● working · [2/10]".
fn status_pane(slot: &PaneSlot, borders: PaneBorders, window: Rect) -> String {
    let mut label = format!("%{} {}", slot.id, status_label(&slot.border.title));
    let untitled = borders == PaneBorders::Separators && slot.inner.y <= window.y;
    if untitled {
        let extras = slot.border.badge.iter().map(|(text, _)| text.as_str());
        for extra in extras.chain(slot.border.footer.as_deref()) {
            label.push_str(" · ");
            label.push_str(extra);
        }
    }
    label
}

/// Longest pane label on the status line, in characters (tmux shows 21 of a title).
const STATUS_LABEL_CHARS: usize = 24;

/// A title cut to fit the status line: a long one would push the label off it.
fn status_label(title: &str) -> String {
    if title.chars().count() <= STATUS_LABEL_CHARS {
        return title.to_string();
    }
    let mut cut: String = title.chars().take(STATUS_LABEL_CHARS - 1).collect();
    cut.push('…');
    cut
}

fn prompt_label(kind: PromptKind) -> &'static str {
    match kind {
        PromptKind::Command => ":",
        PromptKind::RenameWindow => "(rename-window)",
        PromptKind::RenameSession => "(rename-session)",
        PromptKind::SearchForward => "(search down)",
        PromptKind::SearchBackward => "(search up)",
        // The question is the prompt's text (see `confirm_kill`).
        PromptKind::ConfirmKillPane(_)
        | PromptKind::ConfirmKillWindow(..)
        | PromptKind::ConfirmKillSession(_) => "",
    }
}
