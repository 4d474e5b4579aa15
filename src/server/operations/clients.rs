//! What a client's control messages do: attach (creating the session when asked), resize and
//! detach. Attaching also decides whether the server reads and writes the client's terminal
//! itself (`io::terminal`).

use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::protocol::{ClientMessage, ServerMessage};
use crate::server::io::terminal::{DirectTerminal, Outgoing};
use crate::server::model::ids::ClientId;
use crate::server::model::state::{Client, ClientMode};
use crate::server::owner::Server;

impl Server {
    pub(crate) fn client_message(&mut self, id: ClientId, msg: ClientMessage) {
        match msg {
            ClientMessage::Request(crate::protocol::Request::Mcp(request)) => {
                self.hosted_request(id, request)
            }
            ClientMessage::Request(crate::protocol::Request::RemoteTool { tool, args, from }) => {
                self.remote_tool(id, None, tool, args, from)
            }
            ClientMessage::Request(crate::protocol::Request::ServerUpgrade { binary }) => {
                self.server_upgrade(Some(id), binary)
            }
            ClientMessage::Request(request @ crate::protocol::Request::Capture { .. }) => {
                self.capture_for_client(id, request)
            }
            ClientMessage::Request(crate::protocol::Request::Decide {
                id: request,
                allow,
                message,
                machine: Some(machine),
                always,
                ..
            }) => {
                // The answer is the remote server's, when it comes back over the link.
                if let crate::protocol::Response::Error(e) =
                    self.decide_remote(Some(id), &machine, request, allow, message, always)
                {
                    self.reply(id, crate::protocol::Response::Error(e));
                }
            }
            ClientMessage::Request(crate::protocol::Request::AnywhereRules { from, rules }) => {
                let response = self.anywhere_pushed(id, &from, &rules);
                self.reply(id, response);
            }
            ClientMessage::Request(request) => {
                // An `e`/`E` answered over a link sets that host's anywhere rule here: it is
                // held while this connection lasts, as the rules the host pushes are.
                if let crate::protocol::Request::Decide {
                    answered_from: Some(host),
                    always: Some('e' | 'E'),
                    machine: None,
                    ..
                } = &request
                {
                    self.anywhere_connection(id, host);
                }
                let response = self.request(request);
                self.reply(id, response);
            }
            ClientMessage::Resize { rows, cols } => {
                // A client's size is its word, not a fact: clamped (calyx_pty::limits).
                let (rows, cols) = calyx_pty::limits::clamp_size(rows, cols);
                if let Some(c) = self.state.clients.get_mut(&id) {
                    c.rows = rows;
                    c.cols = cols;
                    c.dirty = true;
                    self.frames.entry(id).or_default().redraw_whole();
                    let session = c.session;
                    self.state.resize_session_to_clients(session);
                }
            }
            ClientMessage::Detach { message } => self.state.detach_client(id, &message),
            ClientMessage::Watch => self.watch_start(id),
            ClientMessage::Tagged {
                tag,
                request: crate::protocol::Request::RemoteTool { tool, args, from },
            } => self.remote_tool(id, Some(tag), tool, args, from),
            ClientMessage::CancelTagged { tag } => {
                self.remote_calls.cancel(id, tag);
            }
            ClientMessage::Tagged { tag, .. } => self.send_to(
                id,
                &ServerMessage::Tagged {
                    tag,
                    response: crate::protocol::Response::Error(
                        "only tool calls from another machine are tagged".into(),
                    ),
                },
            ),
            // Taken by the connection's reader (`server::io::socket`) before it gets here.
            ClientMessage::AdoptChannel => {}
            ClientMessage::Attach {
                target,
                create,
                create_if_missing,
                rows,
                cols,
                term,
                terminal,
                opener_env,
                back_to,
            } => {
                let (rows, cols) = calyx_pty::limits::clamp_size(rows, cols);
                let existing = self
                    .state
                    .resolve(target.as_deref())
                    .ok()
                    .map(|t| t.session)
                    .or_else(|| {
                        // `calyx new` (a session to create, not one to find) restores nothing.
                        if create.is_some() && !create_if_missing {
                            return None;
                        }
                        let env = create.as_ref().map(|c| c.env.clone());
                        self.restore_for_attach(target.as_deref(), env, (rows, cols))
                    });
                let session = match (existing, create) {
                    (Some(s), Some(_)) if create_if_missing => Ok(s),
                    (Some(s), None) => Ok(s),
                    (_, Some(mut spec)) => {
                        self.name_clear_of_saved(&mut spec);
                        match spec.name.as_deref().and_then(|n| self.saved_name_taken(n)) {
                            Some(clash) => Err(clash),
                            None => self
                                .state
                                .create_session(spec, rows, cols, &self.tx)
                                .map(|(s, _)| s)
                                .map_err(|e| e.to_string()),
                        }
                    }
                    (None, None) => Err(match target {
                        Some(t) => format!("can't find session: {t}"),
                        None => "no sessions".to_string(),
                    }),
                };
                let session = match session {
                    Ok(s) => s,
                    Err(message) => {
                        self.send_to(id, &ServerMessage::Exit { message });
                        return;
                    }
                };
                let Some(tx) = self.connections.get(&id).cloned() else {
                    return;
                };
                let direct = terminal.and_then(|device| self.use_terminal(id, &device, &tx));
                self.send_to(
                    id,
                    &ServerMessage::Attached {
                        direct: direct.is_some(),
                    },
                );
                // A new client starts from a blank terminal: no frame of an earlier attach on
                // this connection is reused.
                self.frames.remove(&id);
                self.state.clients.insert(
                    id,
                    Client {
                        id,
                        tx,
                        session,
                        rows,
                        cols,
                        mode: ClientMode::Normal,
                        repeat_until: None,
                        input: Default::default(),
                        dirty: true,
                        message: None,
                        drag: None,
                        selecting: None,
                        last_session: None,
                        last_key_at: None,
                        cursor_style: None,
                        hyperlinks: self.state.config.hyperlinks.allowed_for(term.as_deref()),
                        any_motion: false,
                        panel: Default::default(),
                        direct,
                        prompt_aid: Default::default(),
                        opener_env,
                        back_to,
                    },
                );
                if let Some(s) = self.state.sessions.get_mut(&session) {
                    s.last_used = Instant::now();
                }
                self.state.resize_session_to_clients(session);
                if !self.state.config_errors.is_empty() {
                    let text = self.state.config_errors.join("; ");
                    self.message(id, text);
                }
            }
        }
    }

