//! `~/.config/calyx/config.toml`. A broken file never stops calyx: the error names the file, line
//! and key, and calyx starts with defaults (for that key, or for everything when the TOML itself
//! does not parse).

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::commands::{self, Keymap};
use crate::keys::Key;

/// The file as written by the user; every field optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    prefix: Option<String>,
    mouse: Option<bool>,
    scrollback_lines: Option<usize>,
    scrollback_bytes: Option<usize>,
    remain_on_exit: Option<bool>,
    confirm_kill: Option<bool>,
    sidebar: Option<bool>,
    bell: Option<bool>,
    osc9: Option<bool>,
    osc777: Option<bool>,
    shell_integration: Option<bool>,
    direct_terminal: Option<bool>,
    /// `"auto" | "always" | "never"`, or the older `true` / `false`; checked in `parse`.
    hyperlinks: Option<toml::Value>,
    /// `"external" | "on" | "off"`; checked in `parse`.
    set_clipboard: Option<toml::Value>,
    #[serde(default)]
    keys: BTreeMap<String, String>,
    approvals: Option<RawApprovals>,
    mcp: Option<RawMcp>,
}

/// `[mcp]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMcp {
    /// calyx MCP tools no agent sees (e.g. `pane_run`, `pane_send_keys`).
    #[serde(default)]
    disabled_tools: Vec<String>,
}

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

