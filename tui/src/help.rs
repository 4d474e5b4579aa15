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
        // The command column fits the longest name (`select-layout main-horizontal`), within
        // bounds that leave the description room.
        let command_width = self
            .entries
            .iter()
            .map(|e| e.command.chars().count())
            .max()
            .unwrap_or(0)
            .clamp(18, 30);
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
                        format!("{:<command_width$} ", e.command),
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

#[cfg(test)]
mod tests {
    //! Buffer tests in the style of ratatui's own widgets: the expected buffer is written out
    //! with `Buffer::with_lines` (plus the styles the widget must set) and compared whole.

    use super::*;

    fn entry(keys: &str, command: &str, description: &str) -> HelpEntry {
        HelpEntry {
            keys: keys.into(),
            command: command.into(),
            description: description.into(),
        }
    }

    /// Keys in bold yellow, then the command name in cyan, on each of `rows` (frame x from
    /// `x`, keys `key_cells` wide including their padding).
    fn style_columns(buf: &mut Buffer, x: u16, rows: std::ops::Range<u16>, key_cells: u16) {
        for y in rows {
            buf.set_style(
                Rect::new(x, y, key_cells, 1),
                Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
            );
            buf.set_style(
                Rect::new(x + key_cells, y, 19, 1),
                Style::new().fg(Color::Cyan),
            );
        }
    }

    fn small_entries() -> Vec<HelpEntry> {
        vec![
            entry("c", "new-window", "create a window"),
            entry("%", "split-h", "split the pane left and right"),
            entry("C-Left", "select-pane-left", "go left"),
            entry("d", "detach", "leave"),
        ]
    }

    #[test]
    fn a_small_area_truncates_lines_and_entries() {
        let area = Rect::new(0, 0, 40, 5);
        let mut buf = Buffer::empty(area);
        let entries = small_entries();
        HelpView {
            prefix: "C-b",
            entries: &entries,
            scroll: 0,
        }
        .render(area, &mut buf);
        #[rustfmt::skip]
        let mut expected = Buffer::with_lines([
            "╭ keys (prefix is C-b) ────────────────╮",
            "│ c      new-window         create a wi│",
            "│ %      split-h            split the p│",
            "│ C-Left select-pane-left   go left    │",
            "╰────────── q/Esc close, arrows scroll ╯",
        ]);
        style_columns(&mut expected, 1, 1..4, 8);
        assert_eq!(buf, expected);
    }

    #[test]
    fn scrolling_shows_the_later_entries() {
        let area = Rect::new(0, 0, 40, 5);
        let mut buf = Buffer::empty(area);
        let entries = small_entries();
        HelpView {
            prefix: "C-b",
            entries: &entries,
            scroll: 1,
        }
        .render(area, &mut buf);
        #[rustfmt::skip]
        let mut expected = Buffer::with_lines([
            "╭ keys (prefix is C-b) ────────────────╮",
            "│ %      split-h            split the p│",
            "│ C-Left select-pane-left   go left    │",
            "│ d      detach             leave      │",
            "╰────────── q/Esc close, arrows scroll ╯",
        ]);
        style_columns(&mut expected, 1, 1..4, 8);
        assert_eq!(buf, expected);
    }

    #[test]
    fn a_large_area_gets_a_centered_popup_at_most_96_wide_over_what_was_there() {
        let area = Rect::new(0, 0, 100, 8);
        let mut buf = Buffer::with_lines(vec![".".repeat(100); 8]);
        let entries = [
            entry("c", "new-window", "create a window"),
            entry("C-o", "rotate", "rotate the panes of the window"),
        ];
        HelpView {
            prefix: "C-a",
            entries: &entries,
            scroll: 0,
        }
        .render(area, &mut buf);
        #[rustfmt::skip]
        let mut expected = Buffer::with_lines([
            "....................................................................................................",
            "....................................................................................................",
            "..╭ keys (prefix is C-a) ────────────────────────────────────────────────────────────────────────╮..",
            "..│ c   new-window         create a window                                                       │..",
            "..│ C-o rotate             rotate the panes of the window                                        │..",
            "..╰────────────────────────────────────────────────────────────────── q/Esc close, arrows scroll ╯..",
            "....................................................................................................",
            "....................................................................................................",
        ]);
        style_columns(&mut expected, 3, 3..5, 5);
        assert_eq!(buf, expected);
    }

    #[test]
    fn centered_fits_inside_an_offset_area() {
        let area = Rect::new(10, 4, 30, 6);
        assert_eq!(centered(area, 96, 4), Rect::new(10, 5, 30, 4));
        assert_eq!(centered(area, 10, 2), Rect::new(20, 6, 10, 2));
    }
}
