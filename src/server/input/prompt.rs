//! The status-line prompt, as pure functions the server calls: how a key or a paste edits the
//! prompt's text, and what a line typed at `prefix :` asks for. Kept apart from the server so the
//! editing rules and the command grammar are unit tested without a session or panes.

use clap::Parser as _;

use crate::cli::{Cli, Command};
use crate::commands::{self, Action};
use crate::input::InputEvent;
use crate::keys::KeyCode;

/// Longest prompt text kept, in bytes (a paste cannot grow it without bound).
pub const MAX_PROMPT_BYTES: usize = 512;

/// What an input event does to an open prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptEdit {
    /// Enter: run the text.
    Submit(String),
    /// Escape, C-c or C-g: close the prompt, doing nothing.
    Cancel,
    /// The prompt stays open with this text.
    Edit(String),
}

/// Applies one input event to the prompt's `text`. Pasted newlines become spaces, so a paste
/// can never submit the prompt; mouse and focus events leave it as it is.
pub fn edit(mut text: String, event: &InputEvent) -> PromptEdit {
    match event {
        InputEvent::Key { key, .. } => match key.code {
            KeyCode::Enter => return PromptEdit::Submit(text),
            KeyCode::Escape => return PromptEdit::Cancel,
            KeyCode::Char('c') | KeyCode::Char('g') if key.ctrl => return PromptEdit::Cancel,
            KeyCode::Char('u') if key.ctrl => text.clear(),
            KeyCode::Backspace => {
                text.pop();
            }
            KeyCode::Char(c) if !key.ctrl && !key.alt => text.push(c),
            _ => {}
        },
        InputEvent::Paste(data) => {
            text.push_str(&String::from_utf8_lossy(data).replace(['\r', '\n'], " "))
        }
        _ => {}
    }
    truncate_at_char(&mut text, MAX_PROMPT_BYTES);
    PromptEdit::Edit(text)
}

