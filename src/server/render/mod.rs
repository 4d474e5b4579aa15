//! Composes each client's frame from the session's panes, borders, status line and overlays,
//! and sends only the rows that changed since the client's last frame. Most frames only update
//! pane rows in place (`in_place`); the others are composed whole here.

pub mod emit;
#[cfg(test)]
mod emit_props;
pub mod frame_cache;
mod in_place;
mod pane_rows;

use calyx_tui::{FrameLinks, HelpView, PaneView};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget;

use crate::server::model::state::{ClientId, State};
use crate::server::view::approval_panel::PanelData;
use crate::server::view::chrome::Chrome;
use crate::server::view::sidebar::AgentsView;

use frame_cache::{FrameCache, PaneDrawn, PaneStamp};
use pane_rows::{drawn_in, pane_cursor, row_versions, rows_to_redraw, CursorSpot};

/// A frame to send: the diff bytes.
pub struct Rendered {
    pub bytes: Vec<u8>,
}

/// Draws the client's whole frame into a buffer (the chrome, then every pane); returns it and
/// the cursor.
fn compose(
    state: &mut State,
    hyperlinks: bool,
    chrome: &Chrome,
    previous: Option<Previous<'_>>,
    scratch: Option<Buffer>,
    panel: Option<&PanelData>,
) -> Composed {
    let full = chrome.area;
    // Resetting the buffer of the frame before last costs a seventh of allocating a new one
    // (15 vs 113 us at 200x50), on every frame.
    let mut buf = match scratch {
        Some(mut b) if b.area == full => {
            b.reset();
            b
        }
        _ => Buffer::empty(full),
    };
    let mut links = FrameLinks::new(full.width, full.height);
    let previous = previous.filter(|p| p.buf.area == buf.area);
    let mut stamps = Vec::new();
    chrome.draw_under(&mut buf);
    for dock in &chrome.docks {
        dock.draw(&mut buf, hyperlinks.then_some(&mut links));
    }

    let mut cursor = None;
    let mut incomplete = false;
    for slot in &chrome.panes {
        let Some(pane) = state.panes.get_mut(&slot.id) else {
            continue;
        };
        let inner = slot.inner;
        if let Some(copy) = pane.copy.as_mut() {
            let highlights = copy.highlights();
            let screen_cursor = copy.screen_cursor();
            let view = PaneView {
                screen: copy.screen(),
                highlights: &highlights,
            };
            if hyperlinks {
                view.render_with_links(inner, &mut buf, &mut links);
            } else {
                view.render(inner, &mut buf);
            }
            if slot.focused && chrome.pane_cursor {
                cursor = screen_cursor.map(|(r, c)| CursorSpot {
                    x: inner.x + c,
                    y: inner.y + r,
                    style: 2,
                });
            }
            continue;
        }
        let terminal = pane.terminal.clone();
        let locked = crate::server::model::state::lock_for_frame(&terminal, slot.focused);
        state.counts.lock(locked.is_some());
        let Some(term) = locked else {
            // Busy: show what this client saw last, and draw again next frame.
            incomplete = true;
            if let Some(prev) = previous {
                copy_cells(prev, inner, &mut buf, Some(&mut links));
            }
            continue;
        };
        let screen = term.screen();
        let stamp = PaneStamp::of(slot, screen, hyperlinks);
        let rows = row_versions(screen, inner);
        let view = PaneView {
            screen,
            highlights: &[],
        };
        let links_out = hyperlinks.then_some(&mut links);
        let drawn = previous.and_then(|p| {
            drawn_in(p.panes, slot, hyperlinks)
                .find(|d| d.stamp.screen == stamp.screen)
                .map(|d| (p, d))
        });
        match drawn {
            // Unchanged since the last frame: its cells are the same, copy them.
            Some((prev, drawn)) if drawn.stamp == stamp => {
                copy_cells(prev, inner, &mut buf, links_out)
            }
            // Changed: copy the rows that kept their version, draw the others.
            Some((prev, drawn)) => {
                let redraw = rows_to_redraw(&rows, &drawn.rows);
                let mut links_out = links_out;
                for (r, _) in redraw.iter().enumerate().filter(|(_, d)| !**d) {
                    let row = Rect::new(inner.x, inner.y + r as u16, inner.width, 1);
                    copy_cells(prev, row, &mut buf, links_out.as_deref_mut());
                }
                view.render_rows(inner, &mut buf, links_out, &redraw);
            }
            None => match links_out {
                Some(links) => view.render_with_links(inner, &mut buf, links),
                None => view.render(inner, &mut buf),
            },
        }
        stamps.push(PaneDrawn { stamp, rows });
        if slot.focused && chrome.pane_cursor {
            cursor = pane_cursor(screen, inner);
        }
    }

    chrome.draw_status(&mut buf);
    if let Some((x, y)) = chrome.prompt_cursor {
        cursor = Some(CursorSpot { x, y, style: 0 });
    }
    // An overlay covers panes: next frame must not copy their cells from this one.
    if chrome.overlaid() {
        stamps.clear();
    }
    if let Some(panel) = panel {
        panel.render(chrome.overlay_area(), &mut buf);
    }
    if let Some(tree) = chrome.tree() {
        let preview = tree.preview_area(chrome.overlay_area());
        tree.render(chrome.overlay_area(), &mut buf);
        // The selected row's pane, its screen cropped to the preview's box (tmux's preview).
        // A reader mid-parse is not waited for: the box stays empty and the frame comes again.
        if let Some((pane, inside)) = preview {
            if let Some(p) = state.panes.get(&pane) {
                match crate::server::model::state::try_lock_terminal(&p.terminal) {
                    Some(term) => {
                        crate::server::view::tree::draw_preview(term.screen(), inside, &mut buf)
                    }
                    None => incomplete = true,
                }
            }
        }
    }
    if let Some(servers) = chrome.servers() {
        // The sign-in page's URL is one OSC 8 link where the terminal takes them.
        let linked = servers.render_linked(chrome.overlay_area(), &mut buf);
        if let Some((url, cells)) = linked.filter(|_| hyperlinks) {
            if let Some(handle) = links.add(&url, None) {
                for cell in cells {
                    for x in cell.x..cell.x + cell.width {
                        links.set(x, cell.y, handle);
                    }
                }
            }
        }
    }
    if let Some(list) = &chrome.view_list {
        list.render(chrome.overlay_area(), &mut buf);
    }
    if let Some(scroll) = chrome.help() {
        let entries = crate::commands::help_entries(&state.config.keymap);
        let prefix = state.config.keymap.prefix.name();
        HelpView {
            prefix: &prefix,
            entries: &entries,
            scroll,
        }
        .render(chrome.overlay_area(), &mut buf);
    }
    if chrome.display_panes() {
        // Numbered as `#{pane_index}` counts: the window's panes in layout order (a zoomed
        // window shows one pane, still with its own number).
        let order = chrome
            .panes
            .first()
            .and_then(|slot| state.locate(slot.id))
            .and_then(|(s, w)| state.sessions.get(&s)?.windows.get(w))
            .map(|w| w.layout.panes())
            .unwrap_or_default();
        draw_pane_numbers(&chrome.panes, &order, &mut buf);
    }
    if let Some(scroll) = chrome.messages() {
        let entries = state.messages.shown();
        calyx_tui::MessagesView {
            entries: &entries,
            scroll,
        }
        .render(chrome.overlay_area(), &mut buf);
    }
    // On top of everything: whatever the client was doing, the waiting server needs an answer.
    if let Some(panel) = chrome.elicit() {
        let links_out = hyperlinks.then_some(&mut links);
        crate::server::view::elicit_draw::draw(panel, chrome.overlay_area(), &mut buf, links_out);
    }
    // On top of everything: whatever the client was doing, the waiting agent needs an answer.
    if let Some(prompt) = chrome.sign_in() {
        let links_out = hyperlinks.then_some(&mut links);
        crate::server::view::sign_in_prompt::draw(
            prompt,
            chrome.overlay_area(),
            &mut buf,
            links_out,
        );
    }
    Composed {
        buf,
        links,
        stamps,
        cursor,
        incomplete,
    }
}

