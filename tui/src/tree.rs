//! The session and window chooser (`prefix s` / `prefix w`, tmux's choose-tree): every session
//! with its windows beneath, what each window's agents are doing, and the row the keyboard is
//! on, and below the list a preview of the selected row's pane (its window's focused pane, as
//! tmux's choose-tree shows one). Built by the server from its state; this widget draws the
//! list and the preview's box, and says where the box's inside is for the server to draw the
//! pane's screen in, cropped to it.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph, Widget};
use unicode_width::UnicodeWidthStr;

use crate::help::centered;
use crate::sidebar::RowState;

/// One row: a session, or one of its windows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeRow {
    /// A window row (indented under its session) rather than a session row.
    pub window: bool,
    /// "work" for a session, "2: vim" for a window.
    pub label: String,
    /// "3 windows", "2 panes".
    pub detail: String,
    /// The session this client shows, or the window its session shows.
    pub current: bool,
    /// Clients attached to a session (0 for windows).
    pub attached: usize,
    /// How many agents are in each state, in the order drawn (blocked first).
    pub agents: Vec<(RowState, usize)>,
    /// The pane previewed while this row is selected (a session's or window's focused pane).
    pub preview: Option<u32>,
}

/// The smallest preview box (border included) worth drawing; with less room the chooser is
/// the list alone.
const PREVIEW_MIN_ROWS: u16 = 5;

/// The chooser over `rows`, with the keyboard on `selected`.
#[derive(Debug, Clone)]
pub struct TreeView<'a> {
    pub rows: &'a [TreeRow],
    pub selected: usize,
}

impl TreeView<'_> {
    fn line(row: &TreeRow, selected: bool, width: usize) -> Line<'static> {
        let mut spans = Vec::new();
        let marker = match (row.window, row.current) {
            (_, true) => "* ",
            _ => "  ",
        };
        let indent = if row.window { "    " } else { "" };
        let label_style = if row.window {
            Style::default()
        } else {
            Style::default().add_modifier(Modifier::BOLD)
        };
        spans.push(Span::raw(format!("{indent}{marker}")));
        spans.push(Span::styled(row.label.clone(), label_style));
        spans.push(Span::styled(
            format!("  {}", row.detail),
            Style::default().fg(Color::DarkGray),
        ));
        if row.attached > 0 {
            spans.push(Span::styled(
                "  (attached)".to_string(),
                Style::default().fg(Color::Cyan),
            ));
        }
        for (state, n) in &row.agents {
            let (glyph, style) = state.glyph();
            spans.push(Span::raw("  "));
            spans.push(Span::styled(format!("{glyph}{n}"), style));
        }
        if selected {
            // The whole row reversed, to its end: easy to find on any terminal.
            let used: usize = spans.iter().map(|s| s.content.width()).sum();
            spans.push(Span::raw(" ".repeat(width.saturating_sub(used))));
            for s in &mut spans {
                s.style = s.style.add_modifier(Modifier::REVERSED);
            }
        }
        Line::from(spans)
    }
}

impl TreeView<'_> {
    /// The list's box and, when the selected row has a pane and `area` has room, the preview's
    /// box under it: both as wide as `area` allows (tmux's chooser takes the whole window).
    fn boxes(&self, area: Rect) -> (Rect, Option<Rect>) {
        let height = (self.rows.len() as u16).saturating_add(2).max(3);
        let pane = self.rows.get(self.selected).and_then(|r| r.preview);
        let list_rows = height.min(area.height / 2);
        let preview_rows = area.height.saturating_sub(list_rows).saturating_sub(2);
        if pane.is_none() || preview_rows < PREVIEW_MIN_ROWS || list_rows < 3 {
            return (centered(area, 72, height), None);
        }
        let width = area.width.saturating_sub(4).max(72.min(area.width));
        let x = area.x + (area.width - width) / 2;
        let list = Rect::new(x, area.y + 1, width, list_rows);
        let preview = Rect::new(x, list.bottom(), width, preview_rows);
        (list, Some(preview))
    }

    /// The selected row's pane and the cells inside the preview's box to draw its screen in
    /// (top-left aligned, cropped), when a preview is shown in `area`.
    pub fn preview_area(&self, area: Rect) -> Option<(u32, Rect)> {
        let pane = self.rows.get(self.selected).and_then(|r| r.preview)?;
        let (_, preview) = self.boxes(area);
        let inner = Block::default().borders(Borders::ALL).inner(preview?);
        Some((pane, inner))
    }
}

