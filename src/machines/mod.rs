//! Saved machines (issue 20 §2): names for the remote machines `calyx --remote` reaches, kept
//! in `machines.toml`, and what is asked of all of them at once.
//!
//! - [`store`]: the file, read strictly and edited in place;
//! - [`cli`]: `calyx machine add|list|remove|test`;
//! - [`link`]: the server's live link to each machine (snapshots pushed, answers carried);
//! - [`probe`]: one connection to a saved machine that never prompts, and why it failed;
//! - [`all`]: one request asked of this machine and every saved machine at once;
//! - [`ask_one`]: one request asked of one saved machine by name (agents' MCP calls);
//! - [`agents_all`], [`ls_all`]: `calyx agents --all` and `calyx ls --all`.

pub mod agents_all;
pub mod all;
pub mod ask_one;
pub mod cli;
pub mod link;
pub mod ls_all;
pub mod probe;
pub mod store;

pub use store::Machine;
