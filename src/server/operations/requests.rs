//! One-shot commands from `calyx <verb>`: each answers with a [`Response`].

use crate::keys::send_keys_bytes;
use crate::layout::SplitDir;
use crate::protocol::{PaneInfo, Request, Response, SessionInfo};

use super::lifecycle::Close;
use crate::server::owner::Server;

impl Server {
    /// Runs a one-shot request.
    pub(crate) fn request(&mut self, request: Request) -> Response {
        match request {
            Request::NewSession { spec, rows, cols } => {
                match self.state.create_session(spec, rows, cols, &self.tx) {
                    Ok((session, pane)) => Response::Created {
                        session: self
                            .state
                            .sessions
                            .get(&session)
                            .map(|s| s.name.clone())
                            .unwrap_or_default(),
                        pane,
                    },
                    Err(e) => Response::Error(e.to_string()),
                }
            }
            Request::ListSessions => Response::Sessions(self.session_infos()),
            Request::KillSession { target } => match self.state.resolve(target.as_deref()) {
                Ok(t) => {
                    self.close(Close::Session(t.session), "session killed");
                    Response::Ok
                }
                Err(e) => Response::Error(e),
            },
            Request::KillPane { target } => match self.state.resolve(target.as_deref()) {
                Ok(t) => {
                    self.close(Close::Pane(t.pane), "session ended");
                    Response::Ok
                }
                Err(e) => Response::Error(e),
            },
            Request::KillWindow { target } => match self.state.resolve(target.as_deref()) {
                Ok(t) => {
                    self.close(Close::Window(t.session, t.window), "session ended");
                    Response::Ok
                }
                Err(e) => Response::Error(e),
            },
            Request::KillServer => {
                self.state.quit = true;
                Response::Ok
            }
            Request::ReloadConfig => {
                let (text, errors) = self.reload_config();
                if errors.is_empty() {
                    Response::Text(format!("{text}\n"))
                } else {
                    Response::Error(format!("{text}; {}", errors.join("; ")))
                }
            }
            Request::Split {
                target,
                horizontal,
                detached,
                cwd,
                command,
            } => {
                let t = match self.state.resolve(target.as_deref()) {
                    Ok(t) => t,
                    Err(e) => return Response::Error(e),
                };
                let dir = if horizontal {
                    SplitDir::Horizontal
                } else {
                    SplitDir::Vertical
                };
                match self
                    .state
                    .split_pane(t.pane, dir, detached, cwd, command, &self.tx)
                {
                    Ok(pane) => {
                        if !detached {
                            self.focus_pane(pane);
                        }
                        self.created(t.session, pane)
                    }
                    Err(e) => Response::Error(e.to_string()),
                }
            }
            Request::NewWindow {
                target,
                name,
                cwd,
                detached,
                command,
            } => {
                let t = match self.state.resolve(target.as_deref()) {
                    Ok(t) => t,
                    Err(e) => return Response::Error(e),
                };
                match self
                    .state
                    .add_window(t.session, name, cwd, command, detached, &self.tx)
                {
                    Ok(pane) => {
                        self.state.relayout(t.session);
                        self.created(t.session, pane)
                    }
                    Err(e) => Response::Error(e.to_string()),
                }
            }
            Request::SendKeys {
                target,
                keys,
                literal,
            } => {
                let t = match self.state.resolve(target.as_deref()) {
                    Ok(t) => t,
                    Err(e) => return Response::Error(e),
                };
                let Some(p) = self.state.panes.get(&t.pane) else {
                    return Response::Error("pane is gone".into());
                };
                let app = p.term().screen().application_cursor();
                p.process.write(send_keys_bytes(&keys, literal, app));
                Response::Ok
            }
            Request::Capture {
                target,
                scrollback,
                ansi,
            } => {
                let t = match self.state.resolve(target.as_deref()) {
                    Ok(t) => t,
                    Err(e) => return Response::Error(e),
                };
                match self.state.panes.get(&t.pane) {
                    Some(p) => Response::Text(capture(&p.term(), p.rows, p.cols, scrollback, ansi)),
                    None => Response::Error("pane is gone".into()),
                }
            }
            Request::ListPanes { target } => {
                let only = match target.as_deref() {
                    Some(t) => match self.state.resolve(Some(t)) {
                        Ok(t) => Some(t.session),
                        Err(e) => return Response::Error(e),
                    },
                    None => None,
                };
                Response::Panes(self.pane_infos(only))
            }
            Request::Select { target } => match self.state.resolve(target.as_deref()) {
                Ok(t) => {
                    self.focus_pane(t.pane);
                    Response::Ok
                }
                Err(e) => Response::Error(e),
            },
            Request::Rename {
                target,
                window,
                name,
            } => {
                let t = match self.state.resolve(target.as_deref()) {
                    Ok(t) => t,
                    Err(e) => return Response::Error(e),
                };
                if window {
                    self.rename_window(t.session, Some(t.window), &name);
                    Response::Ok
                } else {
                    match self.rename_session(t.session, &name) {
                        Ok(()) => Response::Ok,
                        Err(e) => Response::Error(e),
                    }
                }
            }
            Request::Approvals { pending_only } => self.approvals_response(pending_only),
            Request::Decide { id, allow, message } => self.approve_response(id, allow, message),
            Request::Agents => self.agents_response(),
            Request::AgentsExplain { pane } => self.agents_explain_response(&pane),
        }
    }

