//! Drawing the elicitation panel ([`super::elicit_panel`]): a box titled `<name> request`,
//! headed `<name> asks` and the server's message, then the form's fields (title, `*` when
//! required, description, value, the refusal under it) or the URL, then the buttons and the
//! keys. A form taller than the screen scrolls so the focused field shows; the buttons stay.
//! Every server-provided string goes through `escape::visible` (no escape injection).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::{Block, Borders, Clear, Widget};

use crate::hosted::elicit::form::{Button, Field, Focus, Form, Kind};
use crate::hosted::elicit::Request;
use crate::server::model::elicit_panel::{ElicitPanel, OpenedVia, UrlButton};

/// The widest the box gets.
const MAX_WIDTH: u16 = 84;

/// One row: its spans and, for an address, the link its cells carry.
#[derive(Default)]
struct Row {
    spans: Vec<(String, Style)>,
    link: Option<String>,
}

fn row(text: impl Into<String>, style: Style) -> Row {
    Row {
        spans: vec![(text.into(), style)],
        link: None,
    }
}

fn dim() -> Style {
    Style::default().fg(Color::Gray)
}

fn bold() -> Style {
    Style::default().add_modifier(Modifier::BOLD)
}

fn chosen() -> Style {
    Style::default().add_modifier(Modifier::REVERSED)
}

/// `text` safe to show, wrapped at `width` characters, each piece a row of `style`.
fn wrapped(text: &str, width: usize, indent: &str, style: Style) -> Vec<Row> {
    let mut rows = Vec::new();
    for line in text.lines() {
        let shown: Vec<char> = calyx_tui::escape::visible(line).chars().collect();
        if shown.is_empty() {
            rows.push(row(String::new(), style));
        }
        let room = width.saturating_sub(indent.chars().count()).max(1);
        for chunk in shown.chunks(room) {
            rows.push(row(
                format!("{indent}{}", chunk.iter().collect::<String>()),
                style,
            ));
        }
    }
    rows
}

/// The buttons row, the focused one reversed.
fn buttons<T: PartialEq + Copy>(all: &[(T, &str)], focused: Option<T>) -> Row {
    let mut spans = Vec::new();
    for (i, (button, label)) in all.iter().enumerate() {
        if i > 0 {
            spans.push(("  ".to_string(), Style::default()));
        }
        let style = if focused == Some(*button) {
            chosen().add_modifier(Modifier::BOLD)
        } else {
            bold()
        };
        spans.push((format!("[ {label} ]"), style));
    }
    Row { spans, link: None }
}

/// The rows of one field.
fn field_rows(field: &Field, focused: bool, width: usize) -> Vec<Row> {
    let marker = if focused { "› " } else { "  " };
    let mut head = Row::default();
    let title_style = if focused { bold() } else { Style::default() };
    head.spans.push((
        format!("{marker}{}", calyx_tui::escape::visible(&field.title)),
        title_style,
    ));
    if field.required {
        head.spans
            .push((" *".to_string(), Style::default().fg(Color::Red)));
    }
    let mut rows = vec![head];
    if let Some(description) = &field.description {
        rows.extend(wrapped(description, width, "    ", dim()));
    }
    let value = Style::default().fg(Color::Cyan);
    let on = |yes: bool| if yes { "[x]" } else { "[ ]" };
    match &field.kind {
        Kind::Text { .. } | Kind::Number { .. } => {
            let cursor = if focused { "_" } else { "" };
            let text = format!("[{}{cursor}]", calyx_tui::escape::visible(&field.text));
            rows.extend(wrapped(&text, width, "    ", value));
        }
        Kind::Boolean => rows.push(row(
            format!(
                "    {} {}",
                on(field.checked),
                if field.checked { "yes" } else { "no" }
            ),
            value,
        )),
        Kind::Select { options } => {
            let title = field
                .selected
                .and_then(|i| options.get(i))
                .map_or_else(|| "(none)".to_string(), |c| c.title.clone());
            rows.push(row(
                format!("    ◀ {} ▶", calyx_tui::escape::visible(&title)),
                value,
            ));
        }
        Kind::Multi { options, .. } => {
            for (i, choice) in options.iter().enumerate() {
                let ticked = field.picked.get(i).copied().unwrap_or(false);
                let text = format!(
                    "    {} {}",
                    on(ticked),
                    calyx_tui::escape::visible(&choice.title)
                );
                let style = if focused && i == field.cursor {
                    value.add_modifier(Modifier::REVERSED)
                } else {
                    value
                };
                rows.push(row(text, style));
            }
        }
    }
    if let Some(error) = &field.error {
        rows.push(row(
            format!("    ! {}", calyx_tui::escape::visible(error)),
            Style::default().fg(Color::Red),
        ));
    }
    rows
}

/// The form's field rows, and which rows the focused field takes.
fn form_rows(form: &Form, width: usize) -> (Vec<Row>, Option<(usize, usize)>) {
    let mut rows = Vec::new();
    let mut focused = None;
    for (i, field) in form.fields.iter().enumerate() {
        let is_focused = form.focus() == Focus::Field(i);
        let start = rows.len();
        rows.extend(field_rows(field, is_focused, width));
        if is_focused {
            focused = Some((start, rows.len()));
        }
    }
    (rows, focused)
}

/// The panel's rows.
struct Layout {
    head: Vec<Row>,
    /// The part that scrolls.
    body: Vec<Row>,
    /// The body rows of the focused field.
    focused: Option<(usize, usize)>,
    /// The buttons and keys.
    foot: Vec<Row>,
}

