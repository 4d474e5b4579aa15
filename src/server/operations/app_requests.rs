//! MCP App requests in the owner loop (issue 17, "App requests through the approval panel"):
//! queued in the approval panel beside the agents' gates, a newer one of the same view and kind
//! replacing the pending one, and an allow carried out here, where the panes and the clients
//! are: the message typed into the calling pane and submitted, or copied to the answering
//! client's clipboard. An Open Link allow needs nothing here (the page opens it).

use tokio::time::Instant;

use crate::approvals::app::{AppAsk, AppKind, AppMsg, AppTarget, NO_PANE, PANE_GONE};
use crate::approvals::summary::visible;
use crate::approvals::{Asker, Decision, NewRequest, Schema, Summary};
use crate::views::registry::ViewId;

use crate::server::model::elicit_panel::OpenedVia;
use crate::server::model::ids::ClientId;
use crate::server::owner::Server;

/// Lines of a message the panel body shows (the rest is counted).
const BODY_LINES: usize = 400;

/// What the panel shows of an app request: the whole URL (escaped), or the message's lines
/// (what the keys do is the row under it: [`AppKind::keys_line`]).
pub(crate) fn app_summary(target: &AppTarget) -> Summary {
    let first = target.text.lines().next().unwrap_or("");
    let verb = match target.kind {
        AppKind::OpenLink => "open",
        AppKind::SendMessage => "send",
        AppKind::CopyMessage => "copy",
    };
    let mut headline = format!("{verb}: {}", visible(first));
    if headline.chars().count() > 120 {
        headline = headline.chars().take(119).collect::<String>() + "…";
    }
    let lines: Vec<String> = match target.kind {
        AppKind::OpenLink => vec![visible(&target.text)],
        _ => target
            .text
            .lines()
            .take(BODY_LINES)
            .map(calyx_tui::escape::visible_line)
            .collect(),
    };
    let total = target.text.lines().count();
    let cut = (total > BODY_LINES).then(|| format!("{} more lines", total - BODY_LINES));
    Summary {
        headline,
        lines,
        cut,
    }
}

impl Server {
    /// A message about app requests from the view server.
    pub(crate) fn app_message(&mut self, msg: AppMsg) {
        match msg {
            AppMsg::Ask(ask) => self.app_ask(*ask),
            AppMsg::Gone { token } => {
                // An Open Link outlives its page (the spec: with no page open, the link opens
                // in a local client's browser, else it is copied); a message has nobody left
                // to tell whether it was sent, so it goes.
                self.approvals.withdraw_apps(
                    |a| a.token == token && a.kind != AppKind::OpenLink,
                    "withdrawn (the page went away)",
                );
                self.app_changed(false);
            }
        }
    }

    fn app_ask(&mut self, ask: AppAsk) {
        let AppAsk {
            target,
            server,
            always,
            answer,
        } = ask;
        let (view, kind) = (target.view, target.kind);
        // The title names the server as the user named it (`Everything: Open Link`); the
        // alias stands in when the server is gone from the list.
        let server = self
            .hosted_registry
            .entry(&server)
            .map(|published| published.name().to_string())
            .unwrap_or(server);
        self.approvals.withdraw_apps(
            |a| a.view == view && a.kind == kind,
            "replaced by a newer request",
        );
        let request = NewRequest {
            pane: target.pane.unwrap_or(NO_PANE),
            asker: Asker::App,
            schema: Schema::DecisionFlat,
            tool: format!("{}: {}", visible(&server), kind.title()),
            summary: app_summary(&target),
            suggestions: Vec::new(),
            input: None,
            agent_id: None,
            wait: None,
            app: Some(target),
            answer,
        };
        let (id, _) = self.approvals.add(request, Instant::now());
        if always {
            self.answer_app(id, Decision::AllowAlways, None);
        } else {
            self.app_changed(true);
        }
    }