impl Widget for TreeView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let (popup, preview) = self.boxes(area);
        if let (Some(preview), Some(row)) = (preview, self.rows.get(self.selected)) {
            Clear.render(preview, buf);
            Block::default()
                .borders(Borders::ALL)
                .border_type(BorderType::Rounded)
                .title(format!(" {} ", row.label))
                .render(preview, buf);
        }
        let inner_rows = popup.height.saturating_sub(2) as usize;
        let inner_width = popup.width.saturating_sub(2) as usize;
        // Scrolled so the selected row is always inside.
        let top = self.selected.saturating_sub(inner_rows.saturating_sub(1));
        let lines: Vec<Line> = self
            .rows
            .iter()
            .enumerate()
            .skip(top)
            .take(inner_rows)
            .map(|(i, row)| Self::line(row, i == self.selected, inner_width))
            .collect();
        Clear.render(popup, buf);
        Paragraph::new(lines)
            .block(
                Block::default()
                    .borders(Borders::ALL)
                    .border_type(BorderType::Rounded)
                    .title(" sessions and windows ")
                    .title_bottom(
                        Line::from(" ↑↓ choose, →← windows, Enter switch, x kill, q/Esc close ")
                            .right_aligned(),
                    ),
            )
            .render(popup, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(rows: &[TreeRow], selected: usize, w: u16, h: u16) -> (String, Buffer) {
        let area = Rect::new(0, 0, w, h);
        let mut buf = Buffer::empty(area);
        TreeView { rows, selected }.render(area, &mut buf);
        let mut out = String::new();
        for y in 0..h {
            let mut line = String::new();
            for x in 0..w {
                line.push_str(buf[(x, y)].symbol());
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        (out, buf)
    }

    fn session(name: &str, windows: usize, current: bool, attached: usize) -> TreeRow {
        TreeRow {
            window: false,
            label: name.into(),
            detail: format!("{windows} window{}", if windows == 1 { "" } else { "s" }),
            current,
            attached,
            agents: Vec::new(),
            preview: None,
        }
    }

    fn window(label: &str, current: bool, agents: Vec<(RowState, usize)>) -> TreeRow {
        TreeRow {
            window: true,
            label: label.into(),
            detail: "2 panes".into(),
            current,
            attached: 0,
            agents,
            preview: None,
        }
    }

    fn sample() -> Vec<TreeRow> {
        vec![
            session("api", 2, true, 1),
            window(
                "0: claude",
                true,
                vec![(RowState::Blocked, 1), (RowState::Working, 1)],
            ),
            window("1: logs", false, vec![]),
            session("docs", 1, false, 0),
            window("0: codex", true, vec![(RowState::Idle, 1)]),
        ]
    }

    #[test]
    fn sessions_with_their_windows_and_agent_counts() {
        let (screen, buf) = text(&sample(), 3, 80, 9);
        insta::assert_snapshot!(screen);
        // The selected row is reversed to the popup's edge; the others are not.
        let row_of = |needle: &str| {
            screen
                .lines()
                .position(|l| l.contains(needle))
                .unwrap_or_else(|| panic!("{needle} not drawn:\n{screen}")) as u16
        };
        let docs = row_of("docs");
        let api = row_of("api");
        assert!(buf[(40, docs)].modifier.contains(Modifier::REVERSED));
        assert!(!buf[(40, api)].modifier.contains(Modifier::REVERSED));
        // The blocked count is drawn loud.
        let claude = screen.lines().nth(row_of("claude") as usize).unwrap_or("");
        let x = claude.find("!1").map(|b| claude[..b].width() as u16);
        let blocked = x.map(|x| buf[(x, row_of("claude"))].fg);
        assert_eq!(blocked, Some(Color::LightRed));
    }

    #[test]
    fn a_row_with_a_pane_gets_a_preview_box_under_the_list() {
        let mut rows = sample();
        rows[3].preview = Some(7);
        let view = TreeView {
            rows: &rows,
            selected: 3,
        };
        let area = Rect::new(0, 0, 100, 30);
        let (pane, inner) = view.preview_area(area).expect("a preview");
        assert_eq!(pane, 7);
        let (screen, _) = text(&rows, 3, 100, 30);
        let lines: Vec<&str> = screen.lines().collect();
        // The box is titled with the row, and its inside starts under the list's last row.
        let list_end = lines.iter().rposition(|l| l.contains("codex")).unwrap_or(0);
        assert!(lines[inner.y as usize - 1].contains(" docs "), "{screen}");
        assert!(inner.y as usize > list_end, "{screen}");
        assert!(inner.height >= PREVIEW_MIN_ROWS - 2 && inner.width > 72);
        // No room, or no pane: no preview.
        assert!(view.preview_area(Rect::new(0, 0, 100, 12)).is_none());
        let none = TreeView {
            rows: &rows,
            selected: 2,
        };
        assert!(none.preview_area(area).is_none());
    }

    #[test]
    fn a_selection_below_the_fold_scrolls_into_view() {
        let rows: Vec<TreeRow> = (0..20)
            .map(|i| session(&format!("s{i:02}"), 1, false, 0))
            .collect();
        let (screen, _) = text(&rows, 17, 60, 8);
        assert!(screen.contains("s17"), "{screen}");
        assert!(!screen.contains("s00"), "{screen}");
    }
}
