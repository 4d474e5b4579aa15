//! The open pages: one protocol session per view with a connected browser page, fed from the
//! page's posts, the hub's record changes and the upstream answers, and carried out here.
//!
//! One page per view: a second event stream for the same view replaces the first, which gets a
//! "taken-over" control event and ends. Every answer that arrives later (upstream replies,
//! user decisions, timers) carries the page's generation, so nothing meant for a replaced page
//! reaches the new one.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::SystemTime;

use serde_json::{json, Value};
use tokio::sync::{broadcast, mpsc, oneshot, watch};

use super::sse::{OnDrop, PageEvent, SseBody, BUFFER};
use super::ViewUpstream;
use crate::views::hub::{HubEvent, ViewHub, ViewPorts, ViewSnapshot};
use crate::views::protocol::{
    codes, CallView, HostAction, HostLook, Input, JsonRpcError, Output, Session, MAX_LOG_LINES,
    TEARDOWN_TIMEOUT,
};
use crate::views::registry::{ViewId, ViewState};

/// What a view told calyx through its page, kept until the view is removed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ViewNotes {
    /// `notifications/message` parameters, the last [`MAX_LOG_LINES`].
    pub logs: VecDeque<Value>,
    /// The last `ui/update-model-context` parameters and when they came.
    pub model_context: Option<(Value, SystemTime)>,
}

struct Slot {
    generation: u64,
    alias: String,
    session: Session,
    events: mpsc::Sender<PageEvent>,
    /// Whether the page has the current document (a reload clears it, the new read resends).
    document_sent: bool,
    /// The page's `hello`, replayed into the fresh session a new document starts.
    hello: Option<Value>,
}

/// Every open page, and what the server needs to drive them.
pub struct Pages {
    hub: ViewHub,
    upstream: Arc<dyn ViewUpstream>,
    ports: ViewPorts,
    look: Mutex<HostLook>,
    slots: Mutex<HashMap<ViewId, Slot>>,
    notes: Mutex<HashMap<ViewId, ViewNotes>>,
    next_generation: AtomicU64,
    /// Agents' calls of app-registered tools waiting for the view's answer.
    app_calls: Mutex<HashMap<(ViewId, u64), AppCall>>,
    next_call: AtomicU64,
}

type AppCall = oneshot::Sender<Result<Value, JsonRpcError>>;

/// What an agent's call of an app-registered tool gets when the view has no page to answer.
pub const NOT_OPEN: &str = "the view is not open in a browser: open it with prefix v, o";

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Plain data behind the lock: a panic elsewhere leaves it usable.
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Why a post was not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PostError {
    /// No open page of this view with this generation (closed, or taken over).
    NotOpen,
}

impl Pages {
    pub fn new(hub: ViewHub, upstream: Arc<dyn ViewUpstream>, ports: ViewPorts) -> Arc<Self> {
        Arc::new(Pages {
            hub,
            upstream,
            ports,
            look: Mutex::new(HostLook::default()),
            slots: Mutex::new(HashMap::new()),
            notes: Mutex::new(HashMap::new()),
            next_generation: AtomicU64::new(0),
            app_calls: Mutex::new(HashMap::new()),
            next_call: AtomicU64::new(0),
        })
    }

    pub fn hub(&self) -> &ViewHub {
        &self.hub
    }

    pub fn ports(&self) -> ViewPorts {
        self.ports
    }

    pub fn notes(&self, id: ViewId) -> Option<ViewNotes> {
        lock(&self.notes).get(&id).cloned()
    }

    /// A page's event stream connected: it becomes the view's one page.
    pub fn connect(self: &Arc<Self>, snapshot: &ViewSnapshot) -> SseBody {
        let id = snapshot.view.id;
        let generation = self.next_generation.fetch_add(1, Ordering::Relaxed) + 1;
        let (events, receiver) = mpsc::channel(BUFFER);
        let call = CallView::from_snapshot(snapshot);
        let look = lock(&self.look).clone();
        let page_look = page_look(&look);
        let mut slot = Slot {
            generation,
            alias: call.alias.clone(),
            session: Session::new(call, look),
            events,
            document_sent: false,
            hello: None,
        };
        let _ = slot.events.try_send(PageEvent::Control(json!({
            "type": "ready",
            "page": generation,
            "sandboxPort": self.ports.sandbox,
            "tool": snapshot.view.origin.original_tool,
            "alias": snapshot.view.origin.alias,
            "look": page_look,
        })));
        let taken = {
            let mut slots = lock(&self.slots);
            let mut pending = Vec::new();
            self.sync(&mut slot, snapshot, &mut pending);
            let taken = slots.insert(id, slot);
            drop(slots);
            self.run_later(id, generation, pending);
            taken
        };
        if let Some(old) = taken {
            let _ = old
                .events
                .try_send(PageEvent::Control(json!({ "type": "taken-over" })));
            self.page_gone(id, &old);
        }
        self.hub.set_page_open(id, true);
        let pages = Arc::downgrade(self);
        SseBody::new(
            receiver,
            OnDrop::new(move || {
                if let Some(pages) = pages.upgrade() {
                    pages.disconnect(id, generation);
                }
            }),
        )
    }

