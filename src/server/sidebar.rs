//! The agents sidebar, pane badges and status counts. Filled from agent rows by the agent
//! endpoint; until an agent reports, there is nothing to show.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::widgets::{Block, Borders, Paragraph, Widget};

use crate::layout::PaneId;

use super::state::{SessionId, State};

/// Draws the sidebar for a session.
pub fn render(_state: &State, _session: SessionId, area: Rect, buf: &mut Buffer) {
    Paragraph::new("no agents yet")
        .style(Style::default().fg(Color::DarkGray))
        .block(Block::default().borders(Borders::ALL).title(" agents "))
        .render(area, buf);
}

/// The agent badge on a pane's border.
pub fn badge(_state: &State, _pane: PaneId) -> Option<(String, Color)> {
    None
}

/// Blocked and working agent counts for the status line.
pub fn counts(_state: &State) -> (usize, usize) {
    (0, 0)
}
