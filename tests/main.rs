//! Every integration test of the calyx binary, compiled into one test binary (issue 14 §6):
//! one link instead of one per file. Each file in tests/ is a module here, so a test's name
//! is its file's name and its own, `e2e_mux::split_focus_zoom_and_close_with_keys`; run one file's tests with
//! `cargo test --test integration e2e_mux::`. The files share a process: a test changes no
//! process-wide state (environment, current directory, signal handlers), it passes what a
//! child needs on the child's command line and environment instead.

/// The PTY harness: a private calyx server per test and real clients in PTYs.
mod common;
/// The real MCP servers from npm that the hosting tests connect to.
mod hosted_support;
/// The HTTP endpoint harness: a private server per test, its endpoint file and token.
mod support_browser;
mod support_endpoint;
/// A real sshd on 127.0.0.1 in front of a second calyx world, for `--remote`.
mod support_sshd;
/// A view's page played over the view server's HTTP channel, without a browser.
mod support_view_page;

mod e2e_agents;
mod e2e_anywhere_rules;
mod e2e_approval_keys;
mod e2e_approval_reach;
mod e2e_approval_record;
mod e2e_approval_rules;
mod e2e_approvals;
mod e2e_borders;
mod e2e_bridge_relay;
mod e2e_chooser;
mod e2e_chooser_machines;
mod e2e_cli;
mod e2e_clipboard;
mod e2e_code_pages;
mod e2e_confirm_kill;
mod e2e_echo_watch;
mod e2e_emoji_outer;
mod e2e_flood;
mod e2e_frames;
mod e2e_gates_server_killed;
mod e2e_input;
mod e2e_input_modes;
mod e2e_keys;
mod e2e_links;
mod e2e_machine_down_notify;
mod e2e_machine_links;
mod e2e_machines;
mod e2e_machines_mcp;
mod e2e_mcp;
mod e2e_mcp_app_requests;
mod e2e_mcp_app_tools;
mod e2e_mcp_cli;
mod e2e_mcp_elicitation;
mod e2e_mcp_fixture;
mod e2e_mcp_hosted;
mod e2e_mcp_hosted_calls;
mod e2e_mcp_limits;
mod e2e_mcp_overlay;
mod e2e_mcp_overlay_sign_in;
mod e2e_mcp_protocol;
mod e2e_mcp_retain;
mod e2e_mcp_sign_in;
mod e2e_mcp_tools;
mod e2e_mcp_view_browser;
mod e2e_mcp_view_budget;
mod e2e_mcp_view_card;
mod e2e_mcp_view_fixture;
mod e2e_mcp_view_ssh;
mod e2e_mcp_view_system_monitor;
mod e2e_mcp_view_vanilla;
mod e2e_mcp_views;
mod e2e_memory;
mod e2e_mux;
mod e2e_pane_moves;
mod e2e_pane_output;
mod e2e_persist;
mod e2e_persist_edges;
mod e2e_persist_history;
mod e2e_persist_rules;
mod e2e_prompt;
mod e2e_prompt_settings;
mod e2e_reflow;
mod e2e_reflow_shell;
mod e2e_remote;
mod e2e_sessions;
mod e2e_shell;
mod e2e_socket_keeper;
mod e2e_terminal;
mod e2e_upgrade;
mod e2e_window_numbers;
mod hook_cli;
mod hosted_http;
mod hosted_http_json;
mod hosted_legacy;
mod hosted_oversized;
mod hosted_publish;
mod hosted_secrets;
mod hosted_stdio;
mod hosted_supervisor;
mod http_endpoint;
mod mcp_http;
mod mcp_tools;
mod setup_cli;
mod snapshots_ui;
