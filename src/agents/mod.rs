//! Agent rows: what the agent in each pane is doing (working, blocked, idle, done, unknown).
//!
//! Pure logic, no I/O: the owner loop feeds normalized hook events, pane exits and clock ticks
//! into an [`AgentBook`] with the current [`Instant`](tokio::time::Instant), and gets back
//! [`Transition`]s that drive notifications ([`notify`]) and redraws. Time is a parameter so
//! tests can construct instants or run with tokio's paused clock.

mod book;
pub mod carry;
mod child;
mod explain;
pub mod notify;
mod rules;
mod sidebar;
mod state;
mod view;

pub use book::{AgentBook, QUIET_MIN, WORKING_STALE_AFTER};
pub use notify::{osc_sequences, Notification, Notifier, NotifyConfig};
pub use rules::BLOCKED_GRACE;
pub use sidebar::{row_state, sidebar_row};
pub use state::{AgentRow, AgentState, Rule, SubagentRow, Transition};
pub use view::{short_duration, AgentRowView, SubagentView};

#[cfg(test)]
mod tests;

#[cfg(test)]
mod child_tests;
