//! `prefix V`: every MCP App view of the server, standalone ones included, in a box over the
//! panes; Up/Down choose, Enter goes to the chosen view's pane and focuses its card, Esc or q
//! closes. The rows are the model's, already sanitized.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::widgets::{Block, Borders, Clear, Widget};

/// The overlay as one client draws it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewListKey {
    pub rows: Vec<String>,
    pub selected: usize,
}

impl ViewListKey {
    /// Draws the box in `area` (the overlay area).
    pub fn render(&self, area: Rect, buf: &mut Buffer) {
        let width = area.width.saturating_sub(4).clamp(1, 100);
        let wanted = u16::try_from(self.rows.len().max(1) + 3).unwrap_or(u16::MAX);
        let height = wanted.min(area.height);
        let rect = Rect::new(
            area.x + area.width.saturating_sub(width) / 2,
            area.y + area.height.saturating_sub(height) / 2,
            width,
            height,
        );
        Clear.render(rect, buf);
        let block = Block::default()
            .borders(Borders::ALL)
            .title(" MCP App views · Enter: go to its pane · Esc: close ");
        let inner = block.inner(rect);
        block.render(rect, buf);
        if self.rows.is_empty() {
            buf.set_stringn(
                inner.x,
                inner.y,
                "no views",
                usize::from(inner.width),
                Style::default(),
            );
            return;
        }
        let shown = usize::from(inner.height);
        let first = self.selected.saturating_sub(shown.saturating_sub(1));
        for (i, row) in self.rows.iter().enumerate().skip(first).take(shown) {
            let y = inner.y + u16::try_from(i - first).unwrap_or(0);
            let style = if i == self.selected {
                Style::default().add_modifier(Modifier::REVERSED)
            } else {
                Style::default()
            };
            let text = format!("{} {row}", i + 1);
            buf.set_stringn(inner.x, y, text, usize::from(inner.width), style);
        }
    }
}
