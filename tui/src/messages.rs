//! The message log (`prefix ~`, tmux's show-messages): every status-line message of this
//! server run, oldest first, so one cut off at the terminal's width or gone after its few
//! seconds can be read whole.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph, Widget, Wrap};

use crate::help::centered;

/// The overlay over borrowed log lines: (time as shown, text), and how far it is scrolled.
#[derive(Debug, Clone)]
pub struct MessagesView<'a> {
    pub entries: &'a [(String, String)],
    pub scroll: u16,
}

impl Widget for MessagesView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let lines: Vec<Line> = if self.entries.is_empty() {
            vec![Line::raw(" no messages yet")]
        } else {
            self.entries
                .iter()
                .map(|(time, text)| {
                    Line::from(vec![
                        Span::styled(format!(" {time} "), Style::default().fg(Color::DarkGray)),
                        // Texts come from the server's own messages, which may quote what a
                        // program set (a title): shown escaped.
                        Span::raw(crate::escape::visible(text)),
                    ])
                })
                .collect()
        };
        let popup = centered(area, 120, area.height);
        Clear.render(popup, buf);
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((self.scroll, 0))
            .block(
                Block::default()
                    .borders(Borders::ALL)
                    .border_type(BorderType::Rounded)
                    .title(" messages ")
                    .title_bottom(Line::from(" q/Esc close, arrows scroll ").right_aligned()),
            )
            .render(popup, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::text_of;

    #[test]
    fn long_messages_wrap_whole_and_oldest_come_first() {
        let area = Rect::new(0, 0, 30, 6);
        let mut buf = Buffer::empty(area);
        let entries = vec![
            ("10:00:01".to_string(), "first".to_string()),
            (
                "10:00:02".to_string(),
                "a long message that ends here".to_string(),
            ),
        ];
        MessagesView {
            entries: &entries,
            scroll: 0,
        }
        .render(area, &mut buf);
        let text = text_of(&buf);
        assert!(text.contains("messages"), "{text}");
        let first = text.find("first").expect("first shown");
        let ends = text.find("ends here").expect("the whole message, wrapped");
        assert!(first < ends, "{text}");
    }

    #[test]
    fn an_empty_log_says_so() {
        let area = Rect::new(0, 0, 30, 4);
        let mut buf = Buffer::empty(area);
        MessagesView {
            entries: &[],
            scroll: 0,
        }
        .render(area, &mut buf);
        assert!(text_of(&buf).contains("no messages yet"));
    }
}
