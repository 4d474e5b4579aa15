//! The one command table: every action a key can trigger, its name (used in the config, the
//! `:` prompt and the help overlay), its description and default keys. The keymap refers to names,
//! the help overlay is generated from this table, and dispatch goes through it.

use crate::layout_preset::Preset;
use std::collections::{HashMap, HashSet};

use crate::keys::Key;
use crate::layout::{Direction, SplitDir};

/// What a binding does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    Split(SplitDir),
    NextPane,
    PreviousPane,
    SelectPane(Direction),
    ResizePane(Direction),
    KillPane,
    Zoom,
    NewWindow,
    RenameWindow,
    RenameSession,
    NextWindow,
    PreviousWindow,
    LastWindow,
    ChooseSession,
    SwapPaneNext,
    SwapPanePrevious,
    BreakPane,
    ChooseWindow,
    NextSession,
    PreviousSession,
    LastSession,
    SelectWindow(u8),
    KillWindow,
    Detach,
    CopyMode,
    Paste,
    Help,
    /// `select-layout NAME` (`prefix M-1`..`M-5`): the window's panes in a preset shape.
    SelectLayout(crate::layout_preset::Preset),
    /// `prefix q`: number the panes; a digit then focuses one (tmux's display-panes).
    DisplayPanes,
    /// `prefix Space`: the next preset shape.
    NextLayout,
    /// `prefix ~`: the status-line messages of this run, whole (tmux's show-messages).
    ShowMessages,
    /// `prefix v`: the focused pane's MCP App view card takes the keyboard.
    ViewCard,
    /// `prefix V`: every MCP App view of the server.
    ViewList,
    CommandPrompt,
    SendPrefix,
    Equalize,
    ToggleSidebar,
    JumpBlocked,
    ShowApprovals,
    ClearHistory,
    ReloadConfig,
    /// A `:` command line bound with `bind-key`: the line at this index of [`Keymap::lines`].
    RunLine(u16),
    /// `prefix M`: the hosted MCP servers overlay.
    ShowMcpServers,
}

/// One row of the command table.
#[derive(Debug, Clone, Copy)]
pub struct CommandSpec {
    pub name: &'static str,
    pub description: &'static str,
    /// Keys pressed after the prefix.
    pub default_keys: &'static [&'static str],
    pub action: Action,
}

macro_rules! cmd {
    ($name:expr, $desc:expr, [$($key:expr),*], $action:expr) => {
        CommandSpec { name: $name, description: $desc, default_keys: &[$($key),*], action: $action }
    };
}

