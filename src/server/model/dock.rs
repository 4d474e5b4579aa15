//! The view dock of a pane (issue 17, "The TUI card"): while a pane has MCP App views, a dock
//! on its right takes a share of its width (40% at first, `<`/`>` change it by 5%) and shows
//! one view's card; the pane's program gets the rest. A pane that would keep fewer than
//! [`MIN_PANE_COLS`] columns gets a one-row strip at its bottom instead.
//!
//! The cards are plain, already-sanitized text made from the hub's records
//! ([`Card::from_snapshot`]): the server builds them when a view changes and the frame
//! drawing only lays them out, so nothing a server sent reaches a terminal unescaped.

use ratatui::layout::Rect;
use serde_json::Value;

use crate::views::hub::ViewSnapshot;
use crate::views::registry::{ViewId, ViewState};

/// The dock's share of the pane's width when it appears.
pub const DEFAULT_PERCENT: u16 = 40;
/// `<` and `>` change the share by this much.
pub const PERCENT_STEP: u16 = 5;
/// The share stays within these bounds.
pub const PERCENT_RANGE: std::ops::RangeInclusive<u16> = 20..=80;
/// The pane keeps at least this many columns beside a dock.
pub const MIN_PANE_COLS: u16 = 40;
/// A dock narrower than this is not worth drawing: the strip instead.
const MIN_DOCK_COLS: u16 = 16;

/// Where a pane's content and its dock go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DockSplit {
    /// The dock on the right.
    Side { pane: Rect, dock: Rect },
    /// Too narrow for a side dock: a one-row strip at the bottom.
    Strip { pane: Rect, strip: Rect },
    /// Too small for either: the pane keeps everything.
    None { pane: Rect },
}

impl DockSplit {
    /// The pane's part.
    pub fn pane(&self) -> Rect {
        match *self {
            DockSplit::Side { pane, .. }
            | DockSplit::Strip { pane, .. }
            | DockSplit::None { pane } => pane,
        }
    }
}

/// Divides a pane's content area `inner` with a dock of `percent` of its width.
pub fn split(inner: Rect, percent: u16) -> DockSplit {
    let dock_cols =
        u16::try_from(u32::from(inner.width) * u32::from(percent) / 100).unwrap_or(inner.width);
    let pane_cols = inner.width.saturating_sub(dock_cols);
    if pane_cols >= MIN_PANE_COLS && dock_cols >= MIN_DOCK_COLS {
        return DockSplit::Side {
            pane: Rect::new(inner.x, inner.y, pane_cols, inner.height),
            dock: Rect::new(inner.x + pane_cols, inner.y, dock_cols, inner.height),
        };
    }
    if inner.height >= 2 {
        let rows = inner.height - 1;
        return DockSplit::Strip {
            pane: Rect::new(inner.x, inner.y, inner.width, rows),
            strip: Rect::new(inner.x, inner.y + rows, inner.width, 1),
        };
    }
    DockSplit::None { pane: inner }
}

/// One pane's dock: its width (remembered while the dock exists), the card shown, how far its
/// body is scrolled, and the cards of the pane's views, oldest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dock {
    pub percent: u16,
    pub selected: usize,
    pub scroll: u16,
    pub cards: Vec<Card>,
}

impl Default for Dock {
    fn default() -> Self {
        Dock {
            percent: DEFAULT_PERCENT,
            selected: 0,
            scroll: 0,
            cards: Vec::new(),
        }
    }
}

impl Dock {
    /// The card shown.
    pub fn card(&self) -> Option<&Card> {
        self.cards.get(self.selected).or_else(|| self.cards.last())
    }

    /// `<` (narrower, `-1`) or `>` (wider, `+1`).
    pub fn widen(&mut self, direction: i8) {
        let next = if direction < 0 {
            self.percent.saturating_sub(PERCENT_STEP)
        } else {
            self.percent.saturating_add(PERCENT_STEP)
        };
        self.percent = next.clamp(*PERCENT_RANGE.start(), *PERCENT_RANGE.end());
    }
}

/// A line of a card's body: sanitized text, and the target when it is a link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BodyLine {
    pub text: String,
    pub link: Option<String>,
}

impl BodyLine {
    fn plain(text: String) -> Self {
        BodyLine { text, link: None }
    }
}

/// One view as its card shows it. Every string is sanitized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Card {
    pub id: ViewId,
    pub tool: String,
    /// `get-time · vanilla · claude-code`.
    pub title: String,
    /// `Running`, `Rejected: <reason>`, ...
    pub state: String,
    /// The call is in flight (`◆` on the window's tab and the sidebar).
    pub running: bool,
    pub page_open: bool,
    /// `Ignored CSP entries: ...`, when any were.
    pub ignored_csp: Option<String>,
    pub body: Vec<BodyLine>,
    /// The host page's URL, once the view server listens.
    pub url: Option<String>,
    /// The view server's (host, sandbox) ports, for the `ssh -L` line.
    pub ports: Option<(u16, u16)>,
}

