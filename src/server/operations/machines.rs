//! The saved machines' links as the owner sees them (issue 20 §2, §3): links started at
//! server start and after `machine add|remove` (`Request::Machines { reload }`), each link's
//! events applied, the remote rows and requests merged into `calyx agents` and `calyx
//! approvals`, and an answer for a remote request (`calyx approve build:7`) sent over that
//! machine's link with this machine's name, never answered here.
//!
//! Every text from a snapshot is the remote machine's word: it passes through `visible`
//! before it reaches any output.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::approvals::visible;
use crate::machines::link::{LinkEvent, Sink};
use crate::protocol::{Request, Response};
use crate::server::messages::Msg;
use crate::server::model::ids::ClientId;
use crate::server::owner::Server;

impl Server {
    /// Starts (or follows) the links to the enabled saved machines; a broken `machines.toml`
    /// keeps the running links and says why.
    pub(crate) fn follow_machines(&mut self) -> Result<(), String> {
        let saved = crate::machines::store::load().map_err(|e| format!("{e:#}"))?;
        let tx = self.tx.clone();
        let sink: Sink = Arc::new(move |event| {
            let _ = tx.send(Msg::Machine(event));
        });
        self.machines.follow(&saved, &sink);
        self.watch_due = true;
        Ok(())
    }

    /// A link's event: its state or a new snapshot. Remote agents that became blocked or
    /// finished notify as local ones do.
    pub(crate) fn machine_event(&mut self, event: LinkEvent) {
        let name = match &event {
            LinkEvent::State { name, .. } | LinkEvent::Snapshot { name, .. } => name.clone(),
        };
        let mut new_request = false;
        let was_live = self.machines.get(&name).is_some_and(|v| v.live());
        let snapshot = matches!(event, LinkEvent::Snapshot { .. });
        if let Some(before) = self.machines.apply(event) {
            self.notify_remote(&name, before.as_ref());
            let after = self.machines.get(&name).and_then(|v| v.snapshot.as_ref());
            new_request = after.is_some_and(|after| {
                after.approvals.iter().any(|a| {
                    !before
                        .iter()
                        .flat_map(|b| &b.approvals)
                        .any(|b| b.id == a.id)
                })
            });
        }
        if snapshot && !was_live {
            // The link is up (again): the machine gets this server's anywhere rules.
            self.anywhere_link_up(&name);
        }
        for c in self.state.clients.values_mut() {
            // A new request elsewhere shows the panel again, as a local one does.
            if new_request {
                c.panel.hidden = false;
            }
            c.dirty = true;
        }
    }

    /// `Request::Machines`: every saved machine with its link's state.
    pub(crate) fn machines_response(&mut self, reload: bool) -> Response {
        if reload {
            if let Err(e) = self.follow_machines() {
                return Response::Error(e);
            }
        }
        let rows: Vec<Value> = self
            .machines
            .views()
            .iter()
            .map(|v| {
                let snapshot = v.snapshot.as_ref();
                json!({
                    "name": v.machine.name,
                    "target": v.machine.target,
                    "state": v.state.word(),
                    "line": visible(&v.state.line(&v.machine.name)),
                    "version": snapshot.map(|s| visible(&s.version)),
                    "agents": snapshot.map_or(0, |s| s.agents.len()),
                    "approvals": snapshot.map_or(0, |s| s.approvals.len()),
                })
            })
            .collect();
        Response::Json(json!({ "machines": rows }))
    }

