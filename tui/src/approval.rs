//! The approval panel: one pending tool call, what it would do, and the keys that answer it.
//! Its text arrives already made safe (see [`crate::escape`] and calyx's approvals::summary);
//! this widget lays it out, wraps it by display width (so a wide character cannot push text
//! past the border), styles the escapes and labels ([`crate::marks`]) and says in its title
//! when a request is longer than the panel or was cut.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph, Widget};
use unicode_width::UnicodeWidthChar;

use crate::marks::segments;

/// The panel's key hints after `y` and its label ("allow" or "step aside"), as (key, label).
const KEY_HINTS: [(&str, &str); 9] = [
    ("n", " deny "),
    ("m", " deny+msg "),
    ("x", " deny+stop "),
    ("a", " always here "),
    ("A", " always "),
    ("!", " all "),
    ("Tab", " next "),
    ("g", " go "),
    ("Esc", " hide"),
];
/// Spans of the first row when the hints take two (`y`, `n`, `m`, `x` with their labels).
const KEY_HINTS_SPLIT: usize = 8;

/// What the panel shows.
#[derive(Debug, Clone, Default)]
pub struct ApprovalView<'a> {
    /// "Claude Code".
    pub cli: &'a str,
    /// "%3 (work:0)".
    pub pane: &'a str,
    pub tool: &'a str,
    pub headline: &'a str,
    pub lines: &'a [String],
    /// 1-based position among pending requests, and how many there are.
    pub index: usize,
    pub count: usize,
    pub scroll: u16,
    /// The CLI's own "always" suggestions, offered as numbered choices.
    pub suggestions: &'a [String],
    /// A deny message being typed (after `m`).
    pub message: Option<&'a str>,
    /// Asking to confirm allowing this many pending requests (after `!`): the ones pending
    /// when `!` was pressed, the only ones a `y` then allows.
    pub confirm_all: Option<usize>,
    /// How long it has waited.
    pub waited: &'a str,
    /// What `y` means when the CLI's hook cannot allow (Gemini: "let Gemini ask in its pane").
    /// Shown above the keys, which then say "step aside" instead of "allow".
    pub note: Option<&'a str>,
    /// The request appeared while the user was typing: the answer keys wake in a moment, and
    /// until then the footer says so instead of listing them.
    pub keys_asleep: bool,
    /// What of the request is not shown (its middle, past a size cap), said in the title.
    pub cut: Option<&'a str>,
    /// An MCP App's request: what `y` and `n` do in its own words (`Open`, `Cancel`); the
    /// footer then offers those, `a` for this view, and moving on, none of a gate's rules.
    pub app_keys: Option<(&'a str, &'a str)>,
}

/// A row of the body: styled pieces.
type Row = Vec<(String, Style)>;

/// How a body line is drawn: diff lines in their colour, the rest plain.
fn line_style(line: &str) -> Style {
    if line.starts_with("+ ") {
        Style::default().fg(Color::Green)
    } else if line.starts_with("- ") {
        Style::default().fg(Color::Red)
    } else if line.starts_with("@@ ") {
        Style::default().fg(Color::Cyan)
    } else {
        Style::default()
    }
}

/// `text` in at most `width` columns: whole when it fits, else its head and its tail around a
/// `⋯` (a headline cut at the border would hide how a command ends).
fn fit_width(text: &str, width: usize) -> String {
    let columns = |s: &str| s.chars().map(|c| c.width().unwrap_or(1)).sum::<usize>();
    if columns(text) <= width {
        return text.to_string();
    }
    let half = width.saturating_sub(1) / 2;
    let mut head = String::new();
    let mut used = 0;
    for c in text.chars() {
        used += c.width().unwrap_or(1);
        if used > half {
            break;
        }
        head.push(c);
    }
    let mut tail: Vec<char> = Vec::new();
    let mut used = 0;
    for c in text.chars().rev() {
        used += c.width().unwrap_or(1);
        if used > width.saturating_sub(1) - half {
            break;
        }
        tail.push(c);
    }
    let tail: String = tail.into_iter().rev().collect();
    format!("{head}{}{tail}", crate::escape::ELISION_MARK)
}

/// `line` broken into rows of at most `width` columns.
fn wrap(line: &str, width: usize) -> Vec<Row> {
    let mut rows: Vec<Row> = vec![Vec::new()];
    let mut used = 0;
    for (text, style) in segments(line, line_style(line)) {
        for c in text.chars() {
            let w = c.width().unwrap_or(1);
            if used + w > width && used > 0 {
                rows.push(Vec::new());
                used = 0;
            }
            used += w;
            let Some(row) = rows.last_mut() else { continue };
            match row.last_mut() {
                Some((t, s)) if *s == style => t.push(c),
                _ => row.push((c.to_string(), style)),
            }
        }
    }
    rows
}

