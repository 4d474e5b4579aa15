//! The status line: session, windows, focused pane, agent counts, mode and messages.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

/// One window tab on the status line.
#[derive(Debug, Clone, Default)]
pub struct WindowTab<'a> {
    pub index: usize,
    pub name: &'a str,
    pub active: bool,
    /// A pane in this window rang the bell while the window was not active.
    pub bell: bool,
    /// The window shown before the active one (where `prefix l` goes).
    pub last: bool,
    /// Its focused pane is zoomed.
    pub zoomed: bool,
}

impl WindowTab<'_> {
    /// tmux's flags, in tmux's order: `*` active or `-` last, `!` bell, `Z` zoomed.
    fn flags(&self) -> String {
        let mut flags = String::new();
        if self.active {
            flags.push('*');
        } else if self.last {
            flags.push('-');
        }
        if self.bell && !self.active {
            flags.push('!');
        }
        if self.zoomed {
            flags.push('Z');
        }
        flags
    }

    fn text(&self) -> String {
        format!("{}:{}{} ", self.index, self.name, self.flags())
    }
}

/// The tabs `lo..=hi` to show in `budget` columns: all of them when they fit, else a run that
/// keeps the active one, growing to the right first (`<` and `>` mark the hidden sides).
fn visible_tabs(widths: &[usize], active: usize, budget: usize) -> (usize, usize) {
    let n = widths.len();
    if n == 0 || widths.iter().sum::<usize>() <= budget {
        return (0, n.saturating_sub(1));
    }
    let active = active.min(n - 1);
    let (mut lo, mut hi) = (active, active);
    let cost = |lo: usize, hi: usize| {
        let markers = usize::from(lo > 0) * 2 + usize::from(hi + 1 < n) * 2;
        widths[lo..=hi].iter().sum::<usize>() + markers
    };
    loop {
        let grown = if hi + 1 < n && cost(lo, hi + 1) <= budget {
            hi += 1;
            true
        } else {
            false
        };
        let grown_left = if lo > 0 && cost(lo - 1, hi) <= budget {
            lo -= 1;
            true
        } else {
            false
        };
        if !grown && !grown_left {
            return (lo, hi);
        }
    }
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
        let right = self.right_side(base);
        let width = usize::from(area.width);
        let prefix: usize = spans.iter().map(|s| s.width()).sum();
        let texts: Vec<String> = self.windows.iter().map(WindowTab::text).collect();
        let widths: Vec<usize> = texts
            .iter()
            .map(|t| Line::from(t.as_str()).width())
            .collect();
        let active = self.windows.iter().position(|t| t.active).unwrap_or(0);
        // The right side (agents, the pane) gives way when the active tab would not fit.
        let need = widths.get(active).copied().unwrap_or(0) + 4;
        let right_fits = width >= prefix + right.width() + need;
        let budget = width.saturating_sub(prefix + if right_fits { right.width() } else { 0 });
        let (lo, hi) = visible_tabs(&widths, active, budget);
        if lo > 0 {
            spans.push(Span::styled("< ", base.fg(Color::DarkGray)));
        }
        for (tab, text) in self.windows.iter().zip(&texts).skip(lo).take(hi + 1 - lo) {
            let style = if tab.active {
                base.fg(Color::White).add_modifier(Modifier::BOLD)
            } else if tab.bell {
                base.fg(Color::Red)
            } else {
                base
            };
            spans.push(Span::styled(text.clone(), style));
        }
        if hi + 1 < self.windows.len() {
            spans.push(Span::styled("> ", base.fg(Color::DarkGray)));
        }
        let left = Line::from(spans);
        buf.set_line(area.x, area.y, &left, area.width);
        let right_width = right.width() as u16;
        if right_fits && right_width <= area.width.saturating_sub(left.width() as u16) {
            buf.set_line(
                area.x + area.width - right_width,
                area.y,
                &right,
                right_width,
            );
        }
    }
}

impl StatusView<'_> {
    /// Approvals, agent counts and the focused pane's label, drawn at the right end.
    fn right_side(&self, base: Style) -> Line<'static> {
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
        Line::from(right)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(view: StatusView<'_>, width: u16) -> String {
        let area = Rect::new(0, 0, width, 1);
        let mut buf = Buffer::empty(area);
        view.render(area, &mut buf);
        (0..width)
            .map(|x| buf[(x, 0)].symbol().to_string())
            .collect::<String>()
    }

    #[test]
    fn tabs_carry_tmux_flags() {
        let windows = vec![
            WindowTab {
                index: 0,
                name: "sh",
                last: true,
                ..Default::default()
            },
            WindowTab {
                index: 1,
                name: "vim",
                active: true,
                zoomed: true,
                ..Default::default()
            },
            WindowTab {
                index: 2,
                name: "logs",
                bell: true,
                ..Default::default()
            },
        ];
        let text = line(
            StatusView {
                session: "s",
                windows,
                pane: "%1 vim",
                ..Default::default()
            },
            80,
        );
        assert!(text.contains("0:sh- 1:vim*Z 2:logs!"), "{text}");
        assert!(text.trim_end().ends_with("%1 vim"), "{text}");
        let windows = vec![WindowTab {
            index: 0,
            name: "sh",
            last: true,
            bell: true,
            zoomed: true,
            ..Default::default()
        }];
        let text = line(
            StatusView {
                session: "s",
                windows,
                ..Default::default()
            },
            40,
        );
        assert!(text.contains("0:sh-!Z"), "{text}");
    }

    /// Tabs named `names`, the one at `active` active.
    fn tabs(names: &[String], active: usize) -> Vec<WindowTab<'_>> {
        names
            .iter()
            .enumerate()
            .map(|(i, n)| WindowTab {
                index: i,
                name: n,
                active: i == active,
                ..Default::default()
            })
            .collect()
    }

    #[test]
    fn the_active_tab_stays_visible_when_the_tabs_do_not_fit() {
        let names: Vec<String> = (0..16).map(|i| format!("longwindowname{i}")).collect();
        let text = line(
            StatusView {
                session: "other",
                windows: tabs(&names, 15),
                pane: "%9 sh",
                ..Default::default()
            },
            100,
        );
        assert!(text.contains("15:longwindowname15*"), "{text}");
        assert!(text.contains("< "), "{text}");
        assert!(!text.contains("0:longwindowname0 "), "{text}");
        assert!(text.trim_end().ends_with("%9 sh"), "{text}");
        // In the middle: hidden tabs on both sides.
        let names: Vec<String> = (0..16).map(|i| format!("w{i:02}-abcdefgh")).collect();
        let text = line(
            StatusView {
                session: "s",
                windows: tabs(&names, 8),
                ..Default::default()
            },
            60,
        );
        assert!(
            text.contains("8:w08-abcdefgh*") && text.contains("< ") && text.contains("> "),
            "{text}"
        );
    }
}
