//! Drawing `pane_borders = "separators"`: the lines between panes (tmux's model), with the
//! segments around the focused pane highlighted, and each pane's title and agent badge on the
//! separator line above it when it has one.
//!
//! A pane with no line above it (one touching the top of the window) shows no title here; the
//! status line carries the focused pane's title, badge and copy-mode position instead (see
//! `Chrome::gather`), so what the box frame showed stays visible for the pane being worked in.

use calyx_tui::border::FOCUS_COLOR;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};

/// One pane as the separators see it.
pub struct SeparatedPane<'a> {
    /// The layout's cell: the content plus the separator column to its right and row below.
    pub cell: Rect,
    pub content: Rect,
    pub focused: bool,
    /// The label at the start of the line above: "1: vim".
    pub label: &'a str,
    pub badge: Option<(&'a str, Color)>,
    /// Copy-mode position or "[exited 1]", at the end of the line below when there is one.
    pub footer: Option<&'a str>,
}

/// Draws the separators of `panes` inside `window` (the cells outside it are not drawn), then
/// each pane's title line.
pub fn draw(window: Rect, panes: &[SeparatedPane<'_>], buf: &mut Buffer) {
    let grid = Grid::of(window, panes);
    let focused = panes.iter().find(|p| p.focused).map(|p| p.content);
    for y in window.y..window.bottom() {
        for x in window.x..window.right() {
            if !grid.at(x, y) {
                continue;
            }
            let style = if focused.is_some_and(|c| borders(c, x, y)) {
                Style::default().fg(FOCUS_COLOR)
            } else {
                Style::default().fg(Color::DarkGray)
            };
            if let Some(cell) = buf.cell_mut((x, y)) {
                cell.set_symbol(grid.glyph(x, y)).set_style(style);
            }
        }
    }
    for pane in panes {
        draw_labels(window, pane, buf);
    }
}

/// Whether (x, y) is on the ring of cells just around `content` (its border segments).
fn borders(content: Rect, x: u16, y: u16) -> bool {
    let (left, top) = (content.x.saturating_sub(1), content.y.saturating_sub(1));
    x >= left && x <= content.right() && y >= top && y <= content.bottom()
}

/// Which cells of the window are separator cells.
struct Grid {
    window: Rect,
    cells: Vec<bool>,
}

impl Grid {
    fn of(window: Rect, panes: &[SeparatedPane<'_>]) -> Grid {
        let mut grid = Grid {
            window,
            cells: vec![false; usize::from(window.width) * usize::from(window.height)],
        };
        for pane in panes {
            let cell = pane.cell.intersection(window);
            for y in cell.y..cell.bottom() {
                for x in cell.x..cell.right() {
                    let in_content = x >= pane.content.x
                        && x < pane.content.right()
                        && y >= pane.content.y
                        && y < pane.content.bottom();
                    if !in_content {
                        let i = grid.index(x, y);
                        grid.cells[i] = true;
                    }
                }
            }
        }
        grid
    }

    fn index(&self, x: u16, y: u16) -> usize {
        usize::from(y - self.window.y) * usize::from(self.window.width)
            + usize::from(x - self.window.x)
    }

    /// Whether (x, y) is a separator cell; false outside the window.
    fn at(&self, x: u16, y: u16) -> bool {
        let w = self.window;
        x >= w.x && x < w.right() && y >= w.y && y < w.bottom() && self.cells[self.index(x, y)]
    }

    /// The line glyph joining a separator cell to its separator neighbours.
    fn glyph(&self, x: u16, y: u16) -> &'static str {
        let up = y > 0 && self.at(x, y - 1);
        let down = self.at(x, y.saturating_add(1));
        let left = x > 0 && self.at(x - 1, y);
        let right = self.at(x.saturating_add(1), y);
        match (up, down, left, right) {
            (true, true, true, true) => "┼",
            (true, true, true, false) => "┤",
            (true, true, false, true) => "├",
            (false, true, true, true) => "┬",
            (true, false, true, true) => "┴",
            (false, true, false, true) => "┌",
            (false, true, true, false) => "┐",
            (true, false, false, true) => "└",
            (true, false, true, false) => "┘",
            (false, false, true, _) | (false, false, _, true) => "─",
            _ => "│",
        }
    }
}

/// The pane's label and badge on the line above its content, its footer on the line below,
/// each only where that line is a separator inside the window.
fn draw_labels(window: Rect, pane: &SeparatedPane<'_>, buf: &mut Buffer) {
    let content = pane.content;
    let width = usize::from(content.width);
    // One line cell before the text, as the box's title sits after its corner.
    let room = width.saturating_sub(1);
    let line_below = content.bottom() < window.bottom();
    if content.y > window.y && room > 0 {
        let y = content.y - 1;
        let title_style = if pane.focused {
            Style::default()
                .fg(FOCUS_COLOR)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::default().fg(Color::Gray)
        };
        // With no line below, the footer joins the title.
        let label = match pane.footer {
            Some(footer) if !line_below => format!(" {} {footer} ", pane.label),
            _ => format!(" {} ", pane.label),
        };
        let fits = |badge: &str| label.chars().count() + badge.chars().count() + 2 <= room;
        // As on a box's edge, the badge gives up its CLI name first ("Claude Code ! blocked"
        // becomes "! blocked"), then gives way to the title.
        let badge = pane.badge.and_then(|(text, colour)| {
            [text.to_string(), short_badge(text)]
                .into_iter()
                .find(|t| fits(t))
                .map(|t| (format!(" {t} "), colour))
        });
        let badge_width = badge.as_ref().map_or(0, |(t, _)| t.chars().count());
        let label_room = room.saturating_sub(badge.as_ref().map_or(0, |_| badge_width));
        buf.set_stringn(content.x + 1, y, &label, label_room, title_style);
        if let Some((text, colour)) = badge {
            let x = content.right().saturating_sub(to_u16(badge_width));
            buf.set_string(x, y, &text, Style::default().fg(colour));
        }
    }
    if let Some(footer) = pane.footer {
        if line_below {
            let text = format!(" {footer} ");
            let shown = text.chars().count().min(room);
            let x = content.right().saturating_sub(to_u16(shown));
            buf.set_stringn(
                x,
                content.bottom(),
                &text,
                shown,
                Style::default().fg(Color::Yellow),
            );
        }
    }
}

/// An agent badge without its CLI's name: its last two words ("! blocked").
fn short_badge(text: &str) -> String {
    let words: Vec<&str> = text.rsplitn(3, ' ').collect();
    match words.as_slice() {
        [state, mark, _] => format!("{mark} {state}"),
        _ => text.to_string(),
    }
}

fn to_u16(n: usize) -> u16 {
    u16::try_from(n).unwrap_or(u16::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(buf: &Buffer) -> Vec<String> {
        let a = buf.area;
        (a.y..a.bottom())
            .map(|y| (a.x..a.right()).map(|x| buf[(x, y)].symbol()).collect())
            .collect()
    }

    /// Three panes laid out by the real layout tree and geometry, as `Chrome` draws them: a
    /// pane on the left, two stacked on the right, the lower one focused with an agent badge.
    #[test]
    fn three_panes_snapshot() {
        use crate::layout::{Layout, SplitDir};
        use crate::pane_borders::PaneBorders;
        let mut layout = Layout::Pane(1);
        layout.split(1, 2, SplitDir::Horizontal);
        layout.split(2, 3, SplitDir::Vertical);
        let window = Rect::new(0, 0, 60, 12);
        let borders = PaneBorders::Separators;
        let labels = ["0: make", "1: tail", "2: claude"];
        let panes: Vec<SeparatedPane<'_>> = layout
            .rects(borders.layout_area(window))
            .into_iter()
            .enumerate()
            .map(|(i, (id, cell))| SeparatedPane {
                cell,
                content: borders.content(cell),
                focused: id == 3,
                label: labels[i],
                badge: (id == 3).then_some(("Claude Code ! blocked", Color::LightRed)),
                footer: (id == 1).then_some("[exited 0]"),
            })
            .collect();
        let mut buf = Buffer::empty(window);
        draw(window, &panes, &mut buf);
        insta::assert_snapshot!(rows(&buf).join("\n"));
    }

    #[test]
    fn two_side_by_side_panes_share_one_column() {
        // A 9x3 window: panes of 4 and 4 columns around one separator column.
        let window = Rect::new(0, 0, 9, 3);
        let panes = [
            SeparatedPane {
                cell: Rect::new(0, 0, 5, 4),
                content: Rect::new(0, 0, 4, 3),
                focused: true,
                label: "0: a",
                badge: None,
                footer: None,
            },
            SeparatedPane {
                cell: Rect::new(5, 0, 5, 4),
                content: Rect::new(5, 0, 4, 3),
                focused: false,
                label: "1: b",
                badge: None,
                footer: None,
            },
        ];
        let mut buf = Buffer::empty(window);
        draw(window, &panes, &mut buf);
        assert_eq!(rows(&buf), vec!["    │    "; 3]);
        assert_eq!(buf[(4, 1)].fg, FOCUS_COLOR, "next to the focused pane");
    }

    #[test]
    fn junctions_join_the_lines_and_titles_sit_on_the_line_above() {
        // Left pane over right column of two stacked panes: ├ where they meet.
        let window = Rect::new(0, 0, 9, 5);
        let panes = [
            SeparatedPane {
                cell: Rect::new(0, 0, 5, 6),
                content: Rect::new(0, 0, 4, 5),
                focused: false,
                label: "0: a",
                badge: None,
                footer: None,
            },
            SeparatedPane {
                cell: Rect::new(5, 0, 5, 3),
                content: Rect::new(5, 0, 4, 2),
                focused: false,
                label: "1: b",
                badge: None,
                footer: None,
            },
            SeparatedPane {
                cell: Rect::new(5, 3, 5, 3),
                content: Rect::new(5, 3, 4, 2),
                focused: true,
                label: "2",
                badge: None,
                footer: None,
            },
        ];
        let mut buf = Buffer::empty(window);
        draw(window, &panes, &mut buf);
        assert_eq!(
            rows(&buf),
            vec![
                "    │    ",
                "    │    ",
                "    ├─ 2 ",
                "    │    ",
                "    │    "
            ]
        );
        assert_eq!(
            buf[(4, 0)].fg,
            Color::DarkGray,
            "not next to the focused pane"
        );
        assert_eq!(buf[(4, 3)].fg, FOCUS_COLOR);
    }
}
