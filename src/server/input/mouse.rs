//! What the mouse does in normal mode: drag a border, focus a pane, pass the event to a
//! program that asked for mouse reports, scroll into and out of copy mode, and select text.
//! One function per gesture; [`Server::mouse`] decides which one an event is.

use crate::input::{encode_mouse, MouseEvent, MouseKind};
use crate::layout::PaneId;
use crate::server::model::state::{ClientId, Drag, SessionId};
use crate::server::owner::Server;
use ratatui::layout::Rect;

/// Lines the mouse wheel scrolls.
const WHEEL_LINES: isize = 3;

/// What a pane's terminal says about the mouse, read once per event.
struct PaneMouse {
    /// The program asked for mouse reports.
    wants_mouse: bool,
    /// ... in SGR encoding.
    sgr: bool,
    alt_screen: bool,
    in_copy: bool,
}

/// Where a mouse event landed in a pane.
#[derive(Clone, Copy)]
struct Hit {
    pane: PaneId,
    /// The cell in the pane's content.
    px: u16,
    py: u16,
}

impl Server {
    /// A mouse event from a client in normal mode.
    pub(crate) fn mouse(&mut self, client: ClientId, ev: MouseEvent) {
        if !self.state.config.mouse {
            return;
        }
        let Some(session) = self.client_session(client) else {
            return;
        };
        // A border drag in progress owns the mouse until release.
        if let Some(drag) = self.state.clients.get(&client).and_then(|c| c.drag.clone()) {
            self.drag_border(client, session, drag, ev);
            return;
        }
        let selecting = self.state.clients.get(&client).and_then(|c| c.selecting);
        if let Some(pane) = selecting {
            self.mouse_select(client, pane, ev);
            return;
        }
        if let MouseKind::Press(0) = ev.kind {
            if self.start_border_drag(client, session, ev) {
                return;
            }
        }
        let Some((pane, ox, oy, in_content)) = self.pane_at(client, ev.x, ev.y) else {
            return;
        };
        if let MouseKind::Press(_) = ev.kind {
            if self.focused_pane(client) != Some(pane) {
                self.focus_pane(pane);
            }
        }
        let Some(seen) = self.pane_mouse(pane) else {
            return;
        };
        let hit = Hit {
            pane,
            px: ev.x.saturating_sub(ox),
            py: ev.y.saturating_sub(oy),
        };
        if seen.wants_mouse && !seen.in_copy && in_content {
            self.forward_mouse(hit, &ev, seen.sgr);
            return;
        }
        match ev.kind {
            MouseKind::WheelUp if !seen.alt_screen || seen.in_copy => self.wheel_up(pane),
            MouseKind::WheelDown if seen.in_copy => self.wheel_down(pane),
            MouseKind::Press(0) if in_content => self.press_to_select(client, hit, &seen),
            _ => {}
        }
    }

    /// Moves the dragged border with the mouse; any other event ends the drag.
    fn drag_border(&mut self, client: ClientId, session: SessionId, drag: Drag, ev: MouseEvent) {
        match ev.kind {
            MouseKind::Drag(_) => {
                if let Some(s) = self.state.sessions.get_mut(&session) {
                    let area = s.layout_area();
                    if let Some(w) = s.window_mut() {
                        w.layout.drag_divider(&drag.path, area, ev.x, ev.y);
                    }
                }
                self.state.relayout(session);
            }
            _ => {
                if let Some(c) = self.state.clients.get_mut(&client) {
                    c.drag = None;
                }
            }
        }
    }

    /// A press on a border (not on a pane's content, and not while zoomed) starts dragging
    /// it. Whether it did.
    fn start_border_drag(&mut self, client: ClientId, session: SessionId, ev: MouseEvent) -> bool {
        let divider = self.state.sessions.get(&session).and_then(|s| {
            let w = s.window()?;
            // Separators along the layout area's far edges lie outside the window (under the
            // status line, past the last column): nothing to grab there.
            let window = s.window_area();
            let in_window = ev.x >= window.x
                && ev.x < window.right()
                && ev.y >= window.y
                && ev.y < window.bottom();
            if w.zoomed || !in_window {
                return None;
            }
            w.layout.divider_at(s.layout_area(), ev.x, ev.y)
        });
        let on_pane_content = self
            .pane_at(client, ev.x, ev.y)
            .is_some_and(|(_, _, _, content)| content);
        let (Some(path), false) = (divider, on_pane_content) else {
            return false;
        };
        if let Some(c) = self.state.clients.get_mut(&client) {
            c.drag = Some(Drag { path });
        }
        true
    }

    /// What `pane`'s terminal says about the mouse; None when the pane is gone.
    fn pane_mouse(&self, pane: PaneId) -> Option<PaneMouse> {
        let p = self.state.panes.get(&pane)?;
        let term = p.term();
        let screen = term.screen();
        Some(PaneMouse {
            wants_mouse: screen.mouse_protocol_mode() != vt100::MouseProtocolMode::None,
            sgr: screen.mouse_protocol_encoding() == vt100::MouseProtocolEncoding::Sgr,
            alt_screen: screen.alternate_screen(),
            in_copy: p.copy.is_some(),
        })
    }

