//! The key help overlay (`prefix ?`), generated from the same command table that dispatches keys.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph, Widget};

/// One row of the help: the keys bound to a command, its name and what it does.
#[derive(Debug, Clone)]
pub struct HelpEntry {
    pub keys: String,
    pub command: String,
    pub description: String,
}

/// The overlay: entries, the prefix's name, and how far it is scrolled.
#[derive(Debug, Clone)]
pub struct HelpView<'a> {
    pub prefix: &'a str,
    pub entries: &'a [HelpEntry],
    pub scroll: u16,
}

/// The rectangle of a centered popup of at most `width` x `height` inside `area`.
pub fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width);
    let h = height.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

impl Widget for HelpView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let key_width = self
            .entries
            .iter()
            .map(|e| e.keys.chars().count())
            .max()
            .unwrap_or(4);
        let lines: Vec<Line> = self
            .entries
            .iter()
            .map(|e| {
                Line::from(vec![
                    Span::styled(
                        format!(" {:<key_width$} ", e.keys),
                        Style::default()
                            .fg(Color::Yellow)
                            .add_modifier(Modifier::BOLD),
                    ),
                    Span::styled(
                        format!("{:<18} ", e.command),
                        Style::default().fg(Color::Cyan),
                    ),
                    Span::raw(e.description.clone()),
                ])
            })
            .collect();
        let popup = centered(area, 96, lines.len() as u16 + 2);
        Clear.render(popup, buf);
        Paragraph::new(lines)
            .scroll((self.scroll, 0))
            .block(
                Block::default()
                    .borders(Borders::ALL)
                    .border_type(BorderType::Rounded)
                    .title(format!(" keys (prefix is {}) ", self.prefix))
                    .title_bottom(Line::from(" q/Esc close, arrows scroll ").right_aligned()),
            )
            .render(popup, buf);
    }
}
