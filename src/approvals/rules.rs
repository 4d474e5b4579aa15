//! "Always" rules as narrow as what the human saw. A rule made from one request covers: for a
//! shell command, exactly that command (or, when the panel named it before the key, commands
//! starting with a two-word prefix such as `npm test`); for a file tool, that path (or the
//! files under its directory); for calyx's own tools, exactly that request; for any other
//! tool, the tool. A prefix or directory rule never covers a command with anything a shell
//! could use to run a second command or write elsewhere (`;`, `&`, `|`, backticks, `$`,
//! redirections, newlines, any non-ASCII character): only an exact rule written for that
//! very command covers such a command.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::summary::Summary;
use crate::layout::PaneId;

/// Arguments beside a shell command that change nothing about what runs: the model's own
/// description of the command, and how long the CLI waits for it. Every other argument (a
/// working directory, a target pane, background) must be the same for a rule to cover a call.
const INCIDENTAL: [&str; 5] = [
    "description",
    "justification",
    "timeout",
    "timeout_ms",
    "explanation",
];

/// Commands that run their arguments as another command: no prefix starting with one is
/// offered, since it would allow whatever follows it.
const WRAPPERS: [&str; 34] = [
    "sh", "bash", "zsh", "dash", "ksh", "fish", "csh", "tcsh", "env", "sudo", "doas", "su", "eval",
    "exec", "xargs", "nohup", "time", "timeout", "nice", "ionice", "command", "builtin", "source",
    ".", "watch", "strace", "chroot", "setsid", "stdbuf", "unbuffer", "script", "ssh", "busybox",
    "parallel",
];

/// What a request asks to do, as far as a rule can cover it.
#[derive(Debug, Clone, PartialEq)]
pub enum Subject {
    /// A shell command: the argument as sent (a string or an argv array), its text, and the
    /// other arguments that are not [`INCIDENTAL`].
    Command {
        raw: Value,
        text: String,
        rest: Value,
    },
    /// A file tool's path.
    Path(String),
    /// A request with no tool input (calyx's own tools): what the panel showed, whole.
    Shown(Vec<String>),
    /// Any other tool: the tool itself.
    Tool,
}

/// The first of `keys` holding a string in `input`, with its key.
fn str_field<'a>(input: &'a Value, keys: &[&'static str]) -> Option<(&'static str, &'a str)> {
    keys.iter()
        .find_map(|k| input.get(*k).and_then(Value::as_str).map(|v| (*k, v)))
}

/// `input`'s arguments other than `used` and the incidental ones, as one object.
fn rest_of(input: &Value, used: &str) -> Value {
    let mut rest = Map::new();
    for (k, v) in input.as_object().into_iter().flatten() {
        if k != used && !INCIDENTAL.contains(&k.as_str()) {
            rest.insert(k.clone(), v.clone());
        }
    }
    Value::Object(rest)
}

/// What `input` asks, read the way the panel's summary reads it (a command first, then a path).
pub fn subject_of(input: Option<&Value>, summary: &Summary) -> Subject {
    let Some(input) = input else {
        let mut shown = vec![summary.headline.clone()];
        shown.extend(summary.lines.iter().cloned());
        return Subject::Shown(shown);
    };
    for key in ["command", "cmd"] {
        match input.get(key) {
            Some(Value::String(text)) => {
                return Subject::Command {
                    raw: Value::String(text.clone()),
                    text: text.clone(),
                    rest: rest_of(input, key),
                }
            }
            Some(Value::Array(words)) if key == "command" => {
                let text = words
                    .iter()
                    .map(|w| w.as_str().map_or_else(|| w.to_string(), str::to_string))
                    .collect::<Vec<_>>()
                    .join(" ");
                return Subject::Command {
                    raw: Value::Array(words.clone()),
                    text,
                    rest: rest_of(input, key),
                };
            }
            _ => {}
        }
    }
    if let Some((_, path)) = str_field(input, &["file_path", "path", "filePath", "notebook_path"]) {
        return Subject::Path(path.to_string());
    }
    Subject::Tool
}