    /// Passes the event to the program, if its mouse mode reports this kind of event.
    fn forward_mouse(&mut self, hit: Hit, ev: &MouseEvent, sgr: bool) {
        let forward = match self
            .state
            .panes
            .get(&hit.pane)
            .map(|p| p.term().screen().mouse_protocol_mode())
        {
            Some(vt100::MouseProtocolMode::Press) => matches!(
                ev.kind,
                MouseKind::Press(_) | MouseKind::WheelUp | MouseKind::WheelDown
            ),
            Some(vt100::MouseProtocolMode::PressRelease) => {
                !matches!(ev.kind, MouseKind::Drag(_) | MouseKind::Move)
            }
            Some(vt100::MouseProtocolMode::ButtonMotion) => !matches!(ev.kind, MouseKind::Move),
            _ => true,
        };
        if forward {
            if let Some(p) = self.state.panes.get(&hit.pane) {
                p.process.write(encode_mouse(ev, hit.px, hit.py, sgr));
            }
        }
    }

    /// The wheel up scrolls back: into copy mode first.
    fn wheel_up(&mut self, pane: PaneId) {
        self.enter_copy_mode(pane);
        if let Some(copy) = self
            .state
            .panes
            .get_mut(&pane)
            .and_then(|p| p.copy.as_mut())
        {
            copy.scroll(-WHEEL_LINES);
        }
        self.state.mark_pane_dirty(pane);
    }

    /// The wheel down in copy mode scrolls forward, and leaves copy mode at the bottom.
    fn wheel_down(&mut self, pane: PaneId) {
        let exit = match self
            .state
            .panes
            .get_mut(&pane)
            .and_then(|p| p.copy.as_mut())
        {
            Some(copy) => {
                copy.scroll(WHEEL_LINES);
                copy.at_bottom()
            }
            None => false,
        };
        if exit {
            if let Some(p) = self.state.panes.get_mut(&pane) {
                p.copy = None;
            }
        }
        self.state.mark_pane_dirty(pane);
    }

    /// A left press on a pane's content starts a selection: in copy mode, or entering it on
    /// the primary screen.
    fn press_to_select(&mut self, client: ClientId, hit: Hit, seen: &PaneMouse) {
        let pane = hit.pane;
        if !seen.in_copy && seen.alt_screen {
            return;
        }
        self.enter_copy_mode(pane);
        if let Some(copy) = self
            .state
            .panes
            .get_mut(&pane)
            .and_then(|p| p.copy.as_mut())
        {
            copy.set_cursor_on_screen(hit.py, hit.px);
            copy.selection = None;
        }
        if let Some(c) = self.state.clients.get_mut(&client) {
            c.selecting = Some(pane);
        }
        if !seen.in_copy {
            // A plain click on the live screen should not leave copy mode open.
            self.click_started_copy = Some(pane);
        }
        self.state.mark_pane_dirty(pane);
    }

    /// The pane under a client cell (its content, or its border or separator), with its
    /// content rectangle's origin and whether the cell is in the content.
    fn pane_at(&self, client: ClientId, x: u16, y: u16) -> Option<(PaneId, u16, u16, bool)> {
        let session = self.state.sessions.get(&self.client_session(client)?)?;
        let borders = session.pane_borders;
        let window = session.window_area();
        let rects = session.visible_rects();
        let holds = |r: Rect| x >= r.x && x < r.right() && y >= r.y && y < r.bottom();
        rects.into_iter().find_map(|(id, cell)| {
            let content = borders.content(cell);
            // A view dock takes part of the content: its cells are not the program's.
            let content = match self.state.docks.get(&id) {
                Some(dock) if !dock.cards.is_empty() => {
                    crate::server::model::dock::split(content, dock.percent).pane()
                }
                _ => content,
            };
            // A cell's separators past the window's edge (on the status line) are not its.
            holds(cell.intersection(window)).then_some((id, content.x, content.y, holds(content)))
        })
    }

    /// A selection in progress: a drag moves its end, the release copies it (and leaves copy
    /// mode when a plain click had opened it).
    fn mouse_select(&mut self, client: ClientId, pane: PaneId, ev: MouseEvent) {
        let origin = self.pane_origin(client, pane);
        let (px, py) = origin
            .map(|(ox, oy)| (ev.x.saturating_sub(ox), ev.y.saturating_sub(oy)))
            .unwrap_or((0, 0));
        match ev.kind {
            MouseKind::Drag(0) => {
                if let Some(copy) = self
                    .state
                    .panes
                    .get_mut(&pane)
                    .and_then(|p| p.copy.as_mut())
                {
                    if copy.selection.is_none() {
                        copy.selection = Some(copy.cursor);
                    }
                    copy.set_cursor_on_screen(py, px);
                }
                self.click_started_copy = None;
                self.state.mark_pane_dirty(pane);
            }
            MouseKind::Release(_) => {
                if let Some(c) = self.state.clients.get_mut(&client) {
                    c.selecting = None;
                }
                let text = self
                    .state
                    .panes
                    .get(&pane)
                    .and_then(|p| p.copy.as_ref())
                    .and_then(|c| c.selection.map(|_| c.selected_text()));
                let started_here = self.click_started_copy.take() == Some(pane);
                match text {
                    Some(text) if !text.is_empty() => {
                        if let Some(p) = self.state.panes.get_mut(&pane) {
                            p.copy = None;
                        }
                        self.copy_text(client, text);
                    }
                    _ if started_here => {
                        if let Some(p) = self.state.panes.get_mut(&pane) {
                            p.copy = None;
                        }
                    }
                    _ => {}
                }
                self.state.mark_pane_dirty(pane);
            }
            _ => {}
        }
    }

    fn pane_origin(&self, client: ClientId, pane: PaneId) -> Option<(u16, u16)> {
        let session = self.state.sessions.get(&self.client_session(client)?)?;
        let borders = session.pane_borders;
        let rects = session.visible_rects();
        rects
            .into_iter()
            .find(|(id, _)| *id == pane)
            .map(|(_, cell)| {
                let content = borders.content(cell);
                (content.x, content.y)
            })
    }
}