    /// The answer to a request that made a pane.
    fn created(
        &self,
        session: crate::server::model::state::SessionId,
        pane: crate::layout::PaneId,
    ) -> Response {
        let session = self
            .state
            .sessions
            .get(&session)
            .map(|s| s.name.clone())
            .unwrap_or_default();
        Response::Created { session, pane }
    }

    fn session_infos(&self) -> Vec<SessionInfo> {
        self.state
            .sessions
            .values()
            .map(|s| SessionInfo {
                id: s.id,
                name: s.name.clone(),
                windows: s.windows.len(),
                panes: s.windows.iter().map(|w| w.layout.panes().len()).sum(),
                attached: self
                    .state
                    .clients
                    .values()
                    .filter(|c| c.session == s.id)
                    .count(),
                rows: s.rows,
                cols: s.cols,
            })
            .collect()
    }

    fn pane_infos(&self, only: Option<crate::server::model::state::SessionId>) -> Vec<PaneInfo> {
        let mut out = Vec::new();
        for s in self.state.sessions.values() {
            if only.is_some_and(|o| o != s.id) {
                continue;
            }
            for (wi, w) in s.windows.iter().enumerate() {
                for (index, pane_id) in w.layout.panes().into_iter().enumerate() {
                    let Some(p) = self.state.panes.get(&pane_id) else {
                        continue;
                    };
                    out.push(PaneInfo {
                        id: format!("%{pane_id}"),
                        pane_id,
                        session: s.name.clone(),
                        window: wi,
                        window_name: self.state.window_name(w),
                        index,
                        rows: p.rows,
                        cols: p.cols,
                        command: p.current_command(),
                        pid: p.process.pid(),
                        title: p.term().title().unwrap_or("").to_string(),
                        cwd: p.cwd(),
                        focused: s.active_window == wi && w.active == pane_id,
                        surface_id: p.surface_id.clone(),
                        record_id: p.record_id.clone(),
                        dead: p.exited.is_some(),
                    });
                }
            }
        }
        out
    }
}

/// A pane's text: the screen, or the whole history; plain or with ANSI attributes.
pub fn capture(
    term: &calyx_pty::Terminal,
    rows: u16,
    cols: u16,
    scrollback: bool,
    ansi: bool,
) -> String {
    if !scrollback {
        let screen = term.screen();
        return if ansi {
            let rows: Vec<String> = screen
                .rows_formatted(0, cols)
                .map(|r| r.to_string())
                .collect();
            join_trimmed(rows)
        } else {
            join_trimmed(
                screen
                    .rows(0, cols)
                    .map(|r| r.trim_end().to_string())
                    .collect(),
            )
        };
    }
    let mut parser = term.replay_history(rows, cols);
    if !ansi {
        return join_trimmed(calyx_pty::all_lines(&mut parser));
    }
    let mut lines = Vec::new();
    calyx_pty::for_each_page(&mut parser, |screen, take| {
        lines.extend(
            screen
                .rows_formatted(0, cols)
                .take(take)
                .map(|r| r.to_string()),
        );
    });
    join_trimmed(lines)
}

fn join_trimmed(mut lines: Vec<String>) -> String {
    while lines
        .last()
        .is_some_and(|l| l.trim().is_empty() || l == "\u{1b}[m")
    {
        lines.pop();
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}