/// The frame a client's terminal shows, as `compose` reads it.
#[derive(Clone, Copy)]
struct Previous<'a> {
    buf: &'a Buffer,
    links: &'a FrameLinks,
    panes: &'a [PaneDrawn],
}

/// Copies the cells (and links, unless `links` is None) of `rect` from the previous frame
/// (same size as `buf`).
fn copy_cells(prev: Previous<'_>, rect: Rect, buf: &mut Buffer, links: Option<&mut FrameLinks>) {
    let rect = rect.intersection(buf.area);
    let width = usize::from(buf.area.width);
    for y in rect.top()..rect.bottom() {
        let start = usize::from(y - buf.area.y) * width + usize::from(rect.x - buf.area.x);
        let range = start..start + usize::from(rect.width);
        if let (Some(to), Some(from)) = (
            buf.content.get_mut(range.clone()),
            prev.buf.content.get(range),
        ) {
            to.clone_from_slice(from);
        }
    }
    if let Some(links) = links {
        links.copy_rect(prev.links, rect.x, rect.y, rect.width, rect.height);
    }
}

/// A composed frame.
struct Composed {
    buf: Buffer,
    /// Which cells are OSC 8 hyperlinks (empty when they are not passed on to this client).
    links: FrameLinks,
    /// The panes drawn live, for the next frame to copy the unchanged ones.
    stamps: Vec<PaneDrawn>,
    cursor: Option<CursorSpot>,
    /// Some pane was busy and shows its previous cells: draw again soon.
    incomplete: bool,
}