/// What a rule covers (saved as it is in `sessions.json`, so a restore re-applies the very rule).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Covers {
    /// Exactly this command, with these other arguments.
    Command { raw: Value, rest: Value },
    /// Plain commands that are this prefix or start with it and a space, with these other
    /// arguments.
    Prefix { prefix: String, rest: Value },
    /// Exactly this path.
    File(String),
    /// Clean absolute paths under this directory.
    Directory(String),
    /// Exactly this request as the panel showed it.
    Shown(Vec<String>),
    /// Every call of the tool that has no command or path.
    Tool,
}

/// How wide a rule the human asked for: `a`/`A` make the exact one, `p`/`P` the prefix or
/// directory one the panel named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Breadth {
    Exact,
    Prefix,
}

/// An "always" the human chose: how wide, whether for every pane, and whether on every
/// machine (`e`/`E`: always for every pane, see [`Scope::Anywhere`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Always {
    pub breadth: Breadth,
    pub every_pane: bool,
    pub anywhere: bool,
}

/// Which machines a rule holds on (issue 20 §3: "rules are per machine unless made
/// 'anywhere'").
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Scope {
    /// This machine only (the rule of `a`/`A`/`p`/`P`).
    #[default]
    Here,
    /// This machine and every saved machine it links to: the human set it here (`e`/`E`),
    /// this server keeps it and pushes it over each live link (`approvals::anywhere`).
    Anywhere,
    /// Pushed by the human's server on machine HOST over its link: held while that link is
    /// connected, never saved, never pushed on, and revoked only by HOST.
    From(String),
}

/// One rule the human set, for this server's life.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// Numbers rules for `calyx approvals --rules` and revoking.
    pub id: u64,
    /// The pane it covers (None: every pane).
    pub pane: Option<PaneId>,
    /// The CLI whose tool it covers ([`super::Asker::as_str`]): Claude's `Bash` is not Codex's.
    pub cli: &'static str,
    pub tool: String,
    pub covers: Covers,
    /// Which machines it holds on.
    pub scope: Scope,
}

impl Scope {
    /// Where it holds, for `calyx approvals --rules`: `here`, `every`, `from HOST`.
    pub fn words(&self) -> String {
        match self {
            Scope::Here => "here".into(),
            Scope::Anywhere => "every".into(),
            Scope::From(host) => format!("from {}", calyx_tui::escape::visible(host)),
        }
    }
}

impl Rule {
    /// Whether this rule allows `cli`'s call of `tool` in `pane` asking `subject`.
    pub fn allows(&self, pane: PaneId, cli: &str, tool: &str, subject: &Subject) -> bool {
        self.cli == cli
            && self.tool == tool
            && self.pane.is_none_or(|p| p == pane)
            && covers(&self.covers, subject)
    }

    /// The rule in words, for the panel's list and `calyx approvals --rules`.
    pub fn describe(&self) -> String {
        let place = match self.pane {
            Some(p) => format!("in %{p}"),
            None => "in every pane".to_string(),
        };
        let machines = match &self.scope {
            Scope::Here => String::new(),
            Scope::Anywhere => " on every machine".to_string(),
            Scope::From(host) => format!(
                " (every machine's rule, set on {})",
                calyx_tui::escape::visible(host)
            ),
        };
        format!(
            "{} {}: {} {place}{machines}",
            self.cli,
            self.tool,
            covers_words(&self.covers)
        )
    }
}

/// What `covers` allows, in words (escaped: commands and paths come from a model).
pub fn covers_words(covers: &Covers) -> String {
    let v = calyx_tui::escape::visible;
    match covers {
        Covers::Command { raw, .. } => {
            let text = raw.as_str().map_or_else(|| raw.to_string(), str::to_string);
            format!("exactly `{}`", v(&text))
        }
        Covers::Prefix { prefix, .. } => format!("commands starting with `{}`", v(prefix)),
        Covers::File(path) => format!("the file {}", v(path)),
        Covers::Directory(dir) => format!("files under {}/", v(dir.trim_end_matches('/'))),
        Covers::Shown(_) => "exactly this request".to_string(),
        Covers::Tool => "every call".to_string(),
    }
}

