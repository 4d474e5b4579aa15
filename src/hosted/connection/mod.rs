//! Connections to hosted servers. So far: stdio servers, on rmcp's client over our own spawn
//! (process group, stderr ring, 64 MiB lines), the tool filter and the state/backoff rules.
//! The supervisor that drives reconnects, HTTP and legacy SSE transports come next.

mod client;
pub mod filter;
pub mod raw_tap;
pub mod ring;
pub mod spawn;
pub mod state;

use thiserror::Error;

pub use client::{connect_stdio, Connected, HostedClient, INIT_TIMEOUT, MAX_MESSAGE};

/// Why a connection attempt failed, as the row shows it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConnectError {
    #[error(
        "`{command}` was not found in PATH ({path}): install it or give its full path in Edit"
    )]
    CommandNotFound { command: String, path: String },
    #[error("cannot start `{command}`: {reason}")]
    Spawn { command: String, reason: String },
    #[error("the server exited before answering initialize ({status}){}", stderr_suffix(.stderr))]
    ExitedEarly { status: String, stderr: Vec<String> },
    #[error("the server did not answer initialize within {} s{}", .after.as_secs_f64(), stderr_suffix(.stderr))]
    InitTimeout {
        after: std::time::Duration,
        stderr: Vec<String>,
    },
    #[error("initialize failed: {reason}{}", stderr_suffix(.stderr))]
    Initialize { reason: String, stderr: Vec<String> },
    #[error("tools/list failed: {reason}")]
    ListTools { reason: String },
}

fn stderr_suffix(lines: &[String]) -> String {
    if lines.is_empty() {
        String::new()
    } else {
        format!("; its stderr ends with:\n{}", lines.join("\n"))
    }
}
