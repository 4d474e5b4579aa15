//! One request asked of one saved machine, by name: what an agent's MCP call with a `machine`
//! argument needs (issue 20 §4). Today each call is one bridged connection (the user's ssh,
//! never prompting, [`probe::connect`]); this is the one place to point at a live link to the
//! machine instead once the server keeps one.
//!
//! No server is started there: a machine without one running says so.

use std::time::Duration;

use super::{probe, store, Machine};
use crate::protocol::{Request, Response};

/// Why a machine gave no answer, as a sentence for an agent or the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AskFailure {
    /// No enabled saved machine has that name.
    NotSaved(String),
    /// It could not be reached, or its server did not answer.
    Failed {
        name: String,
        failure: probe::Failure,
    },
}

impl std::fmt::Display for AskFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AskFailure::NotSaved(why) => f.write_str(why),
            AskFailure::Failed { name, failure } => f.write_str(&failure.line(name)),
        }
    }
}

/// Asks saved machine `name` one `request`; its answer must come within `within` once
/// connected (a tool that waits for a human or an agent passes its own timeout).
pub async fn ask_one(
    name: &str,
    request: Request,
    within: Duration,
) -> Result<Response, AskFailure> {
    let machine = find(name)?;
    let failed = |failure| AskFailure::Failed {
        name: machine.name.clone(),
        failure,
    };
    match super::all::ask_within(&machine, request, within).await {
        Ok(Some(response)) => Ok(response),
        Ok(None) => Err(failed(probe::Failure::Unreachable(
            "no calyx server runs there".into(),
        ))),
        Err(failure) => Err(failed(failure)),
    }
}

/// Every enabled saved machine's name (for asking all of them one by one).
pub fn names() -> Result<Vec<String>, AskFailure> {
    let machines = store::load().map_err(|e| AskFailure::NotSaved(format!("{e:#}")))?;
    Ok(machines
        .into_iter()
        .filter(|m| m.enabled)
        .map(|m| m.name)
        .collect())
}

/// The enabled saved machine called `name`.
fn find(name: &str) -> Result<Machine, AskFailure> {
    let machines = store::load().map_err(|e| AskFailure::NotSaved(format!("{e:#}")))?;
    match machines.into_iter().find(|m| m.name == name) {
        Some(m) if m.enabled => Ok(m),
        Some(_) => Err(AskFailure::NotSaved(format!(
            "saved machine {name} is disabled (enabled = false in machines.toml)"
        ))),
        None => Err(AskFailure::NotSaved(format!(
            "no saved machine named {}; `calyx machine list` shows them, `calyx machine add \
             NAME TARGET` saves one",
            crate::remote::handshake::printable(name)
        ))),
    }
}
