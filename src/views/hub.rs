//! The one place a server's views live while it runs: the [`Registry`] of records and limits,
//! plus what each view knows of its tool call (the tool, the arguments, the result or the
//! cancellation, the checked document and its CSP), shared between the three parties that
//! touch a view:
//!
//! - the `/mcp-hosted` route, which creates a view when an agent calls a tool with a `ui://`
//!   resource and reports the resource read, the result or the cancellation;
//! - the view server, which authorizes the pages' tokens and drives each page's protocol from
//!   the record (a page that connects late replays from it);
//! - the owner loop, which draws the cards, removes views on the lifetime triggers and lists
//!   them for `calyx mcp views`.
//!
//! Every change is announced as a [`HubEvent`] so the view server and the owner can follow
//! without polling. The record, not the event, is the truth: a receiver that lags reads the
//! record again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::SystemTime;

use serde_json::Value;
use tokio::sync::broadcast;

use super::csp::{sandbox_csp, SandboxCsp};
use super::registry::{Created, NewView, Page, Registry, View, ViewId, ViewState};
use super::resource::{Rejection, ViewDocument};
use super::token::ViewToken;
use crate::layout::PaneId;

/// Events a receiver may fall behind by before it must re-read the records.
const EVENT_BUFFER: usize = 256;

/// What changed in the hub.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HubEvent {
    /// A view was created (its record exists).
    Created(ViewId),
    /// A view's record changed: its state, document, result or cancellation.
    Changed(ViewId),
    /// A view was removed: its pages get `ui/resource-teardown`, its tokens answer 410.
    Removed(ViewId),
}

/// What a view knows of the tool call that created it.
#[derive(Debug, Clone)]
pub struct CallRecord {
    /// The tool as its server listed it (original name), for `hostContext.toolInfo.tool`.
    pub tool: Value,
    /// The call's arguments, sent once as `ui/notifications/tool-input`.
    pub arguments: Value,
    /// The upstream `tools/call`'s JSON-RPC id (`hostContext.toolInfo.id`), once sent.
    pub upstream_id: Option<Value>,
    /// The view's document, once read and checked.
    pub document: Option<ViewDocument>,
    /// The sandbox page's CSP, computed from the document's `_meta.ui.csp`.
    pub csp: Option<SandboxCsp>,
    /// The `CallToolResult`, unchanged, once the call returned.
    pub result: Option<Value>,
    /// Why the call was cancelled, when it was.
    pub cancelled: Option<String>,
    /// When the view was created.
    pub created_at: SystemTime,
    /// Whether a browser page of the view is connected now (`● in browser` on the card).
    pub page_open: bool,
}

/// A view and its call, as one copy (for the card, `calyx mcp views` and the pages).
#[derive(Debug, Clone)]
pub struct ViewSnapshot {
    pub view: View,
    pub call: CallRecord,
}

/// Whether a presented token opens a view page.
#[derive(Debug, Clone)]
pub enum Access {
    /// The token is the view's: here it is.
    Granted(Box<ViewSnapshot>),
    /// The view existed and was removed (410 Gone).
    Gone,
    /// No such view, or the wrong token (404).
    Denied,
}

#[derive(Default)]
struct HubState {
    registry: Registry,
    calls: HashMap<ViewId, CallRecord>,
    /// Removed views' ids, so their URLs answer 410 rather than 404.
    /// Views removed, with their tokens: a removed view's right token answers 410 (its page
    /// may still post the reply to its teardown), a wrong one 404 as for any view.
    removed: HashMap<ViewId, Retired>,
    /// The view server's host page and sandbox ports, once it listens.
    ports: Option<ViewPorts>,
}

/// What is kept of a removed view: its two tokens, to tell its own late requests (410) from
/// guesses (404).
struct Retired {
    page_token: ViewToken,
    sandbox_token: ViewToken,
}

impl Retired {
    fn matches(&self, page: Page, token: &str) -> bool {
        match page {
            Page::Host => self.page_token.matches(token),
            Page::Sandbox => self.sandbox_token.matches(token),
        }
    }
}

impl HubState {
    /// Forgets `view`'s call and keeps its tokens for [`ViewHub::authorize`].
    fn retire(&mut self, view: &View) {
        self.calls.remove(&view.id);
        self.removed.insert(
            view.id,
            Retired {
                page_token: view.page_token.clone(),
                sandbox_token: view.sandbox_token.clone(),
            },
        );
    }
}

/// The two loopback ports of the view server: the host page's and the sandbox's (different
/// origins, as the MCP Apps spec requires).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ViewPorts {
    pub host: u16,
    pub sandbox: u16,
}

