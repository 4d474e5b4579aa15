//! calyx's two MCP entries, which every CLI with an MCP client gets side by side in the same
//! shape: `calyx-ipc` (calyx's own tools, `/mcp`) and `calyx-mcp` (the tools of the MCP
//! servers the user has calyx host, republished on `/mcp-hosted`). `calyx-mcp` is written only
//! while `[mcp] host_servers` is on ([`Ctx::host_servers`]); with it off, install takes an
//! existing one out, so the CLI never lists a server whose route answers 404. Uninstall removes
//! both either way.
//!
//! Where each CLI keeps them, for `calyx doctor`, is in `mcp_entry_files.rs` (it names every
//! CLI's files, which import this module to write their entries).

use super::{Ctx, Op};

/// The entry for calyx's own tools.
pub const IPC_ENTRY: &str = "calyx-ipc";
/// The entry for the hosted servers' tools.
pub const HOSTED_ENTRY: &str = "calyx-mcp";
/// Both entry names, in the order they are written.
pub const ENTRIES: [&str; 2] = [IPC_ENTRY, HOSTED_ENTRY];

/// For each entry, in order: its name and the URL to write, or None when the entry must not be
/// there after this operation (uninstall, or `calyx-mcp` while hosting is off).
pub(super) fn wanted(ctx: &Ctx, op: Op) -> [(&'static str, Option<String>); 2] {
    let install = op == Op::Install;
    [
        (IPC_ENTRY, install.then(|| ctx.mcp_url())),
        (
            HOSTED_ENTRY,
            (install && ctx.host_servers).then(|| ctx.hosted_url()),
        ),
    ]
}
