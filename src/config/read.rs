//! Reading config.toml leniently: the text is parsed once (keeping where each key is), then
//! every key is checked on its own. A wrong type, an unknown key or a bad key name is one
//! problem that names the file, the line, the key and what was expected; the key keeps its
//! default and every other key is applied. (A strict typed parse would reject the whole file at
//! its first mistake, and the user would meet the mistakes one reload at a time.)

use std::fmt::Display;
use std::ops::Range;
use std::path::Path;

use toml_edit::{ImDocument, Item, Table};

use super::{Config, Hyperlinks, PaneBorders, SetClipboard};
use crate::commands;
use crate::hosted::secrets::SecretStoreSetting;
use crate::keys::Key;

/// Where an on/off setting lives in [`Config`].
type Switch = fn(&mut Config) -> &mut bool;

/// The on/off settings at the top level.
pub(super) const SWITCHES: &[(&str, Switch)] = &[
    ("mouse", |c| &mut c.mouse),
    ("remain_on_exit", |c| &mut c.remain_on_exit),
    ("confirm_kill", |c| &mut c.confirm_kill),
    ("sidebar", |c| &mut c.sidebar),
    ("renumber_windows", |c| &mut c.renumber_windows),
    ("bell", |c| &mut c.bell),
    ("osc9", |c| &mut c.osc9),
    ("osc777", |c| &mut c.osc777),
    ("shell_integration", |c| &mut c.shell_integration),
    ("direct_terminal", |c| &mut c.direct_terminal),
];

/// Every other top-level key, for "did you mean" and the list of keys that exist.
const OTHER_KEYS: &[&str] = &[
    "prefix",
    "scrollback_lines",
    "scrollback_bytes",
    "base_index",
    "hyperlinks",
    "set_clipboard",
    "pane_borders",
    "keys",
    "approvals",
    "mcp",
    "persistence",
    "mcp_apps",
];

/// The top-level keys that hold one value (not the `[keys]`, `[approvals]` and `[mcp]`
/// tables), in the order `show-options` lists them.
pub(super) fn option_names() -> Vec<String> {
    SWITCHES
        .iter()
        .map(|(n, _)| *n)
        .chain(OTHER_KEYS.iter().copied())
        .filter(|n| !TABLES.contains(n))
        .map(str::to_string)
        .collect()
}

/// The top-level keys that are tables.
pub(super) const TABLES: &[&str] = &["keys", "approvals", "mcp", "persistence", "mcp_apps"];

/// Parses `text` (`path` names it in messages): the config and every problem found, or an error
/// when the text is not TOML at all.
pub(super) fn read(text: &str, path: &Path) -> Result<(Config, Vec<String>), String> {
    read_onto(text, path, Config::default())
}

/// [`read`], applying the keys in `text` to `base` rather than to the defaults (`set-option`
/// changes one setting of the running config this way, with the file's own checks).
pub(super) fn read_onto(
    text: &str,
    path: &Path,
    base: Config,
) -> Result<(Config, Vec<String>), String> {
    let doc = ImDocument::parse(text).map_err(|e| {
        let at = e
            .span()
            .map(|s| format!(" line {}:", line_of(text, s.start)))
            .unwrap_or_default();
        let message = e.message().replace('\n', " ");
        format!("{}:{at} {}", path.display(), message.trim())
    })?;
    let mut reader = Reader {
        text,
        path,
        config: base,
        problems: Vec::new(),
    };
    reader.top(doc.as_table());
    Ok((reader.config, reader.problems))
}

/// 1-based line of byte `offset`.
fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset.min(text.len()))
        .map_or(1, |before| before.matches('\n').count() + 1)
}

struct Reader<'a> {
    text: &'a str,
    path: &'a Path,
    config: Config,
    problems: Vec<String>,
}

