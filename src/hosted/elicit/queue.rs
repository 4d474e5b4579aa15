//! The elicitations hosted servers are waiting on (issue 17, "Elicitation"): each server's
//! `elicitation/create` requests [`ask`](Elicitations::ask) here and wait for the user's
//! answer, which the panel in every attached client sends back with
//! [`answer`](Elicitations::answer). One queue per server, first in first out: the panel shows
//! the head of each ([`Elicitations::shown`]), so a server asks one thing at a time. Unanswered
//! for [`ANSWER_WAIT`] an elicitation answers `cancel` and goes.
//!
//! A URL elicitation answered Open stays at its queue's head, opened, until its
//! `notifications/elicitation/complete` ([`Elicitations::complete`]) or the user's `Done`
//! ([`Elicitations::done`]).

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::{oneshot, watch};

/// How long an elicitation waits for the user before it answers `cancel`.
pub const ANSWER_WAIT: Duration = Duration::from_secs(600);

/// What a server asks.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// A form: its `requestedSchema` and the properties' wire order.
    Form {
        message: String,
        schema: Value,
        order: Vec<String>,
    },
    /// Open a page.
    Url {
        message: String,
        url: String,
        elicitation_id: String,
    },
}

/// The user's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// Accepted, with the form's content (none for a URL).
    Accept(Option<serde_json::Map<String, Value>>),
    Decline,
    Cancel,
}

/// An elicitation as the panel shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    pub id: u64,
    pub alias: String,
    /// The server's display name (drawn sanitised).
    pub name: String,
    pub request: Request,
    /// A URL elicitation the user opened (accepted): it waits for its completion.
    pub opened: bool,
    /// The surface id of the agent's pane whose call the server was running when it asked,
    /// when that is certain: exactly one call to that server was in flight, from a pane.
    pub surface: Option<String>,
}

struct Entry {
    shown: Pending,
    /// Waiting for the user's answer (Accept/Open, Decline, Cancel).
    awaiting: bool,
    /// Where the answer goes (None for a URL a failed call needs, which the server did not
    /// ask for as a request; see [`Elicitations::show_needed`]).
    answer: Option<oneshot::Sender<Answer>>,
    /// For a URL a failed call needs: told, when it goes, whether it completed.
    completed: Option<oneshot::Sender<bool>>,
}

impl Entry {
    /// It goes: a URL a call needs learns whether it `completed`.
    fn gone(self, completed: bool) {
        if let Some(tx) = self.completed {
            let _ = tx.send(completed);
        }
        if let Some(tx) = self.answer {
            let _ = tx.send(Answer::Cancel);
        }
    }
}

/// Every server's elicitations.
pub struct Elicitations {
    queues: Mutex<BTreeMap<String, VecDeque<Entry>>>,
    /// The agents' calls in flight per server, with the caller's surface id: which pane a
    /// question is asked for (rmcp does not say which request it belongs to).
    calls: Mutex<BTreeMap<String, Vec<CallInFlight>>>,
    next_id: AtomicU64,
    /// Ticks on every change of [`Elicitations::shown`].
    changes: watch::Sender<u64>,
}

impl Default for Elicitations {
    fn default() -> Self {
        Elicitations {
            queues: Mutex::default(),
            calls: Mutex::default(),
            next_id: AtomicU64::new(1),
            changes: watch::Sender::new(0),
        }
    }
}

impl std::fmt::Debug for Elicitations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Elicitations")
            .field("shown", &self.shown())
            .finish()
    }
}

impl Elicitations {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, VecDeque<Entry>>> {
        self.queues.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// An agent's call from the pane of `surface` (None: outside calyx) to server `alias`
    /// starts; it is in flight until the returned guard drops.
    pub fn call_started(self: &Arc<Self>, alias: &str, surface: Option<String>) -> InFlightCall {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.calls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(alias.to_string())
            .or_default()
            .push((id, surface));
        InFlightCall {
            queue: self.clone(),
            alias: alias.to_string(),
            id,
        }
    }