/// The server's views. Cloning shares them.
#[derive(Clone)]
pub struct ViewHub {
    state: Arc<Mutex<HubState>>,
    events: broadcast::Sender<HubEvent>,
}

impl Default for ViewHub {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for ViewHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ViewHub").finish_non_exhaustive()
    }
}

impl ViewHub {
    /// An empty hub.
    pub fn new() -> Self {
        let (events, _) = broadcast::channel(EVENT_BUFFER);
        ViewHub {
            state: Arc::default(),
            events,
        }
    }

    /// Follows every change from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<HubEvent> {
        self.events.subscribe()
    }

    fn lock(&self) -> MutexGuard<'_, HubState> {
        // A panic while holding the lock leaves plain data behind: keep serving it.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn announce(&self, event: HubEvent) {
        // No receiver is fine: nobody is watching yet.
        let _ = self.events.send(event);
    }

    /// Records a view for a tool call (see [`Registry::create`] for the limits); views removed
    /// to make room are announced as removed. Fails only when the random source does.
    pub fn create(
        &self,
        origin: NewView,
        tool: Value,
        arguments: Value,
    ) -> Result<Created, getrandom::Error> {
        let created = {
            let mut state = self.lock();
            let created = state.registry.create(origin)?;
            for gone in &created.removed {
                state.retire(gone);
            }
            state.calls.insert(
                created.id,
                CallRecord {
                    tool,
                    arguments,
                    upstream_id: None,
                    document: None,
                    csp: None,
                    result: None,
                    cancelled: None,
                    created_at: SystemTime::now(),
                    page_open: false,
                },
            );
            created
        };
        for gone in &created.removed {
            self.announce(HubEvent::Removed(gone.id));
        }
        self.announce(HubEvent::Created(created.id));
        Ok(created)
    }

    /// Changes a view's call record and, when `state` says so, its state; announces it.
    /// False when the view is gone.
    fn update(
        &self,
        id: ViewId,
        change: impl FnOnce(&mut CallRecord, &ViewState) -> Option<ViewState>,
    ) -> bool {
        let changed = {
            let mut state = self.lock();
            let HubState {
                registry, calls, ..
            } = &mut *state;
            match (
                registry.get(id).map(|v| v.state.clone()),
                calls.get_mut(&id),
            ) {
                (Some(current), Some(call)) => {
                    if let Some(next) = change(call, &current) {
                        registry.set_state(id, next);
                    }
                    true
                }
                _ => false,
            }
        };
        if changed {
            self.announce(HubEvent::Changed(id));
        }
        changed
    }

    /// The upstream `tools/call` went out with this JSON-RPC id.
    pub fn set_upstream_id(&self, id: ViewId, upstream_id: Value) -> bool {
        self.update(id, |call, _| {
            call.upstream_id = Some(upstream_id);
            None
        })
    }

    /// The resource read finished: a valid document takes the view to `Running` (or
    /// `Completed`/`Cancelled` when the call already ended); a rejection is final.
    pub fn resource_read(&self, id: ViewId, read: Result<ViewDocument, Rejection>) -> bool {
        self.update(id, |call, current| {
            if !matches!(current, ViewState::Loading) {
                return None;
            }
            match read {
                Ok(document) => {
                    let csp = document
                        .ui_meta
                        .as_ref()
                        .and_then(|ui| ui.get("csp"))
                        .cloned();
                    call.csp = Some(sandbox_csp(csp.as_ref()));
                    call.document = Some(document);
                    Some(call_state(call))
                }
                Err(rejection) => Some(ViewState::Rejected(rejection.to_string())),
            }
        })
    }

    /// The call returned (`isError` results included), unchanged.
    pub fn tool_result(&self, id: ViewId, result: Value) -> bool {
        self.update(id, |call, current| {
            call.result = Some(result);
            after_call_end(call, current)
        })
    }

    /// The call was cancelled or failed at the JSON-RPC level.
    pub fn tool_cancelled(&self, id: ViewId, reason: impl Into<String>) -> bool {
        let reason = reason.into();
        self.update(id, |call, current| {
            call.cancelled = Some(reason);
            after_call_end(call, current)
        })
    }

    /// Takes a finished view back to `Loading` to read its resource again (the card's `r`).
    pub fn reload(&self, id: ViewId) -> bool {
        self.update(id, |call, _| {
            call.document = None;
            call.csp = None;
            Some(ViewState::Loading)
        })
    }

    /// Removes one view (closed by the user, or the app asked for teardown).
    pub fn remove(&self, id: ViewId) -> Option<View> {
        let gone = {
            let mut state = self.lock();
            let gone = state.registry.remove(id);
            if let Some(view) = &gone {
                state.retire(view);
            }
            gone
        };
        if gone.is_some() {
            self.announce(HubEvent::Removed(id));
        }
        gone
    }

    /// Removes what `take` takes from the registry, and announces each.
    fn remove_with(&self, take: impl FnOnce(&mut Registry) -> Vec<View>) -> Vec<View> {
        let gone = {
            let mut state = self.lock();
            let gone = take(&mut state.registry);
            for view in &gone {
                state.retire(view);
            }
            gone
        };
        for view in &gone {
            self.announce(HubEvent::Removed(view.id));
        }
        gone
    }

    /// A pane closed: its views go.
    pub fn pane_closed(&self, pane: PaneId) -> Vec<View> {
        self.remove_with(|r| r.pane_closed(pane))
    }

    /// A server was disabled or removed: its views go.
    pub fn alias_gone(&self, alias: &str) -> Vec<View> {
        self.remove_with(|r| r.alias_gone(alias))
    }

    /// The pane's agent ended its conversation.
    pub fn conversation_ended(&self, pane: PaneId) -> Vec<View> {
        self.remove_with(|r| r.conversation_ended(pane))
    }

    /// The pane's agent started conversation `session_id`.
    pub fn conversation_started(&self, pane: PaneId, session_id: &str) -> Vec<View> {
        self.remove_with(|r| r.conversation_started(pane, session_id))
    }

    /// The view server listens on `ports`.
    pub fn set_ports(&self, ports: ViewPorts) {
        self.lock().ports = Some(ports);
    }

    /// The view server's ports, once it listens.
    pub fn ports(&self) -> Option<ViewPorts> {
        self.lock().ports
    }

    /// The host page URL of view `id` (`http://127.0.0.1:<host>/v/<id>/<token>/`), once the view
    /// server listens.
    pub fn page_url(&self, id: ViewId) -> Option<String> {
        let state = self.lock();
        let ports = state.ports?;
        let view = state.registry.get(id)?;
        Some(format!(
            "http://127.0.0.1:{}/v/{}/{}/",
            ports.host,
            id,
            view.page_token.as_str()
        ))
    }

    /// A browser page of view `id` connected (`true`) or went away (`false`).
    pub fn set_page_open(&self, id: ViewId, open: bool) -> bool {
        self.update(id, |call, _| {
            call.page_open = open;
            None
        })
    }

    /// One view and its call.
    pub fn get(&self, id: ViewId) -> Option<ViewSnapshot> {
        let state = self.lock();
        snapshot(&state, id)
    }

    /// Every view, oldest first.
    pub fn all(&self) -> Vec<ViewSnapshot> {
        let state = self.lock();
        state
            .registry
            .all()
            .iter()
            .filter_map(|v| snapshot(&state, v.id))
            .collect()
    }

    /// A pane's views, oldest first.
    pub fn in_pane(&self, pane: PaneId) -> Vec<ViewSnapshot> {
        let state = self.lock();
        state
            .registry
            .in_pane(pane)
            .filter_map(|v| snapshot(&state, v.id))
            .collect()
    }

    /// Whether `token` opens `page` of view `id` (constant-time compare).
    pub fn authorize(&self, id: ViewId, page: Page, token: &str) -> Access {
        let state = self.lock();
        if state.registry.authorize(id, page, token).is_some() {
            match snapshot(&state, id) {
                Some(found) => Access::Granted(Box::new(found)),
                None => Access::Denied,
            }
        } else if state
            .removed
            .get(&id)
            .is_some_and(|r| r.matches(page, token))
        {
            Access::Gone
        } else {
            Access::Denied
        }
    }
}

fn snapshot(state: &HubState, id: ViewId) -> Option<ViewSnapshot> {
    Some(ViewSnapshot {
        view: state.registry.get(id)?.clone(),
        call: state.calls.get(&id)?.clone(),
    })
}

/// The state a view with a document is in, from its call.
fn call_state(call: &CallRecord) -> ViewState {
    if call.cancelled.is_some() {
        ViewState::Cancelled
    } else if call.result.is_some() {
        ViewState::Completed
    } else {
        ViewState::Running
    }
}

/// The state after the call ended: a view still loading stays `Loading` (the read decides),
/// a rejected one stays rejected.
fn after_call_end(call: &CallRecord, current: &ViewState) -> Option<ViewState> {
    match current {
        ViewState::Running | ViewState::Completed | ViewState::Cancelled => Some(call_state(call)),
        ViewState::Loading | ViewState::Rejected(_) => None,
    }
}

#[cfg(test)]
#[path = "hub_tests.rs"]
mod tests;
