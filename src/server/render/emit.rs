//! Writes rows of a composed frame as terminal bytes: cursor moves, SGR attributes, the text, and
//! OSC 8 around runs of linked cells. It replaces ratatui's `CrosstermBackend::draw` because
//! ratatui cells cannot carry hyperlinks, and because one SGR sequence per attribute change (not
//! one per attribute) and one cursor move per row keep frames small: every byte here is on the
//! path of a keystroke's echo.

use std::io::Write as _;

use calyx_tui::FrameLinks;
use ratatui::buffer::{Buffer, Cell, CellDiffOption};
use ratatui::style::{Color, Modifier};
use unicode_width::UnicodeWidthStr;

/// SGR parameters of each modifier, in the order written.
const MODIFIER_SGR: [(Modifier, u8); 9] = [
    (Modifier::BOLD, 1),
    (Modifier::DIM, 2),
    (Modifier::ITALIC, 3),
    (Modifier::UNDERLINED, 4),
    (Modifier::SLOW_BLINK, 5),
    (Modifier::RAPID_BLINK, 6),
    (Modifier::REVERSED, 7),
    (Modifier::HIDDEN, 8),
    (Modifier::CROSSED_OUT, 9),
];

const LINK_CLOSE: &[u8] = b"\x1b]8;;\x1b\\";

/// The attributes the outer terminal is set to while a frame is written.
struct Pen {
    fg: Color,
    bg: Color,
    modifier: Modifier,
}

impl Pen {
    /// The state right after SGR 0.
    fn reset() -> Self {
        Self {
            fg: Color::Reset,
            bg: Color::Reset,
            modifier: Modifier::empty(),
        }
    }
}

fn push_num(out: &mut Vec<u8>, n: u16) {
    let _ = write!(out, "{n}");
}

/// SGR parameters of a color (`base` 30 for foreground, 40 for background).
fn push_color(out: &mut Vec<u8>, color: Color, base: u8) {
    let named = |i: u8| {
        if i < 8 {
            u16::from(base + i)
        } else {
            u16::from(base + 60 + i - 8)
        }
    };
    match color {
        Color::Reset => push_num(out, u16::from(base + 9)),
        Color::Black => push_num(out, named(0)),
        Color::Red => push_num(out, named(1)),
        Color::Green => push_num(out, named(2)),
        Color::Yellow => push_num(out, named(3)),
        Color::Blue => push_num(out, named(4)),
        Color::Magenta => push_num(out, named(5)),
        Color::Cyan => push_num(out, named(6)),
        Color::Gray => push_num(out, named(7)),
        Color::DarkGray => push_num(out, named(8)),
        Color::LightRed => push_num(out, named(9)),
        Color::LightGreen => push_num(out, named(10)),
        Color::LightYellow => push_num(out, named(11)),
        Color::LightBlue => push_num(out, named(12)),
        Color::LightMagenta => push_num(out, named(13)),
        Color::LightCyan => push_num(out, named(14)),
        Color::White => push_num(out, named(15)),
        Color::Indexed(i) => {
            let _ = write!(out, "{};5;{i}", base + 8);
        }
        Color::Rgb(r, g, b) => {
            let _ = write!(out, "{};2;{r};{g};{b}", base + 8);
        }
    }
}

/// Brings the pen to the cell's attributes with at most one SGR sequence.
fn set_pen(out: &mut Vec<u8>, pen: &mut Pen, cell: &Cell) {
    if cell.fg == pen.fg && cell.bg == pen.bg && cell.modifier == pen.modifier {
        return;
    }
    out.extend_from_slice(b"\x1b[");
    let mut first = true;
    let mut sep = |out: &mut Vec<u8>| {
        if !first {
            out.push(b';');
        }
        first = false;
    };
    // Turning a modifier off has no single portable code (22 ends both bold and dim): start
    // from SGR 0 and set everything the cell needs.
    if !(pen.modifier - cell.modifier).is_empty() {
        sep(out);
        out.push(b'0');
        *pen = Pen::reset();
    }
    for (m, code) in MODIFIER_SGR {
        if cell.modifier.contains(m) && !pen.modifier.contains(m) {
            sep(out);
            push_num(out, u16::from(code));
        }
    }
    if cell.fg != pen.fg {
        sep(out);
        push_color(out, cell.fg, 30);
    }
    if cell.bg != pen.bg {
        sep(out);
        push_color(out, cell.bg, 40);
    }
    out.push(b'm');
    pen.fg = cell.fg;
    pen.bg = cell.bg;
    pen.modifier = cell.modifier;
}