    /// The pane a question of `alias` is for: the caller of its only call in flight.
    fn asker_surface(&self, alias: &str) -> Option<String> {
        let calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
        match calls.get(alias).map(Vec::as_slice) {
            Some([(_, surface)]) => surface.clone(),
            _ => None,
        }
    }

    fn changed(&self) {
        self.changes.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Server `alias` (display name `name`) asks `request`; the user's answer, or `cancel`
    /// after [`ANSWER_WAIT`]. Dropping the future (the server cancelled its request)
    /// withdraws the question.
    pub async fn ask(&self, alias: &str, name: &str, request: Request) -> Answer {
        self.ask_within(alias, name, request, ANSWER_WAIT).await
    }

    /// [`Elicitations::ask`] waiting at most `wait`.
    pub async fn ask_within(
        &self,
        alias: &str,
        name: &str,
        request: Request,
        wait: Duration,
    ) -> Answer {
        let (tx, rx) = oneshot::channel();
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let surface = self.asker_surface(alias);
        self.lock()
            .entry(alias.to_string())
            .or_default()
            .push_back(Entry {
                shown: Pending {
                    id,
                    alias: alias.to_string(),
                    name: name.to_string(),
                    request,
                    opened: false,
                    surface,
                },
                awaiting: true,
                answer: Some(tx),
                completed: None,
            });
        self.changed();
        let _unanswered = Withdraw { queue: self, id };
        match tokio::time::timeout(wait, rx).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) | Err(_) => Answer::Cancel,
        }
    }

    /// Server `alias` answered a call with `-32042` (URL elicitation required): shows each
    /// URL (message, url, elicitation id) as a URL elicitation; each receiver says, when it
    /// goes, whether it completed (its `notifications/elicitation/complete`, or the user's
    /// `Done` after Open) or not (declined, cancelled, its server stopped).
    pub fn show_needed(
        &self,
        alias: &str,
        name: &str,
        urls: &[(String, String, String)],
    ) -> Vec<(u64, oneshot::Receiver<bool>)> {
        let mut out = Vec::new();
        let surface = self.asker_surface(alias);
        {
            let mut queues = self.lock();
            let queue = queues.entry(alias.to_string()).or_default();
            for (message, url, elicitation_id) in urls {
                let (tx, rx) = oneshot::channel();
                let id = self.next_id.fetch_add(1, Ordering::Relaxed);
                queue.push_back(Entry {
                    shown: Pending {
                        id,
                        alias: alias.to_string(),
                        name: name.to_string(),
                        request: Request::Url {
                            message: message.clone(),
                            url: url.clone(),
                            elicitation_id: elicitation_id.clone(),
                        },
                        opened: false,
                        surface: surface.clone(),
                    },
                    awaiting: true,
                    answer: None,
                    completed: Some(tx),
                });
                out.push((id, rx));
            }
        }
        self.changed();
        out
    }

    /// Withdraws elicitation `id` whatever its state (a call stopped waiting for it).
    pub fn withdraw(&self, id: u64) {
        self.remove_where(|e| e.shown.id == id, false);
    }

    /// The head of every server's queue, by alias: what the panel shows (the first of them).
    pub fn shown(&self) -> Vec<Pending> {
        self.lock()
            .values()
            .filter_map(|q| q.front().map(|e| e.shown.clone()))
            .collect()
    }