impl Card {
    /// The card of a hub record; `url` and `ports` from the hub.
    pub fn from_snapshot(
        view: &ViewSnapshot,
        url: Option<String>,
        ports: Option<(u16, u16)>,
    ) -> Card {
        let origin = &view.view.origin;
        let tool = clean(&origin.original_tool);
        let alias = clean(&origin.alias);
        let title = match origin.agent {
            Some(agent) => format!("{tool} · {alias} · {}", agent.as_str()),
            None => format!("{tool} · {alias}"),
        };
        let state = match &view.view.state {
            ViewState::Loading => "Loading".to_string(),
            ViewState::Running => "Running".to_string(),
            ViewState::Completed => "Completed".to_string(),
            ViewState::Cancelled => match &view.call.cancelled {
                Some(why) => format!("Cancelled: {}", clean(why)),
                None => "Cancelled".to_string(),
            },
            ViewState::Rejected(why) => format!("Rejected: {}", clean(why)),
        };
        let running = view.call.result.is_none()
            && view.call.cancelled.is_none()
            && !matches!(view.view.state, ViewState::Rejected(_));
        let ignored_csp = view
            .call
            .csp
            .as_ref()
            .filter(|csp| !csp.ignored.is_empty())
            .map(|csp| {
                let entries: Vec<String> = csp.ignored.iter().map(|e| clean(e)).collect();
                format!("Ignored CSP entries: {}", entries.join(", "))
            });
        Card {
            id: view.view.id,
            tool,
            title,
            state,
            running,
            page_open: view.call.page_open,
            ignored_csp,
            body: body(view.call.result.as_ref()),
            url: url.map(|u| clean(&u)),
            ports,
        }
    }
}

/// A row of `prefix V`: a view and where it lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewRow {
    pub id: ViewId,
    /// Its pane (None: standalone).
    pub pane: Option<crate::layout::PaneId>,
    /// `%3  get-time · vanilla · claude-code  Completed`, sanitized.
    pub text: String,
}

impl ViewRow {
    pub fn of(view: &ViewSnapshot) -> ViewRow {
        let card = Card::from_snapshot(view, None, None);
        let pane = view.view.origin.pane;
        let place = pane.map_or("standalone".to_string(), |p| format!("%{p}"));
        ViewRow {
            id: view.view.id,
            pane,
            text: format!("{place}  {}  {}", card.title, card.state),
        }
    }
}

/// One line of server text made safe to draw.
fn clean(text: &str) -> String {
    calyx_tui::escape::visible(text)
}

/// The body of a card: the result's text blocks, else its `structuredContent` pretty-printed;
/// images and audio as a label with their size, resource links as links.
fn body(result: Option<&Value>) -> Vec<BodyLine> {
    let Some(result) = result else {
        return vec![BodyLine::plain("Waiting for the result…".into())];
    };
    let blocks = result
        .get("content")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let has_text = blocks.iter().any(|b| b["type"] == "text");
    let mut lines = Vec::new();
    if !has_text {
        if let Some(structured) = result.get("structuredContent") {
            let pretty = serde_json::to_string_pretty(structured).unwrap_or_default();
            lines.extend(pretty.lines().map(|l| BodyLine::plain(clean(l))));
        }
    }
    for block in &blocks {
        match block["type"].as_str() {
            Some("text") if has_text => {
                let text = block["text"].as_str().unwrap_or_default();
                lines.extend(text.lines().map(|l| BodyLine::plain(clean(l))));
            }
            Some(kind @ ("image" | "audio")) => {
                let mime = clean(block["mimeType"].as_str().unwrap_or("?"));
                let bytes = block["data"].as_str().map_or(0, |d| d.len() / 4 * 3);
                lines.push(BodyLine::plain(format!("[{kind} {mime} {}]", size(bytes))));
            }
            Some("resource_link") => {
                let uri = block["uri"].as_str().unwrap_or_default();
                let name = block["name"].as_str().unwrap_or(uri);
                lines.push(BodyLine {
                    text: clean(name),
                    link: link_target(uri),
                });
            }
            Some("resource") => {
                let uri = block["resource"]["uri"].as_str().unwrap_or_default();
                lines.push(BodyLine::plain(format!("[resource {}]", clean(uri))));
            }
            _ => {}
        }
    }
    if lines.is_empty() {
        lines.push(BodyLine::plain("(no text in the result)".into()));
    }
    lines
}

/// A link target that is safe in an OSC 8 sequence: printable ASCII, no spaces, of a scheme
/// a terminal opens.
fn link_target(uri: &str) -> Option<String> {
    let printable = uri.bytes().all(|b| b.is_ascii_graphic());
    let scheme = ["http://", "https://", "file://", "mailto:"]
        .iter()
        .any(|s| uri.starts_with(s));
    (printable && scheme && uri.len() <= 2048).then(|| uri.to_string())
}

/// `512 B`, `1.2 KiB`, `3.4 MiB`.
pub fn size(bytes: usize) -> String {
    const KIB: f64 = 1024.0;
    let b = bytes as f64;
    if b < KIB {
        format!("{bytes} B")
    } else if b < KIB * KIB {
        format!("{:.1} KiB", b / KIB)
    } else {
        format!("{:.1} MiB", b / KIB / KIB)
    }
}

/// The `ssh -L` line that forwards both view ports, for a client attached over SSH
/// (`SSH_CONNECTION` is "client-ip client-port server-ip server-port").
pub fn tunnel_line(ssh_connection: &str, user: Option<&str>, ports: (u16, u16)) -> String {
    let host = ssh_connection.split_whitespace().nth(2).unwrap_or("HOST");
    let user = user.filter(|u| !u.is_empty()).unwrap_or("USER");
    let (h, s) = ports;
    clean(&format!(
        "ssh -L {h}:127.0.0.1:{h} -L {s}:127.0.0.1:{s} {user}@{host}"
    ))
}

#[cfg(test)]
#[path = "dock_tests.rs"]
mod tests;
