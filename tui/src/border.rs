//! The frame around a pane: its title (OSC title, else command), agent badge, focus highlight.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Widget};

/// What a pane's border shows.
#[derive(Debug, Clone, Default)]
pub struct BorderView<'a> {
    /// Pane number within the window, as `prefix q` and targets show it.
    pub index: usize,
    pub title: &'a str,
    pub focused: bool,
    /// A short right-aligned badge, e.g. the agent and its state ("claude ● working").
    pub badge: Option<(&'a str, Color)>,
    /// Text shown on the bottom edge (copy-mode position, "[exited 1]").
    pub footer: Option<&'a str>,
    /// Whether the pane is zoomed (fills the window).
    pub zoomed: bool,
}

/// Color of the focused pane's border.
pub const FOCUS_COLOR: Color = Color::Green;

impl Widget for BorderView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let border_style = if self.focused {
            Style::default().fg(FOCUS_COLOR)
        } else {
            Style::default().fg(Color::DarkGray)
        };
        let title_style = if self.focused {
            Style::default()
                .fg(FOCUS_COLOR)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::default().fg(Color::Gray)
        };
        let zoom = if self.zoomed { " [Z]" } else { "" };
        let mut block = Block::default()
            .borders(Borders::ALL)
            .border_type(if self.focused {
                BorderType::Thick
            } else {
                BorderType::Plain
            })
            .border_style(border_style)
            .title(Line::from(Span::styled(
                format!(" {}: {}{} ", self.index, self.title, zoom),
                title_style,
            )));
        if let Some((badge, color)) = self.badge {
            block = block.title(
                Line::from(Span::styled(
                    format!(" {badge} "),
                    Style::default().fg(color),
                ))
                .right_aligned(),
            );
        }
        if let Some(footer) = self.footer {
            block = block.title_bottom(
                Line::from(Span::styled(
                    format!(" {footer} "),
                    Style::default().fg(Color::Yellow),
                ))
                .right_aligned(),
            );
        }
        block.render(area, buf);
    }
}
