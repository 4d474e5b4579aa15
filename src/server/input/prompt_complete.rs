//! Tab completion for the `:` prompt: what the word before the cursor can become. Command names
//! and their flags come from clap's command tree (the CLI's own parser, so a command added to
//! `cli.rs` completes without an edit here) and from the key table; targets after `-t`/`-s`
//! from the server's live sessions, windows and panes; paths after `-c` and for `source-file`
//! from the disk. Pure but for reading directories, so it is unit tested without a server.

use std::path::{Path, PathBuf};

use clap::CommandFactory as _;

use crate::cli::Cli;
use crate::commands::COMMANDS;

/// CLI verbs that make no sense typed at the prompt (they need a shell or a terminal of their
/// own), left out of command-name completion. Their aliases go with them.
const NOT_FOR_THE_PROMPT: &[&str] = &["attach", "hook", "server", "setup", "doctor", "help"];

/// Commands the prompt reads itself (see `prompt::parse_command`) rather than through clap.
const PROMPT_ONLY: &[&str] = &["select-window"];

/// What the live server offers to complete from.
#[derive(Debug, Default, Clone)]
pub struct Sources {
    /// Every target a `-t` can name: session names, `SESSION:N` windows, `%N` panes.
    pub targets: Vec<String>,
    /// The directory relative paths start from (the client's focused pane's).
    pub cwd: Option<PathBuf>,
    /// Option names `set-option` and `show-options` take.
    pub options: Vec<String>,
}

/// The candidates for the word being typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    /// Byte offset in the line where that word starts: the candidates replace `line[start..]`.
    pub start: usize,
    /// Whole words, sorted, without repeats.
    pub candidates: Vec<String>,
}

/// What kind of word is at the cursor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Command,
    Flag,
    Target,
    Directory,
    File,
    Option,
    /// The value of the setting named before it.
    OptionValue,
    Nothing,
}

/// The completions of the last word of `line` (the cursor is at its end).
pub fn complete(line: &str, sources: &Sources) -> Completion {
    let words = words_of(line);
    let (start, word) = match words.last() {
        Some((start, word)) if !line.ends_with(char::is_whitespace) || line.ends_with("\\ ") => {
            (*start, word.clone())
        }
        _ => (line.len(), String::new()),
    };
    let before: Vec<&str> = words
        .iter()
        .filter(|(at, _)| *at < start)
        .map(|(_, w)| w.as_str())
        .collect();
    let (slot, before) = slot_of(&before, &word);
    let mut candidates = match slot {
        Slot::Command => command_names(),
        Slot::Flag => flags_of(before.first().copied().unwrap_or_default()),
        Slot::Target => sources.targets.clone(),
        Slot::Directory => paths(&word, sources.cwd.as_deref(), true),
        Slot::File => paths(&word, sources.cwd.as_deref(), false),
        Slot::Option => sources.options.clone(),
        Slot::OptionValue => before
            .iter()
            .rev()
            .find(|w| !w.starts_with('-'))
            .map_or_else(Vec::new, |name| crate::config::options::values_of(name)),
        Slot::Nothing => Vec::new(),
    };
    candidates.retain(|c| c.starts_with(&word));
    candidates.sort();
    candidates.dedup();
    Completion { start, candidates }
}

/// The words of `line` with their byte offsets; a backslash keeps the next character in the
/// word (`a\ b` is one word), as `argsplit` reads it.
fn words_of(line: &str) -> Vec<(usize, String)> {
    let mut words = Vec::new();
    let mut current: Option<(usize, String)> = None;
    let mut chars = line.char_indices();
    while let Some((at, c)) = chars.next() {
        if c.is_whitespace() {
            words.extend(current.take());
            continue;
        }
        let word = current.get_or_insert_with(|| (at, String::new()));
        match c {
            '\\' => word.1.extend(chars.next().map(|(_, next)| next)),
            c => word.1.push(c),
        }
    }
    words.extend(current);
    words
}

/// What the word after `before` is, from its command's clap definition, and the words of the
/// command it belongs to (after `bind-key KEY`, a command of its own).
fn slot_of<'a>(before: &[&'a str], word: &str) -> (Slot, Vec<&'a str>) {
    let Some((&command, rest)) = before.split_first() else {
        return (Slot::Command, Vec::new());
    };
    if matches!(command, "bind-key" | "bind") {
        // bind-key [-n] [-r] KEY COMMAND...: past the key, the words are a command line.
        let key_at = rest.iter().position(|w| !w.starts_with('-'));
        if let Some(at) = key_at {
            return slot_of(&rest[at + 1..], word);
        }
    }
    if word.starts_with('-') {
        return (Slot::Flag, before.to_vec());
    }
    let tree = Cli::command();
    let sub = tree.find_subcommand(command);
    if let Some(flag) = rest.last().filter(|w| w.starts_with('-')) {
        match sub.and_then(|s| arg_named(s, flag)) {
            Some(arg) => return (value_slot(arg), before.to_vec()),
            // A key-table command's -t (`select-pane -t`) names a target as the CLI's do.
            None if sub.is_none() && *flag == "-t" => return (Slot::Target, before.to_vec()),
            None => {}
        }
    }
    let positional = rest.iter().filter(|w| !w.starts_with('-')).count();
    let slot = match command {
        "source-file" => Slot::File,
        "set-option" | "set" | "show-options" | "show" if positional == 0 => Slot::Option,
        "set-option" | "set" if positional == 1 => Slot::OptionValue,
        _ => Slot::Nothing,
    };
    (slot, before.to_vec())
}