impl Reader<'_> {
    /// Records a problem with `key` (its dotted name) found at `span`.
    fn problem(&mut self, span: Option<Range<usize>>, key: &str, what: impl Display) {
        let at = span
            .map(|s| format!(" line {}:", line_of(self.text, s.start)))
            .unwrap_or_default();
        self.problems
            .push(format!("{}:{at} key `{key}`: {what}", self.path.display()));
    }

    fn top(&mut self, root: &Table) {
        // The prefix first: it resets the key table that `[keys]` then changes.
        if let Some((key, item)) = root.get_key_value("prefix") {
            self.prefix(key.span(), item);
        }
        for (name, item) in root.iter() {
            let span = root.key(name).and_then(|k| k.span());
            if let Some((_, field)) = SWITCHES.iter().find(|(n, _)| *n == name) {
                let default = *field(&mut self.config);
                match item.as_bool() {
                    Some(on) => *field(&mut self.config) = on,
                    None => self.expected(span, name, item, "true or false", default),
                }
                continue;
            }
            match name {
                "prefix" => {}
                "scrollback_lines" => {
                    if let Some(n) = self.count(span, name, item, self.config.scrollback_lines) {
                        self.config.scrollback_lines = n.min(1_000_000);
                    }
                }
                "scrollback_bytes" => {
                    if let Some(n) = self.count(span, name, item, self.config.scrollback_bytes) {
                        self.config.scrollback_bytes = n.clamp(64 << 10, 1 << 30);
                    }
                }
                "base_index" => {
                    if let Some(n) = self.count(span, name, item, self.config.base_index) {
                        // tmux allows any number; a cap keeps number arithmetic far from overflow.
                        self.config.base_index = n.min(1_000_000);
                    }
                }
                "hyperlinks" => self.hyperlinks(span, item),
                "set_clipboard" => self.set_clipboard(span, item),
                "pane_borders" => self.pane_borders(span, item),
                "keys" => self.keys(span, item),
                "approvals" => self.section(span, name, item, &["deny_gates"], Self::approvals),
                "mcp" => self.section(
                    span,
                    name,
                    item,
                    &[
                        "disabled_tools",
                        "host_servers",
                        "secret_store",
                        "client_metadata_url",
                    ],
                    Self::mcp,
                ),
                "persistence" => self.section(
                    span,
                    name,
                    item,
                    &["restore", "restart", "scrollback_lines"],
                    Self::persistence,
                ),
                "mcp_apps" => self.section(span, name, item, super::mcp_apps::KEYS, Self::mcp_apps),
                unknown => {
                    let known: Vec<&str> = SWITCHES
                        .iter()
                        .map(|(n, _)| *n)
                        .chain(OTHER_KEYS.iter().copied())
                        .collect();
                    self.problem(span, unknown, unknown_key(unknown, &known));
                }
            }
        }
    }

    /// A value of the wrong kind: says what was expected and which default stands.
    fn expected(
        &mut self,
        span: Option<Range<usize>>,
        key: &str,
        found: &Item,
        expected: &str,
        default: impl Display,
    ) {
        let found = shown(found);
        self.problem(
            span,
            key,
            format!("expected {expected}, found {found}; using {default}"),
        );
    }

    /// A whole number of at least 0.
    fn count(
        &mut self,
        span: Option<Range<usize>>,
        key: &str,
        item: &Item,
        default: usize,
    ) -> Option<usize> {
        let n = item.as_integer().and_then(|n| usize::try_from(n).ok());
        if n.is_none() {
            self.expected(span, key, item, "a whole number of at least 0", default);
        }
        n
    }

    fn prefix(&mut self, span: Option<Range<usize>>, item: &Item) {
        match item.as_str().map(|name| (name, Key::parse(name))) {
            Some((_, Some(key))) => self.config.keymap.set_prefix(key),
            Some((name, None)) => self.problem(
                span,
                "prefix",
                format!("{name:?} is not a key name (try \"C-a\"); using C-b"),
            ),
            None => self.expected(span, "prefix", item, "a key name such as \"C-a\"", "C-b"),
        }
    }

    fn hyperlinks(&mut self, span: Option<Range<usize>>, item: &Item) {
        let mode = match (item.as_bool(), item.as_str()) {
            (Some(true), _) | (_, Some("auto")) => Some(Hyperlinks::Auto),
            (Some(false), _) | (_, Some("never")) => Some(Hyperlinks::Never),
            (_, Some("always")) => Some(Hyperlinks::Always),
            _ => None,
        };
        match mode {
            Some(mode) => self.config.hyperlinks = mode,
            None => self.problem(
                span,
                "hyperlinks",
                format!(
                    "{} is not \"auto\", \"always\" or \"never\"; using \"auto\"",
                    shown(item)
                ),
            ),
        }
    }

    fn set_clipboard(&mut self, span: Option<Range<usize>>, item: &Item) {
        // tmux's words only; a boolean is not guessed at.
        let mode = match item.as_str() {
            Some("external") => Some(SetClipboard::External),
            Some("on") => Some(SetClipboard::On),
            Some("off") => Some(SetClipboard::Off),
            _ => None,
        };
        match mode {
            Some(mode) => self.config.set_clipboard = mode,
            None => self.problem(
                span,
                "set_clipboard",
                format!(
                    "{} is not \"external\", \"on\" or \"off\"; using \"external\"",
                    shown(item)
                ),
            ),
        }
    }

    fn pane_borders(&mut self, span: Option<Range<usize>>, item: &Item) {
        let borders = match item.as_str() {
            Some("box") => Some(PaneBorders::Box),
            Some("separators") => Some(PaneBorders::Separators),
            _ => None,
        };
        match borders {
            Some(borders) => self.config.pane_borders = borders,
            None => self.problem(
                span,
                "pane_borders",
                format!(
                    "{} is not \"box\" or \"separators\"; using \"box\"",
                    shown(item)
                ),
            ),
        }
    }

    /// A `[name]` table: unknown keys in it are problems, known ones go to `read`.
    fn section(
        &mut self,
        span: Option<Range<usize>>,
        name: &str,
        item: &Item,
        keys: &[&str],
        read: fn(&mut Self, &str, Option<Range<usize>>, &Item),
    ) {
        let Some(table) = item.as_table_like() else {
            return self.expected(span, name, item, "a table", "the defaults");
        };
        for (key, value) in table.iter() {
            let span = table.key(key).and_then(|k| k.span());
            let dotted = format!("{name}.{key}");
            if keys.contains(&key) {
                read(self, &dotted, span, value);
            } else {
                self.problem(span, &dotted, unknown_key(key, keys));
            }
        }
    }

    /// A list of strings; items of another kind are problems of their own.
    fn strings(&mut self, key: &str, span: Option<Range<usize>>, item: &Item) -> Vec<String> {
        let Some(array) = item.as_array() else {
            self.expected(span, key, item, "a list of strings", "an empty list");
            return Vec::new();
        };
        let mut out = Vec::new();
        for value in array.iter() {
            match value.as_str() {
                Some(s) => out.push(s.to_string()),
                None => self.problem(
                    span.clone(),
                    key,
                    format!("{} is not a string; ignored", value.to_string().trim()),
                ),
            }
        }
        out
    }

    fn approvals(&mut self, key: &str, span: Option<Range<usize>>, item: &Item) {
        for cli in self.strings(key, span.clone(), item) {
            let enabled = cli
                .parse::<calyx_integrations::AgentKind>()
                .is_ok_and(|kind| self.config.approval_policy.enable(kind));
            if !enabled {
                let opt_in: Vec<&str> = calyx_integrations::gate::Policy::OPT_IN
                    .iter()
                    .map(|k| k.as_str())
                    .collect();
                self.problem(
                    span.clone(),
                    key,
                    format!(
                        "{cli:?} is not a CLI whose gate hook fires for every call ({}); ignored",
                        opt_in.join(", ")
                    ),
                );
            }
        }
    }

    fn persistence(&mut self, key: &str, span: Option<Range<usize>>, item: &Item) {
        use super::persistence::Restore;
        if key == "persistence.restart" {
            for entry in self.strings(key, span, item) {
                if !self.config.persistence.restart.contains(&entry) {
                    self.config.persistence.restart.push(entry);
                }
            }
            return;
        }
        if key == "persistence.scrollback_lines" {
            let default = self.config.persistence.scrollback_lines;
            if let Some(n) = self.count(span, key, item, default) {
                self.config.persistence.scrollback_lines =
                    n.min(super::persistence::MAX_SCROLLBACK_LINES);
            }
            return;
        }
        let restore = match item.as_str() {
            Some("on-attach") => Some(Restore::OnAttach),
            Some("at-start") => Some(Restore::AtStart),
            Some("off") => Some(Restore::Off),
            _ => None,
        };
        match restore {
            Some(r) => self.config.persistence.restore = r,
            None => self.problem(
                span,
                key,
                format!(
                    "{} is not \"on-attach\", \"at-start\" or \"off\"; using \"on-attach\"",
                    shown(item)
                ),
            ),
        }
    }

    fn mcp_apps(&mut self, key: &str, span: Option<Range<usize>>, item: &Item) {
        use super::mcp_apps::{valid_accent, OpenBrowser, Theme, FONT_SIZES};
        let apps = &mut self.config.mcp_apps;
        match key {
            "mcp_apps.views" => match item.as_bool() {
                Some(on) => apps.views = on,
                None => self.expected(span, key, item, "true or false", "true"),
            },
            "mcp_apps.open_browser" => match item.as_str() {
                Some("never") => apps.open_browser = OpenBrowser::Never,
                Some("local") => apps.open_browser = OpenBrowser::Local,
                _ => self.expected(span, key, item, "\"never\" or \"local\"", "\"never\""),
            },
            "mcp_apps.view_port" => {
                // The sandbox takes the next port, so the last port cannot be the host's.
                match item.as_integer().and_then(|n| u16::try_from(n).ok()) {
                    Some(port) if (1024..u16::MAX).contains(&port) => apps.view_port = port,
                    _ => self.expected(span, key, item, "a port from 1024 to 65534", "41880"),
                }
            }
            "mcp_apps.theme" => match item.as_str() {
                Some("auto") => apps.theme = Theme::Auto,
                Some("light") => apps.theme = Theme::Light,
                Some("dark") => apps.theme = Theme::Dark,
                _ => self.expected(
                    span,
                    key,
                    item,
                    "\"auto\", \"light\" or \"dark\"",
                    "\"auto\"",
                ),
            },
            "mcp_apps.accent" => match item.as_str() {
                Some(colour) if valid_accent(colour) => apps.accent = colour.to_string(),
                _ => self.expected(
                    span,
                    key,
                    item,
                    "a colour such as \"#2472c8\"",
                    super::mcp_apps::DEFAULT_ACCENT,
                ),
            },
            _ => match item.as_integer().and_then(|n| u16::try_from(n).ok()) {
                Some(size) if FONT_SIZES.contains(&size) => apps.font_size = size,
                _ => self.expected(span, key, item, "a size in pixels from 8 to 48", "14"),
            },
        }
    }

    fn mcp(&mut self, key: &str, span: Option<Range<usize>>, item: &Item) {
        match key {
            "mcp.host_servers" => match item.as_bool() {
                Some(on) => self.config.mcp_host_servers = on,
                None => self.expected(span, key, item, "true or false", "true"),
            },
            "mcp.secret_store" => match item.as_str().map(str::parse::<SecretStoreSetting>) {
                Some(Ok(setting)) => self.config.mcp_secret_store = setting,
                Some(Err(message)) => self.problem(span, key, format!("{message}; using \"auto\"")),
                None => self.expected(
                    span,
                    key,
                    item,
                    "\"auto\", \"keyring\" or \"file\"",
                    "\"auto\"",
                ),
            },
            "mcp.client_metadata_url" => match item.as_str() {
                Some(url) => self.config.mcp_client_metadata_url = url.to_string(),
                None => self.expected(
                    span,
                    key,
                    item,
                    "an HTTPS URL with a path",
                    "\"https://example.com/calyx/client-metadata.json\"",
                ),
            },
            _ => self.mcp_disabled_tools(key, span, item),
        }
    }

    fn mcp_disabled_tools(&mut self, key: &str, span: Option<Range<usize>>, item: &Item) {
        let tools = crate::mcp::tool_set::all_names();
        for name in self.strings(key, span.clone(), item) {
            if tools.contains(&name) {
                self.config.mcp_disabled_tools.push(name);
            } else {
                self.problem(
                    span.clone(),
                    key,
                    format!(
                        "{name:?} is not a calyx MCP tool ({}); ignored",
                        tools.join(", ")
                    ),
                );
            }
        }
    }

    fn keys(&mut self, span: Option<Range<usize>>, item: &Item) {
        let Some(table) = item.as_table_like() else {
            return self.expected(span, "keys", item, "a table", "the default keys");
        };
        for (key_name, command) in table.iter() {
            let span = table.key(key_name).and_then(|k| k.span());
            let dotted = format!("keys.{key_name}");
            let Some(key) = Key::parse(key_name) else {
                self.problem(span, &dotted, "not a key name; binding ignored");
                continue;
            };
            self.config.keymap.from_file.insert(key);
            let Some(command) = command.as_str() else {
                self.expected(
                    span,
                    &dotted,
                    command,
                    "a command name such as \"split-window -h\", or \"none\"",
                    "the default binding",
                );
                continue;
            };
            if command == "none" || command.is_empty() {
                self.config.keymap.bindings.remove(&key);
                continue;
            }
            match commands::find(command) {
                Some(spec) => {
                    self.config.keymap.bindings.insert(key, spec.action);
                }
                None => self.problem(
                    span,
                    &dotted,
                    format!("unknown command {command:?} (see prefix ?); binding ignored"),
                ),
            }
        }
    }
}

/// A value as written in the file, for messages (`"on"`, `-5`, `[1, 2]`).
fn shown(item: &Item) -> String {
    match item {
        Item::Value(v) => v.to_string().trim().to_string(),
        Item::Table(_) | Item::ArrayOfTables(_) => "a table".into(),
        Item::None => "nothing".into(),
    }
}

/// "not a setting", with the closest known key when one is close (a typo), else the list.
fn unknown_key(name: &str, known: &[&str]) -> String {
    let closest = known
        .iter()
        .map(|k| (strsim::levenshtein(name, k), *k))
        .min()
        .filter(|(d, k)| *d <= 2.max(k.len() / 4));
    match closest {
        Some((_, k)) => format!("not a setting (did you mean `{k}`?); ignored"),
        None => format!("not a setting (known: {}); ignored", known.join(", ")),
    }
}
