//! Draws a vt100 screen into a ratatui buffer area, cell by cell, with optional highlights
//! (copy-mode selection and search matches).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::Widget;

use crate::links::FrameLinks;

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
    if cell.strikethrough() {
        modifier |= Modifier::CROSSED_OUT;
    }
    Style {
        fg: Some(color(cell.fgcolor())),
        bg: Some(color(cell.bgcolor())),
        add_modifier: modifier,
        sub_modifier: Modifier::all() - modifier,
        ..Style::default()
    }
}

/// Sets a buffer cell to a symbol and a full style (`cell_style` sets every field), skipping the
/// symbol when it is already there (blank cells of a fresh buffer are).
fn paint(target: &mut ratatui::buffer::Cell, symbol: &str, style: Style) {
    if target.symbol() != symbol {
        target.set_symbol(symbol);
    }
    target.set_style(style);
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
        self.draw(area, buf, None, None);
    }
}

impl PaneView<'_> {
    /// Renders like the `Widget` impl, and also records the screen's OSC 8 hyperlinks in
    /// `links` (frame coordinates), which ratatui cells cannot hold.
    pub fn render_with_links(self, area: Rect, buf: &mut Buffer, links: &mut FrameLinks) {
        self.draw(area, buf, Some(links), None);
    }

    /// Draws only the screen rows whose entry in `redraw` is true (rows past its end are
    /// drawn too), leaving the others' cells in `buf` as they are: a renderer that copied the
    /// unchanged rows from its last frame draws just the changed ones.
    pub fn render_rows(
        self,
        area: Rect,
        buf: &mut Buffer,
        links: Option<&mut FrameLinks>,
        redraw: &[bool],
    ) {
        self.draw(area, buf, links, Some(redraw));
    }

    fn draw(
        self,
        area: Rect,
        buf: &mut Buffer,
        mut links: Option<&mut FrameLinks>,
        redraw: Option<&[bool]>,
    ) {
        // This runs for every cell of every pane on every frame, on the path of each keystroke's
        // echo: it reads a whole screen row and writes a whole buffer row slice at a time, and
        // writes a symbol only when the cell does not already show it.
        let frame = buf.area;
        let area = area.intersection(frame);
        let (rows, cols) = self.screen.size();
        let rows = area.height.min(rows.get());
        let cols = area.width.min(cols.get());
        // Screen link index -> frame link handle, filled as links are met (0: unsafe, none).
        let mut handles: Vec<(u16, u16)> = Vec::new();
        for row in 0..rows {
            if redraw.is_some_and(|r| r.get(usize::from(row)) == Some(&false)) {
                continue;
            }
            let Some(cells) = self.screen.row_cells(row) else {
                break;
            };
            let cells = &cells[..cells.len().min(usize::from(cols))];
            let y = area.y + row;
            let start =
                usize::from(y - frame.y) * usize::from(frame.width) + usize::from(area.x - frame.x);
            let Some(targets) = buf.content.get_mut(start..start + usize::from(cols)) else {
                break;
            };
            let mut col = 0usize;
            while let Some(cell) = cells.get(col) {
                let wide = cell.is_wide();
                let style = cell_style(cell);
                let symbol = if wide && col + 1 >= usize::from(cols) {
                    // A wide character cut by the pane edge: show a blank, as tmux does.
                    " "
                } else if cell.has_contents() {
                    cell.contents()
                } else {
                    " "
                };
                if let Some(target) = targets.get_mut(col) {
                    paint(target, symbol, style);
                }
                if wide {
                    if let Some(next) = targets.get_mut(col + 1) {
                        paint(next, "", style);
                    }
                }
                if cell.link() != 0 {
                    if let Some(links) = links.as_deref_mut() {
                        let handle = match handles.iter().find(|(i, _)| *i == cell.link()) {
                            Some((_, h)) => *h,
                            None => {
                                let h = self
                                    .screen
                                    .link(cell.link())
                                    .and_then(|l| links.add(l.uri(), l.id()))
                                    .unwrap_or(0);
                                handles.push((cell.link(), h));
                                h
                            }
                        };
                        if handle != 0 {
                            let x = area.x + col as u16;
                            links.set(x, y, handle);
                            if wide {
                                links.set(x + 1, y, handle);
                            }
                        }
                    }
                }
                col += if wide { 2 } else { 1 };
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
