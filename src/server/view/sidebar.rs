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

/// " ✉N" when the pane's peer has N unread messages, else empty.
fn unread_text(state: &State, pane: PaneId) -> String {
    match state.unread.get(&pane) {
        Some(&n) if n > 0 => format!(" ✉{n}"),
        _ => String::new(),
    }
}
