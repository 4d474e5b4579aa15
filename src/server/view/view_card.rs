//! Drawing a pane's view dock (issue 17, "The TUI card"): the switcher line when the pane has
//! several views, the card's header (title, state, whether a browser shows it, the CSP entries
//! dropped), its body (scrolled), and at the bottom the view's URL and, for a client attached
//! over SSH, the `ssh -L` line. A pane too narrow for a side dock gets the one-row strip
//! `◆ get-time · running · prefix v`. The text is the dock's, already sanitized.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};

use crate::server::model::dock::{split, tunnel_line, Card, Dock, DockSplit};
use crate::server::model::state::{Client, ClientMode, State};

/// The docks of the panes `client` shows (each pane's id and the inside of its border), each
/// pane given the rest of its area.
pub fn dock_slots<'a>(
    state: &State,
    client: &Client,
    panes: impl Iterator<Item = (crate::layout::PaneId, &'a mut ratatui::layout::Rect)>,
) -> Vec<DockSlot> {
    let mut slots = Vec::new();
    for (id, inner) in panes {
        let Some(dock) = state.docks.get(&id).filter(|d| !d.cards.is_empty()) else {
            continue;
        };
        let area = split(*inner, dock.percent);
        *inner = area.pane();
        let (focused, note) = match &client.mode {
            ClientMode::ViewCard { pane, note } if *pane == id => (true, note.clone()),
            _ => (false, None),
        };
        let env = |name: &str| {
            client
                .opener_env
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
                .filter(|v| !v.is_empty())
        };
        let ports = dock.card().and_then(|c| c.ports).unwrap_or_else(|| {
            let port = state.config.mcp_apps.view_port;
            (port, port.saturating_add(1))
        });
        let tunnel = env("SSH_CONNECTION")
            .map(|connection| tunnel_line(&connection, env("USER").as_deref(), ports));
        slots.push(DockSlot {
            split: area,
            dock: dock.clone(),
            focused,
            tunnel,
            note,
        });
    }
    slots
}

/// One line of the dock as drawn: text, style, link target.
type Line = (String, Style, Option<String>);

/// A dock as one client draws it.
#[derive(Debug, Clone, PartialEq)]
pub struct DockSlot {
    /// The side dock or the strip.
    pub split: DockSplit,
    pub dock: Dock,
    /// The client's `prefix v` has the card.
    pub focused: bool,
    /// The `ssh -L` line, for a client attached over SSH.
    pub tunnel: Option<String>,
    /// What the card last said about itself (`o` over SSH, `c`): shown under the header.
    pub note: Option<String>,
}

impl DockSlot {
    /// Draws the dock; links go to `links` when the client's terminal takes them.
    pub fn draw(&self, buf: &mut Buffer, mut links: Option<&mut calyx_tui::links::FrameLinks>) {
        let Some(card) = self.dock.card() else {
            return;
        };
        match self.split {
            DockSplit::Side { dock, .. } => {
                let lines = self.lines(card, dock.height, dock.width.saturating_sub(3));
                fill(buf, dock);
                // A rule parts the card from the pane.
                let rule = Style::default().fg(Color::DarkGray);
                for y in dock.top()..dock.bottom() {
                    if let Some(cell) = buf.cell_mut((dock.x, y)) {
                        cell.set_symbol("│").set_style(rule);
                    }
                }
                for (row, (text, style, link)) in lines.iter().enumerate() {
                    let y = dock.y + u16::try_from(row).unwrap_or(u16::MAX);
                    if y >= dock.bottom() {
                        break;
                    }
                    // The rule and a blank column part the card from the pane.
                    let x = dock.x + 2;
                    let width = dock.width.saturating_sub(3);
                    let (end, _) = buf.set_stringn(x, y, text, usize::from(width), *style);
                    if let (Some(target), Some(links)) = (link, links.as_deref_mut()) {
                        if let Some(handle) = links.add(target, None) {
                            for cx in x..end {
                                links.set(cx, y, handle);
                            }
                        }
                    }
                }
            }
            DockSplit::Strip { strip, .. } => {
                let state = card.state.to_lowercase();
                let text = format!("◆ {} · {state} · prefix v", card.tool);
                let style = if self.focused {
                    Style::default().add_modifier(Modifier::REVERSED)
                } else {
                    Style::default().fg(Color::Cyan)
                };
                fill(buf, strip);
                buf.set_stringn(strip.x, strip.y, text, usize::from(strip.width), style);
            }
            DockSplit::None { .. } => {}
        }
    }