/// Every command, in help order.
pub const COMMANDS: &[CommandSpec] = &[
    cmd!(
        "split-window -h",
        "split the pane left/right",
        ["%"],
        Action::Split(SplitDir::Horizontal)
    ),
    cmd!(
        "split-window -v",
        "split the pane top/bottom",
        ["\""],
        Action::Split(SplitDir::Vertical)
    ),
    cmd!(
        "select-pane -t :.+",
        "focus the next pane",
        ["o"],
        Action::NextPane
    ),
    cmd!(
        "select-pane -t :.-",
        "focus the previous pane",
        [";"],
        Action::PreviousPane
    ),
    cmd!(
        "select-pane -L",
        "focus the pane to the left",
        ["Left"],
        Action::SelectPane(Direction::Left)
    ),
    cmd!(
        "select-pane -R",
        "focus the pane to the right",
        ["Right"],
        Action::SelectPane(Direction::Right)
    ),
    cmd!(
        "select-pane -U",
        "focus the pane above",
        ["Up"],
        Action::SelectPane(Direction::Up)
    ),
    cmd!(
        "select-pane -D",
        "focus the pane below",
        ["Down"],
        Action::SelectPane(Direction::Down)
    ),
    cmd!(
        "resize-pane -L",
        "move the border left",
        ["C-Left", "M-Left"],
        Action::ResizePane(Direction::Left)
    ),
    cmd!(
        "resize-pane -R",
        "move the border right",
        ["C-Right", "M-Right"],
        Action::ResizePane(Direction::Right)
    ),
    cmd!(
        "resize-pane -U",
        "move the border up",
        ["C-Up", "M-Up"],
        Action::ResizePane(Direction::Up)
    ),
    cmd!(
        "resize-pane -D",
        "move the border down",
        ["C-Down", "M-Down"],
        Action::ResizePane(Direction::Down)
    ),
    cmd!(
        "resize-pane -Z",
        "zoom the pane to fill the window, or unzoom",
        ["z"],
        Action::Zoom
    ),
    cmd!(
        "select-layout -E",
        "make all panes in the window equal",
        ["E"],
        Action::Equalize
    ),
    cmd!(
        "swap-pane -D",
        "swap the pane with the next one (focus moves with it)",
        ["}"],
        Action::SwapPaneNext
    ),
    cmd!(
        "swap-pane -U",
        "swap the pane with the previous one",
        ["{"],
        Action::SwapPanePrevious
    ),
    cmd!(
        "break-pane",
        "move the pane into a new window of its own",
        ["!"],
        Action::BreakPane
    ),
    cmd!(
        "kill-pane",
        "close the pane (its program gets SIGHUP)",
        ["x"],
        Action::KillPane
    ),
    cmd!("new-window", "create a window", ["c"], Action::NewWindow),
    cmd!(
        "rename-window",
        "rename the window",
        [","],
        Action::RenameWindow
    ),
    cmd!(
        "rename-session",
        "rename the session",
        ["$"],
        Action::RenameSession
    ),
    cmd!(
        "next-window",
        "go to the next window",
        ["n"],
        Action::NextWindow
    ),
    cmd!(
        "previous-window",
        "go to the previous window",
        ["p"],
        Action::PreviousWindow
    ),
    cmd!(
        "last-window",
        "go to the last used window",
        ["l"],
        Action::LastWindow
    ),
    cmd!(
        "kill-window",
        "close the window and its panes",
        ["&"],
        Action::KillWindow
    ),
    cmd!(
        "select-window -t 0",
        "go to window 0",
        ["0"],
        Action::SelectWindow(0)
    ),
    cmd!(
        "select-window -t 1",
        "go to window 1",
        ["1"],
        Action::SelectWindow(1)
    ),
    cmd!(
        "select-window -t 2",
        "go to window 2",
        ["2"],
        Action::SelectWindow(2)
    ),
    cmd!(
        "select-window -t 3",
        "go to window 3",
        ["3"],
        Action::SelectWindow(3)
    ),
    cmd!(
        "select-window -t 4",
        "go to window 4",
        ["4"],
        Action::SelectWindow(4)
    ),
    cmd!(
        "select-window -t 5",
        "go to window 5",
        ["5"],
        Action::SelectWindow(5)
    ),
    cmd!(
        "select-window -t 6",
        "go to window 6",
        ["6"],
        Action::SelectWindow(6)
    ),
    cmd!(
        "select-window -t 7",
        "go to window 7",
        ["7"],
        Action::SelectWindow(7)
    ),
    cmd!(
        "select-window -t 8",
        "go to window 8",
        ["8"],
        Action::SelectWindow(8)
    ),
    cmd!(
        "select-window -t 9",
        "go to window 9",
        ["9"],
        Action::SelectWindow(9)
    ),
    cmd!(
        "choose-tree -s",
        "choose a session (Right lists its windows)",
        ["s"],
        Action::ChooseSession
    ),
    cmd!(
        "choose-tree -w",
        "choose a window in any session",
        ["w"],
        Action::ChooseWindow
    ),
    cmd!(
        "switch-client -n",
        "go to the next session",
        [")"],
        Action::NextSession
    ),
    cmd!(
        "switch-client -p",
        "go to the previous session",
        ["("],
        Action::PreviousSession
    ),
    cmd!(
        "switch-client -l",
        "go to the last used session",
        ["L"],
        Action::LastSession
    ),
    cmd!(
        "detach-client",
        "detach; every pane keeps running",
        ["d"],
        Action::Detach
    ),
    cmd!(
        "copy-mode",
        "scroll, search and copy the pane's history",
        ["["],
        Action::CopyMode
    ),
    cmd!(
        "paste-buffer",
        "paste the last copy into the pane",
        ["]"],
        Action::Paste
    ),
    cmd!(
        "clear-history",
        "forget the pane's scrollback",
        ["C-k"],
        Action::ClearHistory
    ),
    cmd!(
        "toggle-sidebar",
        "show or hide the agents sidebar",
        ["a"],
        Action::ToggleSidebar
    ),
    cmd!(
        "jump-blocked",
        "go to the agent waiting longest for you",
        ["b"],
        Action::JumpBlocked
    ),
    cmd!(
        "show-approvals",
        "show the approval panel again",
        ["i"],
        Action::ShowApprovals
    ),
    cmd!(
        "show-mcp-servers",
        "the hosted MCP servers: switch, retry, details, add, edit, import, sign in, remove",
        ["M"],
        Action::ShowMcpServers
    ),
    cmd!(
        "reload-config",
        "re-read ~/.config/calyx/config.toml",
        ["R"],
        Action::ReloadConfig
    ),
    cmd!(
        "display-panes",
        "number each pane; a digit then focuses it",
        ["q"],
        Action::DisplayPanes
    ),
    cmd!(
        "next-layout",
        "the window's panes in the next preset layout",
        ["Space"],
        Action::NextLayout
    ),
    cmd!(
        "select-layout even-horizontal",
        "panes side by side, equal widths",
        ["M-1"],
        Action::SelectLayout(Preset::EvenHorizontal)
    ),
    cmd!(
        "select-layout even-vertical",
        "panes stacked, equal heights",
        ["M-2"],
        Action::SelectLayout(Preset::EvenVertical)
    ),
    cmd!(
        "select-layout main-horizontal",
        "the first pane across the top, the others below",
        ["M-3"],
        Action::SelectLayout(Preset::MainHorizontal)
    ),
    cmd!(
        "select-layout main-vertical",
        "the first pane on the left, the others on its right",
        ["M-4"],
        Action::SelectLayout(Preset::MainVertical)
    ),
    cmd!(
        "select-layout tiled",
        "panes in a grid as square as their count allows",
        ["M-5"],
        Action::SelectLayout(Preset::Tiled)
    ),
    cmd!("list-keys", "show this help", ["?"], Action::Help),
    cmd!(
        "show-messages",
        "the status-line messages of this run, whole",
        ["~"],
        Action::ShowMessages
    ),
    cmd!(
        "view-card",
        "the pane's MCP App view card (o open, c copy URL, r reload, x close)",
        ["v"],
        Action::ViewCard
    ),
    cmd!(
        "view-list",
        "every MCP App view; Enter goes to its pane",
        ["V"],
        Action::ViewList
    ),
    cmd!(
        "command-prompt",
        "type a command (any name in this list)",
        [":"],
        Action::CommandPrompt
    ),
    cmd!(
        "send-prefix",
        "send the prefix key itself to the pane",
        ["C-b"],
        Action::SendPrefix
    ),
];

