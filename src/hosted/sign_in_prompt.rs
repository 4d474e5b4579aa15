//! "An agent calls a tool of a server that needs sign-in" (issue 16, OAuth): the calls waiting
//! for a server's sign-in, by alias. A call to a tool held for sign-in ([`HeldServer::sign_in`])
//! [`asks`](SignInPrompts::ask) here; while at least one call of a server waits, every attached
//! client shows the floating prompt `<name> requires sign-in` (the server's loop reads
//! [`SignInPrompts::waiting`] whenever [`SignInPrompts::watch`] ticks). Several calls to one
//! server share one prompt. `Esc` in the prompt [`cancel`](SignInPrompts::cancel)s: every call
//! waiting on that server answers at once with [`sign_in_sentence`]. The prompt goes away when
//! its last call stops waiting: the server became ready (the calls run), the wait of
//! [`SIGN_IN_WAIT`] ran out, or the user cancelled.
//!
//! [`HeldServer::sign_in`]: super::held::HeldServer::sign_in

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{broadcast, watch};
use tokio_util::sync::CancellationToken;

use super::oauth::Challenge;

/// Told when a call to a ready server met an authorization challenge (a 403
/// `insufficient_scope`, or a 401): the supervisor records it for the sign-in and puts the
/// server's row in `sign-in required`.
pub type ChallengeHook = Arc<dyn Fn(&str, Challenge) + Send + Sync>;

/// How long a call to a server that needs sign-in waits for the sign-in to finish.
pub const SIGN_IN_WAIT: Duration = Duration::from_secs(120);

/// The `isError` text of a call whose server was not signed in in time (or whose prompt was
/// cancelled): "`Linear` requires sign-in: run `calyx mcp login linear` or sign in from
/// prefix M".
pub fn sign_in_sentence(name: &str, alias: &str) -> String {
    format!("`{name}` requires sign-in: run `calyx mcp login {alias}` or sign in from prefix M")
}

/// The calls waiting on one server.
struct Waiting {
    /// Which prompt this is: one cancelled and raised again is a new one.
    id: u64,
    name: String,
    calls: usize,
    /// Cancelled by `Esc`: every waiting call gives up.
    cancel: CancellationToken,
}

/// The servers that calls are waiting to be signed in to.
pub struct SignInPrompts {
    waiting: Mutex<BTreeMap<String, Waiting>>,
    next_id: std::sync::atomic::AtomicU64,
    /// Ticks on every change of [`SignInPrompts::waiting`].
    changes: watch::Sender<u64>,
    /// The aliases whose sign-in (or step-up) just finished.
    signed_in: broadcast::Sender<String>,
    challenged: Mutex<Option<ChallengeHook>>,
}

impl Default for SignInPrompts {
    fn default() -> Self {
        SignInPrompts {
            waiting: Mutex::default(),
            next_id: std::sync::atomic::AtomicU64::new(0),
            changes: watch::Sender::new(0),
            signed_in: broadcast::channel(64).0,
            challenged: Mutex::new(None),
        }
    }
}

impl SignInPrompts {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Waiting>> {
        self.waiting.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn changed(&self) {
        self.changes.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// A call to a tool of `alias` (display name `name`) starts waiting for its sign-in; the
    /// prompt shows while the returned [`Ask`] lives.
    pub fn ask(self: &Arc<Self>, alias: &str, name: &str) -> Ask {
        let (id, cancel) = {
            let mut waiting = self.lock();
            let entry = waiting.entry(alias.to_string()).or_insert_with(|| Waiting {
                id: self
                    .next_id
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed),
                name: name.to_string(),
                calls: 0,
                cancel: CancellationToken::new(),
            });
            entry.calls += 1;
            (entry.id, entry.cancel.clone())
        };
        self.changed();
        Ask {
            prompts: self.clone(),
            alias: alias.to_string(),
            id,
            cancel,
        }
    }

