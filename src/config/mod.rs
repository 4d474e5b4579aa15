//! `~/.config/calyx/config.toml`. A broken file never stops calyx: every problem is reported
//! at once, each naming the file, line and key and what was expected, and everything valid is
//! applied (the defaults stand in only for the keys in error, or for everything when the text
//! is not TOML at all).

use std::path::Path;

use crate::commands::Keymap;
use crate::keys::Key;
pub use crate::pane_borders::PaneBorders;

pub mod mcp_apps;
pub mod options;
pub mod persistence;
mod read;

/// When panes' OSC 8 hyperlinks are passed on to a client's terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hyperlinks {
    /// Unless the client's terminal is one known to print OSC 8 as text (see
    /// [`Hyperlinks::allowed_for`]). Terminals without OSC 8 support mostly ignore it; these
    /// do not, and the user would see the URI as junk around the link text.
    Auto,
    Always,
    Never,
}

/// TERM values (before any `-variant`) of terminals that do not skip unknown OSC sequences:
/// the Linux console, real and emulated DEC VTs, and dumb terminals print OSC 8's payload.
const TERMS_WITHOUT_OSC8: &[&str] = &[
    "dumb", "linux", "vt52", "vt100", "vt102", "vt220", "vt320", "vt420", "vt520", "cons25",
    "ansi", "sun",
];

impl Hyperlinks {
    /// Whether links go to a client whose terminal has this `TERM` (None: unset).
    pub fn allowed_for(self, term: Option<&str>) -> bool {
        match self {
            Hyperlinks::Always => true,
            Hyperlinks::Never => false,
            Hyperlinks::Auto => {
                let term = term.unwrap_or("").trim().to_ascii_lowercase();
                let base = term.split('-').next().unwrap_or("");
                !base.is_empty() && !TERMS_WITHOUT_OSC8.contains(&base)
            }
        }
    }
}

/// What a pane's OSC 52 clipboard write does (tmux's `set-clipboard`). A program in a pane is
/// not trusted: a clipboard it can fill unseen is a paste attack (a harmless-looking copy that
/// is really `curl ... | sh`), so by default it reaches only calyx's own paste buffer, which
/// the user pastes knowingly with `prefix ]`. calyx's own copy mode always sets the outer
/// terminal's clipboard, whatever this says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetClipboard {
    /// Into the paste buffer only, never to the user's terminal (the default).
    External,
    /// Into the paste buffer, and to the user's terminal too, but only from the focused pane
    /// of a session a client shows, with a status-line message each time.
    On,
    /// Ignored.
    Off,
}

