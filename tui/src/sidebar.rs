//! The agents sidebar: one entry per agent pane, most urgent first, with running subagents
//! indented beneath. A plain widget over borrowed view data built by the server, so it knows
//! nothing about hooks or the state machine (this crate depends on neither).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::Widget;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// An agent's state as the sidebar draws it (mirrors the server's state, kept local so this
/// crate stays independent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowState {
    /// In a turn.
    Working,
    /// Waiting for approval: drawn loudest.
    Blocked,
    /// Waiting for a prompt.
    Idle,
    /// Session over.
    Done,
    /// No trustworthy signal.
    Unknown,
}

impl RowState {
    /// The glyph and its style: shape and color both carry the state, so it reads on
    /// monochrome terminals too.
    pub fn glyph(self) -> (&'static str, Style) {
        match self {
            RowState::Blocked => (
                "!",
                Style::default()
                    .fg(Color::LightRed)
                    .add_modifier(Modifier::BOLD),
            ),
            RowState::Working => ("◐", Style::default().fg(Color::Yellow)),
            RowState::Idle => ("○", Style::default().fg(Color::Green)),
            RowState::Done => (
                "✓",
                Style::default()
                    .fg(Color::DarkGray)
                    .add_modifier(Modifier::DIM),
            ),
            RowState::Unknown => ("?", Style::default().fg(Color::Gray)),
        }
    }
}

/// A running subagent under its parent row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubagentLine {
    /// Its type or role ("general-purpose").
    pub agent_type: String,
    /// Its last tool, empty when none yet.
    pub last_tool: String,
    /// How long it has run ("40s").
    pub elapsed_text: String,
}

/// One agent pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SidebarRow {
    /// How the pane is addressed ("1.2", "%3").
    pub pane_label: String,
    /// The CLI's name ("Claude Code").
    pub agent_name: String,
    /// The pane's title.
    pub title: String,
    /// The last component of the agent's cwd.
    pub cwd_name: String,
    /// Its state.
    pub state: RowState,
    /// Time in that state ("12s", "3m").
    pub since_text: String,
    /// Running subagents.
    pub subagents: Vec<SubagentLine>,
}

/// What the sidebar shows: rows (already sorted by urgency), the selection, and whether the
/// sidebar has keyboard focus (the selection is only highlighted strongly when it does).
#[derive(Debug, Clone, Copy)]
pub struct SidebarView<'a> {
    /// Rows to draw, in order.
    pub rows: &'a [SidebarRow],
    /// Index of the selected row.
    pub selected: Option<usize>,
    /// Whether keyboard input goes to the sidebar.
    pub focused: bool,
}

/// Lines one row occupies: the headline, the pane/cwd line, one per subagent.
fn row_height(row: &SidebarRow) -> u16 {
    let n = 2usize.saturating_add(row.subagents.len());
    u16::try_from(n).unwrap_or(u16::MAX)
}

/// Cuts `s` to at most `max` display columns, ending in `…` when something was cut.
pub fn truncate(s: &str, max: usize) -> String {
    if s.width() <= max {
        return s.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > max.saturating_sub(1) {
            break;
        }
        used += w;
        out.push(c);
    }
    out.push('…');
    out
}

impl SidebarView<'_> {
    /// The first row to draw so the selected row is fully visible in `height` lines.
    fn first_visible(&self, height: u16) -> usize {
        let Some(sel) = self.selected.filter(|s| *s < self.rows.len()) else {
            return 0;
        };
        let mut first = 0;
        loop {
            let used: u32 = self.rows[first..=sel]
                .iter()
                .map(|r| u32::from(row_height(r)))
                .sum();
            if used <= u32::from(height) || first == sel {
                return first;
            }
            first += 1;
        }
    }
}