    /// A view was removed: its pending requests get the refusal.
    pub(crate) fn app_view_removed(&mut self, view: ViewId) {
        if self
            .approvals
            .withdraw_apps(|a| a.view == view, "withdrawn (the view was removed)")
        {
            self.app_changed(false);
        }
    }

    /// Answers app request `id` (false: it is not one, or no longer pending). An allow is
    /// carried out first; when it cannot be (the pane is gone), the request is denied saying so.
    /// `client` is who answered (None: `calyx approve`, or "always").
    pub(crate) fn answer_app(
        &mut self,
        id: u64,
        decision: Decision,
        client: Option<ClientId>,
    ) -> bool {
        let Some(target) = self.approvals.app_of(id).cloned() else {
            return false;
        };
        let decision = if decision.allows() {
            match self.carry_out(id, &target, client) {
                Ok(()) => decision,
                Err(why) => Decision::Deny {
                    message: Some(why.to_string()),
                },
            }
        } else {
            decision
        };
        let done = self.approvals.decide(id, decision, None).is_some();
        self.app_changed(false);
        done
    }

    fn carry_out(
        &mut self,
        id: u64,
        target: &AppTarget,
        client: Option<ClientId>,
    ) -> Result<(), &'static str> {
        match target.kind {
            // The page that asked opens it, when it still waits.
            AppKind::OpenLink if self.approvals.asker_waits(id) => Ok(()),
            AppKind::OpenLink => {
                self.open_without_page(client, &target.text);
                Ok(())
            }
            AppKind::SendMessage => {
                let pane = target
                    .pane
                    .filter(|p| self.state.panes.contains_key(p))
                    .ok_or(PANE_GONE)?;
                self.paste_into(pane, target.text.as_bytes());
                if let Some(p) = self.state.panes.get(&pane) {
                    p.process.write(b"\r".to_vec());
                }
                Ok(())
            }
            AppKind::CopyMessage => {
                // The answering client's clipboard; from `calyx approve` (no client), every
                // attached client's.
                let clients: Vec<ClientId> = match client {
                    Some(c) => vec![c],
                    None => self.state.clients.keys().copied().collect(),
                };
                for c in clients {
                    self.copy_text(c, target.text.clone());
                }
                Ok(())
            }
        }
    }

    /// An allowed Open Link whose page has closed: the answering client's browser when it is
    /// local (from `calyx approve`, the first attached client's that is), else the link on the
    /// clipboard (OSC 52 reaches the user's own machine over SSH), saying which.
    fn open_without_page(&mut self, client: Option<ClientId>, url: &str) {
        let clients: Vec<ClientId> = match client {
            Some(c) => vec![c],
            None => self.state.clients.keys().copied().collect(),
        };
        for &c in &clients {
            if self.open_for(c, url) == OpenedVia::Browser {
                self.message(c, "the page had closed: the link opened in your browser");
                return;
            }
        }
        for c in clients {
            self.copy_text(c, url.to_string());
            self.message(
                c,
                "the page had closed and no browser is local: link copied",
            );
        }
    }

    /// `c` on an Open Link whose page has closed: the link on `client`'s clipboard, and the
    /// request settled as allowed (the user took the link).
    pub(crate) fn copy_app_link(&mut self, client: ClientId, id: u64) -> bool {
        let Some(target) = self.approvals.app_of(id).cloned() else {
            return false;
        };
        if target.kind != AppKind::OpenLink || self.approvals.asker_waits(id) {
            return false;
        }
        self.copy_text(client, target.text);
        self.message(client, "link copied");
        self.approvals.decide(id, Decision::Allow, None);
        self.app_changed(false);
        true
    }

    /// Every client draws again; `show` brings the panel back for a new request.
    fn app_changed(&mut self, show: bool) {
        for c in self.state.clients.values_mut() {
            if show {
                c.panel.hidden = false;
            }
            c.dirty = true;
        }
    }
}