/// Finds a command by its name (or a unique alias without flags, like `kill-pane`).
pub fn find(name: &str) -> Option<&'static CommandSpec> {
    let name = name.trim();
    COMMANDS.iter().find(|c| c.name == name).or_else(|| {
        let short = match name {
            "split-window" | "split" => "split-window -v",
            "zoom" => "resize-pane -Z",
            "detach" => "detach-client",
            "help" => "list-keys",
            "paste" => "paste-buffer",
            "source-file" | "source" => "reload-config",
            "next" => "next-window",
            "prev" | "previous" => "previous-window",
            "choose-tree" | "choose-session" => "choose-tree -s",
            "choose-window" => "choose-tree -w",
            _ => return None,
        };
        COMMANDS.iter().find(|c| c.name == short)
    })
}

/// Keys after the prefix mapped to actions.
#[derive(Debug, Clone)]
pub struct Keymap {
    pub prefix: Key,
    pub bindings: HashMap<Key, Action>,
    /// Keys bound without the prefix (`bind-key -n`, tmux's root table): they never reach
    /// the pane.
    pub root: HashMap<Key, Action>,
    /// Keys after the prefix bound with `bind-key -r`: repeatable, as the resize keys are.
    pub repeat: HashSet<Key>,
    /// The command lines [`Action::RunLine`] runs.
    pub lines: Vec<String>,
    /// Keys the config file's `[keys]` binds or unbinds: at a reload they get the file's
    /// binding back over one made with `bind-key`.
    pub from_file: HashSet<Key>,
}

