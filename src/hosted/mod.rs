//! Hosting the user's own MCP servers (issue 16): calyx keeps a list of servers, connects to
//! them, and republishes their tools to every agent through one more MCP entry, `calyx-mcp`,
//! under `<alias>-<tool>` names. See docs/mcp-hosting.md for what exists so far.

pub mod alias;
pub mod conformance_client;
pub mod connection;
pub mod edit;
pub mod elicit;
pub mod elicitation;
pub mod entry;
pub mod held;
pub mod host;
pub mod import;
pub mod locked_file;
pub mod naming;
pub mod oauth;
pub mod progress;
pub mod publish;
pub mod resource_cache;
pub mod route;
pub mod rows;
pub mod secrets;
pub mod server_list;
pub mod sign_in;
pub mod sign_in_prompt;
pub mod step_up;
pub mod supervisor;
pub mod tools_cache;
pub mod validate;
pub mod view_upstream;
pub mod views;
pub mod views_list;
pub mod wire;
