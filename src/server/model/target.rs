//! Resolving `-t` targets: `%N` (pane id), `SESSION`, `SESSION:WINDOW`, `SESSION:WINDOW.PANE`,
//! `:WINDOW.PANE` (the most recent session). Without a target, the most recent session.

use crate::layout::PaneId;

use super::state::{SessionId, State};

/// A resolved target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    pub session: SessionId,
    /// The window's position in the session's list (not its number).
    pub window: usize,
    pub pane: PaneId,
}

impl State {
    fn session_named(&self, name: &str) -> Option<SessionId> {
        self.sessions
            .values()
            .find(|s| s.name == name)
            .or_else(|| {
                name.strip_prefix('$')
                    .and_then(|n| n.parse().ok())
                    .and_then(|id| self.sessions.get(&id))
            })
            .map(|s| s.id)
    }

    /// Resolves a target to a session, window and pane.
    pub fn resolve(&self, target: Option<&str>) -> Result<Target, String> {
        let target = target.map(str::trim).filter(|t| !t.is_empty());
        if let Some(id) = target.and_then(|t| t.strip_prefix('%')) {
            let pane: PaneId = id.parse().map_err(|_| format!("bad pane id: %{id}"))?;
            let (session, window) = self
                .locate(pane)
                .ok_or_else(|| format!("can't find pane: %{pane}"))?;
            return Ok(Target {
                session,
                window,
                pane,
            });
        }
        let (session_part, rest) = match target {
            None => (None, None),
            Some(t) => match t.split_once(':') {
                Some((s, r)) => ((!s.is_empty()).then_some(s), Some(r)),
                None => (Some(t), None),
            },
        };
        let session = match session_part {
            Some(name) => match self.session_named(name) {
                Some(id) => id,
                None => {
                    // A bare number that is no session's name: a pane id, like `%N`.
                    if rest.is_none() {
                        if let Ok(pane) = name.parse::<PaneId>() {
                            if let Some((session, window)) = self.locate(pane) {
                                return Ok(Target {
                                    session,
                                    window,
                                    pane,
                                });
                            }
                        }
                    }
                    return Err(format!("can't find session: {name}"));
                }
            },
            None => self.latest_session().ok_or("no sessions")?,
        };
        let s = self.sessions.get(&session).ok_or("no sessions")?;
        let (window_part, pane_part) = match rest {
            Some(r) => match r.split_once('.') {
                Some((w, p)) => (Some(w), Some(p)),
                None => (Some(r), None),
            },
            None => (None, None),
        };
        // WINDOW is a window's number (not its place in the list), else its name.
        let window = match window_part.filter(|w| !w.is_empty()) {
            Some(w) => w
                .parse::<usize>()
                .ok()
                .and_then(|n| s.window_numbered(n))
                .or_else(|| s.windows.iter().position(|win| win.name == w))
                .ok_or_else(|| format!("can't find window: {w}"))?,
            None => s.active_window,
        };
        let win = s
            .windows
            .get(window)
            .ok_or_else(|| format!("can't find window: {window}"))?;
        let pane = match pane_part.filter(|p| !p.is_empty()) {
            Some(p) => {
                let index: usize = p.parse().map_err(|_| format!("bad pane index: {p}"))?;
                *win.layout
                    .panes()
                    .get(index)
                    .ok_or_else(|| format!("can't find pane: {index}"))?
            }
            None => win.active,
        };
        Ok(Target {
            session,
            window,
            pane,
        })
    }
}
