//! The first lines of a bridge's conversation, before any frame: the bridge says which calyx
//! and which socket protocol it speaks (`calyx-remote-bridge calyx=0.4.0 protocol=1`), then,
//! once it reached the remote server's socket, `ready` (or `error: WHY`). The client checks the
//! protocol before relaying a byte, so a remote of another protocol gets a clear message
//! rather than frames it would misread.

/// The protocol a bridge speaks on the socket, as a client sees it over ssh: 2 since saved
/// machines' links (`ClientMessage::Watch`, `Snapshot`) and agents' calls across machines
/// (`Request::RemoteTool`, `Tagged`), which a calyx of protocol 1 misreads as a broken
/// connection; 3 since rules that hold on every machine (`Request::AnywhereRules`) and
/// cancelled calls across machines (`ClientMessage::CancelTagged`), which a server of
/// protocol 2 would read as a broken link. Kept apart from `upgrade::handover::PROTOCOL_VERSION` (what a server hands
/// over to its replacement, unchanged by these messages): `calyx server-upgrade` from
/// protocol 1 still works, and a machine of the other protocol is named as such.
pub const PROTOCOL_VERSION: u32 = 3;

/// The start of the bridge's header line.
pub const MAGIC: &str = "calyx-remote-bridge";

/// The line a bridge sends once connected to its server.
pub const READY: &str = "ready";

/// The start of the line a bridge sends when it could not reach its server.
pub const ERROR: &str = "error: ";

/// How much a remote may print before the header (a chatty shell rc file) before the client
/// gives up looking for it.
pub const MAX_PREAMBLE: usize = 64 * 1024;

/// This binary's header line, newline included. `tty=1`: this bridge takes `--tty` (the
/// interactive attach with ssh holding the terminal, `remote::tty`); a bridge of the same
/// protocol without it gets the framed attach instead. Older clients skip the word.
pub fn header() -> String {
    format!(
        "{MAGIC} calyx={} protocol={PROTOCOL_VERSION} tty=1\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// What a bridge said about itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Peer {
    /// Its calyx version, printable (control characters removed: it is shown on screen).
    pub version: String,
    pub protocol: Option<u32>,
    /// It takes `remote-bridge --tty`.
    pub tty: bool,
}

impl Peer {
    /// Whether this client can talk to it.
    pub fn compatible(&self) -> bool {
        self.protocol == Some(PROTOCOL_VERSION)
    }
}

/// The header's fields, when `line` is a header.
pub fn parse_header(line: &str) -> Option<Peer> {
    let rest = line.trim_end().strip_prefix(MAGIC)?.strip_prefix(' ')?;
    let mut version = None;
    let mut protocol = None;
    let mut tty = false;
    for word in rest.split_whitespace() {
        if let Some(v) = word.strip_prefix("calyx=") {
            version = Some(printable(v));
        } else if let Some(p) = word.strip_prefix("protocol=") {
            protocol = p.parse().ok();
        } else if word == "tty=1" {
            tty = true;
        }
    }
    Some(Peer {
        version: version.unwrap_or_else(|| "unknown".to_string()),
        protocol,
        tty,
    })
}

/// At most 40 characters of `text` without control characters.
pub fn printable(text: &str) -> String {
    text.chars().filter(|c| !c.is_control()).take(40).collect()
}

/// The command run on the far side: `~/.local/bin/calyx` when there is one (where `--install`
/// puts it, and where a non-interactive ssh's PATH often does not reach: so a calyx installed
/// with `--install` wins over an older one elsewhere on the PATH), else `calyx` from the PATH;
/// exit 127, as a shell does for a missing command, when there is neither. The remote login
/// shell parses this, so it is one single-quoted `sh -c` script with no quote inside.
pub fn remote_command(args: &str) -> String {
    format!(
        "sh -c 'c=\"$HOME/.local/bin/calyx\"; [ -x \"$c\" ] || c=$(command -v calyx) \
         || exit 127; exec \"$c\" {args}'"
    )
}

/// One line of remote text for a message: control characters (escape sequences) removed,
/// runs of whitespace joined, at most 400 characters.
pub fn printable_line(text: &str) -> String {
    let clean: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let joined = clean.split_whitespace().collect::<Vec<_>>().join(" ");
    joined.chars().take(400).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_binarys_header_parses_as_compatible() {
        let peer = parse_header(&header()).expect("a header");
        assert_eq!(peer.version, env!("CARGO_PKG_VERSION"));
        assert!(peer.compatible());
        assert!(peer.tty);
    }

    #[test]
    fn a_bridge_of_protocol_one_predates_links_and_is_incompatible() {
        let old = parse_header("calyx-remote-bridge calyx=0.4.0 protocol=1").expect("header");
        assert_eq!(old.protocol, Some(1));
        assert!(!old.compatible());
        assert!(
            !old.tty,
            "a bridge from before --tty gets the framed attach"
        );
        assert!(header().contains("protocol=3"), "{}", header());
    }

    #[test]
    fn other_protocols_and_noise_are_told_apart() {
        let old = parse_header("calyx-remote-bridge calyx=0.0.1 protocol=0").expect("header");
        assert_eq!(old.version, "0.0.1");
        assert!(!old.compatible());
        assert!(parse_header("Welcome to the build box").is_none());
        assert!(parse_header("calyx-remote-bridgeX calyx=1").is_none());
        let hostile = parse_header("calyx-remote-bridge calyx=\u{1b}]52;c;eA==\u{7} protocol=x")
            .expect("header");
        assert!(!hostile.version.contains('\u{1b}'), "{:?}", hostile.version);
        assert_eq!(hostile.protocol, None);
    }
}
