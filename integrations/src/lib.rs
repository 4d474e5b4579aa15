//! What calyx knows about other programs: which agent CLIs exist and the shapes of the hook
//! payloads they send, normalized into one event model the agent state machine understands;
//! how each one's permission gate looks and is answered (`gate`); how its hook process must
//! behave (`hook_rules`); and what `calyx setup` writes into its config (`setup`).

pub mod events;
pub mod gate;
pub mod headers;
pub mod hook_rules;
pub mod kind;
pub mod resume;

pub use events::{normalize, EventKind, NormalizeError, NormalizedEvent};
pub use kind::AgentKind;
pub mod config_edit;
pub mod setup;
