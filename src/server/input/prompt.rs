//! The status-line prompt, as pure functions the server calls: how a key or a paste edits the
//! prompt's text, and what a line typed at `prefix :` asks for. Kept apart from the server so the
//! editing rules and the command grammar are unit tested without a session or panes.

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
fn truncate_at_char(text: &mut String, max: usize) {
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptCommand<'a> {
    /// A blank line.
    Nothing,
    /// A command from the command table (any name `prefix ?` lists, or a short alias).
    Bound(Action),
    RenameWindow(&'a str),
    RenameSession(&'a str),
    /// `select-window [-t] N`: the index when it parses, and the argument as typed for the
    /// error message.
    SelectWindow {
        index: Option<usize>,
        arg: &'a str,
    },
    KillSession,
    KillServer,
    /// Anything else: the first word, for the error message.
    Unknown(&'a str),
}

/// Parses a `:` prompt line.
pub fn parse_command(line: &str) -> PromptCommand<'_> {
    let line = line.trim();
    if line.is_empty() {
        return PromptCommand::Nothing;
    }
    if let Some(spec) = commands::find(line) {
        return PromptCommand::Bound(spec.action);
    }
    let (word, rest) = line
        .split_once(' ')
        .map(|(w, r)| (w, r.trim()))
        .unwrap_or((line, ""));
    match word {
        "rename-window" if !rest.is_empty() => PromptCommand::RenameWindow(rest),
        "rename-session" if !rest.is_empty() => PromptCommand::RenameSession(rest),
        "select-window" => PromptCommand::SelectWindow {
            index: rest.trim_start_matches("-t").trim().parse().ok(),
            arg: rest,
        },
        "kill-session" => PromptCommand::KillSession,
        "kill-server" => PromptCommand::KillServer,
        _ => PromptCommand::Unknown(word),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::Key;
    use crate::layout::SplitDir;

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

    #[test]
    fn command_table_names_and_aliases_run_their_action() {
        assert_eq!(
            parse_command("  kill-pane "),
            PromptCommand::Bound(Action::KillPane)
        );
        assert_eq!(
            parse_command("split-window -h"),
            PromptCommand::Bound(Action::Split(SplitDir::Horizontal))
        );
        assert_eq!(parse_command("zoom"), PromptCommand::Bound(Action::Zoom));
        assert_eq!(
            parse_command("select-window -t 3"),
            PromptCommand::Bound(Action::SelectWindow(3))
        );
        // Without a name, rename-window opens the rename prompt (the table's command).
        assert_eq!(
            parse_command("rename-window"),
            PromptCommand::Bound(Action::RenameWindow)
        );
        assert_eq!(parse_command("   "), PromptCommand::Nothing);
    }

    #[test]
    fn commands_with_arguments() {
        assert_eq!(
            parse_command("rename-window  build logs "),
            PromptCommand::RenameWindow("build logs")
        );
        assert_eq!(
            parse_command("rename-session work"),
            PromptCommand::RenameSession("work")
        );
        assert_eq!(
            parse_command("select-window -t 12"),
            PromptCommand::SelectWindow {
                index: Some(12),
                arg: "-t 12"
            }
        );
        assert_eq!(
            parse_command("select-window 4"),
            PromptCommand::SelectWindow {
                index: Some(4),
                arg: "4"
            }
        );
        assert_eq!(
            parse_command("select-window -t x"),
            PromptCommand::SelectWindow {
                index: None,
                arg: "-t x"
            }
        );
        assert_eq!(parse_command("kill-session"), PromptCommand::KillSession);
        assert_eq!(parse_command("kill-server"), PromptCommand::KillServer);
        assert_eq!(
            parse_command("frobnicate now"),
            PromptCommand::Unknown("frobnicate")
        );
        assert_eq!(
            parse_command("rename-session"),
            PromptCommand::Bound(Action::RenameSession)
        );
    }
}
