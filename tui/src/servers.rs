//! The hosted MCP servers overlay (`prefix M`): one entry per server with its enable switch,
//! name and status (the failure sentence followed by the last lines of the server's stderr),
//! and beneath it the alias, transport and command or URL; a banner when hosting is off. Its
//! other pages are a scrollable text (a server's details, an import's preview) and the import
//! field. The server keeps this data in the client's mode and refreshes it when a server's
//! state changes; this widget only draws it.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph, Widget, Wrap};
use unicode_width::UnicodeWidthStr;

use crate::escape::visible;

/// One hosted server as the overlay lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerRow {
    pub alias: String,
    pub name: String,
    pub enabled: bool,
    /// `Disabled`, `Connecting`, `3 tools, 1 with UI`, a failure sentence ...
    pub status: String,
    /// The last lines of a failed stdio server's stderr.
    pub stderr: Vec<String>,
    /// `stdio`, `http`.
    pub transport: String,
    /// The command line or the URL.
    pub target: String,
    /// Tokens are stored for it (an HTTP server signed in with OAuth).
    pub signed_in: bool,
}

/// What the overlay shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServersPage {
    /// The servers.
    List,
    /// A text to read (a server's details, an import's preview), from line `scroll`.
    Text {
        title: String,
        text: String,
        scroll: u16,
    },
    /// The import field, holding what was typed or pasted so far.
    Import { text: String },
    /// The Add form.
    Add(Box<crate::server_form::ServerForm>),
    /// A sign-in in progress: its URL and the ways back.
    SignIn(Box<crate::sign_in_page::SignInPage>),
    /// The preview of importing `source`: Enter imports it.
    Preview {
        source: String,
        text: String,
        scroll: u16,
    },
}

/// The overlay's whole state, kept in the client's mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServersOverlay {
    pub rows: Vec<ServerRow>,
    pub selected: usize,
    /// Shown on top (hosting switched off in the config).
    pub banner: Option<String>,
    pub page: ServersPage,
}

impl ServersOverlay {
    /// An overlay on the list, rows still to come.
    pub fn new(banner: Option<String>) -> Self {
        ServersOverlay {
            rows: Vec::new(),
            selected: 0,
            banner,
            page: ServersPage::List,
        }
    }

    /// The server the keyboard is on.
    pub fn selected_row(&self) -> Option<&ServerRow> {
        self.rows.get(self.selected)
    }
}

/// Stderr lines shown under a failed server's status.
const STDERR_SHOWN: usize = 20;

/// Draws a [`ServersOverlay`].
pub struct ServersView<'a> {
    pub overlay: &'a ServersOverlay,
}

fn dim() -> Style {
    Style::default().fg(Color::DarkGray)
}

/// A server's lines: the switch and name, the status (and stderr), then what it runs.
fn row_lines(row: &ServerRow, selected: bool, width: usize) -> Vec<Line<'static>> {
    let switch = if row.enabled { "[x]" } else { "[ ]" };
    let mut head = vec![
        Span::raw(format!("{switch} ")),
        Span::styled(
            visible(&row.name),
            Style::default().add_modifier(Modifier::BOLD),
        ),
        Span::raw("  "),
    ];
    // A failure sentence may go on with lines of the server's stderr: those go beneath.
    let mut status = row.status.lines();
    let first = status.next().unwrap_or_default();
    let status_style = match first {
        "Disabled" | "Connecting" => dim(),
        "Signing in" | "Sign-in required" => Style::default().fg(Color::Yellow),
        s if s.contains(" tool") && s.contains("with UI") => Style::default().fg(Color::Green),
        _ => Style::default().fg(Color::LightRed),
    };
    head.push(Span::styled(visible(first), status_style));
    if selected {
        let used: usize = head.iter().map(|s| s.content.width()).sum();
        head.push(Span::raw(" ".repeat(width.saturating_sub(used))));
        for s in &mut head {
            s.style = s.style.add_modifier(Modifier::REVERSED);
        }
    }
    let mut lines = vec![Line::from(head)];
    let more: Vec<&str> = status
        .chain(row.stderr.iter().map(String::as_str))
        .collect();
    let skip = more.len().saturating_sub(STDERR_SHOWN);
    for line in more.iter().skip(skip) {
        lines.push(Line::styled(format!("      | {}", visible(line)), dim()));
    }
    let mut under = vec![Span::styled(
        format!(
            "    {}  {}  {}",
            visible(&row.alias),
            row.transport,
            visible(&row.target)
        ),
        dim(),
    )];
    if row.signed_in {
        under.push(Span::styled(
            "  Signed in",
            Style::default().fg(Color::Green),
        ));
    }
    lines.push(Line::from(under));
    lines
}