    /// The saved machines' agent rows for `calyx agents`, each with its `machine`, `stale`
    /// when its link is not live; and one entry per machine that is not live.
    pub(crate) fn remote_agent_rows(&self) -> (Vec<Value>, Vec<Value>) {
        let mut rows = Vec::new();
        let mut down = Vec::new();
        for v in self.machines.views() {
            if !v.live() {
                down.push(json!({
                    "machine": v.machine.name,
                    "state": v.state.word(),
                    "line": visible(&v.state.line(&v.machine.name)),
                }));
            }
            for a in v.snapshot.iter().flat_map(|s| &s.agents) {
                rows.push(json!({
                    "machine": v.machine.name,
                    "pane": visible(&a.pane),
                    "agent": visible(&a.agent),
                    "agent_name": visible(&a.agent_name),
                    "state": visible(&a.state),
                    "cwd": a.cwd.as_deref().map(visible),
                    "last_tool": a.last_tool.as_deref().map(visible),
                    "stale": !v.live(),
                }));
            }
        }
        (rows, down)
    }

    /// The saved machines' pending requests for `calyx approvals`: id `MACHINE:ID`, state
    /// `pending`, or `unreachable` while the link is down (not answerable then).
    pub(crate) fn remote_pending(&self) -> Vec<Value> {
        let mut out = Vec::new();
        for v in self.machines.views() {
            for p in v.snapshot.iter().flat_map(|s| &s.approvals) {
                out.push(json!({
                    "id": format!("{}:{}", v.machine.name, p.id),
                    "machine": v.machine.name,
                    "pane": visible(&p.pane),
                    "cli": visible(&p.cli),
                    "tool": visible(&p.tool),
                    "summary": visible(&p.summary),
                    "state": if v.live() { "pending" } else { "unreachable" },
                }));
            }
        }
        out
    }

    /// Answers request `id` of saved machine `machine` over its link, naming this machine as
    /// where the answer came from; `client` (None: the `:` prompt) gets the remote server's
    /// answer. Nothing is answered here: a machine whose link is down gets no answer at all.
    pub(crate) fn decide_remote(
        &mut self,
        client: Option<ClientId>,
        machine: &str,
        id: u64,
        allow: bool,
        message: Option<String>,
        always: Option<char>,
    ) -> Response {
        // What the panel showed for it: an `e`/`E` rule sent back is set here only when it
        // is the rule shown (see `anywhere_rules::is_the_rule_shown`).
        let shown = self
            .machines
            .get(machine)
            .and_then(|v| v.snapshot.as_ref())
            .and_then(|s| s.approvals.iter().find(|a| a.id == id))
            .cloned();
        let request = Request::Decide {
            id,
            allow,
            message,
            machine: None,
            answered_from: Some(this_host()),
            always,
        };
        let rx = match self.machines.ask(machine, request) {
            Ok(rx) => rx,
            Err(e) => return Response::Error(visible(&e)),
        };
        let tx = self.tx.clone();
        let name = machine.to_string();
        tokio::spawn(async move {
            let response = match rx.await {
                Ok(Ok(Response::Error(e))) => Response::Error(format!("{name}: {}", visible(&e))),
                Ok(Ok(Response::Json(answer))) => {
                    let made = answer
                        .get("anywhere")
                        .cloned()
                        .and_then(|r| serde_json::from_value(r).ok());
                    if let (Some(rule), Some(shown), Some(key)) = (made, shown, always) {
                        let _ = tx.send(Msg::AnywhereMade {
                            machine: name.clone(),
                            shown,
                            key,
                            rule,
                        });
                    }
                    Response::Ok
                }
                Ok(Ok(_)) => Response::Ok,
                Ok(Err(e)) => Response::Error(visible(&e)),
                Err(_) => Response::Error(format!("the link to {name} stopped")),
            };
            if let Some(id) = client {
                let _ = tx.send(Msg::Reply { id, response });
            }
        });
        Response::Text(format!("sent to {machine}"))
    }
}

/// This machine's name for the audit log of the machine that asked.
pub(crate) fn this_host() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname writes at most that much.
    let ok = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } == 0;
    let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    let name = String::from_utf8_lossy(&buf[..end]).to_string();
    if ok && !name.is_empty() {
        crate::remote::handshake::printable(&name)
    } else {
        "unknown host".to_string()
    }
}