/// The rows to send: every row that changed at all, whole. Whole rows rather than single cells
/// keep each line of text contiguous in the byte stream (a scrolled line is rewritten, not
/// patched by its differing digits), which is what tools that read a terminal's output, and
/// terminals without cell-level damage tracking, handle best; the cost is a few hundred bytes
/// per changed row. A row whose links changed but not its text is sent too.
fn changed_rows(
    previous: &Buffer,
    previous_links: &FrameLinks,
    next: &Buffer,
    next_links: &FrameLinks,
) -> Vec<u16> {
    let area = next.area;
    let width = usize::from(area.width);
    (0..area.height)
        .filter(|&row| {
            let range = usize::from(row) * width..(usize::from(row) + 1) * width;
            previous.content.get(range.clone()) != next.content.get(range)
                || !previous_links.row_eq(next_links, area.y + row)
        })
        .map(|row| area.y + row)
        .collect()
}

/// Renders a client's frame and returns the bytes that bring its terminal up to date, or None
/// when nothing changed.
pub fn render_client(
    state: &mut State,
    agents: &AgentsView,
    panel: Option<&PanelData>,
    tree: Option<Vec<calyx_tui::TreeRow>>,
    client: ClientId,
    cache: &mut FrameCache,
) -> Option<Rendered> {
    let chrome = Chrome::gather(state, agents, client, panel.is_some(), tree)?;
    let any_motion = wants_any_motion(state, &chrome);
    state.clients.get(&client)?;
    let drawn_early = std::mem::take(&mut cache.drawn_early);
    let mut rendered = if drawn_early && cache.chrome.as_ref() == Some(&chrome) {
        // `render_early` drew the panes in this same chrome a moment ago: drawing them again
        // would lock every pane's terminal a second time a frame for nothing (output parsed
        // since then notifies the owner, which draws the next frame).
        Rendered { bytes: Vec::new() }
    } else {
        let mut shown = std::mem::take(cache);
        match render_in_place(state, &chrome, client, &mut shown, cache) {
            Some(rendered) => rendered,
            None => render_whole(state, chrome, client, shown, panel, cache)?,
        }
    };
    let c = state.clients.get_mut(&client)?;
    if c.any_motion != any_motion {
        c.any_motion = any_motion;
        let mode: &[u8] = if any_motion {
            b"\x1b[?1003h"
        } else {
            b"\x1b[?1003l"
        };
        rendered.bytes.extend_from_slice(mode);
    }
    Some(rendered)
}

/// Whether the client's terminal should report mouse motion with no button held (mode 1003):
/// only while a pane it shows asked for it, since every motion then costs a message. Read
/// from the panes' glances: a frame locks each pane's terminal once, for its rows.
fn wants_any_motion(state: &State, chrome: &Chrome) -> bool {
    if !state.config.mouse {
        return false;
    }
    chrome
        .panes
        .iter()
        .filter(|s| !s.copy)
        .filter_map(|slot| state.panes.get(&slot.id))
        .any(|pane| pane.glance.mouse_any_motion())
}

