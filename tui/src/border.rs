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
        // Both titles must fit on the top edge: the badge gives up its CLI name first, then the
        // pane title is cut.
        let room = usize::from(area.width.saturating_sub(4));
        let badge_text = self.badge.map(|(text, color)| {
            let left_min = format!(" {}: ", self.index).chars().count() + 6;
            let text = if text.chars().count() + 2 + left_min > room {
                // "Claude Code ! blocked" -> "! blocked"
                let short: Vec<&str> = text.rsplitn(3, ' ').collect();
                if short.len() == 3 {
                    format!("{} {}", short[1], short[0])
                } else {
                    text.to_string()
                }
            } else {
                text.to_string()
            };
            (text, color)
        });
        let badge_width = badge_text
            .as_ref()
            .map_or(0, |(t, _)| t.chars().count() + 3);
        let title_room = room
            .saturating_sub(badge_width + format!(" {}: {} ", self.index, zoom).chars().count());
        let title: String = if self.title.chars().count() > title_room {
            let mut t: String = self
                .title
                .chars()
                .take(title_room.saturating_sub(1))
                .collect();
            t.push('…');
            t
        } else {
            self.title.to_string()
        };
        let mut block = Block::default()
            .borders(Borders::ALL)
            .border_type(if self.focused {
                BorderType::Thick
            } else {
                BorderType::Plain
            })
            .border_style(border_style)
            .title(Line::from(Span::styled(
                format!(" {}: {}{} ", self.index, title, zoom),
                title_style,
            )));
        if let Some((badge, color)) = badge_text {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn top_line(view: BorderView<'_>, width: u16) -> String {
        let area = Rect::new(0, 0, width, 3);
        let mut buf = Buffer::empty(area);
        view.render(area, &mut buf);
        (0..width)
            .map(|x| buf[(x, 0)].symbol().to_string())
            .collect()
    }

    #[test]
    fn narrow_borders_keep_title_and_short_badge() {
        let line = top_line(
            BorderView {
                index: 1,
                title: "claude",
                focused: true,
                badge: Some(("Claude Code ! blocked", Color::Red)),
                ..Default::default()
            },
            30,
        );
        assert!(line.contains("1: claude"), "{line}");
        assert!(line.contains("! blocked"), "{line}");
        assert!(!line.contains("Claude Code"), "{line}");
        let wide = top_line(
            BorderView {
                index: 1,
                title: "claude",
                focused: true,
                badge: Some(("Claude Code ! blocked", Color::Red)),
                ..Default::default()
            },
            60,
        );
        assert!(
            wide.contains("1: claude") && wide.contains("Claude Code ! blocked"),
            "{wide}"
        );
    }
}
