//! Operations: what each request does to the model. Bound keys and `:` commands (`actions`),
//! one-shot `calyx <verb>` requests (`requests`), agents' hook events (`agent_events`),
//! permission gates and their answers (`approvals`), MCP tool calls (`mcp_*`,
//! `command_history`), and the transactions every path shares (`lifecycle` closes panes,
//! `focus` tells programs who has focus, `clipboard` applies a pane's OSC 52 write).

pub mod actions;
pub mod agent_events;
pub mod anywhere_rules;
pub mod app_requests;
pub mod approvals;
pub mod bound_actions;
pub mod busy_reads;
pub mod clients;
pub mod clipboard;
pub mod command_history;
pub mod confirm_kill;
pub mod focus;
pub mod hosted;
pub mod lifecycle;
pub mod machine_notify;
pub mod machines;
pub mod mcp_approval;
pub mod mcp_spawn;
pub mod mcp_tools;
pub mod pane_events;
pub mod pane_requests;
pub mod persist_history;
pub mod persist_rules;
pub mod persistence;
pub mod prompt_commands;
pub mod prompt_keys;
pub mod remote_tools;
pub mod requests;
pub mod settings;
pub mod upgrade;
pub mod view_keys;
pub mod views;
pub mod watch;
