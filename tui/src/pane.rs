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

/// Draws one screen row's `cells` (at most `cols` of them) into `targets`, the frame cells the
/// row covers; `link` gets the column, wideness and link index of each cell with a hyperlink.
/// Shared by `PaneView` and `CopiedRows` (which draws rows copied out of a locked screen).
pub(crate) fn paint_row(
    cells: &[vt100::Cell],
    cols: usize,
    targets: &mut [ratatui::buffer::Cell],
    mut link: impl FnMut(usize, bool, u16),
) {
    let mut col = 0usize;
    while let Some(cell) = cells.get(col) {
        let wide = cell.is_wide();
        let style = cell_style(cell);
        let symbol = if wide && col + 1 >= cols {
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
            link(col, wide, cell.link());
        }
        col += if wide { 2 } else { 1 };
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
            paint_row(cells, usize::from(cols), targets, |col, wide, index| {
                let Some(links) = links.as_deref_mut() else {
                    return;
                };
                let handle = match handles.iter().find(|(i, _)| *i == index) {
                    Some((_, h)) => *h,
                    None => {
                        let h = self
                            .screen
                            .link(index)
                            .and_then(|l| links.add(l.uri(), l.id()))
                            .unwrap_or(0);
                        handles.push((index, h));
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
            });
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

#[cfg(test)]
mod tests {
    //! Buffer tests in the style of ratatui's own widgets: the expected buffer is written out
    //! with `Buffer::with_lines` (plus the styles the widget must set) and compared whole.

    use super::*;
    use std::num::NonZeroU16;

    /// A screen of `rows` x `cols` that was sent `bytes`.
    fn screen(rows: u16, cols: u16, bytes: &[u8]) -> vt100::Parser {
        let nz = |n: u16| NonZeroU16::new(n).unwrap_or(NonZeroU16::MIN);
        let mut parser = vt100::Parser::new(nz(rows), nz(cols), 0);
        parser.process(bytes);
        parser
    }

    /// Renders `parser`'s screen into `area` of `buf` with `highlights`.
    fn render(parser: &vt100::Parser, highlights: &[Highlight], area: Rect, buf: &mut Buffer) {
        PaneView {
            screen: parser.screen(),
            highlights,
        }
        .render(area, buf);
    }

    #[test]
    fn plain_text_replaces_what_the_buffer_held() {
        let parser = screen(2, 6, b"hi\r\nyo");
        let area = Rect::new(0, 0, 6, 2);
        // A previous frame's styled text must go entirely: symbols, colors and attributes.
        let mut buf = Buffer::with_lines(["XXXXXX", "XXXXXX"]);
        buf.set_style(
            area,
            Style::new()
                .fg(Color::Red)
                .bg(Color::Blue)
                .add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
        );
        render(&parser, &[], area, &mut buf);
        assert_eq!(buf, Buffer::with_lines(["hi    ", "yo    "]));
    }

    #[test]
    fn draws_at_the_area_offset_and_clips_the_screen_to_the_area() {
        let parser = screen(3, 10, b"0123456789abc\r\nxyz");
        let mut buf = Buffer::empty(Rect::new(0, 0, 8, 4));
        render(&parser, &[], Rect::new(1, 1, 6, 2), &mut buf);
        #[rustfmt::skip]
        let expected = Buffer::with_lines([
            "        ",
            " 012345 ",
            " abc    ",
            "        ",
        ]);
        assert_eq!(buf, expected);
    }

    #[test]
    fn colors_and_attributes_become_cell_styles() {
        let parser = screen(
            1,
            6,
            b"\x1b[1;31mB\x1b[0m\x1b[3;44mI\x1b[0m\x1b[4;38;2;1;2;3mU\x1b[0m\
              \x1b[2;9mS\x1b[0m\x1b[7mR\x1b[0m",
        );
        let area = Rect::new(0, 0, 6, 1);
        let mut buf = Buffer::empty(area);
        render(&parser, &[], area, &mut buf);
        let mut expected = Buffer::with_lines(["BIUSR "]);
        let cell = |x| Rect::new(x, 0, 1, 1);
        expected.set_style(
            cell(0),
            Style::new()
                .fg(Color::Indexed(1))
                .add_modifier(Modifier::BOLD),
        );
        expected.set_style(
            cell(1),
            Style::new()
                .bg(Color::Indexed(4))
                .add_modifier(Modifier::ITALIC),
        );
        expected.set_style(
            cell(2),
            Style::new()
                .fg(Color::Rgb(1, 2, 3))
                .add_modifier(Modifier::UNDERLINED),
        );
        expected.set_style(
            cell(3),
            Style::new().add_modifier(Modifier::DIM | Modifier::CROSSED_OUT),
        );
        expected.set_style(cell(4), Style::new().add_modifier(Modifier::REVERSED));
        assert_eq!(buf, expected);
    }

    #[test]
    fn a_wide_character_takes_two_cells() {
        let parser = screen(1, 4, "ab中".as_bytes());
        let area = Rect::new(0, 0, 4, 1);
        let mut buf = Buffer::empty(area);
        render(&parser, &[], area, &mut buf);
        let mut expected = Buffer::with_lines(["ab中"]);
        // The cell the wide character covers is left empty, as ratatui's own diff expects.
        expected[(3, 0)].set_symbol("");
        assert_eq!(buf, expected);
    }

    #[test]
    fn a_wide_character_cut_by_the_area_edge_shows_a_blank() {
        let parser = screen(1, 4, "ab中".as_bytes());
        let area = Rect::new(0, 0, 3, 1);
        let mut buf = Buffer::with_lines(["XXX"]);
        render(&parser, &[], area, &mut buf);
        assert_eq!(buf, Buffer::with_lines(["ab "]));
    }

    #[test]
    fn highlights_restyle_their_cells_clipped_to_the_screen() {
        let parser = screen(2, 6, b"hello\r\n\x1b[1mworld");
        // The area is larger than the screen: highlights stop at the screen's edges.
        let area = Rect::new(0, 0, 8, 3);
        let mut buf = Buffer::empty(area);
        let highlights = [
            Highlight {
                row: 0,
                start_col: 1,
                end_col: 3,
                kind: HighlightKind::Selection,
            },
            Highlight {
                row: 1,
                start_col: 4,
                end_col: 99,
                kind: HighlightKind::CurrentMatch,
            },
            Highlight {
                row: 0,
                start_col: 4,
                end_col: 5,
                kind: HighlightKind::Match,
            },
            // Past the screen: ignored.
            Highlight {
                row: 2,
                start_col: 0,
                end_col: 6,
                kind: HighlightKind::Selection,
            },
        ];
        render(&parser, &highlights, area, &mut buf);
        let mut expected = Buffer::with_lines(["hello   ", "world   ", "        "]);
        // "world" was written bold; the blank after it never was.
        expected.set_style(
            Rect::new(0, 1, 5, 1),
            Style::new().add_modifier(Modifier::BOLD),
        );
        expected.set_style(
            Rect::new(1, 0, 2, 1),
            Style::new().fg(Color::Black).bg(Color::Yellow),
        );
        expected.set_style(
            Rect::new(4, 0, 1, 1),
            Style::new().fg(Color::Black).bg(Color::Cyan),
        );
        // The current match keeps the text's own attributes (bold) under its colors.
        expected.set_style(
            Rect::new(4, 1, 2, 1),
            Style::new().fg(Color::Black).bg(Color::LightMagenta),
        );
        assert_eq!(buf, expected);
    }

    #[test]
    fn render_rows_keeps_rows_not_to_redraw_and_draws_rows_past_the_list() {
        let parser = screen(3, 4, b"aaaa\r\nbbbb\r\ncccc");
        let area = Rect::new(0, 0, 4, 3);
        let mut buf = Buffer::with_lines(["....", "....", "...."]);
        PaneView {
            screen: parser.screen(),
            highlights: &[],
        }
        .render_rows(area, &mut buf, None, &[false, true]);
        assert_eq!(buf, Buffer::with_lines(["....", "bbbb", "cccc"]));
    }

    #[test]
    fn links_are_recorded_in_frame_coordinates_for_both_halves_of_a_wide_character() {
        let parser = screen(
            1,
            6,
            "x\x1b]8;;https://e.com\x1b\\L中\x1b]8;;\x1b\\".as_bytes(),
        );
        let mut buf = Buffer::empty(Rect::new(0, 0, 8, 2));
        let mut links = FrameLinks::new(8, 2);
        PaneView {
            screen: parser.screen(),
            highlights: &[],
        }
        .render_with_links(Rect::new(2, 1, 6, 1), &mut buf, &mut links);
        let at = |x| links.at(x, 1);
        assert_eq!(
            [at(2), at(3), at(4), at(5), at(6)],
            [
                None,
                Some(";https://e.com"),
                Some(";https://e.com"),
                Some(";https://e.com"),
                None
            ]
        );
        assert_eq!(links.at(3, 0), None);
        #[rustfmt::skip]
        let mut expected = Buffer::with_lines([
            "        ",
            "  xL中  ",
        ]);
        expected[(5, 1)].set_symbol("");
        assert_eq!(buf, expected);
    }
}