/// Cells `x0..x1` of frame row `y` (frame coordinates), to be sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Span {
    pub y: u16,
    pub x0: u16,
    pub x1: u16,
}

/// The cells `a..b` of a row that differ between `old` and `new`, widened so that neither end
/// splits a wide character as either shows it (writing half of one blanks the other half).
pub fn changed_cells(old: &[Cell], new: &[Cell]) -> Option<(usize, usize)> {
    let first = old.iter().zip(new).position(|(a, b)| a != b)?;
    let last = old.iter().zip(new).rposition(|(a, b)| a != b)?;
    // The second half of a wide character is drawn as an empty symbol.
    let second_half = |i: usize| {
        old.get(i).is_some_and(|c| c.symbol().is_empty())
            || new.get(i).is_some_and(|c| c.symbol().is_empty())
    };
    let mut a = first;
    while a > 0 && second_half(a) {
        a -= 1;
    }
    let mut b = last + 1;
    while b < new.len() && second_half(b) {
        b += 1;
    }
    Some((a, b))
}

/// Writes whole rows `rows` of `buf` (each from its first column), wrapping linked cells in
/// `OSC 8 ; params ; URI ST` ... `OSC 8 ; ; ST` when `links` is given. Leaves the attributes
/// reset and no link open.
pub fn write_rows(out: &mut Vec<u8>, buf: &Buffer, rows: &[u16], links: Option<&FrameLinks>) {
    let spans: Vec<Span> = rows
        .iter()
        .map(|&y| Span {
            y,
            x0: buf.area.x,
            x1: buf.area.right(),
        })
        .collect();
    write_spans(out, buf, &spans, links);
}

