//! `calyx hook` (placeholder until the endpoint lands): prints nothing and exits 0, so agent CLIs
//! fall back to their own behaviour.

use std::process::ExitCode;

/// Runs the hook command.
pub fn run(_kind: &str, _approval: bool) -> ExitCode {
    ExitCode::SUCCESS
}
