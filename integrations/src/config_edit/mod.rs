//! Editors for other programs' configuration files, written so that a user's config is never
//! broken: every editor splices text (only calyx's own entries change, everything else stays
//! byte for byte), refuses shapes it does not recognise instead of guessing, and re-parses its
//! output before anything is written. [`fsio`] does the writing: symlinks followed, atomic
//! rename under a lock, mode kept, one backup.

pub mod fsio;
pub mod json;
mod json_parse;
pub mod regular;
pub mod toml_block;
pub mod yaml;

use std::fmt;

pub use json::{JsonDoc, J};
pub use json_parse::{parse as parse_json, Node, NodeKind};

/// Why an edit was refused. Carries the line (1-based) where the problem is, when known, so
/// the message can point the user at it; the caller adds the file name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditError {
    /// 1-based line of the problem, if it is about one place in the file.
    pub line: Option<usize>,
    /// What is wrong, in words.
    pub message: String,
}

impl EditError {
    /// An error about the whole file.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            line: None,
            message: message.into(),
        }
    }

    /// An error at byte offset `pos` of `text`.
    pub fn at(text: &str, pos: usize, message: impl Into<String>) -> Self {
        Self {
            line: Some(line_of(text, pos)),
            message: message.into(),
        }
    }
}

impl fmt::Display for EditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for EditError {}

/// The 1-based line number of byte offset `pos`.
pub fn line_of(text: &str, pos: usize) -> usize {
    let pos = pos.min(text.len());
    text.as_bytes()[..pos]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// The line ending a file uses: CRLF when its first line break is one, else LF. New lines
/// calyx inserts use it, so a CRLF file does not end up with mixed endings.
pub fn line_ending(text: &str) -> &'static str {
    match text.find('\n') {
        Some(i) if i > 0 && text.as_bytes()[i - 1] == b'\r' => "\r\n",
        _ => "\n",
    }
}

/// Splits a leading UTF-8 byte order mark off, so editors see plain text and callers put it back.
pub fn split_bom(text: &str) -> (&str, &str) {
    match text.strip_prefix('\u{feff}') {
        Some(rest) => ("\u{feff}", rest),
        None => ("", text),
    }
}

/// Whether a hook command line is calyx's: its program (quoted or not) is a file named `calyx`
/// (or `calyx-*`, for test builds) and it runs the `hook` verb. This is how calyx recognises its
/// own hook entries among the user's without any marker in the file.
pub fn is_calyx_command(cmd: &str) -> bool {
    let cmd = cmd.trim_start();
    let (program, rest) = match cmd.strip_prefix('"') {
        Some(quoted) => match quoted.find('"') {
            Some(end) => (&quoted[..end], &quoted[end + 1..]),
            None => return false,
        },
        None => match cmd.strip_prefix('\'') {
            Some(quoted) => match quoted.find('\'') {
                Some(end) => (&quoted[..end], &quoted[end + 1..]),
                None => return false,
            },
            None => cmd.split_at(cmd.find(' ').unwrap_or(cmd.len())),
        },
    };
    let name = program.rsplit('/').next().unwrap_or(program);
    (name == "calyx" || name.starts_with("calyx-")) && rest.trim_start().starts_with("hook ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_calyx_commands() {
        assert!(is_calyx_command("\"/usr/bin/calyx\" hook claude-code"));
        assert!(is_calyx_command("'/a b/calyx' hook hermes --approval"));
        assert!(is_calyx_command("/usr/local/bin/calyx hook codex"));
        assert!(!is_calyx_command("/usr/bin/calyxfoo hook codex"));
        assert!(!is_calyx_command("\"/usr/bin/calyx\" hookx"));
        assert!(!is_calyx_command("echo calyx hook"));
        assert!(!is_calyx_command("\"/usr/bin/calyx hook"));
    }

    #[test]
    fn lines_and_endings() {
        assert_eq!(line_of("a\nb\nc", 4), 3);
        assert_eq!(line_ending("a\r\nb"), "\r\n");
        assert_eq!(line_ending("a\nb"), "\n");
        assert_eq!(split_bom("\u{feff}{}"), ("\u{feff}", "{}"));
    }
}
