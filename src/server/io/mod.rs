//! The outside world: the client's terminal device, the reader threads' wake-ups, the MCP
//! endpoint's door into the owner, the shells' integration scripts and the payload recorder.

pub mod adopt;
pub mod echo_watch;
#[cfg(test)]
pub mod fake_processes;
pub mod mcp_backend;
pub mod pane_notifier;
pub mod payload_capture;
pub mod processes;
pub mod shell_integration;
pub mod socket;
pub mod socket_keeper;
pub mod terminal;
pub mod view_server;