/// The whole overlay's box: the window less a margin.
fn popup(area: Rect) -> Rect {
    let width = area.width.saturating_sub(4).max(area.width.min(40));
    let height = area.height.saturating_sub(2).max(area.height.min(5));
    Rect::new(
        area.x + (area.width - width) / 2,
        area.y + (area.height - height) / 2,
        width,
        height,
    )
}

impl ServersView<'_> {
    fn list(&self, inner_rows: usize, width: usize) -> Vec<Line<'static>> {
        let o = self.overlay;
        let mut lines = Vec::new();
        if let Some(banner) = &o.banner {
            lines.push(Line::styled(
                banner.clone(),
                Style::default().fg(Color::Black).bg(Color::Yellow),
            ));
        }
        if o.rows.is_empty() {
            lines.push(Line::styled(
                "no hosted MCP servers: press i to import, or use `calyx mcp add`",
                dim(),
            ));
            return lines;
        }
        // Every server's lines, with where the selected one starts and ends.
        let mut body = Vec::new();
        let mut span = (0, 0);
        for (i, row) in o.rows.iter().enumerate() {
            let start = body.len();
            body.extend(row_lines(row, i == o.selected, width));
            if i == o.selected {
                span = (start, body.len());
            }
        }
        // Scrolled so the selected server is inside.
        let room = inner_rows.saturating_sub(lines.len()).max(1);
        let top = span.1.saturating_sub(room).min(span.0);
        lines.extend(body.into_iter().skip(top).take(room));
        lines
    }
}

impl ServersView<'_> {
    /// Draws the overlay; on the sign-in page, also returns the URL and the cells it was drawn
    /// in, so the frame can make them one OSC 8 link.
    pub fn render_linked(self, area: Rect, buf: &mut Buffer) -> Option<(String, Vec<Rect>)> {
        if let ServersPage::SignIn(page) = &self.overlay.page {
            let cells = crate::sign_in_page::render_sign_in(page, popup(area), buf);
            return Some((page.url.clone(), cells));
        }
        self.render(area, buf);
        None
    }
}