    /// A saved session brought back for an attach that found nothing running: the one
    /// `target` names, or (`calyx` or `calyx attach` alone, with nothing running) the most
    /// recently saved.
    fn restore_for_attach(
        &mut self,
        target: Option<&str>,
        env: Option<Vec<(String, String)>>,
        size: (u16, u16),
    ) -> Option<crate::server::model::state::SessionId> {
        let name = match target {
            Some(t) => t.split(':').next().unwrap_or(t).to_string(),
            None if self.state.sessions.is_empty() => self.latest_saved()?,
            None => return None,
        };
        self.restore_saved(&name, env, size)?.ok()
    }

    /// Opens a client's terminal to read and write it directly (see `terminal`); None leaves
    /// the client forwarding input and frames.
    pub(crate) fn use_terminal(
        &self,
        id: ClientId,
        device: &crate::protocol::TerminalDevice,
        tx: &mpsc::Sender<Outgoing>,
    ) -> Option<DirectTerminal> {
        match DirectTerminal::open(device) {
            Ok(t) => {
                tracing::info!("client {id}: the server reads and writes {}", device.path);
                tx.try_send(Outgoing::UseTerminal(t.clone())).ok()?;
                Some(t)
            }
            Err(e) => {
                tracing::info!("client {id}: frames go through the client ({e})");
                None
            }
        }
    }
}