/// Writes the cells of `spans` (in order), like [`write_rows`]: an echoed character costs the
/// cells that changed, not the whole row. A span must not start on the second half of a wide
/// character (the terminal would blank its first half).
pub fn write_spans(out: &mut Vec<u8>, buf: &Buffer, spans: &[Span], links: Option<&FrameLinks>) {
    let area = buf.area;
    let width = usize::from(area.width);
    let links = links.filter(|l| !l.is_empty());
    let mut pen = Pen::reset();
    out.extend_from_slice(b"\x1b[0m");
    for &Span { y, x0, x1 } in spans {
        if y < area.top() || y >= area.bottom() || x0 < area.x || x1 > area.right() || x0 >= x1 {
            continue;
        }
        let row = usize::from(y - area.y) * width;
        let first = usize::from(x0 - area.x);
        // The cells to the row's end: a grapheme whose width terminals disagree on makes the
        // rest of the row drawn too (see below).
        let Some(cells) = buf.content.get(row + first..row + width) else {
            continue;
        };
        let mut end = usize::from(x1 - x0);
        // Where the outer terminal's cursor is (None: unknown, move before the next cell).
        let mut cursor: Option<u16> = None;
        let mut open: Option<&str> = None;
        let mut skip = 0usize;
        for (i, cell) in cells.iter().enumerate() {
            if i >= end {
                break;
            }
            if skip > 0 {
                skip -= 1;
                continue;
            }
            if cell.diff_option == CellDiffOption::Skip {
                cursor = None;
                continue;
            }
            let x = x0 + i as u16;
            if cursor != Some(x) {
                let _ = write!(out, "\x1b[{};{}H", y + 1, x + 1);
            }
            let link = links.and_then(|l| l.at(x, y));
            if link != open {
                if open.is_some() {
                    out.extend_from_slice(LINK_CLOSE);
                }
                if let Some(target) = link {
                    out.extend_from_slice(b"\x1b]8;");
                    out.extend_from_slice(target.as_bytes());
                    out.extend_from_slice(b"\x1b\\");
                }
                open = link;
            }
            set_pen(out, &mut pen, cell);
            let symbol = cell.symbol();
            let w = symbol.width();
            skip = w.saturating_sub(1);
            if calyx_tui::disputed_width::disputed(symbol) {
                // The outer terminal may draw it narrower (its cells are blanked first, so
                // nothing stale stays beside it) or wider (the cursor is placed before the
                // next cell, and the rest of the row is drawn over what it covered).
                out.extend(std::iter::repeat_n(b' ', w));
                let _ = write!(out, "\x1b[{};{}H", y + 1, x + 1);
                out.extend_from_slice(symbol.as_bytes());
                cursor = None;
                end = cells.len();
                continue;
            }
            out.extend_from_slice(symbol.as_bytes());
            cursor = Some(x + w as u16).filter(|_| w > 0);
        }
        if open.is_some() {
            out.extend_from_slice(LINK_CLOSE);
        }
    }
    out.extend_from_slice(b"\x1b[0m");
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::layout::Rect;
    use ratatui::style::Style;

    fn text(out: &[u8]) -> String {
        String::from_utf8_lossy(out).replace('\x1b', "\\e")
    }

    #[test]
    fn rows_with_attributes_wide_chars_and_links() {
        let mut buf = Buffer::empty(Rect::new(0, 0, 8, 2));
        buf.set_string(0, 0, "ab", Style::default().fg(Color::Red));
        buf.set_string(
            2,
            0,
            "cd",
            Style::default().add_modifier(Modifier::CROSSED_OUT | Modifier::BOLD),
        );
        buf.set_string(4, 0, "\u{4e2d}e", Style::default().bg(Color::Indexed(208)));
        buf.set_string(0, 1, "link", Style::default());
        let mut links = FrameLinks::new(8, 2);
        let h = links.add("https://e.com/x", Some("p1")).unwrap_or(0);
        for x in 0..4 {
            links.set(x, 1, h);
        }
        let mut out = Vec::new();
        write_rows(&mut out, &buf, &[0, 1], Some(&links));
        insta::assert_snapshot!(text(&out), @r"\e[0m\e[1;1H\e[31mab\e[1;9;39mcd\e[0;48;5;208m中e\e[49m \e[2;1H\e]8;id=p1;https://e.com/x\e\link\e]8;;\e\    \e[0m");
    }

    #[test]
    fn a_grapheme_terminals_disagree_on_is_drawn_so_the_row_cannot_shift() {
        // "❤️" (VS16) is 2 columns to calyx, 1 to tmux 3.3a; the family is 2 or 6.
        let mut buf = Buffer::empty(Rect::new(0, 0, 12, 1));
        buf.set_string(
            0,
            0,
            "a\u{2764}\u{fe0f}b\u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467}cd",
            Style::default(),
        );
        let mut out = Vec::new();
        // Only the first cells changed: the rest of the row is drawn anyway.
        write_spans(&mut out, &buf, &[Span { y: 0, x0: 0, x1: 2 }], None);
        insta::assert_snapshot!(text(&out), @r"\e[0m\e[1;1Ha  \e[1;2H❤️\e[1;4Hb  \e[1;5H👨‍👩‍👧\e[1;7Hcd    \e[0m");
    }

    #[test]
    fn without_links_no_osc8_is_written() {
        let mut buf = Buffer::empty(Rect::new(0, 0, 4, 1));
        buf.set_string(0, 0, "link", Style::default());
        let mut links = FrameLinks::new(4, 1);
        let h = links.add("https://e.com", None).unwrap_or(0);
        links.set(0, 0, h);
        let mut out = Vec::new();
        write_rows(&mut out, &buf, &[0], None);
        assert!(!text(&out).contains("]8;"), "{}", text(&out));
    }
}
