//! Draws a vt100 screen into a ratatui buffer area, cell by cell, with optional highlights
//! (copy-mode selection and search matches).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::Widget;

/// A span of cells on one screen row to draw with a highlight style.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Highlight {
    pub row: u16,
    pub start_col: u16,
    /// Exclusive end column.
    pub end_col: u16,
    pub kind: HighlightKind,
}

/// Why a span is highlighted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HighlightKind {
    /// The copy-mode selection.
    Selection,
    /// A search match.
    Match,
    /// The search match the cursor is on.
    CurrentMatch,
}

/// A pane's screen as a widget.
pub struct PaneView<'a> {
    pub screen: &'a vt100::Screen,
    pub highlights: &'a [Highlight],
}

/// Maps a vt100 color to ratatui's.
pub fn color(c: vt100::Color) -> Color {
    match c {
        vt100::Color::Default => Color::Reset,
        vt100::Color::Idx(i) => Color::Indexed(i),
        vt100::Color::Rgb(r, g, b) => Color::Rgb(r, g, b),
    }
}

/// The ratatui style of one vt100 cell.
pub fn cell_style(cell: &vt100::Cell) -> Style {
    let mut modifier = Modifier::empty();
    if cell.bold() {
        modifier |= Modifier::BOLD;
    }
    if cell.dim() {
        modifier |= Modifier::DIM;
    }
    if cell.italic() {
        modifier |= Modifier::ITALIC;
    }
    if cell.underline() {
        modifier |= Modifier::UNDERLINED;
    }
    if cell.inverse() {
        modifier |= Modifier::REVERSED;
    }
    Style {
        fg: Some(color(cell.fgcolor())),
        bg: Some(color(cell.bgcolor())),
        add_modifier: modifier,
        sub_modifier: Modifier::all() - modifier,
        ..Style::default()
    }
}

fn highlight_style(kind: HighlightKind) -> Style {
    match kind {
        HighlightKind::Selection => Style::default().fg(Color::Black).bg(Color::Yellow),
        HighlightKind::Match => Style::default().fg(Color::Black).bg(Color::Cyan),
        HighlightKind::CurrentMatch => Style::default().fg(Color::Black).bg(Color::LightMagenta),
    }
}

impl Widget for PaneView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let (rows, cols) = self.screen.size();
        let rows = area.height.min(rows.get());
        let cols = area.width.min(cols.get());
        for row in 0..rows {
            let mut col = 0;
            while col < cols {
                let Some(cell) = self.screen.cell(row, col) else {
                    break;
                };
                let x = area.x + col;
                let y = area.y + row;
                let width = if cell.is_wide() { 2 } else { 1 };
                if let Some(target) = buf.cell_mut((x, y)) {
                    if cell.is_wide() && col + 1 >= cols {
                        // A wide character cut by the pane edge: show a blank, as tmux does.
                        target.set_symbol(" ");
                    } else if cell.has_contents() {
                        target.set_symbol(cell.contents());
                    } else {
                        target.set_symbol(" ");
                    }
                    target.set_style(cell_style(cell));
                }
                if width == 2 {
                    if let Some(next) = buf.cell_mut((x + 1, y)) {
                        next.set_symbol("");
                        next.set_style(cell_style(cell));
                    }
                }
                col += width;
            }
        }
        for h in self.highlights {
            if h.row >= rows {
                continue;
            }
            for col in h.start_col..h.end_col.min(cols) {
                if let Some(target) = buf.cell_mut((area.x + col, area.y + h.row)) {
                    target.set_style(highlight_style(h.kind));
                }
            }
        }
    }
}