/// A client's frame drawn in place with the chrome of its last frame, before anything else of
/// the frame is gathered; None, with nothing drawn, when the last frame cannot be updated in
/// place. A keystroke's echo is usually the only change: it then reaches the terminal without
/// waiting for the sidebar's agents, the chrome's gathering (its titles, badges and status
/// line) and its comparison, a third of the echo's frame on a machine where other programs
/// took the caches between two keys. `render_client` runs next and finds the chrome changed
/// or not: when it did, it composes the whole frame over what this one drew.
pub fn render_early(
    state: &mut State,
    client: ClientId,
    cache: &mut FrameCache,
) -> Option<Rendered> {
    let chrome = cache.chrome.take()?;
    let mut shown = std::mem::take(cache);
    let rendered = draw_in_place(state, &chrome, client, &mut shown, cache);
    if rendered.is_none() {
        *cache = shown;
    }
    cache.chrome = Some(chrome);
    cache.drawn_early = rendered.is_some();
    rendered
}

/// The usual frame, where only pane contents changed (output, an echo): updates the shown
/// frame in place, drawing and comparing just the pane rows whose version changed. None, with
/// `shown` untouched, when the frame must be composed whole.
fn render_in_place(
    state: &mut State,
    chrome: &Chrome,
    client: ClientId,
    shown: &mut FrameCache,
    cache: &mut FrameCache,
) -> Option<Rendered> {
    if shown.chrome.as_ref() != Some(chrome) {
        return None;
    }
    draw_in_place(state, chrome, client, shown, cache)
}

/// `render_in_place` once the chrome is known to be the shown frame's (`shown.chrome`, or
/// taken out of it by `render_early`). A frame that changes nothing the client shows (no cell,
/// and the cursor where the last in-place frame put it) has no bytes: `render_early` drew it.
fn draw_in_place(
    state: &mut State,
    chrome: &Chrome,
    client: ClientId,
    shown: &mut FrameCache,
    cache: &mut FrameCache,
) -> Option<Rendered> {
    let buf = shown.buf.as_mut()?;
    if buf.area != chrome.area || !shown.links.is_empty() {
        return None;
    }
    let hyperlinks = state.clients.get(&client)?.hyperlinks;
    let update = in_place::update(
        state,
        hyperlinks,
        chrome,
        buf,
        &shown.panes,
        &mut shown.copies,
    )?;
    let cursor = cursor_key(update.cursor.as_ref());
    let unchanged =
        update.spans.is_empty() && update.scrolls.is_empty() && shown.cursor_sent == Some(cursor);
    let c = state.clients.get_mut(&client)?;
    c.dirty = update.incomplete;
    let bytes = if unchanged {
        Vec::new()
    } else {
        in_place_bytes(buf, &update.scrolls, &update.spans, c, update.cursor)
    };
    cache.buf = shown.buf.take();
    cache.spare = shown.spare.take();
    cache.links = std::mem::take(&mut shown.links);
    cache.panes = update.stamps;
    // Equal to `chrome` (checked by the caller): keep it rather than copy it.
    cache.chrome = shown.chrome.take();
    cache.copies = std::mem::take(&mut shown.copies);
    cache.cursor_sent = Some(cursor);
    Some(Rendered { bytes })
}

/// The bytes of an in-place frame: the scrolls, the changed cells of `buf`, the cursor.
fn in_place_bytes(
    buf: &Buffer,
    scrolls: &[(u16, u16, u16)],
    spans: &[emit::Span],
    c: &mut crate::server::model::state::Client,
    cursor: Option<CursorSpot>,
) -> Vec<u8> {
    let mut out: Vec<u8> = Vec::with_capacity(4 * 1024);
    out.extend_from_slice(b"\x1b[?2026h");
    for (top, height, lines) in scrolls {
        // Blank lines come in with the default colors; DECSTBM is 1-based.
        out.extend_from_slice(
            format!(
                "\x1b[0m\x1b[{};{}r\x1b[{lines}S\x1b[r",
                top + 1,
                top + height
            )
            .as_bytes(),
        );
    }
    emit::write_spans(&mut out, buf, spans, None);
    finish_frame(&mut out, c, cursor);
    out
}