impl Widget for SidebarView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        if area.width == 0 || area.height == 0 {
            return;
        }
        let width = usize::from(area.width);
        let dim = Style::default().fg(Color::DarkGray);
        if self.rows.is_empty() {
            buf.set_stringn(area.x, area.y, "no agents", width, dim);
            return;
        }
        let bottom = area.y.saturating_add(area.height);
        let mut y = area.y;
        let first = self.first_visible(area.height);
        for (i, row) in self.rows.iter().enumerate().skip(first) {
            if y >= bottom {
                break;
            }
            let selected = self.selected == Some(i);
            let base = match (selected, self.focused) {
                (true, true) => Style::default().add_modifier(Modifier::REVERSED),
                (true, false) => Style::default().add_modifier(Modifier::BOLD),
                _ => Style::default(),
            };
            if selected {
                let h = row_height(row).min(bottom - y);
                buf.set_style(Rect::new(area.x, y, area.width, h), base);
            }
            draw_headline(buf, area.x, y, width, row, base);
            y += 1;
            if y >= bottom {
                break;
            }
            let detail = match (row.pane_label.is_empty(), row.cwd_name.is_empty()) {
                (false, false) => format!("  {} · {}", row.pane_label, row.cwd_name),
                (false, true) => format!("  {}", row.pane_label),
                (true, false) => format!("  {}", row.cwd_name),
                (true, true) => String::new(),
            };
            buf.set_stringn(area.x, y, truncate(&detail, width), width, base.patch(dim));
            y += 1;
            for sub in &row.subagents {
                if y >= bottom {
                    break;
                }
                draw_subagent(buf, area.x, y, width, sub, base);
                y += 1;
            }
        }
    }
}

/// `G agent title ... since`: glyph, CLI name, pane title, time in state right-aligned.
fn draw_headline(buf: &mut Buffer, x: u16, y: u16, width: usize, row: &SidebarRow, base: Style) {
    let (glyph, glyph_style) = row.state.glyph();
    let since = &row.since_text;
    let right = since.width();
    // glyph + space, then text, then a space before the right-aligned time; the time is
    // dropped first when the column is too narrow for both.
    let show_since = right > 0 && width >= right + 8;
    let text_room = width.saturating_sub(2 + if show_since { right + 1 } else { 0 });
    let text = if row.title.is_empty() {
        row.agent_name.clone()
    } else {
        format!("{} {}", row.agent_name, row.title)
    };
    let text = truncate(&text, text_room);
    buf.set_stringn(x, y, glyph, width, base.patch(glyph_style));
    let text_x = x.saturating_add(2);
    buf.set_stringn(text_x, y, &text, text_room, base);
    // Bold the CLI name, or as much of it as survived truncation.
    let name_cols = row.agent_name.width().min(text.width());
    let name_cols = u16::try_from(name_cols).unwrap_or(0);
    buf.set_style(
        Rect::new(text_x, y, name_cols, 1).intersection(buf.area),
        Style::default().add_modifier(Modifier::BOLD),
    );
    if show_since {
        let rx = x.saturating_add(u16::try_from(width - right).unwrap_or(0));
        let since_style = if row.state == RowState::Blocked {
            row.state.glyph().1
        } else {
            Style::default().fg(Color::DarkGray)
        };
        buf.set_stringn(rx, y, since, right, base.patch(since_style));
    }
}

/// `  └ type tool  elapsed`, indented under the parent.
fn draw_subagent(buf: &mut Buffer, x: u16, y: u16, width: usize, sub: &SubagentLine, base: Style) {
    let right = sub.elapsed_text.width();
    let room = width.saturating_sub(right + 1);
    let text = if sub.last_tool.is_empty() {
        format!("  └ {}", sub.agent_type)
    } else {
        format!("  └ {} {}", sub.agent_type, sub.last_tool)
    };
    buf.set_stringn(
        x,
        y,
        truncate(&text, room),
        room,
        base.patch(Style::default().fg(Color::Cyan)),
    );
    if right > 0 && width >= right + 6 {
        let rx = x.saturating_add(u16::try_from(width - right).unwrap_or(0));
        buf.set_stringn(
            rx,
            y,
            &sub.elapsed_text,
            right,
            base.patch(Style::default().fg(Color::DarkGray)),
        );
    }
}

#[cfg(test)]
mod tests;