/// The argument `flag` (`-t`, `--target`) names, when it takes a value.
fn arg_named<'a>(command: &'a clap::Command, flag: &str) -> Option<&'a clap::Arg> {
    command.get_arguments().find(|arg| {
        let short = flag
            .strip_prefix('-')
            .filter(|s| s.chars().count() == 1)
            .and_then(|s| s.chars().next());
        let long = flag.strip_prefix("--");
        let named = (short.is_some() && arg.get_short() == short)
            || (long.is_some() && arg.get_long() == long);
        named && arg.get_action().takes_values()
    })
}

/// What an option's value is: a target, a directory, a file, or something not completed.
fn value_slot(arg: &clap::Arg) -> Slot {
    let id = arg.get_id().as_str();
    match arg.get_value_hint() {
        clap::ValueHint::DirPath => return Slot::Directory,
        clap::ValueHint::FilePath | clap::ValueHint::AnyPath => return Slot::File,
        _ => {}
    }
    if id == "cwd" {
        Slot::Directory
    } else if ["target", "source", "src", "dst"]
        .iter()
        .any(|t| id.contains(t))
    {
        Slot::Target
    } else {
        Slot::Nothing
    }
}

/// Every command the prompt takes: the CLI's verbs and visible aliases, and the key table's.
pub fn command_names() -> Vec<String> {
    let tree = Cli::command();
    let mut names: Vec<String> = tree
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && !NOT_FOR_THE_PROMPT.contains(&s.get_name()))
        .flat_map(|s| std::iter::once(s.get_name()).chain(s.get_visible_aliases()))
        .map(str::to_string)
        .collect();
    names.extend(
        COMMANDS
            .iter()
            .filter_map(|c| c.name.split_whitespace().next())
            .chain(PROMPT_ONLY.iter().copied())
            .map(str::to_string),
    );
    names.sort();
    names.dedup();
    names
}

/// The flags `command` takes: its clap arguments' `-x` and `--long` forms, and the flags the
/// key table's rows for it use (`select-pane -L`).
fn flags_of(command: &str) -> Vec<String> {
    let tree = Cli::command();
    let mut flags: Vec<String> = Vec::new();
    if let Some(sub) = tree.find_subcommand(command) {
        for arg in sub.get_arguments().filter(|a| !a.is_hide_set()) {
            if arg.get_id() == "help" || arg.get_id() == "version" {
                continue;
            }
            flags.extend(arg.get_short().map(|c| format!("-{c}")));
            flags.extend(arg.get_long().map(|l| format!("--{l}")));
        }
    }
    flags.extend(COMMANDS.iter().filter_map(|c| {
        let mut words = c.name.split_whitespace();
        (words.next() == Some(command))
            .then(|| words.next())
            .flatten()
            .filter(|w| w.starts_with('-'))
            .map(str::to_string)
    }));
    flags
}

/// Paths that start with `word`: directories end in `/`; with `dirs_only`, nothing else.
/// A relative `word` is read against `cwd`, `~/` against $HOME; the candidates keep the
/// word's own spelling of the directory part. Hidden entries only when the word asks for them.
fn paths(word: &str, cwd: Option<&Path>, dirs_only: bool) -> Vec<String> {
    let (dir_part, name_part) = match word.rfind('/') {
        Some(slash) => word.split_at(slash + 1),
        None => ("", word),
    };
    let dir = if let Some(rest) = dir_part.strip_prefix("~/") {
        crate::paths::home_dir().join(rest)
    } else if dir_part == "~" {
        crate::paths::home_dir()
    } else if Path::new(dir_part).is_absolute() {
        PathBuf::from(dir_part)
    } else {
        let base = cwd.map(Path::to_path_buf).unwrap_or_default();
        base.join(dir_part)
    };
    let Ok(entries) = std::fs::read_dir(if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        &dir
    }) else {
        return Vec::new();
    };
    /// More candidates than this do not fit one status line anyway; a huge directory is not
    /// read to its end for them.
    const MOST: usize = 1_000;
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            if !name.starts_with(name_part)
                || (name.starts_with('.') && !name_part.starts_with('.'))
            {
                return None;
            }
            // Follows links, so a link to a directory completes as one.
            let is_dir = entry.path().is_dir();
            match (is_dir, dirs_only) {
                (true, _) => Some(format!("{dir_part}{name}/")),
                (false, false) => Some(format!("{dir_part}{name}")),
                (false, true) => None,
            }
        })
        .take(MOST)
        .collect()
}

/// A candidate as typed into the line: whitespace, quotes and backslashes escaped with a
/// backslash so the prompt's parser reads it back as one word.
pub fn escaped(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    for c in word.chars() {
        if c.is_whitespace() || matches!(c, '\\' | '\'' | '"') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The longest start all `candidates` share, cut at a character boundary.
pub fn common_prefix(candidates: &[String]) -> String {
    let Some(first) = candidates.first() else {
        return String::new();
    };
    let mut end = first.len();
    for other in &candidates[1..] {
        end = first
            .char_indices()
            .zip(other.chars())
            .find(|((_, a), b)| a != b)
            .map_or(first.len().min(other.len()), |((at, _), _)| at)
            .min(end);
    }
    first[..end].to_string()
}

#[cfg(test)]
#[path = "prompt_complete_tests.rs"]
mod tests;
