//! Import JSON: turning the MCP server configs agent CLIs already have into hosted servers.
//! [`parse`] reads the text, [`plan`] decides what happens to each server (the preview the
//! user confirms), [`apply`] changes the list; the caller stores the secrets of what was added.

mod parse;
mod plan;
pub mod vars;

pub use parse::{parse, Candidate, ImportError};
pub use plan::{apply, outcome_json, plan, render, Action, ConflictPolicy, Planned};

#[cfg(test)]
mod tests;
