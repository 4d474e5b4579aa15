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
use std::sync::Mutex;
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
}

struct Entry {
    shown: Pending,
    /// Where the answer goes; None once answered.
    answer: Option<oneshot::Sender<Answer>>,
}

/// Every server's elicitations.
pub struct Elicitations {
    queues: Mutex<BTreeMap<String, VecDeque<Entry>>>,
    next_id: AtomicU64,
    /// Ticks on every change of [`Elicitations::shown`].
    changes: watch::Sender<u64>,
}

impl Default for Elicitations {
    fn default() -> Self {
        Elicitations {
            queues: Mutex::default(),
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
                },
                answer: Some(tx),
            });
        self.changed();
        let _unanswered = Withdraw { queue: self, id };
        match tokio::time::timeout(wait, rx).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) | Err(_) => Answer::Cancel,
        }
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
        let sender = {
            let mut queues = self.lock();
            let Some((alias, at)) = find(&queues, id) else {
                return false;
            };
            let Some(queue) = queues.get_mut(&alias) else {
                return false;
            };
            let Some(entry) = queue.get_mut(at) else {
                return false;
            };
            let Some(sender) = entry.answer.take() else {
                return false;
            };
            let keep = matches!(entry.shown.request, Request::Url { .. })
                && matches!(answer, Answer::Accept(_));
            if keep {
                entry.shown.opened = true;
            } else {
                queue.remove(at);
                if queue.is_empty() {
                    queues.remove(&alias);
                }
            }
            sender
        };
        self.changed();
        // The server may have given up meanwhile: nothing to tell.
        let _ = sender.send(answer);
        true
    }

    /// `Done` on an opened URL elicitation: it goes. False when it is not one.
    pub fn done(&self, id: u64) -> bool {
        self.remove_where(|e| e.shown.id == id && e.shown.opened)
    }

    /// Server `alias` sent `notifications/elicitation/complete` for `elicitation_id`: that
    /// opened URL elicitation goes. Unknown or repeated ids change nothing (false).
    pub fn complete(&self, alias: &str, elicitation_id: &str) -> bool {
        self.remove_where(|e| {
            e.shown.alias == alias
                && e.shown.opened
                && matches!(&e.shown.request,
                    Request::Url { elicitation_id: id, .. } if id == elicitation_id)
        })
    }

    /// Every elicitation of `alias` goes, answering `cancel` (its server stopped).
    pub fn forget(&self, alias: &str) {
        let gone = self.lock().remove(alias);
        if let Some(queue) = gone {
            for entry in queue {
                if let Some(sender) = entry.answer {
                    let _ = sender.send(Answer::Cancel);
                }
            }
            self.changed();
        }
    }

    /// Removes the first entry `matches` picks; whether there was one.
    fn remove_where(&self, matches: impl Fn(&Entry) -> bool) -> bool {
        let removed = {
            let mut queues = self.lock();
            let found = queues
                .iter()
                .find_map(|(alias, q)| Some((alias.clone(), q.iter().position(&matches)?)));
            match found {
                Some((alias, at)) => {
                    if let Some(queue) = queues.get_mut(&alias) {
                        queue.remove(at);
                        if queue.is_empty() {
                            queues.remove(&alias);
                        }
                    }
                    true
                }
                None => false,
            }
        };
        if removed {
            self.changed();
        }
        removed
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
            .remove_where(|e| e.shown.id == id && e.answer.is_some());
    }
}

#[cfg(test)]
#[path = "queue_tests.rs"]
mod tests;
