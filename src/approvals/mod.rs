//! Keyboard approval of agents' tool calls: which calls are gates, the answers each CLI reads,
//! the queue the human answers from, and the safe summary the overlay shows.

pub mod answer;
pub mod anywhere;
pub mod app;
pub mod asker;
mod body;
pub mod carry;
mod diff;
pub mod elsewhere;
pub mod gate;
pub mod queue;
pub mod redact;
pub mod rules;
pub mod rules_cli;
pub mod rules_list;
pub mod summary;

#[cfg(test)]
mod tests;

pub use answer::{Decision, Outcome, Silence};
pub use asker::Asker;
pub use gate::{gate, Schema};
pub use queue::{ApprovalQueue, DecidedBy, NewRequest, Pending, EXPIRY};
pub use rules::{Always, Breadth, Rule};
pub use summary::{summarize, visible, Summary};

#[cfg(test)]
mod hostile_tests;

#[cfg(test)]
mod rules_tests;