/// The settings in force.
#[derive(Debug, Clone)]
pub struct Config {
    pub keymap: Keymap,
    pub mouse: bool,
    pub scrollback_lines: usize,
    pub scrollback_bytes: usize,
    /// Keep a pane whose program exited, showing "[exited N]", instead of closing it.
    pub remain_on_exit: bool,
    /// `prefix x` and `prefix &` ask `kill-pane %3? (y/n)` on the status line first.
    pub confirm_kill: bool,
    /// Show the agents sidebar when a session starts.
    pub sidebar: bool,
    /// The number of a session's first window (tmux's `base-index`); a new window takes the
    /// lowest free number from here.
    pub base_index: usize,
    /// Close the gaps in window numbers when a window closes (tmux's `renumber-windows`). Off,
    /// as in tmux: a window keeps its number, so `s:2` in a script still means the same window.
    pub renumber_windows: bool,
    pub bell: bool,
    pub osc9: bool,
    pub osc777: bool,
    /// Report commands from bash, zsh and fish panes (OSC 133) for the command history tools.
    pub shell_integration: bool,
    /// The server reads and writes attached clients' terminals itself (as tmux does) rather
    /// than through the client process: one process hop less each way for every keystroke.
    pub direct_terminal: bool,
    /// Which deny-only hooks are approval gates (`[approvals] deny_gates`).
    pub approval_policy: calyx_integrations::gate::Policy,
    /// When panes' OSC 8 hyperlinks are passed on to the user's terminal.
    pub hyperlinks: Hyperlinks,
    /// calyx's MCP tools turned off for every agent (`[mcp] disabled_tools`).
    pub mcp_disabled_tools: Vec<String>,
    /// Host the user's MCP servers and serve them on `/mcp-hosted` (`[mcp] host_servers`).
    pub mcp_host_servers: bool,
    /// Where hosted servers' secrets are kept (`[mcp] secret_store`).
    pub mcp_secret_store: crate::hosted::secrets::SecretStoreSetting,
    /// The HTTPS URL of calyx's OAuth client ID metadata document, used with authorization
    /// servers that support them (`[mcp] client_metadata_url`; empty: none).
    pub mcp_client_metadata_url: String,
    /// Where panes' OSC 52 clipboard writes go.
    pub set_clipboard: SetClipboard,
    /// A full box around each pane, or tmux's shared separators (see [`PaneBorders`]).
    pub pane_borders: PaneBorders,
    /// `[persistence]`: when saved sessions come back, what restarts in their panes.
    pub persistence: persistence::Persistence,
    /// `[mcp_apps]`: MCP App views.
    pub mcp_apps: mcp_apps::McpApps,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            keymap: Keymap::defaults(Key::ctrl('b')),
            mouse: true,
            scrollback_lines: 10_000,
            scrollback_bytes: 4 << 20,
            remain_on_exit: false,
            confirm_kill: true,
            sidebar: false,
            base_index: 0,
            renumber_windows: false,
            bell: true,
            osc9: true,
            osc777: true,
            shell_integration: true,
            direct_terminal: true,
            approval_policy: Default::default(),
            hyperlinks: Hyperlinks::Auto,
            mcp_disabled_tools: Vec::new(),
            mcp_host_servers: true,
            mcp_secret_store: Default::default(),
            mcp_client_metadata_url: String::new(),
            set_clipboard: SetClipboard::External,
            pane_borders: PaneBorders::Box,
            persistence: Default::default(),
            mcp_apps: Default::default(),
        }
    }
}

/// The settings `set-option` takes and `show-options` lists (the config file's top-level
/// keys that hold a value rather than a table).
pub fn option_names() -> Vec<String> {
    read::option_names()
}

impl Config {
    /// Loads the config file; returns the config and the problems found (empty when clean).
    pub fn load(path: &Path) -> (Config, Vec<String>) {
        Self::try_load(path)
            .unwrap_or_else(|e| (Config::default(), vec![format!("{e}; using defaults")]))
    }

    /// [`Config::load`], but a file that cannot be read or is not TOML at all is an error (the
    /// message names the file) instead of the defaults: a reload keeps the running settings
    /// then. A missing file is the defaults.
    pub fn try_load(path: &Path) -> Result<(Config, Vec<String>), String> {
        match std::fs::read_to_string(path) {
            Ok(text) => Self::try_parse(&text, path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Ok((Config::default(), Vec::new()))
            }
            Err(e) => Err(format!("{}: cannot read: {e}", path.display())),
        }
    }

    /// Parses config text; `path` is only used in messages. Text that is not TOML at all gives
    /// the defaults and a message.
    pub fn parse(text: &str, path: &Path) -> (Config, Vec<String>) {
        Self::try_parse(text, path)
            .unwrap_or_else(|e| (Config::default(), vec![format!("{e}; using defaults")]))
    }

    /// [`Config::parse`], but text that is not TOML at all is an error (the message says where)
    /// instead of the defaults: a reload keeps the running settings then. Anything else wrong
    /// (a wrong type, an unknown key, a bad key name) is one problem per key, all of them
    /// reported, and every valid setting is applied.
    pub fn try_parse(text: &str, path: &Path) -> Result<(Config, Vec<String>), String> {
        read::read(text, path)
    }
}

#[cfg(test)]
mod tests;
