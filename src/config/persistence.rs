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
    /// How many of each pane's last lines of text are saved at a graceful stop and shown
    /// again, dimmed, above the restarted program (0: none).
    pub scrollback_lines: usize,
}

/// Lines of history saved per pane by default.
pub const DEFAULT_SCROLLBACK_LINES: usize = 1000;

/// The most lines of history saved per pane, whatever the config says: the state file is read
/// whole by `calyx ls`, and a hundred panes of this many lines is already megabytes.
pub const MAX_SCROLLBACK_LINES: usize = 10_000;

/// Programs restarted by default, as tmux-resurrect's list.
pub const DEFAULT_RESTART: &[&str] = &[
    "vim", "nvim", "less", "man", "htop", "top", "tail -f", "watch",
];

impl Default for Persistence {
    fn default() -> Self {
        Self {
            restore: Restore::OnAttach,
            restart: DEFAULT_RESTART.iter().map(|s| s.to_string()).collect(),
            scrollback_lines: DEFAULT_SCROLLBACK_LINES,
        }
    }
}