fn layout(panel: &ElicitPanel, width: usize) -> Layout {
    let name = calyx_tui::escape::visible(&panel.pending.name);
    let mut head = vec![row(format!("{name} asks"), bold())];
    if let Some(pane) = &panel.pane {
        head.push(row(format!("during a call from pane {pane}"), dim()));
    }
    let (message, body, focused, foot) = match (&panel.pending.request, &panel.form) {
        (Request::Form { message, .. }, Some(form)) => {
            let (body, focused) = form_rows(form, width);
            let focus = match form.focus() {
                Focus::Button(b) => Some(b),
                Focus::Field(_) => None,
            };
            let foot = vec![
                row(String::new(), Style::default()),
                buttons(
                    &[
                        (Button::Accept, "Accept"),
                        (Button::Decline, "Decline"),
                        (Button::Cancel, "Cancel"),
                    ],
                    focus,
                ),
                row(
                    "Tab/↑↓ move · Space toggle · ←→ choose · Enter press · Esc cancel",
                    dim(),
                ),
            ];
            (message.clone(), body, focused, foot)
        }
        (Request::Url { message, url, .. }, _) => {
            let mut body = Vec::new();
            let link = Style::default().fg(Color::Cyan);
            for mut r in wrapped(url, width, "", link) {
                r.link = Some(url.clone());
                body.push(r);
            }
            let foot = if panel.pending.opened {
                let note = match panel.opened_via {
                    Some(OpenedVia::Browser) => "The page opened in your browser: finish there.",
                    _ => "Open the address above in your browser (Ctrl-Y copies it).",
                };
                vec![
                    row(String::new(), Style::default()),
                    row(note, Style::default()),
                    buttons(&[((), "Done")], Some(())),
                    row("Enter Done · Ctrl-Y copy the address", dim()),
                ]
            } else {
                vec![
                    row(String::new(), Style::default()),
                    buttons(
                        &[
                            (UrlButton::Cancel, "Cancel"),
                            (UrlButton::Decline, "Decline"),
                            (UrlButton::Open, "Open"),
                        ],
                        Some(panel.url_focus),
                    ),
                    row(
                        "←→ move · Enter press · Ctrl-Y copy the address · Esc cancel",
                        dim(),
                    ),
                ]
            };
            (message.clone(), body, None, foot)
        }
        (Request::Form { message, .. }, None) => (message.clone(), Vec::new(), None, Vec::new()),
    };
    head.extend(wrapped(&message, width, "", Style::default()));
    head.push(row(String::new(), Style::default()));
    Layout {
        head,
        body,
        focused,
        foot,
    }
}

/// Draws `panel` centred in `area` (addresses as OSC 8 links when `links` is given).
pub fn draw(
    panel: &ElicitPanel,
    area: Rect,
    buf: &mut Buffer,
    mut links: Option<&mut calyx_tui::FrameLinks>,
) {
    let width = area.width.min(MAX_WIDTH);
    if width < 12 || area.height < 5 {
        return;
    }
    let inner_width = usize::from(width.saturating_sub(4)).max(1);
    let Layout {
        head,
        body,
        focused,
        foot,
    } = layout(panel, inner_width);
    let wanted = head.len() + body.len() + foot.len() + 2;
    let height = u16::try_from(wanted).unwrap_or(u16::MAX).min(area.height);
    // The body gets what the head and foot leave; it scrolls to show the focused field.
    let fixed = head.len() + foot.len() + 2;
    let room = usize::from(height).saturating_sub(fixed);
    let offset = match focused {
        Some((start, end)) if end > room => (end - room).min(start),
        _ => 0,
    };
    let mut rows: Vec<&Row> = head.iter().collect();
    rows.extend(body.iter().skip(offset).take(room));
    rows.extend(foot.iter());
    // Too short for everything: the head gives way first, the buttons stay.
    let inside_rows = usize::from(height.saturating_sub(2));
    if rows.len() > inside_rows {
        let drop = rows.len() - inside_rows;
        rows.drain(0..drop.min(rows.len()));
    }
    let rect = Rect::new(
        area.x + (area.width - width) / 2,
        area.y + (area.height - height) / 2,
        width,
        height,
    );
    Clear.render(rect, buf);
    let title = format!(
        " {} request ",
        calyx_tui::escape::visible(&panel.pending.name)
    );
    let block = Block::default()
        .borders(Borders::ALL)
        .title(title)
        .border_style(Style::default().fg(Color::Yellow))
        .title_style(bold());
    let inside = block.inner(rect);
    block.render(rect, buf);
    for (i, r) in rows.iter().enumerate() {
        let Ok(dy) = u16::try_from(i) else { break };
        if dy >= inside.height {
            break;
        }
        let y = inside.y + dy;
        let mut x = inside.x + 1;
        let right = inside.x + inside.width;
        for (text, style) in &r.spans {
            let max = usize::from(right.saturating_sub(x));
            let (end, _) = buf.set_stringn(x, y, text, max, *style);
            if let (Some(links), Some(target)) = (links.as_deref_mut(), &r.link) {
                if let Some(handle) = links.add(target, None) {
                    for cx in x..end {
                        links.set(cx, y, handle);
                    }
                }
            }
            x = end;
        }
    }
}

#[cfg(test)]
#[path = "elicit_draw_tests.rs"]
mod tests;