    /// The card's lines for a dock `height` rows tall: switcher, header, body (scrolled to fit),
    /// URL and tunnel at the bottom.
    fn lines(&self, card: &Card, height: u16, width: u16) -> Vec<Line> {
        let plain = Style::default();
        let dim = Style::default().fg(Color::Gray);
        let bold = Style::default().add_modifier(Modifier::BOLD);
        let mut top: Vec<Line> = Vec::new();
        if self.dock.cards.len() > 1 {
            let names: Vec<String> = self
                .dock
                .cards
                .iter()
                .take(9)
                .enumerate()
                .map(|(i, c)| format!("{} {}", i + 1, c.tool))
                .collect();
            top.push((names.join("  "), dim, None));
        }
        let title_style = if self.focused {
            bold.add_modifier(Modifier::REVERSED)
        } else {
            bold
        };
        top.push((format!("◆ {}", card.title), title_style, None));
        let browser = if card.page_open {
            "● in browser"
        } else {
            "○ not open"
        };
        let state_style = match card.state.as_str() {
            s if s.starts_with("Rejected") || s.starts_with("Cancelled") => {
                Style::default().fg(Color::Red)
            }
            "Completed" => Style::default().fg(Color::Green),
            _ => Style::default().fg(Color::Yellow),
        };
        top.push((format!("{}  {browser}", card.state), state_style, None));
        if let Some(ignored) = &card.ignored_csp {
            top.push((ignored.clone(), dim, None));
        }
        if let Some(note) = &self.note {
            top.push((note.clone(), Style::default().fg(Color::Cyan), None));
        }
        top.push((String::new(), plain, None));
        let top = wrap(top, width);
        let mut bottom: Vec<Line> = vec![(String::new(), plain, None)];
        match &card.url {
            Some(url) => bottom.push((
                url.clone(),
                Style::default().fg(Color::Blue),
                Some(url.clone()),
            )),
            None => bottom.push(("The view server is not running.".into(), dim, None)),
        }
        if let Some(tunnel) = &self.tunnel {
            bottom.push((tunnel.clone(), dim, None));
        }
        if self.focused {
            bottom.push((
                "o open  c copy  r reload  x close  Tab switch  < > width  Esc back".into(),
                dim,
                None,
            ));
        }
        let bottom = wrap(bottom, width);
        let body = wrap(
            card.body
                .iter()
                .map(|line| (line.text.clone(), plain, line.link.clone()))
                .collect(),
            width,
        );
        let room = usize::from(height).saturating_sub(top.len() + bottom.len());
        let scroll = usize::from(self.dock.scroll).min(body.len().saturating_sub(1));
        let body = body.into_iter().skip(scroll).take(room);
        let mut lines = top;
        lines.extend(body);
        // The bottom lines sit at the dock's bottom.
        while lines.len() + bottom.len() < usize::from(height) {
            lines.push((String::new(), plain, None));
        }
        lines.extend(bottom);
        lines
    }
}

/// Lines cut into pieces of at most `width` columns; a piece of a link keeps the link.
fn wrap(lines: Vec<Line>, width: u16) -> Vec<Line> {
    use unicode_width::UnicodeWidthChar;
    let width = usize::from(width.max(1));
    let mut out = Vec::new();
    for (text, style, link) in lines {
        let mut piece = String::new();
        let mut used = 0;
        for c in text.chars() {
            let w = c.width().unwrap_or(0);
            if used + w > width && !piece.is_empty() {
                out.push((std::mem::take(&mut piece), style, link.clone()));
                used = 0;
            }
            piece.push(c);
            used += w;
        }
        out.push((piece, style, link));
    }
    out
}

