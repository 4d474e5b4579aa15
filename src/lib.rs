//! calyx: a terminal multiplexer for running and supervising coding agents.
//!
//! The binary is a thin `main.rs` over this library so that end-to-end tests in `tests/` can
//! start real pieces (the HTTP endpoint, the server) in-process.

pub mod agents;
pub mod cli;
pub mod hook;
pub mod http;
pub mod paths;