impl Keymap {
    /// The default bindings with `prefix`. A prefix other than C-b moves send-prefix onto itself.
    pub fn defaults(prefix: Key) -> Self {
        let mut bindings = HashMap::new();
        for spec in COMMANDS {
            for key in spec.default_keys {
                if let Some(k) = Key::parse(key) {
                    bindings.insert(k, spec.action);
                }
            }
        }
        if prefix != Key::ctrl('b') {
            bindings.remove(&Key::ctrl('b'));
            bindings.insert(prefix, Action::SendPrefix);
        }
        Self {
            prefix,
            bindings,
            root: HashMap::new(),
            repeat: HashSet::new(),
            lines: Vec::new(),
            from_file: HashSet::new(),
        }
    }

    /// What an action is called where users read it: its command table name, or for a line
    /// bound with `bind-key`, that line.
    pub fn command_of(&self, action: Action) -> String {
        match action {
            Action::RunLine(i) => self.lines.get(usize::from(i)).cloned().unwrap_or_default(),
            _ => COMMANDS
                .iter()
                .find(|c| c.action == action)
                .map(|c| c.name.to_string())
                .unwrap_or_default(),
        }
    }

    /// Makes `key` the prefix: send-prefix moves from the old prefix key onto it (as
    /// [`Keymap::defaults`] binds it); every other binding stays.
    pub fn set_prefix(&mut self, key: Key) {
        if self.bindings.get(&self.prefix) == Some(&Action::SendPrefix) {
            self.bindings.remove(&self.prefix);
        }
        self.prefix = key;
        self.bindings.insert(key, Action::SendPrefix);
    }

    /// The action bound to `key` after the prefix.
    pub fn lookup(&self, key: &Key) -> Option<Action> {
        self.bindings.get(key).copied()
    }

    /// Keys bound to an action, sorted, for the help overlay.
    pub fn keys_for(&self, action: Action) -> Vec<String> {
        let mut keys: Vec<String> = self
            .bindings
            .iter()
            .filter(|(_, a)| **a == action)
            .map(|(k, _)| k.name())
            .collect();
        keys.sort();
        keys
    }
}

/// Commands no key runs, typed at the `:` prompt or run as `calyx <verb>` (their flags are the
/// CLI's, `calyx <verb> --help`): the help lists them after the bound ones, so what the prompt
/// takes for moving panes can be found where the keys are.
pub const UNBOUND_COMMANDS: &[(&str, &str)] = &[
    (
        "resize-pane -x W -y H",
        "set the pane's width and height (cells, or N% of the window)",
    ),
    (
        "swap-pane -s SRC -t DST",
        "swap two panes, in one window or across windows",
    ),
    (
        "join-pane -s SRC -t DST",
        "move a pane beside another, in any window or session (move-pane)",
    ),
    (
        "break-pane -s PANE -n NAME",
        "move a pane into a new window named NAME",
    ),
];

/// The help overlay's rows: every command with the keys bound to it in `keymap` (keys bound
/// without the prefix marked `-n`), then the command lines bound with `bind-key`, then the
/// commands no key runs.
pub fn help_entries(keymap: &Keymap) -> Vec<calyx_tui::HelpEntry> {
    let keys = |action: Action| {
        let mut keys = keymap.keys_for(action);
        let mut root: Vec<String> = keymap
            .root
            .iter()
            .filter(|(_, a)| **a == action)
            .map(|(k, _)| format!("-n {}", k.name()))
            .collect();
        root.sort();
        keys.extend(root);
        keys.join(" ")
    };
    let table = COMMANDS.iter().map(|spec| calyx_tui::HelpEntry {
        keys: keys(spec.action),
        command: spec.name.to_string(),
        description: spec.description.to_string(),
    });
    let lines = (0..keymap.lines.len())
        .filter_map(|i| u16::try_from(i).ok())
        .map(Action::RunLine)
        .map(|action| calyx_tui::HelpEntry {
            keys: keys(action),
            command: keymap.command_of(action),
            description: "bound with bind-key".to_string(),
        })
        .filter(|row| !row.keys.is_empty());
    let unbound = UNBOUND_COMMANDS
        .iter()
        .map(|(command, description)| calyx_tui::HelpEntry {
            keys: String::new(),
            command: command.to_string(),
            description: description.to_string(),
        });
    table.chain(lines).chain(unbound).collect()
}