    /// A receiver that wakes whenever [`Elicitations::shown`] changes.
    pub fn watch(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// The user answered elicitation `id`. A URL one accepted stays, opened (see the module
    /// doc); the others go. False when it is not waiting for an answer (gone, or answered).
    pub fn answer(&self, id: u64, answer: Answer) -> bool {
        let (sender, gone) = {
            let mut queues = self.lock();
            let Some((alias, at)) = find(&queues, id) else {
                return false;
            };
            let Some(queue) = queues.get_mut(&alias) else {
                return false;
            };
            let Some(entry) = queue.get_mut(at).filter(|e| e.awaiting) else {
                return false;
            };
            entry.awaiting = false;
            let sender = entry.answer.take();
            let keep = matches!(entry.shown.request, Request::Url { .. })
                && matches!(answer, Answer::Accept(_));
            let mut gone = None;
            if keep {
                entry.shown.opened = true;
            } else {
                gone = queue.remove(at);
                if queue.is_empty() {
                    queues.remove(&alias);
                }
            }
            (sender, gone)
        };
        self.changed();
        // The server may have given up meanwhile: nothing to tell.
        if let Some(sender) = sender {
            let _ = sender.send(answer);
        }
        if let Some(entry) = gone {
            entry.gone(false);
        }
        true
    }

    /// `Done` on an opened URL elicitation: it goes. False when it is not one.
    pub fn done(&self, id: u64) -> bool {
        self.remove_where(|e| e.shown.id == id && e.shown.opened, true)
    }

    /// Server `alias` sent `notifications/elicitation/complete` for `elicitation_id`: that
    /// URL elicitation goes, if it was opened or is one a failed call needs (the user may
    /// have opened the page another way). Unknown or repeated ids change nothing (false).
    pub fn complete(&self, alias: &str, elicitation_id: &str) -> bool {
        self.remove_where(
            |e| {
                e.shown.alias == alias
                    && (e.shown.opened || e.completed.is_some())
                    && matches!(&e.shown.request,
                    Request::Url { elicitation_id: id, .. } if id == elicitation_id)
            },
            true,
        )
    }

    /// Every elicitation of `alias` goes, answering `cancel` (its server stopped).
    pub fn forget(&self, alias: &str) {
        let gone = self.lock().remove(alias);
        if let Some(queue) = gone {
            for entry in queue {
                entry.gone(false);
            }
            self.changed();
        }
    }

    /// Removes the first entry `matches` picks (a URL a call needs learns whether it
    /// `completed`); whether there was one.
    fn remove_where(&self, matches: impl Fn(&Entry) -> bool, completed: bool) -> bool {
        let removed = {
            let mut queues = self.lock();
            let found = queues
                .iter()
                .find_map(|(alias, q)| Some((alias.clone(), q.iter().position(&matches)?)));
            match found {
                Some((alias, at)) => {
                    let entry = queues.get_mut(&alias).and_then(|q| q.remove(at));
                    if queues.get(&alias).is_some_and(VecDeque::is_empty) {
                        queues.remove(&alias);
                    }
                    entry
                }
                None => None,
            }
        };
        let Some(entry) = removed else {
            return false;
        };
        self.changed();
        entry.gone(completed);
        true
    }
}

/// A call in flight: its id and the caller's surface id.
type CallInFlight = (u64, Option<String>);

/// An agent's call in flight (see [`Elicitations::call_started`]); dropping it ends it.
pub struct InFlightCall {
    queue: Arc<Elicitations>,
    alias: String,
    id: u64,
}

impl Drop for InFlightCall {
    fn drop(&mut self) {
        let mut calls = self.queue.calls.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(list) = calls.get_mut(&self.alias) {
            list.retain(|(id, _)| *id != self.id);
            if list.is_empty() {
                calls.remove(&self.alias);
            }
        }
    }
}

/// Where elicitation `id` is: its alias and place in that queue.
fn find(queues: &BTreeMap<String, VecDeque<Entry>>, id: u64) -> Option<(String, usize)> {
    queues
        .iter()
        .find_map(|(alias, q)| Some((alias.clone(), q.iter().position(|e| e.shown.id == id)?)))
}

/// Withdraws an elicitation still waiting for its answer when its `ask` ends without one
/// (timed out, or the server cancelled the request).
struct Withdraw<'a> {
    queue: &'a Elicitations,
    id: u64,
}

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        let id = self.id;
        self.queue
            .remove_where(|e| e.shown.id == id && e.awaiting, false);
    }
}

#[cfg(test)]
#[path = "queue_tests.rs"]
mod tests;