/// Composes the whole frame and sends the rows that differ from the shown one.
fn render_whole(
    state: &mut State,
    chrome: Chrome,
    client: ClientId,
    shown: FrameCache,
    panel: Option<&PanelData>,
    cache: &mut FrameCache,
) -> Option<Rendered> {
    let FrameCache {
        buf: previous,
        links: previous_links,
        panes: previous_panes,
        spare: scratch,
        copies,
        ..
    } = shown;
    let hyperlinks = state.clients.get(&client)?.hyperlinks;
    let Composed {
        buf,
        links,
        stamps,
        cursor,
        incomplete,
    } = compose(
        state,
        hyperlinks,
        &chrome,
        previous.as_ref().map(|buf| Previous {
            buf,
            links: &previous_links,
            panes: &previous_panes,
        }),
        scratch,
        panel,
    );
    let c = state.clients.get_mut(&client)?;
    let mut out: Vec<u8> = Vec::with_capacity(16 * 1024);
    out.extend_from_slice(b"\x1b[?2026h");
    let (previous, previous_links) = match previous {
        Some(prev) if prev.area == buf.area => (prev, previous_links),
        _ => {
            out.extend_from_slice(b"\x1b[0m\x1b[H\x1b[2J");
            (Buffer::empty(buf.area), FrameLinks::default())
        }
    };
    let rows = changed_rows(&previous, &previous_links, &buf, &links);
    crate::server::render::emit::write_rows(&mut out, &buf, &rows, Some(&links));
    cache.cursor_sent = Some(cursor_key(cursor.as_ref()));
    finish_frame(&mut out, c, cursor);
    cache.buf = Some(buf);
    cache.spare = Some(previous);
    cache.links = links;
    cache.panes = stamps;
    cache.chrome = Some(chrome);
    cache.copies = copies;
    c.dirty = incomplete;
    Some(Rendered { bytes: out })
}

/// What `finish_frame` makes of the cursor, to tell whether a frame would move it.
fn cursor_key(cursor: Option<&CursorSpot>) -> Option<(u16, u16, u8)> {
    cursor.map(|s| (s.x, s.y, s.style))
}

/// Places (or hides) the cursor and ends the synchronized update.
fn finish_frame(
    out: &mut Vec<u8>,
    c: &mut crate::server::model::state::Client,
    cursor: Option<CursorSpot>,
) {
    match cursor {
        Some(spot) => {
            if c.cursor_style != Some(spot.style) {
                out.extend_from_slice(format!("\x1b[{} q", spot.style).as_bytes());
                c.cursor_style = Some(spot.style);
            }
            out.extend_from_slice(
                format!("\x1b[{};{}H\x1b[?25h", spot.y + 1, spot.x + 1).as_bytes(),
            );
        }
        None => out.extend_from_slice(b"\x1b[?25l"),
    }
    out.extend_from_slice(b"\x1b[?2026l");
}

/// `prefix q`: each pane's number (its index in the window, as `#{pane_index}`) in a block at
/// the middle of the pane, the focused one in red, the others in blue (tmux's colours).
fn draw_pane_numbers(
    panes: &[crate::server::view::chrome::PaneSlot],
    order: &[crate::layout::PaneId],
    buf: &mut Buffer,
) {
    use ratatui::style::{Color, Modifier, Style};
    for slot in panes {
        let Some(index) = order.iter().position(|p| *p == slot.id) else {
            continue;
        };
        let label = format!(" {index} ");
        let width = u16::try_from(label.len()).unwrap_or(u16::MAX);
        let area = slot.inner;
        if area.width < width || area.height == 0 {
            continue;
        }
        let x = area.x + (area.width - width) / 2;
        let y = area.y + area.height / 2;
        let colour = if slot.focused {
            Color::Red
        } else {
            Color::Blue
        };
        let style = Style::default()
            .bg(colour)
            .fg(Color::White)
            .add_modifier(Modifier::BOLD);
        buf.set_string(x, y, &label, style);
    }
}