/// Blanks `area` (the pane's old cells must not show through).
fn fill(buf: &mut Buffer, area: Rect) {
    for y in area.top()..area.bottom() {
        for x in area.left()..area.right() {
            if let Some(cell) = buf.cell_mut((x, y)) {
                cell.reset();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::model::dock::BodyLine;
    use crate::views::registry::ViewId;

    fn card(id: u64, tool: &str) -> Card {
        Card {
            id: ViewId(id),
            tool: tool.into(),
            title: format!("{tool} · vanilla · claude-code"),
            state: "Completed".into(),
            running: false,
            page_open: false,
            ignored_csp: Some("Ignored CSP entries: *".into()),
            body: vec![BodyLine {
                text: "12:00".into(),
                link: None,
            }],
            url: Some("http://127.0.0.1:41880/v/1/abc/".into()),
            ports: Some((41880, 41881)),
        }
    }

    fn rows(buf: &Buffer) -> Vec<String> {
        (0..buf.area.height)
            .map(|y| {
                (0..buf.area.width)
                    .map(|x| buf[(x, y)].symbol().to_string())
                    .collect::<String>()
                    .trim_end()
                    .to_string()
            })
            .collect()
    }

    #[test]
    fn the_card_shows_switcher_header_body_url_and_tunnel() {
        let dock = Dock {
            cards: vec![card(1, "get-time"), card(2, "show-map")],
            selected: 0,
            ..Dock::default()
        };
        let slot = DockSlot {
            split: DockSplit::Side {
                pane: Rect::new(0, 0, 40, 12),
                dock: Rect::new(40, 0, 60, 12),
            },
            dock,
            focused: false,
            tunnel: Some("ssh -L 41880:127.0.0.1:41880 -L 41881:127.0.0.1:41881 u@h".into()),
            note: None,
        };
        let mut buf = Buffer::empty(Rect::new(0, 0, 100, 12));
        slot.draw(&mut buf, None);
        let shown: Vec<String> = rows(&buf)
            .iter()
            .map(|r| r.trim().trim_start_matches('│').trim().to_string())
            .collect();
        assert_eq!(shown[0], "1 get-time  2 show-map");
        assert_eq!(shown[1], "◆ get-time · vanilla · claude-code");
        assert_eq!(shown[2], "Completed  ○ not open");
        assert_eq!(shown[3], "Ignored CSP entries: *");
        assert_eq!(shown[5], "12:00");
        assert_eq!(shown[10], "http://127.0.0.1:41880/v/1/abc/");
        assert_eq!(
            shown[11],
            "ssh -L 41880:127.0.0.1:41880 -L 41881:127.0.0.1:41881 u@h"
        );
        assert!(
            rows(&buf)[1].starts_with(&format!("{}│ ◆", " ".repeat(40))),
            "the pane's side is left alone, the rule parts them: {:?}",
            rows(&buf)[1]
        );
    }

    #[test]
    fn resource_links_and_the_url_are_osc8_links() {
        let mut shown = card(1, "get-time");
        shown.body.push(BodyLine {
            text: "report".into(),
            link: Some("https://example.com/r".into()),
        });
        let slot = DockSlot {
            split: DockSplit::Side {
                pane: Rect::new(0, 0, 40, 12),
                dock: Rect::new(40, 0, 60, 12),
            },
            dock: Dock {
                cards: vec![shown],
                ..Dock::default()
            },
            focused: false,
            tunnel: None,
            note: None,
        };
        let mut buf = Buffer::empty(Rect::new(0, 0, 100, 12));
        let mut links = calyx_tui::links::FrameLinks::new(100, 12);
        slot.draw(&mut buf, Some(&mut links));
        let row = |needle: &str| {
            (0..12u16)
                .find(|&y| {
                    (0..100u16)
                        .map(|x| buf[(x, y)].symbol().to_string())
                        .collect::<String>()
                        .contains(needle)
                })
                .expect(needle)
        };
        assert_eq!(links.at(42, row("report")), Some(";https://example.com/r"));
        assert_eq!(
            links.at(45, row("http://127.0.0.1")),
            Some(";http://127.0.0.1:41880/v/1/abc/")
        );
        assert_eq!(
            links.at(42, row("Completed")),
            None,
            "plain text is no link"
        );
    }

    #[test]
    fn a_narrow_pane_gets_the_strip() {
        let slot = DockSlot {
            split: DockSplit::Strip {
                pane: Rect::new(0, 0, 50, 4),
                strip: Rect::new(0, 4, 50, 1),
            },
            dock: Dock {
                cards: vec![card(1, "get-time")],
                ..Dock::default()
            },
            focused: false,
            tunnel: None,
            note: None,
        };
        let mut buf = Buffer::empty(Rect::new(0, 0, 50, 5));
        slot.draw(&mut buf, None);
        assert_eq!(rows(&buf)[4], "◆ get-time · completed · prefix v");
    }
}