/// Cuts `text` to at most `max` bytes without splitting a character (`String::truncate` panics
/// inside one, and a paste of wide characters lands anywhere).
pub fn truncate_at_char(text: &mut String, max: usize) {
    if text.len() <= max {
        return;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
}

/// What a line typed at the `:` prompt asks for.
#[derive(Debug)]
pub enum PromptCommand {
    /// A blank line.
    Nothing,
    /// A command from the key table (any name `prefix ?` lists, or a short alias), such as
    /// `copy-mode` or `select-pane -L`.
    Bound(Action),
    /// A command the CLI takes too, read by the CLI's own parser: the same flags and targets
    /// as `calyx <verb>`, so `kill-session -t beta` kills beta and nothing else.
    Cli(Box<Command>),
    /// tmux's `select-window [-t] N`: the window number, and the argument as typed.
    SelectWindow { index: Option<usize>, arg: String },
    /// Not a command, or one with arguments it does not take: why, in one line.
    Refused(String),
}

/// Parses a `:` prompt line: first as a CLI command (clap, as `calyx` parses its arguments),
/// else as a key-table command; never a guess at what a bad flag meant.
pub fn parse_command(line: &str) -> PromptCommand {
    let line = line.trim();
    let words = match crate::argsplit::split_args(line) {
        Ok(words) => words,
        Err(e) => return PromptCommand::Refused(e.to_string()),
    };
    let Some(first) = words.first().cloned() else {
        return PromptCommand::Nothing;
    };
    if first == "select-window" {
        let arg = words[1..].join(" ");
        let index = match words.get(1..).unwrap_or_default() {
            [flag, n] if flag == "-t" => n.parse().ok(),
            [n] => n.parse().ok(),
            _ => None,
        };
        return PromptCommand::SelectWindow { index, arg };
    }
    let parsed = Cli::try_parse_from(std::iter::once("calyx".to_string()).chain(words));
    match parsed {
        // The prompt runs commands in this server: another machine is for a shell's calyx.
        Ok(Cli { remote, .. }) if remote.remote.is_some() => {
            PromptCommand::Refused("--remote works from a shell, not the prompt".to_string())
        }
        Ok(Cli {
            command: Some(command),
            ..
        }) => PromptCommand::Cli(Box::new(command)),
        Ok(Cli { command: None, .. }) => PromptCommand::Nothing,
        Err(e) => match commands::find(line) {
            Some(spec) => PromptCommand::Bound(spec.action),
            None if e.kind() == clap::error::ErrorKind::InvalidSubcommand => {
                PromptCommand::Refused(format!("unknown command: {first} (prefix ? lists them)"))
            }
            None => PromptCommand::Refused(first_line_of(&e)),
        },
    }
}

/// A clap error as one status-line sentence: its first line, without the `error: ` label.
fn first_line_of(e: &clap::Error) -> String {
    let text = e.to_string();
    let line = text.lines().next().unwrap_or("").trim();
    line.strip_prefix("error: ").unwrap_or(line).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::Key;

    fn key(name: &str) -> InputEvent {
        InputEvent::Key {
            key: Key::parse(name).expect("key name"),
            raw: Vec::new(),
        }
    }

    fn typed(text: &str, keys: &[&str]) -> PromptEdit {
        let mut out = PromptEdit::Edit(text.to_string());
        for k in keys {
            let PromptEdit::Edit(t) = out else {
                return out;
            };
            out = edit(t, &key(k));
        }
        out
    }

    #[test]
    fn typing_edits_and_enter_submits() {
        assert_eq!(
            typed("", &["k", "i", "l", "l", "BSpace", "l", "Enter"]),
            PromptEdit::Submit("kill".into())
        );
        assert_eq!(typed("abc", &["C-u"]), PromptEdit::Edit(String::new()));
        // Control and Alt combinations other than the editing ones are ignored, not typed.
        assert_eq!(
            typed("a", &["C-x", "M-b", "F3"]),
            PromptEdit::Edit("a".into())
        );
        assert_eq!(typed("", &["Space"]), PromptEdit::Edit(" ".into()));
    }

    #[test]
    fn escape_and_control_c_or_g_cancel() {
        for k in ["Escape", "C-c", "C-g"] {
            assert_eq!(typed("half typed", &[k]), PromptEdit::Cancel, "{k}");
        }
    }

    #[test]
    fn a_paste_cannot_submit_and_mouse_events_change_nothing() {
        let pasted = edit("x".into(), &InputEvent::Paste(b"a\r\nb\n".to_vec()));
        assert_eq!(pasted, PromptEdit::Edit("xa  b ".into()));
        assert_eq!(
            edit("x".into(), &InputEvent::Focus(true)),
            PromptEdit::Edit("x".into())
        );
    }

    #[test]
    fn a_long_paste_is_cut_at_a_character_boundary() {
        // 171 three-byte characters: 513 bytes, and byte 512 falls inside the last one.
        let wide = "中".repeat(171);
        let out = edit(String::new(), &InputEvent::Paste(wide.into_bytes()));
        let PromptEdit::Edit(text) = out else {
            panic!("{out:?}");
        };
        assert_eq!(text, "中".repeat(170));
        let out = edit(String::new(), &InputEvent::Paste(vec![b'a'; 4096]));
        assert_eq!(out, PromptEdit::Edit("a".repeat(MAX_PROMPT_BYTES)));
    }

    fn cli(line: &str) -> Command {
        match parse_command(line) {
            PromptCommand::Cli(c) => *c,
            other => panic!("{line}: {other:?}"),
        }
    }

    fn refused(line: &str) -> String {
        match parse_command(line) {
            PromptCommand::Refused(why) => why,
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn cli_commands_take_the_cli_flags_and_targets() {
        let Command::Kill(t) = cli("kill-session -t beta") else {
            panic!("kill-session")
        };
        assert_eq!(t.target.as_deref(), Some("beta"));
        let Command::KillPane(t) = cli("  kill-pane -t %13 ") else {
            panic!("kill-pane")
        };
        assert_eq!(t.target.as_deref(), Some("%13"));
        let Command::KillWindow(t) = cli("kill-window -t 1") else {
            panic!("kill-window")
        };
        assert_eq!(t.target.as_deref(), Some("1"));
        let Command::Split(s) = cli("split-window -h -c '/tmp/a dir'") else {
            panic!("split")
        };
        assert!(s.horizontal && s.cwd.as_deref() == Some("/tmp/a dir"));
        assert!(matches!(cli("kill-server"), Command::KillServer { .. }));
    }

    #[test]
    fn bad_flags_and_arguments_are_refused_never_guessed() {
        assert!(refused("kill-server now").contains("'now'"));
        assert!(refused("kill-session -x beta").contains("'-x'"));
        assert!(refused("frobnicate now").starts_with("unknown command: frobnicate"));
        assert!(refused("kill-session -t 'beta").contains("unclosed"));
        // Another machine is a shell's business: the prompt acts on this server only.
        assert!(refused("ls --remote build").contains("--remote"));
    }

    #[test]
    fn key_table_commands_and_select_window() {
        assert!(matches!(
            parse_command("zoom"),
            PromptCommand::Bound(Action::Zoom)
        ));
        assert!(matches!(
            parse_command("select-pane -L"),
            PromptCommand::Bound(_)
        ));
        // Without a name, rename-window opens the rename prompt (the table's command).
        assert!(matches!(
            parse_command("rename-window"),
            PromptCommand::Bound(Action::RenameWindow)
        ));
        assert!(matches!(
            parse_command("select-window -t 12"),
            PromptCommand::SelectWindow {
                index: Some(12),
                ..
            }
        ));
        assert!(matches!(
            parse_command("select-window 4"),
            PromptCommand::SelectWindow { index: Some(4), .. }
        ));
        assert!(matches!(
            parse_command("select-window -t x"),
            PromptCommand::SelectWindow { index: None, .. }
        ));
        assert!(matches!(parse_command("   "), PromptCommand::Nothing));
    }
}
