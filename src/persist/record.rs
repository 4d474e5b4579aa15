//! The shape of `sessions.json`: plain data, versioned, compared to decide whether anything
//! changed since the last write.

use serde::{Deserialize, Serialize};

use crate::layout::{Layout, PaneId};

/// The file format's version. A file with another version is moved aside, not guessed at.
pub const VERSION: u32 = 1;

/// Everything in the state file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SavedState {
    pub version: u32,
    /// When the file was written (seconds since the Unix epoch).
    pub saved_at: u64,
    pub sessions: Vec<SavedSession>,
    /// The "always" rules the human set, as `calyx approvals --rules` describes them, with
    /// their scope (a pane's record id, or every pane).
    #[serde(default)]
    pub approval_rules: Vec<SavedRule>,
}

/// One session as it was last seen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedSession {
    pub name: String,
    /// When this session's record last changed (seconds since the Unix epoch).
    pub saved_at: u64,
    /// The position (not number) of the active window in `windows`.
    pub active_window: usize,
    pub windows: Vec<SavedWindow>,
}

/// One window: its number, name, split tree (with ratios) and panes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedWindow {
    pub number: usize,
    pub name: String,
    /// The name follows the focused pane's program (not renamed by the user).
    pub auto_name: bool,
    /// The split tree; its leaves are the `id`s of `panes`.
    pub layout: Layout,
    pub active: PaneId,
    pub zoomed: bool,
    /// synchronize-panes.
    pub synchronized: bool,
    /// In layout order.
    pub panes: Vec<SavedPane>,
}

/// One pane: where it was, what it was started with, what ran in it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedPane {
    /// The pane's id in the server that saved it (the layout's leaves name it).
    pub id: PaneId,
    /// The pane's record id (CALYX_SESSION_ID), which a restored pane keeps.
    #[serde(default)]
    pub record_id: String,
    /// The foreground program's working directory (as list-panes shows it).
    pub cwd: String,
    /// The command the pane was started with (empty: the user's shell).
    pub command: Vec<String>,
    /// The foreground program's argv from /proc, when it is not the pane's own program (a
    /// program started from the pane's shell); empty when the shell itself was in front.
    #[serde(default)]
    pub foreground: Vec<String>,
    /// The pane's own program's argv from /proc (what `command` became).
    #[serde(default)]
    pub program: Vec<String>,
    pub title: String,
    pub agent: Option<SavedAgent>,
    /// The pane's last lines of text, saved at a graceful stop only: the periodic saves of a
    /// running server leave it out, so after a crash there is none to show.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<SavedHistory>,
}

/// A pane's last lines of text, redacted as `pane_read` redacts, shown again (dimmed, under a
/// `── restored <date time> ──` line) above the program a restore starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedHistory {
    /// When the server stopped (seconds since the Unix epoch).
    pub saved_at: u64,
    /// Oldest first, without trailing blank lines.
    pub lines: Vec<String>,
}

/// What calyx knew about the agent CLI in a pane.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedAgent {
    /// The CLI (`claude-code`, `codex`, ...).
    pub kind: String,
    /// The CLI's own session id, which its resume command takes.
    pub session_id: Option<String>,
    /// The row's last state (`working`, `idle`, ...).
    pub state: String,
    pub transcript_path: Option<String>,
}

/// An "always" approval rule the human made, with its scope: set again when the server starts
/// (every pane's) or when its pane's session is restored (a pane's).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedRule {
    /// The CLI whose tool it covers.
    pub cli: String,
    pub tool: String,
    /// What it covers, in words.
    pub covers: String,
    /// The pane's record id (CALYX_SESSION_ID) for a pane's rule; None for every pane.
    pub pane: Option<String>,
    /// Exactly what it covers, for setting it again on restore (a file written before rules
    /// were restored lacks it: such a rule is listed, not set again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matches: Option<crate::approvals::rules::Covers>,
    /// A rule made "anywhere" (`e`/`E`): pushed to the saved machines again after a restart.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub anywhere: bool,
}

impl SavedSession {
    /// Panes in every window.
    pub fn pane_count(&self) -> usize {
        self.windows.iter().map(|w| w.panes.len()).sum()
    }

    /// Panes with an agent row.
    pub fn agent_count(&self) -> usize {
        self.windows
            .iter()
            .flat_map(|w| &w.panes)
            .filter(|p| p.agent.is_some())
            .count()
    }
}

/// Seconds since the Unix epoch, now.
pub fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}
