//! The agents sidebar, pane badges and status counts, built once per frame from agent rows.

use std::collections::HashMap;

use calyx_tui::sidebar::SidebarRow;
use ratatui::style::Color;
use tokio::time::Instant;

use crate::agents::{row_state, sidebar_row};
use crate::layout::PaneId;

use crate::agents::AgentBook;
use crate::approvals::ApprovalQueue;
use crate::server::model::label::sanitize_title;
use crate::server::model::state::State;

/// What the agent rows contribute to a frame.
#[derive(Default)]
pub struct AgentsView {
    /// Sidebar rows in urgency order, with the pane each belongs to.
    pub rows: Vec<(PaneId, SidebarRow)>,
    /// Per pane: the badge on its border.
    pub badges: HashMap<PaneId, (String, Color)>,
    pub blocked: usize,
    pub working: usize,
    /// Tool calls waiting for the human.
    pub approvals: usize,
    /// Saved machines' agent rows, after this machine's (not selectable: they have no pane
    /// here).
    pub remote_rows: Vec<SidebarRow>,
}

impl AgentsView {
    /// Builds the view from the agent rows, the panes they run in and the pending approvals.
    pub fn build(state: &State, agents: &AgentBook, approvals: &ApprovalQueue) -> Self {
        let now = Instant::now();
        let mut view = AgentsView::default();
        for row in agents.rows(now) {
            let Ok(pane) = PaneId::try_from(row.pane) else {
                continue;
            };
            let Some(p) = state.panes.get(&pane) else {
                continue;
            };
            let title = p
                .glance
                .title()
                .map(|t| sanitize_title(&t))
                .unwrap_or_else(|| p.command_label());
            let (glyph, style) = row_state(row.state).glyph();
            let color = style.fg.unwrap_or(Color::Gray);
            let subagents = if row.subagents.is_empty() {
                String::new()
            } else {
                format!(" +{}", row.subagents.len())
            };
            // An agent waiting in calyx's approval panel says so, with the tool it wants.
            let approval = approvals
                .pending()
                .iter()
                .find(|a| a.pane == pane)
                .map(|a| crate::approvals::visible(&a.tool));
            let state_text = match &approval {
                Some(tool) => format!("approval {tool}"),
                None => row.state.as_str().to_string(),
            };
            let unread = unread_text(state, pane);
            view.badges.insert(
                pane,
                (
                    format!(
                        "{} {glyph} {state_text}{subagents}{unread}",
                        row.kind.display_name()
                    ),
                    color,
                ),
            );
            // Short, so the tool still fits the sidebar's width after the agent's name; the
            // unread count goes before the title: the column is narrow and cuts a long title's
            // end, which must not take the count with it.
            // A running MCP App view says so (its tool name is sanitized in the dock).
            let running_view = state
                .docks
                .get(&pane)
                .and_then(|d| d.cards.iter().rev().find(|c| c.running));
            let title = match (approval, running_view) {
                (Some(tool), _) => format!("approval: {tool}"),
                (None, Some(card)) => format!("◆ app: {}", card.tool),
                (None, None) => title,
            };
            let title = match unread.trim_start() {
                "" => title,
                count => format!("{count} {title}"),
            };
            view.rows
                .push((pane, sidebar_row(&row, format!("%{pane}"), title)));
        }
        // Panes with unread messages but no agent row still show the count on their border.
        for (&pane, _) in state.unread.iter() {
            view.badges
                .entry(pane)
                .or_insert_with(|| (unread_text(state, pane).trim().to_string(), Color::Yellow));
        }
        let (blocked, working) = agents.counts();
        view.blocked = blocked;
        view.working = working;
        view.approvals = approvals.pending().len();
        view
    }
}

impl AgentsView {
    /// Adds the saved machines' agents: a row each (`build:%3`, its machine named in the
    /// title, `stale` when the link is down), and their blocked and working agents and live
    /// pending requests in the counts, so a blocked agent elsewhere turns the badge red as a
    /// local one does. Every text is the remote machine's: shown through `visible`.
    pub fn with_machines(mut self, machines: &crate::machines::link::Machines) -> Self {
        use crate::agents::AgentState;
        use crate::approvals::visible;
        for v in machines.views() {
            let Some(snapshot) = &v.snapshot else {
                continue;
            };
            let live = v.live();
            let name = &v.machine.name;
            for a in &snapshot.agents {
                let state = AgentState::from_name(&a.state).unwrap_or(AgentState::Unknown);
                if live {
                    match state {
                        AgentState::Blocked => self.blocked += 1,
                        AgentState::Working => self.working += 1,
                        _ => {}
                    }
                }
                let cwd_name = a
                    .cwd
                    .as_deref()
                    .map(|c| c.trim_end_matches('/'))
                    .and_then(|c| c.rsplit('/').next())
                    .map(visible)
                    .unwrap_or_default();
                self.remote_rows.push(SidebarRow {
                    pane_label: format!("{name}:{}", visible(&a.pane)),
                    agent_name: visible(&a.agent_name),
                    title: if live {
                        format!("on {name}")
                    } else {
                        format!("{name} {} (stale)", v.state.word())
                    },
                    cwd_name,
                    state: row_state(if live { state } else { AgentState::Unknown }),
                    since_text: String::new(),
                    subagents: Vec::new(),
                });
            }
            if live {
                self.approvals += snapshot.approvals.len();
            }
        }
        // What needs a human first, as for local rows.
        self.remote_rows.sort_by_key(|r| match r.state {
            calyx_tui::sidebar::RowState::Blocked => 0,
            calyx_tui::sidebar::RowState::Working => 1,
            _ => 2,
        });
        self
    }
}

/// " ✉N" when the pane's peer has N unread messages, else empty.
fn unread_text(state: &State, pane: PaneId) -> String {
    match state.unread.get(&pane) {
        Some(&n) if n > 0 => format!(" ✉{n}"),
        _ => String::new(),
    }
}
