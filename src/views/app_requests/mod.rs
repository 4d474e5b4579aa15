//! What an MCP App view asks of the user (issue 17, "App requests through the approval
//! panel"): `ui/open-link` and `ui/message` become requests in calyx's approval panel, answered
//! with `y`/`n`/`a` or `calyx approve/deny ID`, and their answer goes back to the page.
//!
//! [`AppRequests::ask`] is the view server's entry point (through its `ViewUpstream`): it
//! assembles the request, hands it to the owner loop ([`AppMsg`], beside the queue in `approvals::app` so the
//! server's vocabulary need not import the views), which queues it and carries
//! out an allow itself (typing into the pane needs the live state; copying needs the answering
//! client), and turns the queue's outcome into the page's answer. "Always Allow for This View"
//! is kept here, per view and kind: view ids are never reused, so it ends with its view.

mod images;
pub mod message;

#[cfg(test)]
mod tests;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot};

use crate::approvals::app::{AppAsk, AppKind, AppMsg, AppTarget, PANE_GONE};
use crate::approvals::{Decision, Outcome};
use crate::server::Msg;
use crate::views::hub::{HubEvent, ViewHub, ViewSnapshot};
use crate::views::protocol::{codes, HostAction, JsonRpcError};
use crate::views::registry::ViewId;

#[derive(Default)]
struct Shared {
    /// "Always Allow for This View", per view and kind.
    always: HashSet<(ViewId, AppKind)>,
    /// The last image number used per view.
    images: HashMap<ViewId, u64>,
    next_token: u64,
}

/// The app requests of one server. Cloning shares them.
#[derive(Clone)]
pub struct AppRequests {
    tx: mpsc::UnboundedSender<Msg>,
    shared: Arc<Mutex<Shared>>,
    image_root: PathBuf,
}

impl AppRequests {
    /// App requests that go to the owner loop listening on `tx` (the server's `Msg` sender);
    /// message images are saved under `$TMPDIR/calyx-mcp-apps`.
    pub fn new(tx: mpsc::UnboundedSender<Msg>) -> Self {
        Self {
            tx,
            shared: Arc::default(),
            image_root: images::default_root(),
        }
    }

    /// Saves message images under `root` instead (tests).
    pub fn with_image_root(mut self, root: PathBuf) -> Self {
        self.image_root = root;
        self
    }

    fn lock(&self) -> MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Follows `hub` (inside a runtime): each removed view's "always" choices are forgotten
    /// and its message images deleted ([`AppRequests::view_removed`]).
    pub fn follow_removals(&self, hub: &ViewHub) {
        let mut events = hub.subscribe();
        let this = self.clone();
        tokio::spawn(async move {
            loop {
                match events.recv().await {
                    Ok(HubEvent::Removed(id)) => this.view_removed(id),
                    Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                }
            }
        });
    }

    /// View `id` is gone: "Always Allow for This View" lasted its life, and the images its
    /// messages saved go with it.
    pub fn view_removed(&self, id: ViewId) {
        self.lock().always.retain(|(view, _)| *view != id);
        images::remove_view(&self.image_root, id);
    }

    /// Whether the user chose "Always Allow for This View" for `kind` of `view`.
    pub fn always_allowed(&self, view: ViewId, kind: AppKind) -> bool {
        self.lock().always.contains(&(view, kind))
    }

    /// Asks the user through the approval panel; resolves to the page's answer: `{}` when
    /// allowed (and carried out), else a `-32000` refusal. Only [`HostAction::OpenLink`] and
    /// [`HostAction::SendMessage`] are app requests; anything else is `-32601`.
    pub async fn ask(&self, view: ViewSnapshot, action: HostAction) -> Result<Value, JsonRpcError> {
        let id = view.view.id;
        let pane = view.view.origin.pane;
        let (kind, text) = match action {
            HostAction::OpenLink { url } => (AppKind::OpenLink, url),
            HostAction::SendMessage { params } => {
                let kind = if pane.is_some() {
                    AppKind::SendMessage
                } else {
                    AppKind::CopyMessage
                };
                let text = message::assemble(&params, |data, ext| self.save_image(id, data, ext))?;
                (kind, text)
            }
            _ => {
                return Err(JsonRpcError::new(
                    codes::METHOD_NOT_FOUND,
                    "not a request for the user",
                ))
            }
        };
        let token = {
            let mut shared = self.lock();
            shared.next_token += 1;
            shared.next_token
        };
        let (answer, outcome) = oneshot::channel();
        let ask = AppAsk {
            target: AppTarget {
                view: id,
                kind,
                pane,
                text,
                token,
            },
            server: view.view.origin.alias.clone(),
            always: self.always_allowed(id, kind),
            answer,
        };
        if self.tx.send(Msg::App(AppMsg::Ask(Box::new(ask)))).is_err() {
            return Err(refusal(kind));
        }
        // Should the page stop waiting (this future dropped), its request leaves the panel.
        let mut gone = GoneGuard {
            tx: &self.tx,
            token: Some(token),
        };
        let outcome = outcome.await.ok();
        gone.token = None;
        if matches!(outcome, Some(Outcome::Decided(Decision::AllowAlways))) {
            self.lock().always.insert((id, kind));
        }
        page_answer(kind, outcome)
    }

    /// Saves one message image of `view`; its path, for the message.
    fn save_image(&self, view: ViewId, data: &[u8], ext: &str) -> Result<String, JsonRpcError> {
        let mut last_error = None;
        // A number left over from an earlier server (view ids restart) is skipped, not reused.
        for _ in 0..64 {
            let n = {
                let mut shared = self.lock();
                let n = shared.images.entry(view).or_insert(0);
                *n += 1;
                *n
            };
            match images::save(&self.image_root, view, n, data, ext) {
                Ok(path) => return Ok(path.display().to_string()),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last_error = Some(e),
                Err(e) => {
                    last_error = Some(e);
                    break;
                }
            }
        }
        tracing::warn!(?last_error, "saving a view's message image");
        Err(JsonRpcError::new(
            codes::SERVER_ERROR,
            "the image could not be saved",
        ))
    }
}

/// Withdraws a request whose page stopped waiting (its `ask` future was dropped).
struct GoneGuard<'a> {
    tx: &'a mpsc::UnboundedSender<Msg>,
    token: Option<u64>,
}

impl Drop for GoneGuard<'_> {
    fn drop(&mut self) {
        if let Some(token) = self.token {
            let _ = self.tx.send(Msg::App(AppMsg::Gone { token }));
        }
    }
}

fn refusal(kind: AppKind) -> JsonRpcError {
    JsonRpcError::new(codes::SERVER_ERROR, kind.refusal())
}

/// The page's answer for how its request ended: `{}` for an allow (carried out), the pane gone
/// as such, and every other end (a deny, expiry, replacement, withdrawal, shutdown) the
/// refusal.
pub fn page_answer(kind: AppKind, outcome: Option<Outcome>) -> Result<Value, JsonRpcError> {
    match outcome {
        Some(Outcome::Decided(d)) if d.allows() => Ok(json!({})),
        Some(Outcome::Decided(Decision::Deny { message: Some(m) })) if m == PANE_GONE => {
            Err(JsonRpcError::new(codes::SERVER_ERROR, PANE_GONE))
        }
        _ => Err(refusal(kind)),
    }
}