/// Every binding as tmux's list-keys prints it (`bind-key [-n] [-r] KEY COMMAND`), in the
/// command table's order, the lines bound with `bind-key` last.
pub fn list_keys(keymap: &Keymap) -> Vec<String> {
    let order = |action: &Action| match action {
        Action::RunLine(i) => COMMANDS.len() + usize::from(*i),
        a => COMMANDS
            .iter()
            .position(|c| c.action == *a)
            .unwrap_or(usize::MAX),
    };
    let mut rows: Vec<(usize, String, String)> = Vec::new();
    for (root, table) in [(false, &keymap.bindings), (true, &keymap.root)] {
        for (key, action) in table {
            let flags = match (root, keymap.repeat.contains(key)) {
                (true, _) => "-n ",
                (false, true) => "-r ",
                (false, false) => "",
            };
            let name = crate::argsplit::join_args(&[key.name()]);
            rows.push((
                order(action),
                format!("{flags}{name}"),
                keymap.command_of(*action),
            ));
        }
    }
    rows.sort();
    rows.into_iter()
        .map(|(_, key, command)| format!("bind-key {key} {command}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::KeyCode;

    #[test]
    fn tmux_defaults_are_bound() {
        let km = Keymap::defaults(Key::ctrl('b'));
        let look = |n: &str| Key::parse(n).and_then(|k| km.lookup(&k));
        assert_eq!(look("%"), Some(Action::Split(SplitDir::Horizontal)));
        assert_eq!(look("\""), Some(Action::Split(SplitDir::Vertical)));
        assert_eq!(look("d"), Some(Action::Detach));
        assert_eq!(look("z"), Some(Action::Zoom));
        assert_eq!(look("3"), Some(Action::SelectWindow(3)));
        assert_eq!(look("C-b"), Some(Action::SendPrefix));
        assert_eq!(look("["), Some(Action::CopyMode));
        assert_eq!(look("?"), Some(Action::Help));
        assert_eq!(km.lookup(&Key::plain(KeyCode::Char('Q'))), None);
    }

    #[test]
    fn a_new_prefix_moves_send_prefix_and_keeps_the_rest() {
        let mut km = Keymap::defaults(Key::ctrl('b'));
        km.bindings
            .insert(Key::plain(KeyCode::Char('Q')), Action::Zoom);
        km.set_prefix(Key::ctrl('a'));
        assert_eq!(km.lookup(&Key::ctrl('a')), Some(Action::SendPrefix));
        assert_eq!(km.lookup(&Key::ctrl('b')), None);
        assert_eq!(
            km.lookup(&Key::plain(KeyCode::Char('Q'))),
            Some(Action::Zoom)
        );
        let mut fresh = Keymap::defaults(Key::ctrl('b'));
        fresh.set_prefix(Key::ctrl('a'));
        assert_eq!(fresh.bindings, Keymap::defaults(Key::ctrl('a')).bindings);
    }

    #[test]
    fn another_prefix_sends_itself() {
        let km = Keymap::defaults(Key::ctrl('a'));
        assert_eq!(km.lookup(&Key::ctrl('a')), Some(Action::SendPrefix));
        assert_eq!(km.lookup(&Key::ctrl('b')), None);
    }

    #[test]
    fn every_command_has_a_unique_name_and_is_findable() {
        let mut names: Vec<_> = COMMANDS.iter().map(|c| c.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), COMMANDS.len());
        assert_eq!(find("kill-pane").map(|c| c.action), Some(Action::KillPane));
        assert_eq!(
            find("split-window").map(|c| c.action),
            Some(Action::Split(SplitDir::Vertical))
        );
    }
}