/// `[approvals]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawApprovals {
    /// CLIs whose gate hook fires before every tool call, that calyx holds for a human before
    /// their calls that can change something: `gemini`, `hermes` and `kimi` (deny only: their
    /// allow cannot skip the CLI's own prompt) and `cursor` (allow and deny, but it fires for
    /// commands Cursor would run unasked). Off by default.
    #[serde(default)]
    deny_gates: Vec<String>,
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
    pub bell: bool,
    pub osc9: bool,
    pub osc777: bool,
    /// Report commands from bash, zsh and fish panes (OSC 133) for the command history tools.
    pub shell_integration: bool,
    /// The server reads and writes attached clients' terminals itself (as tmux does) rather
    /// than through the client process: one process hop less each way for every keystroke.
    pub direct_terminal: bool,
    /// Which deny-only hooks are approval gates (`[approvals] deny_gates`).
    pub approval_policy: crate::approvals::gate::Policy,
    /// When panes' OSC 8 hyperlinks are passed on to the user's terminal.
    pub hyperlinks: Hyperlinks,
    /// calyx's MCP tools turned off for every agent (`[mcp] disabled_tools`).
    pub mcp_disabled_tools: Vec<String>,
    /// Where panes' OSC 52 clipboard writes go.
    pub set_clipboard: SetClipboard,
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
            bell: true,
            osc9: true,
            osc777: true,
            shell_integration: true,
            direct_terminal: true,
            approval_policy: Default::default(),
            hyperlinks: Hyperlinks::Auto,
            mcp_disabled_tools: Vec::new(),
            set_clipboard: SetClipboard::External,
        }
    }
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
    /// instead of the defaults: a reload keeps the running settings then.
    pub fn try_parse(text: &str, path: &Path) -> Result<(Config, Vec<String>), String> {
        let raw: RawConfig = match toml::from_str(text) {
            Ok(raw) => raw,
            Err(e) => {
                let line = e
                    .span()
                    .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
                // The key on that line, when it has one: "line 2: scrollback_lines: ...".
                let key = line
                    .and_then(|l| text.lines().nth(l - 1))
                    .and_then(|t| t.split_once('='))
                    .map(|(k, _)| format!(" {}:", k.trim()))
                    .unwrap_or_default();
                let at = line.map(|l| format!(" line {l}:{key}")).unwrap_or_default();
                let msg = e.message().replace('\n', " ");
                return Err(format!("{}:{at} {msg}", path.display()));
            }
        };
        let mut errors = Vec::new();
        let mut config = Config::default();
        let line_of = |key: &str| {
            text.lines()
                .position(|l| l.trim_start().trim_start_matches('"').starts_with(key))
                .map(|i| format!(" line {}:", i + 1))
                .unwrap_or_default()
        };
        if let Some(prefix) = raw.prefix {
            match Key::parse(&prefix) {
                Some(key) => config.keymap = Keymap::defaults(key),
                None => errors.push(format!(
                    "{}:{} key `prefix`: {prefix:?} is not a key name (try \"C-a\"); using C-b",
                    path.display(),
                    line_of("prefix")
                )),
            }
        }
        config.mouse = raw.mouse.unwrap_or(config.mouse);
        config.direct_terminal = raw.direct_terminal.unwrap_or(config.direct_terminal);
        if let Some(lines) = raw.scrollback_lines {
            config.scrollback_lines = lines.min(1_000_000);
        }
        if let Some(bytes) = raw.scrollback_bytes {
            config.scrollback_bytes = bytes.clamp(64 << 10, 1 << 30);
        }
        config.remain_on_exit = raw.remain_on_exit.unwrap_or(false);
        config.confirm_kill = raw.confirm_kill.unwrap_or(true);
        config.sidebar = raw.sidebar.unwrap_or(false);
        config.bell = raw.bell.unwrap_or(true);
        config.osc9 = raw.osc9.unwrap_or(true);
        config.osc777 = raw.osc777.unwrap_or(true);
        config.shell_integration = raw.shell_integration.unwrap_or(true);
        for cli in raw.approvals.map(|a| a.deny_gates).unwrap_or_default() {
            let enabled = cli
                .parse::<calyx_integrations::AgentKind>()
                .is_ok_and(|kind| config.approval_policy.enable(kind));
            if !enabled {
                let opt_in: Vec<&str> = crate::approvals::gate::Policy::OPT_IN
                    .iter()
                    .map(|k| k.as_str())
                    .collect();
                errors.push(format!(
                    "{}:{} key `approvals.deny_gates`: {cli:?} is not a CLI whose gate hook fires for every call ({}); ignored",
                    path.display(),
                    line_of("deny_gates"),
                    opt_in.join(", ")
                ));
            }
        }
        config.hyperlinks = match raw.hyperlinks {
            None => Hyperlinks::Auto,
            Some(toml::Value::Boolean(true)) => Hyperlinks::Auto,
            Some(toml::Value::Boolean(false)) => Hyperlinks::Never,
            Some(toml::Value::String(mode)) if mode == "auto" => Hyperlinks::Auto,
            Some(toml::Value::String(mode)) if mode == "always" => Hyperlinks::Always,
            Some(toml::Value::String(mode)) if mode == "never" => Hyperlinks::Never,
            Some(other) => {
                errors.push(format!(
                    "{}:{} key `hyperlinks`: {other} is not \"auto\", \"always\" or \"never\"; using \"auto\"",
                    path.display(),
                    line_of("hyperlinks")
                ));
                Hyperlinks::Auto
            }
        };
        config.set_clipboard = match raw.set_clipboard {
            None => SetClipboard::External,
            Some(toml::Value::String(mode)) if mode == "external" => SetClipboard::External,
            Some(toml::Value::String(mode)) if mode == "on" => SetClipboard::On,
            Some(toml::Value::String(mode)) if mode == "off" => SetClipboard::Off,
            Some(other) => {
                errors.push(format!(
                    "{}:{} key `set_clipboard`: {other} is not \"external\", \"on\" or \"off\"; using \"external\"",
                    path.display(),
                    line_of("set_clipboard")
                ));
                SetClipboard::External
            }
        };
        let tools = crate::mcp::tool_set::all_names();
        for name in raw.mcp.map(|m| m.disabled_tools).unwrap_or_default() {
            if tools.contains(&name) {
                config.mcp_disabled_tools.push(name);
            } else {
                errors.push(format!(
                    "{}:{} key `mcp.disabled_tools`: {name:?} is not a calyx MCP tool ({}); ignored",
                    path.display(),
                    line_of("disabled_tools"),
                    tools.join(", ")
                ));
            }
        }
        for (key_name, command) in raw.keys {
            let Some(key) = Key::parse(&key_name) else {
                errors.push(format!(
                    "{}:{} key `keys.{key_name}`: not a key name; binding ignored",
                    path.display(),
                    line_of(&key_name)
                ));
                continue;
            };
            if command == "none" || command.is_empty() {
                config.keymap.bindings.remove(&key);
                continue;
            }
            match commands::find(&command) {
                Some(spec) => {
                    config.keymap.bindings.insert(key, spec.action);
                }
                None => errors.push(format!(
                    "{}:{} key `keys.{key_name}`: unknown command {command:?} (see prefix ?); binding ignored",
                    path.display(),
                    line_of(&key_name)
                )),
            }
        }
        Ok((config, errors))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::Action;
    use crate::layout::SplitDir;

    fn p() -> &'static Path {
        Path::new("/home/u/.config/calyx/config.toml")
    }

    #[test]
    fn try_load_tells_a_missing_file_from_one_it_cannot_use() {
        let dir = tempfile::tempdir().expect("tempdir");
        let missing = dir.path().join("config.toml");
        let (c, errors) = Config::try_load(&missing).expect("missing is the defaults");
        assert!(errors.is_empty() && c.mouse);
        // A directory where the file should be cannot be read: an error naming it.
        let e = Config::try_load(dir.path()).expect_err("unreadable");
        assert!(e.contains(&*dir.path().display().to_string()) && e.contains("cannot read"));
        std::fs::write(&missing, "[mcp\n").expect("write");
        let e = Config::try_load(&missing).expect_err("not TOML");
        assert!(e.contains("config.toml"), "{e}");
        // load() falls back to the defaults with the same message.
        let (c, errors) = Config::load(&missing);
        assert!(
            c.mouse && errors[0].ends_with("; using defaults"),
            "{errors:?}"
        );
    }

    #[test]
    fn empty_file_is_defaults() {
        let (c, errors) = Config::parse("", p());
        assert!(errors.is_empty());
        assert!(c.mouse);
        assert_eq!(c.hyperlinks, Hyperlinks::Auto);
        assert_eq!(c.scrollback_lines, 10_000);
    }

    #[test]
    fn hyperlinks_modes_and_the_older_switch() {
        for (text, want) in [
            ("hyperlinks = \"auto\"\n", Hyperlinks::Auto),
            ("hyperlinks = \"always\"\n", Hyperlinks::Always),
            ("hyperlinks = \"never\"\n", Hyperlinks::Never),
            ("hyperlinks = true\n", Hyperlinks::Auto),
            ("hyperlinks = false\n", Hyperlinks::Never),
        ] {
            let (c, errors) = Config::parse(text, p());
            assert!(errors.is_empty(), "{text}: {errors:?}");
            assert_eq!(c.hyperlinks, want, "{text}");
        }
        let (c, errors) = Config::parse("mouse = true\nhyperlinks = \"sometimes\"\n", p());
        assert_eq!(c.hyperlinks, Hyperlinks::Auto);
        assert!(
            errors.len() == 1
                && errors[0].contains("line 2")
                && errors[0].contains("hyperlinks")
                && errors[0].contains("sometimes"),
            "{errors:?}"
        );
        let (_, errors) = Config::parse("hyperlinks = 3\n", p());
        assert!(errors[0].contains("hyperlinks`: 3 is not"), "{errors:?}");
    }

    #[test]
    fn set_clipboard_modes_default_to_external() {
        assert_eq!(
            Config::parse("", p()).0.set_clipboard,
            SetClipboard::External
        );
        for (text, want) in [
            ("set_clipboard = \"external\"\n", SetClipboard::External),
            ("set_clipboard = \"on\"\n", SetClipboard::On),
            ("set_clipboard = \"off\"\n", SetClipboard::Off),
        ] {
            let (c, errors) = Config::parse(text, p());
            assert!(errors.is_empty(), "{text}: {errors:?}");
            assert_eq!(c.set_clipboard, want, "{text}");
        }
        // tmux's words only; a boolean is not guessed at.
        let (c, errors) = Config::parse("mouse = true\nset_clipboard = true\n", p());
        assert_eq!(c.set_clipboard, SetClipboard::External);
        assert!(
            errors.len() == 1
                && errors[0].contains("line 2")
                && errors[0].contains("set_clipboard"),
            "{errors:?}"
        );
    }

    #[test]
    fn auto_hyperlinks_skip_terminals_that_print_osc8() {
        let auto = Hyperlinks::Auto;
        for term in [
            "xterm-256color",
            "screen-256color",
            "tmux-256color",
            "alacritty",
            "xterm-kitty",
            "wezterm",
            "foot",
        ] {
            assert!(auto.allowed_for(Some(term)), "{term}");
        }
        for term in [
            "linux",
            "linux-16color",
            "vt100",
            "VT220",
            "vt102-nsl",
            "dumb",
            "cons25",
            "",
        ] {
            assert!(!auto.allowed_for(Some(term)), "{term}");
        }
        assert!(!auto.allowed_for(None));
        assert!(Hyperlinks::Always.allowed_for(Some("linux")));
        assert!(!Hyperlinks::Never.allowed_for(Some("xterm-256color")));
    }

    #[test]
    fn rebinding_and_unbinding() {
        let text = "prefix = \"C-a\"\nmouse = false\n[keys]\n\"|\" = \"split-window -h\"\n\"%\" = \"none\"\n";
        let (c, errors) = Config::parse(text, p());
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(c.keymap.prefix, Key::ctrl('a'));
        assert!(!c.mouse);
        let bar = Key::parse("|").map(|k| c.keymap.lookup(&k));
        assert_eq!(bar, Some(Some(Action::Split(SplitDir::Horizontal))));
        assert_eq!(Key::parse("%").and_then(|k| c.keymap.lookup(&k)), None);
    }

    #[test]
    fn shell_integration_is_on_unless_switched_off() {
        assert!(Config::parse("", p()).0.shell_integration);
        let (c, errors) = Config::parse("shell_integration = false\n", p());
        assert!(errors.is_empty(), "{errors:?}");
        assert!(!c.shell_integration);
    }

    #[test]
    fn broken_toml_names_file_and_line() {
        let (c, errors) = Config::parse("mouse = true\nscrollback_lines = \"many\"\n", p());
        assert_eq!(errors.len(), 1);
        assert!(errors[0].contains("config.toml"), "{}", errors[0]);
        assert!(errors[0].contains("line 2"), "{}", errors[0]);
        assert!(errors[0].contains("scrollback_lines"), "{}", errors[0]);
        assert!(c.mouse);
    }

    #[test]
    fn unknown_keys_and_bad_bindings_are_named() {
        let (_, errors) = Config::parse("mouse = true\nfancy = 1\n", p());
        assert!(errors[0].contains("fancy"), "{errors:?}");
        let (c, errors) = Config::parse("[keys]\n\"q\" = \"explode\"\n", p());
        assert!(
            errors[0].contains("keys.q")
                && errors[0].contains("explode")
                && errors[0].contains("line 2"),
            "{errors:?}"
        );
        assert!(c.keymap.lookup(&Key::ctrl('b')).is_some());
    }

    #[test]
    fn deny_gates_are_opt_in_per_cli() {
        let (c, errors) = Config::parse("", p());
        assert!(errors.is_empty());
        assert!(!c.approval_policy.gemini && !c.approval_policy.hermes);
        let (c, errors) =
            Config::parse("[approvals]\ndeny_gates = [\"gemini\", \"claude\"]\n", p());
        assert!(c.approval_policy.gemini && !c.approval_policy.hermes);
        assert!(
            errors.len() == 1 && errors[0].contains("claude") && errors[0].contains("line 2"),
            "{errors:?}"
        );
        let (c, _) = Config::parse("[approvals]\ndeny_gates = [\"kimi\", \"cursor\"]\n", p());
        assert!(c.approval_policy.kimi && c.approval_policy.cursor && !c.approval_policy.gemini);
    }

    #[test]
    fn mcp_tools_can_be_turned_off_by_name() {
        let text = "[mcp]\ndisabled_tools = [\"pane_run\", \"rm_rf\"]\n";
        let (c, errors) = Config::parse(text, p());
        assert_eq!(c.mcp_disabled_tools, vec!["pane_run".to_string()]);
        assert!(
            errors.len() == 1
                && errors[0].contains("rm_rf")
                && errors[0].contains("line 2")
                && errors[0].contains("pane_send_keys"),
            "{errors:?}"
        );
    }
}
