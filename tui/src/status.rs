//! The status line: session, windows, focused pane, agent counts, mode and messages.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

/// One window tab on the status line.
#[derive(Debug, Clone)]
pub struct WindowTab<'a> {
    pub index: usize,
    pub name: &'a str,
    pub active: bool,
    /// A pane in this window rang the bell while the window was not active.
    pub bell: bool,
}

/// What the status line shows.
#[derive(Debug, Clone, Default)]
pub struct StatusView<'a> {
    pub session: &'a str,
    pub windows: Vec<WindowTab<'a>>,
    /// The focused pane's label (title or command).
    pub pane: &'a str,
    /// A mode badge: "PREFIX", "COPY", "HELP".
    pub mode: Option<&'a str>,
    /// Agents waiting for the human and agents working.
    pub blocked: usize,
    pub working: usize,
    /// Tool calls waiting for approval.
    pub approvals: usize,
    /// A transient message ("copied 120 bytes", config errors).
    pub message: Option<&'a str>,
    /// An open prompt: (label, text typed so far).
    pub prompt: Option<(&'a str, &'a str)>,
}

impl Widget for StatusView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let base = Style::default().bg(Color::Indexed(236)).fg(Color::Gray);
        buf.set_style(area, base);
        if let Some((label, text)) = self.prompt {
            let line = Line::from(vec![
                Span::styled(format!("{label} "), base.fg(Color::Yellow)),
                Span::styled(text.to_string(), base.fg(Color::White)),
                Span::styled(" ", base.add_modifier(Modifier::REVERSED)),
            ]);
            buf.set_line(area.x, area.y, &line, area.width);
            return;
        }
        if let Some(message) = self.message {
            // Like tmux's display-message: the message takes the whole line until it expires.
            let style = Style::default().bg(Color::Yellow).fg(Color::Black);
            buf.set_style(area, style);
            buf.set_line(
                area.x,
                area.y,
                &Line::from(Span::styled(format!(" {message}"), style)),
                area.width,
            );
            return;
        }
        let mut spans = vec![Span::styled(
            format!(" [{}] ", self.session),
            base.fg(Color::Black).bg(Color::Green),
        )];
        if let Some(mode) = self.mode {
            spans.push(Span::styled(
                format!(" {mode} "),
                base.fg(Color::Black).bg(Color::Yellow),
            ));
        }
        spans.push(Span::styled(" ", base));
        for tab in &self.windows {
            let style = if tab.active {
                base.fg(Color::White).add_modifier(Modifier::BOLD)
            } else if tab.bell {
                base.fg(Color::Red)
            } else {
                base
            };
            let marker = if tab.active {
                "*"
            } else if tab.bell {
                "!"
            } else {
                ""
            };
            spans.push(Span::styled(
                format!("{}:{}{} ", tab.index, tab.name, marker),
                style,
            ));
        }
        let left = Line::from(spans);
        buf.set_line(area.x, area.y, &left, area.width);

        let mut right: Vec<Span> = Vec::new();
        if self.approvals > 0 {
            right.push(Span::styled(
                format!(
                    " {} approval{} (prefix i) ",
                    self.approvals,
                    if self.approvals == 1 { "" } else { "s" }
                ),
                base.fg(Color::Black)
                    .bg(Color::LightRed)
                    .add_modifier(Modifier::BOLD),
            ));
        }
        if self.blocked > 0 {
            right.push(Span::styled(
                format!(" {} blocked ", self.blocked),
                base.fg(Color::White)
                    .bg(Color::Red)
                    .add_modifier(Modifier::BOLD),
            ));
        }
        if self.working > 0 {
            right.push(Span::styled(
                format!(" {} working ", self.working),
                base.fg(Color::Yellow),
            ));
        }
        right.push(Span::styled(
            format!(" {} ", self.pane),
            base.fg(Color::Cyan),
        ));
        let right = Line::from(right);
        let width = right.width() as u16;
        if width < area.width.saturating_sub(left.width() as u16) {
            buf.set_line(area.x + area.width - width, area.y, &right, width);
        }
    }
}
