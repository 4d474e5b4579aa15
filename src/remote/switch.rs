//! The local client switching servers (issue 20 §2): Enter on a saved machine's session in
//! the chooser (`prefix s`) makes the local server detach this client with
//! `ServerMessage::SwitchRemote`; the client then runs `calyx attach --remote TARGET -t
//! SESSION` on the same terminal, the local server keeps running detached, and `prefix L`
//! in that remote attach comes back to the local session it left.
//!
//! The remote attach passes the local session to the far side's bridge (`remote-bridge --tty
//! --back-to SESSION`, `remote::tty`), and the remote server binds `prefix L` for that one
//! client: it detaches it with [`BACK_MESSAGE`], the bridge exits with [`BACK_CODE`], ssh
//! passes that through, and the local client attaches to [`BACK_ENV`]'s session again. Since
//! the remote server parses the keys, a pasted `C-b L` stays text. Against a far side older
//! than `--tty` the framed attach watches its own keystrokes instead ([`BackWatch`]).

use std::process::Stdio;

use super::Target;

/// Set on the remote attach a chooser started: the local session to come back to.
pub const BACK_ENV: &str = "CALYX_BACK_TO";

/// The exit status of a remote attach left with `prefix L`.
pub const BACK_CODE: u8 = 86;

/// What a remote attach left with `prefix L` says (never printed).
pub use crate::protocol::BACK_MESSAGE;

/// The local session this remote attach came from, when a chooser started it.
pub fn back_to() -> Option<String> {
    super::target()?;
    std::env::var(BACK_ENV).ok().filter(|s| !s.is_empty())
}

/// Runs the remote attach on this terminal and waits for it. Ok(true): it came back with
/// `prefix L`; Ok(false): it ended otherwise (detached, session gone) and printed why.
pub async fn run(machine: &str, session: &str, back: &str) -> anyhow::Result<bool> {
    let machines = crate::machines::store::load()?;
    let Some(found) = machines.iter().find(|m| m.name == machine) else {
        anyhow::bail!("no saved machine named {machine:?}");
    };
    // Checked as `--remote` would, before ssh sees it.
    Target::parse(&found.target)?;
    let exe = std::env::current_exe()?;
    let status = tokio::process::Command::new(exe)
        .arg("attach")
        .arg("--remote")
        .arg(&found.target)
        .arg(format!("--target={session}"))
        .env(BACK_ENV, back)
        .stdin(Stdio::inherit())
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit())
        .status()
        .await?;
    Ok(status.code() == Some(i32::from(BACK_CODE)))
}

/// The status line's hint on the remote server, as a display-message format (`#` doubled:
/// the local session's name is text, not a format).
pub fn hint(prefix: &str, back: &str) -> String {
    let back: String = back
        .chars()
        .filter(|c| !c.is_control())
        .collect::<String>()
        .replace('#', "##");
    format!("{prefix} L: back to local session {back}")
}

/// Finds `prefix L` in the keystrokes of a remote attach.
pub struct BackWatch {
    prefix: Vec<u8>,
    /// The last read ended with the prefix.
    armed: bool,
}

impl BackWatch {
    pub fn new(prefix: Vec<u8>) -> Self {
        Self {
            prefix,
            armed: false,
        }
    }

    /// One read from the terminal: Some(n) when it holds `prefix L` (forward the first `n`
    /// bytes, then come back), None to forward it all.
    pub fn feed(&mut self, chunk: &[u8]) -> Option<usize> {
        if self.prefix.is_empty() {
            return None;
        }
        if std::mem::take(&mut self.armed) && chunk.first() == Some(&b'L') {
            return Some(0);
        }
        let p = self.prefix.len();
        if let Some(at) = chunk
            .windows(p + 1)
            .position(|w| w[..p] == self.prefix[..] && w[p] == b'L')
        {
            return Some(at);
        }
        self.armed = chunk.ends_with(&self.prefix);
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_then_l_is_found_in_one_read_or_across_two() {
        let mut w = BackWatch::new(vec![2]);
        assert_eq!(w.feed(b"ls\r"), None);
        assert_eq!(w.feed(b"\x02"), None);
        assert_eq!(w.feed(b"L"), Some(0));
        assert_eq!(w.feed(b"ab\x02Lcd"), Some(2));
        // Another key after the prefix disarms it.
        assert_eq!(w.feed(b"\x02"), None);
        assert_eq!(w.feed(b"c"), None);
        assert_eq!(w.feed(b"L"), None);
        // A lone L is typing.
        assert_eq!(w.feed(b"Hello L"), None);
    }

    #[test]
    fn the_hint_names_the_key_and_keeps_the_name_literal() {
        assert_eq!(
            hint("C-b", "main#{x}\u{1b}"),
            "C-b L: back to local session main##{x}"
        );
    }
}
