//! The servers overlay's sign-in page (`s` on a server in `Sign-in required`): the
//! authorization URL, cut into lines of the box's width so every character of it is drawn
//! (the server marks those cells as one OSC 8 link), and the ways back to calyx: for a local
//! client the page was opened in its browser; over SSH, the `ssh -L` line that forwards the
//! redirect port; for any client that cannot open a browser, a field for the address the
//! browser fails to load. The URL comes from the authorization server: it is drawn through
//! [`visible`], so no byte of it reaches the terminal as a control.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph, Widget};
use unicode_width::UnicodeWidthChar;

use crate::escape::visible;

/// A sign-in in progress, as its page shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SignInPage {
    pub alias: String,
    pub name: String,
    /// The authorization URL.
    pub url: String,
    /// The program that opened the page (a local client).
    pub opened: Option<String>,
    /// `ssh -L 41890:127.0.0.1:41890 user@host` (a client over SSH).
    pub forward: Option<String>,
    /// What was pasted so far; None when the client's browser reaches the listener itself.
    pub paste: Option<String>,
    /// Its row has said `Signing in` since the page opened (so another status means it ended).
    pub seen_signing_in: bool,
}

fn dim() -> Style {
    Style::default().fg(Color::DarkGray)
}

/// `text` cut into pieces at most `width` columns wide.
fn chunks(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut out = vec![String::new()];
    let mut used = 0;
    for ch in text.chars() {
        let w = ch.width().unwrap_or(0);
        if used + w > width {
            out.push(String::new());
            used = 0;
        }
        if let Some(last) = out.last_mut() {
            last.push(ch);
        }
        used += w;
    }
    out
}

impl SignInPage {
    /// The page's lines for a box `width` columns wide, and the indexes of the lines that
    /// hold the URL.
    pub fn lines(&self, width: usize) -> (Vec<Line<'static>>, std::ops::Range<usize>) {
        let mut lines = vec![match &self.opened {
            Some(program) => Line::styled(
                format!(
                    "Opened the sign-in page in {}; if it did not open, use this address:",
                    visible(program)
                ),
                dim(),
            ),
            None => Line::styled("Open this address in a browser to sign in:", dim()),
        }];
        let start = lines.len();
        let url = visible(&self.url);
        lines.extend(
            chunks(&url, width)
                .into_iter()
                .map(|piece| Line::styled(piece, Style::default().fg(Color::Cyan))),
        );
        let url_lines = start..lines.len();
        lines.push(Line::raw(""));
        if let Some(forward) = &self.forward {
            lines.push(Line::styled(
                "Over SSH, forward the redirect port from your computer first:",
                dim(),
            ));
            lines.push(Line::raw(format!("  {}", visible(forward))));
            lines.push(Line::styled("or, after approving,", dim()));
        }
        match &self.paste {
            Some(pasted) => {
                lines.push(Line::styled(
                    "paste the address the browser fails to load (http://127.0.0.1:PORT/callback?code=...), then Enter:",
                    dim(),
                ));
                lines.push(Line::styled(
                    format!("> {}", visible(pasted)),
                    Style::default().add_modifier(Modifier::BOLD),
                ));
            }
            None => lines.push(Line::styled(
                "Waiting for the browser to come back to calyx ...",
                dim(),
            )),
        }
        (lines, url_lines)
    }

    /// The keys shown at the bottom of the page.
    pub fn keys(&self) -> &'static str {
        if self.paste.is_some() {
            " Enter finish, C-y copy address, Esc back (sign-in goes on; c cancels it) "
        } else {
            " y/C-y copy address, Esc back (sign-in goes on; c cancels it) "
        }
    }
}

/// Draws a [`SignInPage`] in `popup`; returns the cells of the URL (one rect per line).
pub fn render_sign_in(page: &SignInPage, popup: Rect, buf: &mut Buffer) -> Vec<Rect> {
    let inner_width = popup.width.saturating_sub(2) as usize;
    let (lines, url_lines) = page.lines(inner_width);
    let inner_rows = popup.height.saturating_sub(2) as usize;
    let cells = url_lines
        .filter(|&i| i < inner_rows)
        .filter_map(|i| {
            let width = lines.get(i)?.width() as u16;
            Some(Rect::new(popup.x + 1, popup.y + 1 + i as u16, width, 1))
        })
        .collect();
    Clear.render(popup, buf);
    Paragraph::new(lines)
        .block(
            Block::default()
                .borders(Borders::ALL)
                .border_type(BorderType::Rounded)
                .title(format!(" sign in to {} ", visible(&page.name)))
                .title_bottom(Line::from(page.keys()).right_aligned()),
        )
        .render(popup, buf);
    cells
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::text_of;

    #[test]
    fn the_url_is_drawn_whole_and_an_escape_in_it_is_not_passed_on() {
        let page = SignInPage {
            alias: "lin".into(),
            name: "Linear".into(),
            url: format!(
                "https://auth.example/authorize?state=abc&x=\u{1b}]0;owned\u{7}&pad={}",
                "p".repeat(120)
            ),
            forward: Some("ssh -L 41890:127.0.0.1:41890 ana@198.51.100.7".into()),
            paste: Some("http://127.0.0.1:41890/callback?code=1".into()),
            ..SignInPage::default()
        };
        let mut buf = Buffer::empty(Rect::new(0, 0, 70, 20));
        let cells = render_sign_in(&page, buf.area, &mut buf);
        let screen = text_of(&buf);
        assert!(!screen.contains('\u{1b}'), "{screen}");
        // Every cell of the URL's lines joined is the (made visible) URL.
        let joined: String = cells
            .iter()
            .map(|r| {
                (r.x..r.x + r.width)
                    .map(|x| buf[(x, r.y)].symbol().to_string())
                    .collect::<String>()
            })
            .collect();
        assert_eq!(joined, visible(&page.url));
        assert!(cells.len() >= 3, "cut into lines: {cells:?}");
        assert!(screen.contains("ssh -L 41890:127.0.0.1:41890 ana@198.51.100.7"));
        assert!(screen.contains("> http://127.0.0.1:41890/callback?code=1"));
        assert!(screen.contains("sign in to Linear"), "{screen}");
    }

    #[test]
    fn a_local_client_is_told_where_the_page_opened() {
        let page = SignInPage {
            name: "Linear".into(),
            url: "https://auth.example/authorize".into(),
            opened: Some("firefox".into()),
            ..SignInPage::default()
        };
        let mut buf = Buffer::empty(Rect::new(0, 0, 100, 12));
        render_sign_in(&page, buf.area, &mut buf);
        let screen = text_of(&buf);
        assert!(
            screen.contains("Opened the sign-in page in firefox"),
            "{screen}"
        );
        assert!(screen.contains("Waiting for the browser"), "{screen}");
        assert!(!screen.contains("paste the address"), "{screen}");
    }
}
