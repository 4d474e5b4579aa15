//! `[persistence]`: when saved sessions come back and what is started again in their panes
//! (issue 18 §2).

/// When saved sessions are brought back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Restore {
    /// When `calyx`, `calyx attach -t NAME` or the session chooser asks for one (the default).
    OnAttach,
    /// Every saved session as soon as the server starts.
    AtStart,
    /// Never: sessions are still saved, and `calyx ls` lists them.
    Off,
}

/// The `[persistence]` settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Persistence {
    pub restore: Restore,
    /// Programs restarted with their argv (an entry's first word is the program, the others
    /// arguments it must have: `tail -f`). The config's list adds to [`DEFAULT_RESTART`].
    pub restart: Vec<String>,
}

/// Programs restarted by default, as tmux-resurrect's list.
pub const DEFAULT_RESTART: &[&str] = &[
    "vim", "nvim", "less", "man", "htop", "top", "tail -f", "watch",
];

impl Default for Persistence {
    fn default() -> Self {
        Self {
            restore: Restore::OnAttach,
            restart: DEFAULT_RESTART.iter().map(|s| s.to_string()).collect(),
        }
    }
}
