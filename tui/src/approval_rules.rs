//! Beside the approval panel: the row saying which "always" rule each key would make for the
//! request shown (so the human knows before pressing it), and the list of the rules already
//! set, with the keys to revoke one. Their text arrives escaped (calyx's approvals::rules).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph, Widget};

use crate::approval::panel_area;

/// The row just above the approval panel (drawn over the pane there): what `a`/`A`, `p`/`P`
/// and `r` do for this request. Not drawn when the panel fills the area.
#[derive(Debug, Clone, Copy)]
pub struct RuleChoicesView<'a> {
    pub text: &'a str,
}

impl Widget for RuleChoicesView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let panel = panel_area(area);
        if panel.y <= area.y {
            return;
        }
        let row = Rect::new(area.x, panel.y - 1, area.width, 1);
        Clear.render(row, buf);
        Paragraph::new(Line::from(Span::styled(
            format!(" {}", self.text),
            Style::default().fg(Color::Black).bg(Color::LightYellow),
        )))
        .style(Style::default().bg(Color::LightYellow))
        .render(row, buf);
    }
}

/// The rules the human set, over the approval panel's area, one selected.
#[derive(Debug, Clone, Copy)]
pub struct RulesListView<'a> {
    pub rules: &'a [String],
    pub selected: usize,
}

impl Widget for RulesListView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let panel = panel_area(area);
        Clear.render(panel, buf);
        let inner_rows = usize::from(panel.height.saturating_sub(3));
        // Scrolled so the selected rule is inside.
        let first = self.selected.saturating_sub(inner_rows.saturating_sub(1));
        let mut lines: Vec<Line> = if self.rules.is_empty() {
            vec![Line::from("no rules: a request's a/A/p/P keys make them")]
        } else {
            self.rules
                .iter()
                .enumerate()
                .skip(first)
                .take(inner_rows)
                .map(|(i, r)| {
                    let style = if i == self.selected {
                        Style::default().add_modifier(Modifier::REVERSED)
                    } else {
                        Style::default()
                    };
                    Line::from(Span::styled(format!("{:>3}. {r}", i + 1), style))
                })
                .collect()
        };
        while lines.len() < inner_rows {
            lines.push(Line::default());
        }
        let key = |k: &str| {
            Span::styled(
                k.to_string(),
                Style::default()
                    .fg(Color::Black)
                    .bg(Color::Yellow)
                    .add_modifier(Modifier::BOLD),
            )
        };
        lines.push(Line::from(vec![
            key("↑↓"),
            Span::raw(" select  "),
            key("d"),
            Span::raw(" revoke  "),
            key("r"),
            Span::raw(" back to the request"),
        ]));
        Paragraph::new(lines)
            .block(
                Block::default()
                    .borders(Borders::ALL)
                    .border_type(BorderType::Double)
                    .border_style(Style::default().fg(Color::LightRed))
                    .title(Span::styled(
                        format!(" always rules ({}) ", self.rules.len()),
                        Style::default()
                            .fg(Color::LightRed)
                            .add_modifier(Modifier::BOLD),
                    )),
            )
            .render(panel, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::text_of;

    #[test]
    fn the_choices_row_sits_just_above_the_panel() {
        let area = Rect::new(0, 0, 100, 24);
        let mut buf = Buffer::empty(area);
        RuleChoicesView {
            text: "p/P always commands starting with `npm test`",
        }
        .render(area, &mut buf);
        let text = text_of(&buf);
        let row = text
            .lines()
            .position(|l| l.contains("npm test"))
            .expect("drawn");
        assert_eq!(row + 1, usize::from(panel_area(area).y));
    }

    #[test]
    fn the_list_shows_the_selected_rule_even_far_down() {
        let area = Rect::new(0, 0, 80, 24);
        let rules: Vec<String> = (1..=40).map(|i| format!("rule-{i:02}")).collect();
        let mut buf = Buffer::empty(area);
        RulesListView {
            rules: &rules,
            selected: 39,
        }
        .render(area, &mut buf);
        let text = text_of(&buf);
        assert!(
            text.contains("rule-40") && text.contains("always rules (40)"),
            "{text}"
        );
        assert!(text.contains("revoke"), "{text}");
    }
}