fn covers(covers: &Covers, subject: &Subject) -> bool {
    match (covers, subject) {
        (
            Covers::Command { raw, rest },
            Subject::Command {
                raw: r, rest: s, ..
            },
        ) => raw == r && rest == s,
        (Covers::Prefix { prefix, rest }, Subject::Command { raw, text, rest: s }) => {
            raw.is_string()
                && rest == s
                && is_plain(text)
                && (text == prefix
                    || text
                        .strip_prefix(prefix.as_str())
                        .is_some_and(|tail| tail.starts_with(' ')))
        }
        (Covers::File(path), Subject::Path(p)) => path == p,
        (Covers::Directory(dir), Subject::Path(p)) => inside(Path::new(dir), p),
        (Covers::Shown(shown), Subject::Shown(s)) => shown == s,
        (Covers::Tool, Subject::Tool) => true,
        _ => false,
    }
}

/// Whether a shell would run `text` as one simple command: printable ASCII with no character
/// that separates, chains, substitutes, redirects, groups, escapes or comments. Quotes and
/// glob characters are allowed (neither can start a second command without one of these).
pub fn is_plain(text: &str) -> bool {
    text.bytes().all(|b| {
        b.is_ascii_alphanumeric()
            || matches!(
                b,
                b' ' | b'-'
                    | b'_'
                    | b'.'
                    | b'/'
                    | b':'
                    | b'='
                    | b','
                    | b'+'
                    | b'@'
                    | b'%'
                    | b'^'
                    | b'~'
                    | b'*'
                    | b'?'
                    | b'['
                    | b']'
                    | b'\''
                    | b'"'
            )
    })
}

/// The prefix the panel offers for `text`: its first two words, when the command is plain,
/// the first word is a program (not an environment assignment, a path trick or a command that
/// runs its arguments) and the second a subcommand (`npm test`, `cargo build`, `git status`).
/// None otherwise: then only the exact command can be allowed always.
pub fn offered_prefix(text: &str) -> Option<String> {
    if !is_plain(text) || text.contains('\'') || text.contains('"') {
        return None;
    }
    let mut words = text.split(' ');
    let program = words.next()?;
    let sub = words.next()?;
    let word = |w: &str, first: bool| {
        w.bytes().next().is_some_and(|b| b.is_ascii_lowercase())
            && w.bytes().all(|b| {
                b.is_ascii_lowercase()
                    || b.is_ascii_digit()
                    || matches!(b, b'-' | b'_')
                    || (!first && b == b'.')
            })
    };
    (word(program, true) && word(sub, false) && !WRAPPERS.contains(&program))
        .then(|| format!("{program} {sub}"))
}

/// Whether `path` is absolute and clean as written: every step after the root a name (not
/// empty, `.` or `..`), no control character.
fn clean_absolute(path: &str) -> bool {
    path.strip_prefix('/')
        .is_some_and(|rest| rest.split('/').all(|step| !matches!(step, "" | "." | "..")))
        && !path.chars().any(char::is_control)
}

/// Whether `path` is a clean absolute path strictly under `dir` (see [`clean_absolute`]), and
/// where its existing part resolves (symbolic links followed) is under where `dir` resolves.
fn inside(dir: &Path, path: &str) -> bool {
    let p = Path::new(path);
    if !clean_absolute(path) || p == dir || !p.starts_with(dir) {
        return false;
    }
    resolved(p).starts_with(resolved(dir))
}

/// `path` with its longest existing part resolved (symbolic links followed) and the rest,
/// which does not exist yet, as written.
fn resolved(path: &Path) -> PathBuf {
    for ancestor in path.ancestors() {
        if let Ok(real) = std::fs::canonicalize(ancestor) {
            let rest = path.strip_prefix(ancestor).unwrap_or(Path::new(""));
            return real.join(rest);
        }
    }
    path.to_path_buf()
}

