//! `calyx --remote TARGET` (issue 20 §1): the local calyx is a client of a calyx server on
//! another machine, reached through the user's own `ssh`. Nothing of calyx listens on a
//! network interface: `ssh` runs `calyx remote-bridge` on the far side, which relays the
//! ordinary client protocol between the SSH channel and that machine's Unix socket.
//!
//! - [`target`]: what `--remote` names and the `ssh` command line that reaches it;
//! - [`link`]: a connected client stream to a remote server (independent of the terminal UI,
//!   so saved machines can hold one per machine);
//! - [`bridge`]: the far side, `calyx remote-bridge`;
//! - [`handover`]: the bridge hands its SSH channel to the server, which then serves it
//!   with no relay in between;
//! - [`handshake`]: the bridge's first line and what the client makes of it;
//! - [`install`]: `--install`, copying this binary to a remote without calyx;
//! - [`reconnect`]: an attached client whose connection dropped connects again;
//! - [`switch`]: the chooser's switch to a saved machine's session, and `prefix L` back;
//! - [`tty`]: the interactive attach, with ssh holding the terminal; [`tty_bridge`] its far
//!   side, which attaches the pty sshd allocated as a local attach does; [`words`] the values
//!   on that bridge's command line, safe from the remote shell.

pub mod bridge;
pub mod handover;
pub mod handshake;
pub mod install;
pub mod link;
pub mod reconnect;
pub mod switch;
pub mod target;
pub mod tty;
pub mod tty_bridge;
pub mod words;

use std::sync::OnceLock;

pub use target::Target;

/// The remote machine of this process's commands, set once from `--remote` before any
/// connection is made: every client connection (`client::connect_or_start` and friends)
/// goes there instead of the local socket, so each scripting verb takes `--remote` with no
/// code of its own.
static REMOTE: OnceLock<Target> = OnceLock::new();

/// Makes every connection of this process go to `target`.
pub fn set_target(target: Target) {
    let _ = REMOTE.set(target);
}

/// The remote machine this process talks to, if `--remote` named one.
pub fn target() -> Option<&'static Target> {
    REMOTE.get()
}
