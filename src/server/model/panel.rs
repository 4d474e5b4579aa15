//! The approval panel as one client sees it: hidden or not, which request it shows, its scroll,
//! a deny message being typed. Per client, in the model; what the panel draws from it is in
//! `view::approval_panel`.

use tokio::time::Instant;

/// Per-client state of the approval panel.
#[derive(Debug, Default, Clone)]
pub struct PanelState {
    /// Esc hid the panel; a new request or `prefix i` shows it again.
    pub hidden: bool,
    /// The request shown (None: the focused pane's, else the oldest).
    pub selected: Option<u64>,
    pub scroll: u16,
    /// A deny message being typed.
    pub message: Option<String>,
    /// `!` asks to confirm: the requests pending when it was pressed. Only these are allowed
    /// by the `y` that confirms, never one that arrived while the question was on screen.
    pub confirm_all: Option<Vec<u64>>,
    /// The request this client's terminal shows, as last drawn: answer keys act on it alone
    /// (never on one that replaced it between the frame and the key).
    pub shown: Option<Shown>,
    /// `r` lists the "always" rules: the selected one's index.
    pub rules: Option<usize>,
}

/// A request on a client's screen: since when, and whether the user was typing then.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shown {
    pub id: u64,
    pub since: Instant,
    pub while_typing: bool,
}

/// Panel ids of saved machines' requests start here (machine index, link generation and
/// that machine's id below: see `view::approval_panel_remote`); this machine's ids never get here.
pub const REMOTE_IDS: u64 = 1 << 62;

/// Whether a panel id is a saved machine's request.
pub fn is_remote(id: u64) -> bool {
    id >= REMOTE_IDS
}