/// The panel's rectangle: the lower part of the screen, at most 20 rows.
pub fn panel_area(area: Rect) -> Rect {
    let height = (area.height / 2).clamp(8.min(area.height), 20.min(area.height));
    Rect::new(area.x, area.y + area.height - height, area.width, height)
}

impl ApprovalView<'_> {
    /// The body lines wrapped to the panel's inner width (wrapped here, not by the paragraph,
    /// so the key hints always fit and scrolling counts the rows the user sees).
    fn wrapped(&self, panel: Rect) -> Vec<Row> {
        let width = usize::from(panel.width.saturating_sub(2)).max(1);
        self.lines.iter().flat_map(|l| wrap(l, width)).collect()
    }

    fn footer_rows(&self, inner_width: u16) -> usize {
        self.key_rows(inner_width)
            + usize::from(!self.suggestions.is_empty())
            + usize::from(self.note.is_some())
    }

    /// What `y` does: allow, or only step aside where the CLI's hook cannot allow.
    fn allow_label(&self) -> &'static str {
        if self.note.is_some() {
            " step aside "
        } else {
            " allow "
        }
    }

    /// The key hints take one row, or two where one row would cut them off (80 columns).
    fn key_rows(&self, inner_width: u16) -> usize {
        let typing = self.message.is_some() || self.confirm_all.is_some() || self.keys_asleep;
        let hints: usize = 1
            + self.allow_label().len()
            + KEY_HINTS
                .iter()
                .map(|(k, l)| k.len() + l.len())
                .sum::<usize>();
        if typing || usize::from(inner_width) >= hints {
            1
        } else {
            2
        }
    }

    /// How many body rows the panel shows at once in `area` (below the header and headline,
    /// above the footer).
    pub fn body_rows(&self, area: Rect) -> usize {
        let panel = panel_area(area);
        usize::from(panel.height.saturating_sub(2))
            .saturating_sub(2 + self.footer_rows(panel.width.saturating_sub(2)))
    }

    /// The furthest the body can scroll in `area`: its last row at the bottom of the panel.
    pub fn max_scroll(&self, area: Rect) -> u16 {
        let rows = self.wrapped(panel_area(area)).len();
        u16::try_from(rows.saturating_sub(self.body_rows(area))).unwrap_or(u16::MAX)
    }
}

impl ApprovalView<'_> {
    /// The title's warning that the request does not fit (scroll to read it all) or was cut
    /// (its middle not shown): a human must not answer a request believing they saw all of it.
    fn size_warning(&self, rows: usize, long: bool, width: usize) -> Line<'static> {
        let text = match (self.cut, long) {
            (Some(cut), _) => format!(" TOO LONG: {cut} "),
            (None, true) => format!(" LONG: {rows} rows, ↓ to read all "),
            (None, false) => return Line::default(),
        };
        // Room is left for " approval " and " 1 of 2 " beside it.
        Line::from(Span::styled(
            fit_width(&text, width.saturating_sub(24)),
            Style::default()
                .fg(Color::Black)
                .bg(Color::LightYellow)
                .add_modifier(Modifier::BOLD),
        ))
    }
}