    /// A page's stream ended: if it was still the view's page, the view has none now.
    fn disconnect(&self, id: ViewId, generation: u64) {
        let gone = {
            let mut slots = lock(&self.slots);
            match slots.get(&id) {
                Some(slot) if slot.generation == generation => slots.remove(&id),
                _ => None,
            }
        };
        if let Some(slot) = gone {
            self.page_gone(id, &slot);
            self.hub.set_page_open(id, false);
        }
    }

    /// A page went (closed, taken over, disconnected): the calls waiting for it fail, and the
    /// tools it registered are withdrawn (a new page lists them again).
    fn page_gone(&self, id: ViewId, slot: &Slot) {
        lock(&self.app_calls).retain(|(view, _), _| *view != id);
        if slot.session.published_app_tools() {
            let upstream = self.upstream.clone();
            tokio::spawn(async move {
                let _ = upstream
                    .action(id, HostAction::AppTools { tools: Vec::new() })
                    .await;
            });
        }
    }

    /// An agent calls tool `name` that view `id` registered: sent to the view through its
    /// page, answered with the view's result, or an error when no page is open (or it goes).
    pub async fn call_app_tool(
        self: &Arc<Self>,
        id: ViewId,
        name: String,
        arguments: Value,
    ) -> Result<Value, JsonRpcError> {
        let key = self.next_call.fetch_add(1, Ordering::Relaxed) + 1;
        let (answer, answered) = oneshot::channel();
        lock(&self.app_calls).insert((id, key), answer);
        if !self.feed(
            id,
            None,
            Input::CallAppTool {
                key,
                name,
                arguments,
            },
        ) {
            lock(&self.app_calls).remove(&(id, key));
        }
        answered
            .await
            .unwrap_or_else(|_| Err(JsonRpcError::new(codes::SERVER_ERROR, NOT_OPEN)))
    }

    /// A message the page posted: the view's JSON-RPC, or the page's own `{"calyx": ...}`.
    pub fn post(
        self: &Arc<Self>,
        id: ViewId,
        generation: u64,
        message: Value,
    ) -> Result<(), PostError> {
        let input = if message.get("calyx").is_some() {
            Input::FromPage(message)
        } else {
            Input::FromView(message)
        };
        if self.feed(id, Some(generation), input) {
            Ok(())
        } else {
            Err(PostError::NotOpen)
        }
    }

    pub fn set_look(self: &Arc<Self>, look: HostLook) {
        *lock(&self.look) = look.clone();
        let control = json!({ "type": "look", "look": page_look(&look) });
        for slot in lock(&self.slots).values() {
            // The page's own header and background follow the look too.
            let _ = slot.events.try_send(PageEvent::Control(control.clone()));
        }
        for id in self.open_ids() {
            self.feed(id, None, Input::Look(look.clone()));
        }
    }

    /// Ends every page's stream (the server stops); no view has a page open after it.
    pub fn close_all(&self) {
        let ids: Vec<ViewId> = lock(&self.slots).drain().map(|(id, _)| id).collect();
        lock(&self.app_calls).clear();
        for id in ids {
            self.hub.set_page_open(id, false);
        }
    }

    fn open_ids(&self) -> Vec<ViewId> {
        lock(&self.slots).keys().copied().collect()
    }