/// The directory a directory rule for `path` would cover: its parent, when `path` is clean
/// and absolute and the parent is not the root.
pub fn offered_directory(path: &str) -> Option<String> {
    let parent = Path::new(path).parent()?;
    (clean_absolute(path) && parent.parent().is_some())
        .then(|| parent.to_string_lossy().into_owned())
}

/// What a rule of `breadth` made from `subject` covers; None when there is no such rule
/// (no prefix or directory to offer).
pub fn covers_for(subject: &Subject, breadth: Breadth) -> Option<Covers> {
    match (subject, breadth) {
        (Subject::Command { raw, rest, .. }, Breadth::Exact) => Some(Covers::Command {
            raw: raw.clone(),
            rest: rest.clone(),
        }),
        (Subject::Command { raw, text, rest }, Breadth::Prefix) => {
            let prefix = raw.is_string().then(|| offered_prefix(text)).flatten()?;
            Some(Covers::Prefix {
                prefix,
                rest: rest.clone(),
            })
        }
        (Subject::Path(p), Breadth::Exact) => Some(Covers::File(p.clone())),
        (Subject::Path(p), Breadth::Prefix) => offered_directory(p).map(Covers::Directory),
        (Subject::Shown(s), Breadth::Exact) => Some(Covers::Shown(s.clone())),
        (Subject::Tool, Breadth::Exact) => Some(Covers::Tool),
        (Subject::Shown(_) | Subject::Tool, Breadth::Prefix) => None,
    }
}

/// The panel's line saying which rule each key would make for `subject` (each cut in its
/// middle to fit a row), how many rules are set (`r` lists them), then the `e`/`E` keys.
pub fn choices_line(subject: &Subject, rules: usize) -> String {
    let mut line = here_choices(subject);
    line.push_str(&format!("  ·  r rules ({rules})"));
    line.push_str(&anywhere_choices(subject));
    line
}

/// The "always" part of [`choices_line`]: which rule `a`/`A` and `p`/`P` would make, and that
/// `e`/`E` make them on every machine (empty when the request has none). A saved machine's
/// snapshot carries it, so the panel on another machine names exactly the rule that machine
/// would set.
pub fn rule_choices(subject: &Subject) -> String {
    let mut line = here_choices(subject);
    line.push_str(&anywhere_choices(subject));
    line
}

/// Which rule `a`/`A` and `p`/`P` would make.
fn here_choices(subject: &Subject) -> String {
    let short = |c: &Covers| calyx_tui::escape::shorten_middle(&covers_words(c), 70);
    let mut line = String::new();
    if let Some(exact) = covers_for(subject, Breadth::Exact) {
        line.push_str(&format!("a/A always {} (here/every pane)", short(&exact)));
    }
    if let Some(wide) = covers_for(subject, Breadth::Prefix) {
        line.push_str(&format!("  ·  p/P always {}", short(&wide)));
    }
    line
}

/// The `e`/`E` part: the rules of `A`/`P` on every machine (`e` only with no wider rule).
fn anywhere_choices(subject: &Subject) -> String {
    match (
        covers_for(subject, Breadth::Exact),
        covers_for(subject, Breadth::Prefix),
    ) {
        (Some(_), Some(_)) => "  ·  e/E as A/P on every machine".into(),
        (Some(_), None) => "  ·  e as A on every machine".into(),
        _ => String::new(),
    }
}

/// The rule an answer key makes: `a`/`A` the exact one here/in every pane, `p`/`P` the
/// prefix or directory one the panel named; `e`/`E` the exact / wider one in every pane on
/// every machine.
pub fn always_for_key(key: char) -> Option<Always> {
    let (breadth, every_pane, anywhere) = match key {
        'a' => (Breadth::Exact, false, false),
        'A' => (Breadth::Exact, true, false),
        'p' => (Breadth::Prefix, false, false),
        'P' => (Breadth::Prefix, true, false),
        'e' => (Breadth::Exact, true, true),
        'E' => (Breadth::Prefix, true, true),
        _ => return None,
    };
    Some(Always {
        breadth,
        every_pane,
        anywhere,
    })
}