impl Widget for ApprovalView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let panel = panel_area(area);
        Clear.render(panel, buf);
        let key = |k: &str| {
            Span::styled(
                k.to_string(),
                Style::default()
                    .fg(Color::Black)
                    .bg(Color::Yellow)
                    .add_modifier(Modifier::BOLD),
            )
        };
        let text = |t: &str| Span::raw(t.to_string());
        let mut lines = vec![Line::from(vec![
            Span::styled(
                format!("{} ", self.cli),
                Style::default()
                    .fg(Color::Cyan)
                    .add_modifier(Modifier::BOLD),
            ),
            Span::raw(format!("in {} wants ", self.pane)),
            Span::styled(
                self.tool.to_string(),
                Style::default().add_modifier(Modifier::BOLD),
            ),
            Span::styled(
                format!("  (waiting {})", self.waited),
                Style::default().fg(Color::DarkGray),
            ),
        ])];
        lines.push(Line::from(Span::styled(
            fit_width(self.headline, usize::from(panel.width.saturating_sub(2))),
            Style::default()
                .fg(Color::White)
                .add_modifier(Modifier::BOLD),
        )));
        let wrapped = self.wrapped(panel);
        let body_rows = self.body_rows(area);
        // A scroll past the end (the panel got taller, or the server's clamp used another
        // size) still shows the last page rather than blank rows.
        let scroll = usize::from(self.scroll).min(wrapped.len().saturating_sub(body_rows));
        lines.extend(wrapped.iter().skip(scroll).take(body_rows).map(|row| {
            Line::from(
                row.iter()
                    .map(|(t, s)| Span::styled(t.clone(), *s))
                    .collect::<Vec<_>>(),
            )
        }));
        let inner_height = panel.height.saturating_sub(2) as usize;
        let footer_rows = self.footer_rows(panel.width.saturating_sub(2));
        lines.truncate(inner_height.saturating_sub(footer_rows));
        while lines.len() < inner_height.saturating_sub(footer_rows) {
            lines.push(Line::default());
        }
        if !self.suggestions.is_empty() {
            // Each choice gets its share of the row, its middle cut with a `⋯` where it must
            // be (the server lists each whole at the end of the body).
            let shown = self.suggestions.len().min(9);
            let share = usize::from(panel.width.saturating_sub(10)) / shown;
            let mut spans = vec![text("always: ")];
            for (i, s) in self.suggestions.iter().enumerate().take(9) {
                spans.push(key(&format!("{}", i + 1)));
                spans.push(text(&format!(
                    " {}  ",
                    fit_width(s, share.saturating_sub(4))
                )));
            }
            lines.push(Line::from(spans));
        }
        if let Some(note) = self.note {
            lines.push(Line::from(Span::styled(
                note.to_string(),
                Style::default().fg(Color::LightYellow),
            )));
        }
        let mut footer = if let Some(message) = self.message {
            Line::from(vec![
                text("deny with message: "),
                Span::styled(format!("{message}▏"), Style::default().fg(Color::White)),
                text("   "),
                key("Enter"),
                text(" send  "),
                key("Esc"),
                text(" back"),
            ])
        } else if let Some(count) = self.confirm_all {
            Line::from(vec![
                Span::styled(
                    format!(
                        "allow all {count} pending request{}? ",
                        if count == 1 { "" } else { "s" }
                    ),
                    Style::default()
                        .fg(Color::LightRed)
                        .add_modifier(Modifier::BOLD),
                ),
                key("y"),
                text(" yes  "),
                text("any other key: no"),
            ])
        } else if self.keys_asleep {
            Line::from(Span::styled(
                "a request appeared while you typed: the answer keys wake in a moment",
                Style::default().fg(Color::LightYellow),
            ))
        } else if let Some((yes, no)) = self.app_keys {
            let mut spans = vec![
                key("y"),
                text(&format!(" {yes} ")),
                key("n"),
                text(&format!(" {no} ")),
                key("a"),
                text(" always for this view "),
            ];
            for (k, label) in &KEY_HINTS[KEY_HINTS.len() - 3..] {
                spans.push(key(k));
                spans.push(text(label));
            }
            Line::from(spans)
        } else {
            let mut spans = vec![key("y"), text(self.allow_label())];
            for (k, label) in KEY_HINTS {
                spans.push(key(k));
                spans.push(text(label));
            }
            Line::from(spans)
        };
        if self.key_rows(panel.width.saturating_sub(2)) == 2 {
            // Split before `a`: the answers on one row, the rest on the next.
            let rest = footer.spans.split_off(KEY_HINTS_SPLIT);
            lines.push(footer);
            footer = Line::from(rest);
        }
        lines.push(footer);
        let mut block = Block::default();
        let long = wrapped.len() > body_rows;
        if long {
            // Where the body is, so a long command or diff is known to go on.
            let last = (scroll + body_rows).min(wrapped.len());
            block = block.title_bottom(
                Line::from(format!(
                    " lines {}-{last} of {}  ↑↓ PgUp PgDn Home End ",
                    scroll + 1,
                    wrapped.len()
                ))
                .right_aligned(),
            );
        }
        Paragraph::new(lines)
            .block(
                block
                    .borders(Borders::ALL)
                    .border_type(BorderType::Double)
                    .border_style(Style::default().fg(Color::LightRed))
                    .title(Span::styled(
                        " approval ",
                        Style::default()
                            .fg(Color::LightRed)
                            .add_modifier(Modifier::BOLD),
                    ))
                    .title(self.size_warning(wrapped.len(), long, usize::from(panel.width)))
                    .title(
                        Line::from(format!(" {} of {} ", self.index, self.count)).right_aligned(),
                    ),
            )
            .render(panel, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::text_of;

    fn screen(note: Option<&str>) -> String {
        screen_with(note, false)
    }

    fn screen_with(note: Option<&str>, keys_asleep: bool) -> String {
        let area = Rect::new(0, 0, 120, 24);
        let mut buf = Buffer::empty(area);
        ApprovalView {
            cli: "Gemini CLI",
            pane: "%1 (work:0)",
            tool: "run_shell_command",
            headline: "$ rm -rf build",
            lines: &[],
            index: 1,
            count: 1,
            scroll: 0,
            suggestions: &[],
            message: None,
            confirm_all: None,
            waited: "1s",
            note,
            keys_asleep,
            cut: None,
            app_keys: None,
        }
        .render(area, &mut buf);
        text_of(&buf)
    }

    #[test]
    fn an_app_request_offers_its_own_words_and_no_rules() {
        let area = Rect::new(0, 0, 120, 24);
        let mut buf = Buffer::empty(area);
        ApprovalView {
            cli: "An MCP App",
            tool: "Everything: Open Link",
            app_keys: Some(("Open", "Cancel")),
            ..Default::default()
        }
        .render(area, &mut buf);
        let screen = text_of(&buf);
        assert!(
            screen.contains("y Open n Cancel a always for this view"),
            "{screen}"
        );
        assert!(
            !screen.contains("deny+stop") && !screen.contains(" all "),
            "{screen}"
        );
    }

    #[test]
    fn asleep_keys_are_not_listed_and_the_panel_says_why() {
        let asleep = screen_with(None, true);
        assert!(asleep.contains("keys wake in a moment"), "{asleep}");
        assert!(!asleep.contains("deny+msg"), "{asleep}");
        assert!(screen_with(None, false).contains("deny+msg"));
    }

    #[test]
    fn a_long_body_scrolls_no_further_than_its_last_page_and_says_where_it_is() {
        let area = Rect::new(0, 0, 80, 24);
        let lines: Vec<String> = (1..=200).map(|i| format!("line-{i:03}")).collect();
        let view = |scroll| ApprovalView {
            lines: &lines,
            scroll,
            ..Default::default()
        };
        let rows = view(0).body_rows(area);
        assert!(rows > 0);
        assert_eq!(usize::from(view(0).max_scroll(area)), 200 - rows);
        let draw = |scroll| {
            let mut buf = Buffer::empty(area);
            view(scroll).render(area, &mut buf);
            text_of(&buf)
        };
        let top = draw(0);
        assert!(
            top.contains("line-001") && !top.contains("line-200"),
            "{top}"
        );
        assert!(top.contains(&format!("lines 1-{rows} of 200")), "{top}");
        let past_the_end = draw(u16::MAX);
        assert!(past_the_end.contains("line-200"), "{past_the_end}");
        assert!(past_the_end.contains("of 200"), "{past_the_end}");
    }

    #[test]
    fn wide_characters_wrap_inside_the_border_and_escapes_stand_out() {
        let area = Rect::new(0, 0, 40, 24);
        let lines = vec![format!("{}END", "字".repeat(30)), "a\\u{202e}b".to_string()];
        let view = ApprovalView {
            lines: &lines,
            ..Default::default()
        };
        let mut buf = Buffer::empty(area);
        view.clone().render(area, &mut buf);
        let text = text_of(&buf);
        assert!(text.contains("END"), "{text}");
        // The escape's cells are styled apart from the `a` before it.
        let row = (0..area.height)
            .find(|y| (0..area.width).any(|x| buf[(x, *y)].symbol() == "\\"))
            .unwrap_or(0);
        let x = (0..area.width)
            .find(|x| buf[(*x, row)].symbol() == "\\")
            .unwrap_or(0);
        assert_ne!(buf[(x, row)].bg, buf[(x - 1, row)].bg, "{text}");
    }

    #[test]
    fn a_long_or_cut_request_says_so_in_its_title() {
        let area = Rect::new(0, 0, 80, 24);
        let lines: Vec<String> = (0..100).map(|i| format!("l{i}")).collect();
        let draw = |cut| {
            let mut buf = Buffer::empty(area);
            ApprovalView {
                lines: &lines,
                cut,
                ..Default::default()
            }
            .render(area, &mut buf);
            text_of(&buf)
        };
        assert!(draw(None).contains("LONG: 100 rows"), "{}", draw(None));
        let cut = draw(Some("900 lines not shown"));
        assert!(cut.contains("TOO LONG: 900 lines not shown"), "{cut}");
    }

    #[test]
    fn a_long_choice_keeps_its_end_in_the_footer() {
        let area = Rect::new(0, 0, 80, 24);
        let suggestions = vec![format!(
            "addRules allow {} && rm -rf ~ (session)",
            "x".repeat(200)
        )];
        let mut buf = Buffer::empty(area);
        ApprovalView {
            suggestions: &suggestions,
            ..Default::default()
        }
        .render(area, &mut buf);
        let text = text_of(&buf);
        assert!(
            text.contains("rm -rf ~ (session)") && text.contains('⋯'),
            "{text}"
        );
    }

    #[test]
    fn a_deny_only_cli_says_what_y_does() {
        let plain = screen(None);
        assert!(plain.contains(" allow ") && !plain.contains("step aside"));
        let gemini = screen(Some(
            "y lets Gemini ask in its pane, n/m deny before it runs",
        ));
        assert!(gemini.contains("y lets Gemini ask in its pane"), "{gemini}");
        assert!(gemini.contains(" step aside ") && !gemini.contains(" allow "));
    }
}
