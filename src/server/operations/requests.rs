//! One-shot commands from `calyx <verb>`: each answers with a [`Response`].

use crate::keys::send_keys_bytes;
use crate::layout::SplitDir;
use crate::protocol::{NewSession, PaneInfo, Request, Response, SessionInfo};

use super::lifecycle::Close;
use crate::server::model::state::SessionId;
use crate::server::model::target::Target;
use crate::server::owner::Server;

impl Server {
    /// Runs a one-shot request: the table from requests to the functions that answer them.
    pub(crate) fn request(&mut self, request: Request) -> Response {
        match request {
            Request::NewSession { spec, rows, cols } => self.new_session(spec, rows, cols),
            Request::ListSessions => Response::Sessions(self.session_infos()),
            Request::KillSession {
                target: Some(ref name),
            } if self.state.resolve(Some(name)).is_err() && self.forget_saved(name) => Response::Ok,
            Request::KillSession { target } => {
                self.kill(target, |t| (Close::Session(t.session), "session killed"))
            }
            Request::KillPane { target } => {
                self.kill(target, |t| (Close::Pane(t.pane), "session ended"))
            }
            Request::KillWindow { target } => self.kill(target, |t| {
                (Close::Window(t.session, t.window), "session ended")
            }),
            Request::KillServer => {
                self.state.quit = true;
                Response::Ok
            }
            Request::KillServerForget => {
                self.persisted.forget_all = true;
                self.state.quit = true;
                Response::Ok
            }
            Request::SavedSessions => Response::Json(self.saved_list()),
            Request::ReloadConfig => self.reload_config_response(),
            Request::SetOption {
                target,
                name,
                value,
                unset,
            } => self.set_option(target, &name, value.as_deref(), unset),
            Request::ShowOptions { name, value_only } => {
                self.show_options(name.as_deref(), value_only)
            }
            Request::SourceFile { path } => self.source_file(&path),
            Request::ListKeys => self.list_keys(),
            Request::BindKey {
                key,
                root,
                repeat,
                command,
            } => self.bind_key(&key, root, repeat, &command),
            Request::UnbindKey { key, root } => self.unbind_key(&key, root),
            Request::Split {
                target,
                horizontal,
                detached,
                cwd,
                command,
            } => {
                let dir = if horizontal {
                    SplitDir::Horizontal
                } else {
                    SplitDir::Vertical
                };
                self.split_request(target, dir, detached, cwd, command)
            }
            Request::NewWindow {
                target,
                name,
                cwd,
                detached,
                command,
            } => self.new_window_request(target, name, cwd, detached, command),
            Request::SendKeys {
                target,
                keys,
                literal,
            } => self.send_keys(target, &keys, literal),
            Request::Capture {
                target,
                scrollback,
                ansi,
            } => self.capture(target, scrollback, ansi),
            Request::ListPanes { target } => self.list_panes(target),
            Request::SetWindowOption {
                target,
                option,
                value,
            } => self.set_window_option(target, &option, value.as_deref()),
            Request::SelectLayout {
                target,
                layout,
                next,
                even,
            } => self.select_layout_request(target, layout.as_deref(), next, even),
            Request::ResizePane {
                target,
                direction,
                cells,
                width,
                height,
                zoom,
            } => self.resize_pane_request(
                target,
                super::pane_requests::Resize {
                    direction,
                    cells,
                    width,
                    height,
                    zoom,
                },
            ),
            Request::SwapPane {
                source,
                target,
                neighbour,
                detached,
            } => self.swap_pane_request(source, target, neighbour, detached),
            Request::JoinPane {
                source,
                target,
                horizontal,
                before,
                size,
                detached,
            } => {
                let at = crate::server::model::pane_moves::Placement {
                    dir: if horizontal {
                        SplitDir::Horizontal
                    } else {
                        SplitDir::Vertical
                    },
                    before,
                    detached,
                };
                self.join_pane_request(source, target, at, size)
            }
            Request::BreakPane {
                source,
                name,
                detached,
            } => self.break_pane_request(source, name, detached),
            Request::DisplayMessage {
                target,
                message,
                print,
            } => self.display_message(target, &message, print),
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
            } => self.rename(target, window, &name),
            Request::Approvals { pending_only } => self.approvals_response(pending_only),
            Request::Decide {
                id,
                allow,
                message,
                machine: Some(machine),
                always,
                ..
            } => self.decide_remote(None, &machine, id, allow, message, always),
            Request::Decide {
                id,
                allow,
                message,
                machine: None,
                answered_from,
                always,
            } => self.approve_response_from(id, allow, message, answered_from, always),
            Request::Machines { reload } => self.machines_response(reload),
            Request::AnywhereRules { .. } => {
                Response::Error("anywhere rules come over a saved machine's link".into())
            }
            Request::Agents => self.agents_response(),
            Request::AgentsExplain { pane } => self.agents_explain_response(&pane),
            // Answered off the loop (see `hosted_request`); this path has no client to wait.
            Request::Mcp(_) => Response::Error("calyx mcp requests come over the socket".into()),
            Request::RemoteTool { .. } => {
                Response::Error("calls from other machines come over the socket".into())
            }
            // From the `:` prompt (a client's request is routed in `client_message`): a
            // failure shows on the status line.
            Request::ServerUpgrade { binary } => {
                self.server_upgrade(None, binary);
                Response::Text("checking the new binary before the upgrade".into())
            }
            Request::ServerVersion => Response::Json(serde_json::json!({
                "version": env!("CARGO_PKG_VERSION"),
                "protocol": crate::upgrade::handover::PROTOCOL_VERSION,
                "pid": std::process::id(),
            })),
        }
    }

    /// `new-session`.
    fn new_session(&mut self, mut spec: NewSession, rows: u16, cols: u16) -> Response {
        self.name_clear_of_saved(&mut spec);
        if let Some(clash) = spec.name.as_deref().and_then(|n| self.saved_name_taken(n)) {
            return Response::Error(clash);
        }
        match self.state.create_session(spec, rows, cols, &self.tx) {
            Ok((session, pane)) => self.created(session, pane),
            Err(e) => Response::Error(e.to_string()),
        }
    }

    /// `kill-session`, `kill-pane`, `kill-window`: the target resolved, then the one close
    /// transaction on what `what` picks from it.
    fn kill(
        &mut self,
        target: Option<String>,
        what: impl FnOnce(&Target) -> (Close, &'static str),
    ) -> Response {
        match self.state.resolve(target.as_deref()) {
            Ok(t) => {
                let (close, why) = what(&t);
                self.close(close, why);
                Response::Ok
            }
            Err(e) => Response::Error(e),
        }
    }

    /// `source-file`: the config read again; what failed makes the answer an error.
    fn reload_config_response(&mut self) -> Response {
        let (text, mut errors) = self.reload_config();
        // machines.toml edited by hand: the links follow it too.
        if let Err(e) = self.follow_machines() {
            errors.push(e);
        }
        if errors.is_empty() {
            Response::Text(format!("{text}\n"))
        } else {
            Response::Error(format!("{text}; {}", errors.join("; ")))
        }
    }

    /// `split-window`: focuses the new pane unless `detached`.
    fn split_request(
        &mut self,
        target: Option<String>,
        dir: SplitDir,
        detached: bool,
        cwd: Option<String>,
        command: Vec<String>,
    ) -> Response {
        let t = match self.state.resolve(target.as_deref()) {
            Ok(t) => t,
            Err(e) => return Response::Error(e),
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

    /// `new-window`.
    fn new_window_request(
        &mut self,
        target: Option<String>,
        name: Option<String>,
        cwd: Option<String>,
        detached: bool,
        command: Vec<String>,
    ) -> Response {
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

    /// `send-keys`: key names (or literal text) as the pane's terminal mode wants them.
    fn send_keys(&mut self, target: Option<String>, keys: &[String], literal: bool) -> Response {
        let t = match self.state.resolve(target.as_deref()) {
            Ok(t) => t,
            Err(e) => return Response::Error(e),
        };
        let Some(p) = self.state.panes.get(&t.pane) else {
            return Response::Error("pane is gone".into());
        };
        // From the glance, not the terminal: a flooding pane's reader holds its lock.
        let app = p.glance.application_cursor();
        p.process.write(send_keys_bytes(keys, literal, app));
        Response::Ok
    }

    /// `capture-pane`.
    fn capture(&mut self, target: Option<String>, scrollback: bool, ansi: bool) -> Response {
        let t = match self.state.resolve(target.as_deref()) {
            Ok(t) => t,
            Err(e) => return Response::Error(e),
        };
        match self.state.panes.get(&t.pane) {
            Some(p) => Response::Text(capture(&p.term(), p.rows, p.cols, scrollback, ansi)),
            None => Response::Error("pane is gone".into()),
        }
    }

    /// `list-panes`: every pane, or the target's session's.
    fn list_panes(&mut self, target: Option<String>) -> Response {
        let only = match target.as_deref() {
            Some(t) => match self.state.resolve(Some(t)) {
                Ok(t) => Some(t.session),
                Err(e) => return Response::Error(e),
            },
            None => None,
        };
        Response::Panes(self.pane_infos(only))
    }

    /// `set-window-option`: the window options calyx has. Answers what the option is now.
    fn set_window_option(
        &mut self,
        target: Option<String>,
        option: &str,
        value: Option<&str>,
    ) -> Response {
        if option != "synchronize-panes" {
            return Response::Error(format!(
                "unknown window option: {option} (calyx has synchronize-panes)"
            ));
        }
        let (session, w) = match self.target_window(target) {
            Ok(found) => found,
            Err(e) => return Response::Error(e),
        };
        w.synchronized = match value {
            None => !w.synchronized,
            Some("on" | "1" | "true") => true,
            Some("off" | "0" | "false") => false,
            Some(other) => {
                return Response::Error(format!("synchronize-panes is on or off, not {other:?}"))
            }
        };
        let now = if w.synchronized { "on" } else { "off" };
        self.state.mark_session_dirty(session);
        Response::Text(format!("synchronize-panes {now}\n"))
    }

    /// `select-layout`: a preset by name, the next one, or every pane equal, in the target's
    /// window. Without any of them: the window's last preset again (tmux's bare select-layout).
    fn select_layout_request(
        &mut self,
        target: Option<String>,
        layout: Option<&str>,
        next: bool,
        even: bool,
    ) -> Response {
        let chosen = match layout.map(crate::layout_preset::Preset::parse) {
            Some(Err(e)) => return Response::Error(e),
            Some(Ok(preset)) => Some(preset),
            None => None,
        };
        let (session, w) = match self.target_window(target) {
            Ok(found) => found,
            Err(e) => return Response::Error(e),
        };
        if even {
            w.layout.equalize();
        } else {
            w.apply_preset(match (chosen, next, w.preset) {
                (Some(p), _, _) => p,
                (None, false, Some(last)) => last,
                (None, _, last) => crate::layout_preset::Preset::after(last),
            });
        }
        self.state.relayout(session);
        Response::Ok
    }

    /// The window `target` names (a pane's window for a pane), with its session.
    fn target_window(
        &mut self,
        target: Option<String>,
    ) -> Result<(SessionId, &mut crate::server::model::state::Window), String> {
        let t = self.state.resolve(target.as_deref())?;
        self.state
            .sessions
            .get_mut(&t.session)
            .and_then(|s| s.windows.get_mut(t.window))
            .map(|w| (t.session, w))
            .ok_or_else(|| "window is gone".to_string())
    }

    /// `display-message`: the format expanded for the target pane; printed, or shown to the
    /// clients on its session.
    fn display_message(&mut self, target: Option<String>, message: &str, print: bool) -> Response {
        let t = match self.state.resolve(target.as_deref()) {
            Ok(t) => t,
            Err(e) => return Response::Error(e),
        };
        let Some(info) = self
            .pane_infos(Some(t.session))
            .into_iter()
            .find(|p| p.pane_id == t.pane)
        else {
            return Response::Error(format!("can't find pane: %{}", t.pane));
        };
        let text = crate::format::expand(message, &info);
        if print {
            return Response::Text(format!("{text}\n"));
        }
        let clients: Vec<_> = self
            .state
            .clients
            .iter()
            .filter(|(_, c)| c.session == t.session)
            .map(|(id, _)| *id)
            .collect();
        for client in clients {
            self.message(client, text.clone());
        }
        Response::Ok
    }

    /// `rename-window` (with `window`) or `rename-session`.
    fn rename(&mut self, target: Option<String>, window: bool, name: &str) -> Response {
        let t = match self.state.resolve(target.as_deref()) {
            Ok(t) => t,
            Err(e) => return Response::Error(e),
        };
        if window {
            self.rename_window(t.session, Some(t.window), name);
            return Response::Ok;
        }
        match self.rename_session(t.session, name) {
            Ok(()) => Response::Ok,
            Err(e) => Response::Error(e),
        }
    }

    /// The answer to a request that made a pane.
    pub(crate) fn created(
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

    pub(crate) fn session_infos(&self) -> Vec<SessionInfo> {
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
                        window: w.number,
                        window_name: self.state.window_name(w),
                        index,
                        rows: p.rows,
                        cols: p.cols,
                        command: p.current_command(),
                        pid: p.process.pid(),
                        title: p.glance.title().as_deref().unwrap_or("").to_string(),
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
