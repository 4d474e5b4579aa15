//! calyx: a terminal multiplexer for running and supervising coding agents.
//!
//! The binary is a thin `main.rs` over this library so that end-to-end tests in `tests/` can
//! start real pieces (the HTTP endpoint, the server) in-process.

pub mod accept_backoff;
pub mod agents;
pub mod agents_cli;
pub mod approvals;
pub mod argsplit;
pub mod cli;
pub mod cli_panes;
pub mod cli_table;
pub mod client;
pub mod code_pages;
pub mod command_requests;
pub mod commands;
pub mod commands_cli;
pub mod config;
pub mod format;
pub mod hook;
pub mod hosted;
pub mod http;
pub mod input;
pub mod keys;
pub mod layout;
pub mod layout_preset;
pub mod layout_size;
pub mod log_file;
pub mod machines;
pub mod mcp;
pub mod mcp_cli;
pub mod mcp_login;
pub mod memory;
pub mod pane_borders;
pub mod paths;
pub mod persist;
pub mod protocol;
pub mod remote;
pub mod saved_cli;
pub mod server;
pub mod setup;
pub mod upgrade;
pub mod views;
