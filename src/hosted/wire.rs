//! What `calyx mcp ...` asks the server over its socket ([`crate::protocol::Request::Mcp`]).
//! The server owns `mcp-servers.json`: every change is made there under the list's lock and
//! applied to the running connections at once.

use serde::{Deserialize, Serialize};

use super::edit::EntryEdit;
use super::entry::ServerEntry;
use super::import::Candidate;

/// One `calyx mcp` request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum McpRequest {
    /// Every server with its state (`calyx mcp list`).
    List,
    /// One server's tools, names, instructions, negotiated version and last failure.
    Details {
        alias: String,
    },
    /// A new server; `secrets` are (`env/NAME` or `header/Name`, value).
    Add {
        entry: ServerEntry,
        secrets: Vec<(String, String)>,
    },
    /// Changes to a server (anything but its alias); `secrets` as for `Add`.
    Edit {
        alias: String,
        edit: EntryEdit,
        secrets: Vec<(String, String)>,
    },
    SetEnabled {
        alias: String,
        enabled: bool,
    },
    /// Reconnect now.
    Retry {
        alias: String,
    },
    /// Removes the server and its stored secrets.
    Remove {
        alias: String,
    },
    /// Imports servers read by the client (with its environment), one policy for taken aliases.
    Import {
        candidates: Vec<Candidate>,
        policy: String,
    },
    /// Starts a sign-in of an HTTP server waiting for one; answers the authorization URL.
    /// `forwarded`: the redirect listens on 41890 (an SSH port forward).
    SignIn {
        alias: String,
        forwarded: bool,
    },
    /// Finishes the sign-in with the redirect address the user pasted.
    SignInPaste {
        alias: String,
        redirect: String,
    },
    /// Waits until the sign-in started by `SignIn` ends (up to 10 minutes).
    SignInWait {
        alias: String,
    },
    /// Deletes the tokens (keeps the client secret) and reconnects.
    SignOut {
        alias: String,
    },
    /// The MCP App views of the server (`calyx mcp views`), answered by the owner loop.
    Views,
}
