//! Floating panels that take single keys (the sign-in prompt, the elicitation panel) must
//! not take a key the user meant for a pane: a panel that appears while the user types keeps
//! its keys asleep for a moment.

use tokio::time::{Duration, Instant};

/// How long the keys of a panel that appeared while the user typed stay asleep.
pub const READ_GRACE: Duration = Duration::from_millis(500);
/// Keys this close before a panel appeared mean the user was typing when it did.
const TYPING_WINDOW: Duration = Duration::from_secs(1);

/// Whether a client whose last key was at `last_key` is typing at `now`.
pub fn typing(last_key: Option<Instant>, now: Instant) -> bool {
    last_key.is_some_and(|t| now.saturating_duration_since(t) < TYPING_WINDOW)
}