impl Widget for ServersView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        if let ServersPage::Add(form) = &self.overlay.page {
            crate::server_form::ServerFormView { form }.render(area, buf);
            return;
        }
        if let ServersPage::SignIn(page) = &self.overlay.page {
            crate::sign_in_page::render_sign_in(page, popup(area), buf);
            return;
        }
        let popup = popup(area);
        let inner_rows = popup.height.saturating_sub(2) as usize;
        let width = popup.width.saturating_sub(2) as usize;
        let (title, keys, lines, scroll, wrap) = match &self.overlay.page {
            ServersPage::List => (
                " MCP servers ".to_string(),
                " ↑↓ choose, Space on/off, Enter details, a add, e edit, i import, r retry, s sign in, c cancel sign-in, S sign out, D remove, q close ",
                self.list(inner_rows, width),
                0,
                false,
            ),
            ServersPage::Text {
                title,
                text,
                scroll,
            } => (
                format!(" {} ", visible(title)),
                " ↑↓ scroll, Esc back ",
                text.lines().map(|l| Line::raw(l.to_string())).collect(),
                *scroll,
                false,
            ),
            ServersPage::Import { text } => {
                let mut lines = vec![
                    Line::styled("Paste the servers' JSON (an mcpServers file, a map of servers, or one server):", dim()),
                    Line::raw(""),
                ];
                lines.extend(text.split('\n').map(|l| Line::raw(visible(l))));
                (
                    " import MCP servers ".to_string(),
                    " Enter preview, Esc cancel ",
                    lines,
                    0,
                    true,
                )
            }
            ServersPage::Add(_) | ServersPage::SignIn(_) => return,
            ServersPage::Preview { text, scroll, .. } => (
                " import preview ".to_string(),
                " Enter import, ↑↓ scroll, Esc cancel ",
                text.lines().map(|l| Line::raw(l.to_string())).collect(),
                *scroll,
                false,
            ),
        };
        Clear.render(popup, buf);
        let mut paragraph = Paragraph::new(lines).scroll((scroll, 0)).block(
            Block::default()
                .borders(Borders::ALL)
                .border_type(BorderType::Rounded)
                .title(title)
                .title_bottom(Line::from(keys).right_aligned()),
        );
        if wrap {
            paragraph = paragraph.wrap(Wrap { trim: false });
        }
        paragraph.render(popup, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::text_of;

    fn server(alias: &str, enabled: bool, status: &str, stderr: &[&str]) -> ServerRow {
        ServerRow {
            alias: alias.into(),
            name: format!("{alias} server"),
            enabled,
            status: status.into(),
            stderr: stderr.iter().map(|s| s.to_string()).collect(),
            transport: "stdio".into(),
            target: format!("npx -y @example/{alias}"),
            signed_in: false,
        }
    }

    fn draw(overlay: &ServersOverlay, w: u16, h: u16) -> (String, Buffer) {
        let mut buf = Buffer::empty(Rect::new(0, 0, w, h));
        ServersView { overlay }.render(buf.area, &mut buf);
        (text_of(&buf), buf)
    }

    fn sample() -> ServersOverlay {
        ServersOverlay {
            rows: vec![
                server("ev", true, "13 tools, 1 with UI", &[]),
                server("gh", false, "Disabled", &[]),
                server(
                    "broken",
                    true,
                    "the server exited before answering initialize; its stderr ends with:\nnpm ERR! 404 Not Found",
                    &["npm ERR! code E404"],
                ),
            ],
            selected: 1,
            banner: None,
            page: ServersPage::List,
        }
    }

    #[test]
    fn servers_with_switches_statuses_and_stderr() {
        let (screen, buf) = draw(&sample(), 90, 16);
        insta::assert_snapshot!(screen);
        // The selected server's first line is reversed, the others are not.
        let row_of = |needle: &str| {
            screen
                .lines()
                .position(|l| l.contains(needle))
                .unwrap_or_else(|| panic!("{needle} not drawn:\n{screen}")) as u16
        };
        assert!(buf[(60, row_of("[ ] gh server"))]
            .modifier
            .contains(Modifier::REVERSED));
        assert!(!buf[(60, row_of("[x] ev server"))]
            .modifier
            .contains(Modifier::REVERSED));
    }

    #[test]
    fn a_signed_in_server_says_so_under_its_name() {
        let mut overlay = sample();
        overlay.rows[0].signed_in = true;
        let (screen, _) = draw(&overlay, 90, 16);
        let under = screen
            .lines()
            .find(|l| l.contains("ev  stdio"))
            .unwrap_or_default();
        assert!(under.contains("Signed in"), "{screen}");
        assert_eq!(screen.matches("Signed in").count(), 1, "{screen}");
    }

    #[test]
    fn hosting_off_shows_a_banner_on_top() {
        let mut overlay = sample();
        overlay.banner = Some("hosting is off: host_servers = false".into());
        let (screen, _) = draw(&overlay, 90, 16);
        let lines: Vec<&str> = screen.lines().collect();
        assert!(lines[2].contains("hosting is off"), "{screen}");
    }

    #[test]
    fn a_selection_below_the_fold_scrolls_into_view() {
        let mut overlay = sample();
        overlay.rows = (0..12)
            .map(|i| server(&format!("s{i:02}"), true, "Connecting", &[]))
            .collect();
        overlay.selected = 10;
        let (screen, _) = draw(&overlay, 80, 12);
        assert!(screen.contains("s10 server"), "{screen}");
        assert!(!screen.contains("s00 server"), "{screen}");
    }

    #[test]
    fn the_import_field_keeps_pasted_lines() {
        let mut overlay = sample();
        overlay.page = ServersPage::Import {
            text: "{\"mcpServers\": {\n  \"ev\": {\"command\": \"npx\", \"args\": [\"--\"]}\n}}"
                .into(),
        };
        let (screen, _) = draw(&overlay, 80, 12);
        assert!(
            screen.contains(r#"  "ev": {"command": "npx", "args": ["--"]}"#),
            "{screen}"
        );
        assert!(screen.contains("Enter preview"), "{screen}");
    }
}