    /// `Esc` in the prompt of `alias`: every call waiting on it answers the sign-in sentence
    /// now, and the prompt goes. False when nothing waited.
    pub fn cancel(&self, alias: &str) -> bool {
        let Some(waiting) = self.lock().remove(alias) else {
            return false;
        };
        waiting.cancel.cancel();
        self.changed();
        true
    }

    /// The servers calls wait on now, as (alias, display name, how many calls), by alias.
    pub fn waiting(&self) -> Vec<(String, String, usize)> {
        self.lock()
            .iter()
            .map(|(alias, w)| (alias.clone(), w.name.clone(), w.calls))
            .collect()
    }

    /// The supervisor's side of [`SignInPrompts::challenged`].
    pub fn set_challenge_hook(&self, hook: ChallengeHook) {
        *self.challenged.lock().unwrap_or_else(|e| e.into_inner()) = Some(hook);
    }

    /// A call to ready `alias` met `challenge`: tell the supervisor (no hook: nothing to do).
    pub fn challenged(&self, alias: &str, challenge: Challenge) {
        let hook = self
            .challenged
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if let Some(hook) = hook {
            hook(alias, challenge);
        }
    }

    /// The sign-in (or step-up) of `alias` stored its tokens.
    pub fn signed_in(&self, alias: &str) {
        // Nobody waiting is fine.
        let _ = self.signed_in.send(alias.to_string());
    }

    /// Every alias signed in from now on.
    pub fn signed_in_events(&self) -> broadcast::Receiver<String> {
        self.signed_in.subscribe()
    }

    /// A receiver that wakes whenever [`SignInPrompts::waiting`] changes.
    pub fn watch(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// One call of prompt `id` stopped waiting on `alias`.
    fn done(&self, alias: &str, id: u64) {
        let gone = {
            let mut waiting = self.lock();
            match waiting.get_mut(alias) {
                Some(w) if w.id == id => {
                    w.calls = w.calls.saturating_sub(1);
                    if w.calls == 0 {
                        waiting.remove(alias);
                    }
                    true
                }
                _ => false,
            }
        };
        if gone {
            self.changed();
        }
    }
}

/// One call waiting for a server's sign-in; dropping it ends the wait.
pub struct Ask {
    prompts: Arc<SignInPrompts>,
    alias: String,
    id: u64,
    cancel: CancellationToken,
}

impl Ask {
    /// Resolves when the user cancels the prompt.
    pub async fn cancelled(&self) {
        self.cancel.cancelled().await
    }
}

impl Drop for Ask {
    fn drop(&mut self) {
        self.prompts.done(&self.alias, self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_to_one_server_share_one_prompt_until_the_last_stops_waiting() {
        let prompts = Arc::new(SignInPrompts::default());
        let changes = prompts.watch();
        let first = prompts.ask("lin", "Linear");
        let second = prompts.ask("lin", "Linear");
        assert_eq!(
            prompts.waiting(),
            [("lin".to_string(), "Linear".to_string(), 2)]
        );
        drop(first);
        assert_eq!(prompts.waiting()[0].2, 1, "one call still waits");
        drop(second);
        assert!(prompts.waiting().is_empty());
        assert!(changes.has_changed().unwrap_or(false));
    }

    #[tokio::test]
    async fn cancel_ends_every_wait_of_that_server_and_no_other() {
        let prompts = Arc::new(SignInPrompts::default());
        let a = prompts.ask("lin", "Linear");
        let b = prompts.ask("lin", "Linear");
        let other = prompts.ask("gh", "GitHub");
        assert!(prompts.cancel("lin"));
        a.cancelled().await;
        b.cancelled().await;
        assert_eq!(
            prompts.waiting(),
            [("gh".to_string(), "GitHub".to_string(), 1)]
        );
        // A new call after the cancel raises a new prompt; the old calls ending leave it.
        let again = prompts.ask("lin", "Linear");
        drop(a);
        drop(b);
        assert_eq!(prompts.waiting().len(), 2);
        drop(again);
        drop(other);
        assert!(prompts.waiting().is_empty());
        assert!(!prompts.cancel("lin"), "nothing waits");
    }
}
