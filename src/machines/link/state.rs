//! What a saved machine's link is doing, and the line the user sees for it.

/// A link's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkState {
    /// Connecting (or waiting to connect again).
    Connecting,
    /// Connected and watching: the snapshot is current.
    Live,
    /// It could not be reached, or the connection dropped: why. Its last rows are kept,
    /// marked stale, and its requests cannot be answered.
    Unreachable(String),
    /// ssh wants the user (a password, a passphrase, a host key): never asked in the
    /// background; `calyx machine test NAME` in a terminal settles it.
    NeedsYou(String),
    /// Its calyx speaks another protocol: what it runs and what to do (`--install`). Tried
    /// again only at the longest backoff: it will not change until someone installs.
    WrongVersion(String),
}

impl LinkState {
    /// The state for machine `name` in words: `live`, `unreachable: NAME (reason)`,
    /// ``needs you: run `calyx machine test NAME` ``.
    pub fn line(&self, name: &str) -> String {
        match self {
            LinkState::Connecting => format!("connecting: {name}"),
            LinkState::Live => format!("live: {name}"),
            LinkState::Unreachable(reason) => format!("unreachable: {name} ({reason})"),
            LinkState::NeedsYou(reason) => {
                format!("needs you: run `calyx machine test {name}` ({reason})")
            }
            LinkState::WrongVersion(reason) => format!("wrong version: {name} ({reason})"),
        }
    }

    /// One word: `connecting`, `live`, `unreachable`, `needs-you`, `wrong-version`.
    pub fn word(&self) -> &'static str {
        match self {
            LinkState::Connecting => "connecting",
            LinkState::Live => "live",
            LinkState::Unreachable(_) => "unreachable",
            LinkState::NeedsYou(_) => "needs-you",
            LinkState::WrongVersion(_) => "wrong-version",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_state_reads_as_the_issue_words_it() {
        assert_eq!(LinkState::Live.line("build"), "live: build");
        assert_eq!(
            LinkState::Unreachable("ssh could not reach b".into()).line("build"),
            "unreachable: build (ssh could not reach b)"
        );
        let needs = LinkState::NeedsYou("Host key verification failed.".into()).line("build");
        assert!(
            needs.starts_with("needs you: run `calyx machine test build`"),
            "{needs}"
        );
        assert_eq!(LinkState::NeedsYou(String::new()).word(), "needs-you");
        let wrong = LinkState::WrongVersion("b runs calyx 0.4.0 (protocol 1)".into());
        assert_eq!(
            wrong.line("build"),
            "wrong version: build (b runs calyx 0.4.0 (protocol 1))"
        );
        assert_eq!(wrong.word(), "wrong-version");
    }
}