    /// Feeds one input to view `id`'s session (only to page `generation` when given) and carries
    /// out the outputs. False when there is no such page.
    fn feed(self: &Arc<Self>, id: ViewId, generation: Option<u64>, input: Input) -> bool {
        let mut later = Vec::new();
        let page = {
            let mut slots = lock(&self.slots);
            let Some(slot) = slots.get_mut(&id) else {
                return false;
            };
            if generation.is_some_and(|g| g != slot.generation) {
                return false;
            }
            if let Input::FromPage(message) = &input {
                if message["calyx"] == "hello" {
                    slot.hello = Some(message.clone());
                }
            }
            let upstream = &self.upstream;
            let alias = slot.alias.clone();
            let outputs = slot
                .session
                .handle(input, &|name| upstream.tool(&alias, name));
            let closed = self.apply(slot, outputs, &mut later);
            let generation = slot.generation;
            if closed {
                if let Some(slot) = slots.remove(&id) {
                    self.page_gone(id, &slot);
                }
            }
            generation
        };
        self.run_later(id, page, later);
        true
    }

    /// Sends what goes to the page now; returns true when the session closed. What needs a
    /// task (upstream, actions, timers, the hub) goes to `later`, run without the lock held.
    fn apply(&self, slot: &mut Slot, outputs: Vec<Output>, later: &mut Vec<Output>) -> bool {
        let mut closed = false;
        for output in outputs {
            match output {
                Output::ToView(message) => send(slot, PageEvent::Rpc(message)),
                Output::ToPage(control) => send(slot, PageEvent::Control(control)),
                Output::Closed => {
                    send(slot, PageEvent::Control(json!({ "type": "closed" })));
                    closed = true;
                }
                other => later.push(other),
            }
        }
        closed
    }

    fn run_later(self: &Arc<Self>, id: ViewId, generation: u64, outputs: Vec<Output>) {
        for output in outputs {
            match output {
                Output::Upstream {
                    key,
                    method,
                    params,
                } => {
                    let pages = self.clone();
                    let alias = lock(&self.slots)
                        .get(&id)
                        .map(|slot| slot.alias.clone())
                        .unwrap_or_default();
                    tokio::spawn(async move {
                        let result = pages.upstream.request(&alias, &method, params).await;
                        pages.feed(id, Some(generation), Input::Reply { key, result });
                    });
                }
                Output::Action {
                    action: HostAction::TeardownRequested,
                    ..
                } => {
                    // The hub announces the removal; following it sends the teardown.
                    self.hub.remove(id);
                }
                Output::Action { key, action } => {
                    self.note(id, &action);
                    let pages = self.clone();
                    tokio::spawn(async move {
                        let result = pages.upstream.action(id, action).await;
                        if let Some(key) = key {
                            pages.feed(id, Some(generation), Input::Reply { key, result });
                        }
                    });
                }
                Output::TeardownStarted => {
                    let pages = self.clone();
                    tokio::spawn(async move {
                        tokio::time::sleep(TEARDOWN_TIMEOUT).await;
                        pages.feed(id, Some(generation), Input::TeardownTimeout);
                    });
                }
                Output::AppToolResult { key, result } => {
                    if let Some(answer) = lock(&self.app_calls).remove(&(id, key)) {
                        let _ = answer.send(result);
                    }
                }
                Output::ToView(_) | Output::ToPage(_) | Output::Closed => {}
            }
        }
    }

    fn note(&self, id: ViewId, action: &HostAction) {
        let mut notes = lock(&self.notes);
        match action {
            HostAction::Log { params } => {
                let logs = &mut notes.entry(id).or_default().logs;
                if logs.len() >= MAX_LOG_LINES {
                    logs.pop_front();
                }
                logs.push_back(params.clone());
            }
            HostAction::ModelContext { params } => {
                notes.entry(id).or_default().model_context =
                    Some((params.clone(), SystemTime::now()));
            }
            _ => {}
        }
    }

    /// Brings a page up to date with its view's record: state, document, call.
    fn sync(&self, slot: &mut Slot, snapshot: &ViewSnapshot, later: &mut Vec<Output>) {
        let (state, reason) = match &snapshot.view.state {
            ViewState::Loading => ("loading", None),
            ViewState::Running => ("running", None),
            ViewState::Completed => ("completed", None),
            ViewState::Cancelled => ("cancelled", None),
            ViewState::Rejected(reason) => ("rejected", Some(reason.clone())),
        };
        send(
            slot,
            PageEvent::Control(json!({ "type": "state", "state": state, "reason": reason })),
        );
        let call = CallView::from_snapshot(snapshot);
        match (&snapshot.call.document, &snapshot.call.csp) {
            (Some(document), Some(csp)) if !slot.document_sent => {
                slot.document_sent = true;
                // A new document is a new view: its protocol starts over.
                slot.session = Session::new(call.clone(), lock(&self.look).clone());
                if let Some(hello) = slot.hello.clone() {
                    let outputs = slot.session.handle(Input::FromPage(hello), &|_| None);
                    self.apply(slot, outputs, later);
                }
                send(
                    slot,
                    PageEvent::Control(json!({
                        "type": "document",
                        "html": document.html,
                        "csp": csp.allowed.to_json(),
                        "ignored": csp.ignored,
                        "sandbox": format!(
                            "/s/{}/{}/",
                            snapshot.view.id,
                            snapshot.view.sandbox_token.as_str()
                        ),
                    })),
                );
            }
            (None, _) if slot.document_sent => slot.document_sent = false,
            _ => {}
        }
        let upstream = &self.upstream;
        let alias = slot.alias.clone();
        let outputs = slot
            .session
            .handle(Input::Record(call), &|name| upstream.tool(&alias, name));
        self.apply(slot, outputs, later);
    }

    /// View `id`'s record changed, or it was removed.
    fn record_changed(self: &Arc<Self>, id: ViewId) {
        match self.hub.get(id) {
            Some(snapshot) => {
                let mut later = Vec::new();
                let generation = {
                    let mut slots = lock(&self.slots);
                    let Some(slot) = slots.get_mut(&id) else {
                        return;
                    };
                    self.sync(slot, &snapshot, &mut later);
                    slot.generation
                };
                self.run_later(id, generation, later);
            }
            None => {
                lock(&self.notes).remove(&id);
                self.feed(id, None, Input::Teardown);
            }
        }
    }
}

/// Queues an event for the page. A page that fell [`BUFFER`] events behind loses its stream
/// (the sender is replaced by a closed one) and reconnects, replaying from the record.
fn send(slot: &mut Slot, event: PageEvent) {
    if let Err(mpsc::error::TrySendError::Full(_)) = slot.events.try_send(event) {
        tracing::warn!("views: a page fell behind its event stream; dropping it");
        let (closed, _) = mpsc::channel(1);
        slot.events = closed;
    }
}

/// Follows the hub: record changes reach open pages, removals tear them down.
pub async fn follow_hub(
    pages: Arc<Pages>,
    mut events: broadcast::Receiver<HubEvent>,
    mut stopped: watch::Receiver<bool>,
) {
    loop {
        let event = tokio::select! {
            _ = stopped.changed() => return,
            event = events.recv() => event,
        };
        match event {
            Ok(HubEvent::Changed(id) | HubEvent::Removed(id)) => pages.record_changed(id),
            Ok(HubEvent::Created(_)) => {}
            Err(broadcast::error::RecvError::Lagged(_)) => {
                // The record is the truth: re-read every open page's.
                for id in pages.open_ids() {
                    pages.record_changed(id);
                }
            }
            Err(broadcast::error::RecvError::Closed) => return,
        }
    }
}

/// Follows the hosted servers' notifications, for the pages of their views.
pub async fn follow_servers(
    pages: Arc<Pages>,
    mut notifications: broadcast::Receiver<(String, Value)>,
    mut stopped: watch::Receiver<bool>,
) {
    loop {
        let received = tokio::select! {
            _ = stopped.changed() => return,
            received = notifications.recv() => received,
        };
        match received {
            Ok((alias, message)) => {
                let ids: Vec<ViewId> = lock(&pages.slots)
                    .iter()
                    .filter(|(_, slot)| slot.alias == alias)
                    .map(|(id, _)| *id)
                    .collect();
                for id in ids {
                    pages.feed(id, None, Input::ServerNotification(message.clone()));
                }
            }
            Err(broadcast::error::RecvError::Lagged(_)) => {}
            Err(broadcast::error::RecvError::Closed) => return,
        }
    }
}

/// What the host page itself needs of the look (its header and background): the theme and
/// three colours of the variables the app gets.
fn page_look(look: &HostLook) -> Value {
    let var = |name: &str| look.variables.get(name).cloned().unwrap_or(Value::Null);
    json!({
        "theme": look.theme,
        "background": var("--color-background-primary"),
        "text": var("--color-text-primary"),
        "border": var("--color-border-primary"),
    })
}
