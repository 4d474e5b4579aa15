//! Keys: the names users write (tmux's: `C-b`, `M-x`, `Enter`, `F1`, `PageUp`), and the bytes a
//! program in a pane receives for them, in normal or application cursor mode.

use serde::{Deserialize, Serialize};

/// A key without modifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum KeyCode {
    Char(char),
    Enter,
    Tab,
    BackTab,
    Backspace,
    Escape,
    Up,
    Down,
    Left,
    Right,
    Home,
    End,
    PageUp,
    PageDown,
    Insert,
    Delete,
    F(u8),
}

/// A key with modifiers, as bindings and `send-keys` name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Key {
    pub code: KeyCode,
    pub ctrl: bool,
    pub alt: bool,
    pub shift: bool,
}

impl Key {
    /// A key with no modifiers.
    pub const fn plain(code: KeyCode) -> Self {
        Self {
            code,
            ctrl: false,
            alt: false,
            shift: false,
        }
    }

    /// Ctrl plus a character.
    pub const fn ctrl(c: char) -> Self {
        Self {
            code: KeyCode::Char(c),
            ctrl: true,
            alt: false,
            shift: false,
        }
    }

    /// Parses a tmux-style key name: `C-b`, `M-Left`, `S-Up`, `Enter`, `F12`, `%`, `Space`.
    pub fn parse(name: &str) -> Option<Key> {
        let mut key = Key::plain(KeyCode::Char(' '));
        let mut rest = name;
        loop {
            let lower = rest.get(..2).map(str::to_ascii_lowercase);
            match lower.as_deref() {
                Some("c-") if rest.len() > 2 => key.ctrl = true,
                Some("m-") if rest.len() > 2 => key.alt = true,
                Some("s-") if rest.len() > 2 => key.shift = true,
                _ => break,
            }
            rest = &rest[2..];
        }
        if let Some(c) = rest.strip_prefix('^').filter(|r| r.chars().count() == 1) {
            key.ctrl = true;
            rest = c;
        }
        key.code = match rest.to_ascii_lowercase().as_str() {
            "enter" | "return" | "cr" => KeyCode::Enter,
            "tab" => KeyCode::Tab,
            "btab" | "backtab" => KeyCode::BackTab,
            "bspace" | "backspace" => KeyCode::Backspace,
            "escape" | "esc" => KeyCode::Escape,
            "space" => KeyCode::Char(' '),
            "up" => KeyCode::Up,
            "down" => KeyCode::Down,
            "left" => KeyCode::Left,
            "right" => KeyCode::Right,
            "home" => KeyCode::Home,
            "end" => KeyCode::End,
            "pageup" | "ppage" | "pgup" => KeyCode::PageUp,
            "pagedown" | "npage" | "pgdn" => KeyCode::PageDown,
            "insert" | "ic" => KeyCode::Insert,
            "delete" | "dc" => KeyCode::Delete,
            lower => {
                if let Some(n) = lower.strip_prefix('f').and_then(|n| n.parse::<u8>().ok()) {
                    if (1..=12).contains(&n) {
                        KeyCode::F(n)
                    } else {
                        return None;
                    }
                } else {
                    let mut chars = rest.chars();
                    let c = chars.next()?;
                    if chars.next().is_some() {
                        return None;
                    }
                    KeyCode::Char(if key.ctrl { c.to_ascii_lowercase() } else { c })
                }
            }
        };
        Some(key)
    }

    /// The tmux-style name of this key (inverse of [`Key::parse`]).
    pub fn name(&self) -> String {
        let mut out = String::new();
        if self.ctrl {
            out.push_str("C-");
        }
        if self.alt {
            out.push_str("M-");
        }
        if self.shift {
            out.push_str("S-");
        }
        match self.code {
            KeyCode::Char(' ') => out.push_str("Space"),
            KeyCode::Char(c) => out.push(c),
            KeyCode::Enter => out.push_str("Enter"),
            KeyCode::Tab => out.push_str("Tab"),
            KeyCode::BackTab => out.push_str("BTab"),
            KeyCode::Backspace => out.push_str("BSpace"),
            KeyCode::Escape => out.push_str("Escape"),
            KeyCode::Up => out.push_str("Up"),
            KeyCode::Down => out.push_str("Down"),
            KeyCode::Left => out.push_str("Left"),
            KeyCode::Right => out.push_str("Right"),
            KeyCode::Home => out.push_str("Home"),
            KeyCode::End => out.push_str("End"),
            KeyCode::PageUp => out.push_str("PageUp"),
            KeyCode::PageDown => out.push_str("PageDown"),
            KeyCode::Insert => out.push_str("Insert"),
            KeyCode::Delete => out.push_str("Delete"),
            KeyCode::F(n) => out.push_str(&format!("F{n}")),
        }
        out
    }

    /// The bytes a program receives for this key, as xterm sends them.
    pub fn to_bytes(&self, application_cursor: bool) -> Vec<u8> {
        let modifier = 1 + u8::from(self.shift) + 2 * u8::from(self.alt) + 4 * u8::from(self.ctrl);
        let csi_letter = |letter: char| -> Vec<u8> {
            if modifier > 1 {
                format!("\x1b[1;{modifier}{letter}").into_bytes()
            } else if application_cursor {
                format!("\x1bO{letter}").into_bytes()
            } else {
                format!("\x1b[{letter}").into_bytes()
            }
        };
        let tilde = |n: u8| -> Vec<u8> {
            if modifier > 1 {
                format!("\x1b[{n};{modifier}~").into_bytes()
            } else {
                format!("\x1b[{n}~").into_bytes()
            }
        };
        let alt_prefixed = |mut bytes: Vec<u8>| -> Vec<u8> {
            if self.alt {
                bytes.insert(0, 0x1b);
            }
            bytes
        };
        match self.code {
            KeyCode::Char(c) => {
                if self.ctrl {
                    let b = match c {
                        'a'..='z' => c as u8 - b'a' + 1,
                        'A'..='Z' => c as u8 - b'A' + 1,
                        '@' | ' ' | '2' => 0,
                        '[' | '3' => 0x1b,
                        '\\' | '4' => 0x1c,
                        ']' | '5' => 0x1d,
                        '^' | '6' => 0x1e,
                        '_' | '7' | '/' => 0x1f,
                        '?' | '8' => 0x7f,
                        _ => return alt_prefixed(c.to_string().into_bytes()),
                    };
                    alt_prefixed(vec![b])
                } else {
                    let c = if self.shift {
                        c.to_ascii_uppercase()
                    } else {
                        c
                    };
                    alt_prefixed(c.to_string().into_bytes())
                }
            }
            KeyCode::Enter => alt_prefixed(b"\r".to_vec()),
            KeyCode::Tab if self.shift => b"\x1b[Z".to_vec(),
            KeyCode::Tab => alt_prefixed(b"\t".to_vec()),
            KeyCode::BackTab => b"\x1b[Z".to_vec(),
            KeyCode::Backspace => alt_prefixed(vec![if self.ctrl { 0x08 } else { 0x7f }]),
            KeyCode::Escape => alt_prefixed(b"\x1b".to_vec()),
            KeyCode::Up => csi_letter('A'),
            KeyCode::Down => csi_letter('B'),
            KeyCode::Right => csi_letter('C'),
            KeyCode::Left => csi_letter('D'),
            KeyCode::Home => csi_letter('H'),
            KeyCode::End => csi_letter('F'),
            KeyCode::Insert => tilde(2),
            KeyCode::Delete => tilde(3),
            KeyCode::PageUp => tilde(5),
            KeyCode::PageDown => tilde(6),
            KeyCode::F(n @ 1..=4) => {
                let letter = (b'P' + n - 1) as char;
                if modifier > 1 {
                    format!("\x1b[1;{modifier}{letter}").into_bytes()
                } else {
                    format!("\x1bO{letter}").into_bytes()
                }
            }
            KeyCode::F(n) => {
                let code = match n {
                    5 => 15,
                    6 => 17,
                    7 => 18,
                    8 => 19,
                    9 => 20,
                    10 => 21,
                    11 => 23,
                    _ => 24,
                };
                tilde(code)
            }
        }
    }
}

/// Turns `send-keys` arguments into bytes: each argument is a key name if it parses as one,
/// else literal text (as tmux does). With `literal`, every argument is text.
pub fn send_keys_bytes(args: &[String], literal: bool, application_cursor: bool) -> Vec<u8> {
    let mut out = Vec::new();
    for arg in args {
        match (literal, Key::parse(arg)) {
            (false, Some(key)) if arg.chars().count() > 1 => {
                out.extend(key.to_bytes(application_cursor));
            }
            _ => out.extend_from_slice(arg.as_bytes()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for name in [
            "C-b", "M-x", "Enter", "F1", "F12", "PageUp", "%", "Space", "C-M-Left", "Escape",
        ] {
            let key = Key::parse(name).unwrap_or_else(|| panic!("{name} parses"));
            assert_eq!(Key::parse(&key.name()), Some(key), "{name}");
        }
        assert_eq!(Key::parse("Nonsense"), None);
        assert_eq!(Key::parse("F13"), None);
        assert_eq!(Key::parse("^B"), Some(Key::ctrl('b')));
    }

    #[test]
    fn bytes_match_xterm() {
        let b = |n: &str, app: bool| Key::parse(n).map(|k| k.to_bytes(app)).unwrap_or_default();
        assert_eq!(b("C-c", false), vec![3]);
        assert_eq!(b("C-b", false), vec![2]);
        assert_eq!(b("M-x", false), b"\x1bx".to_vec());
        assert_eq!(b("Up", false), b"\x1b[A".to_vec());
        assert_eq!(b("Up", true), b"\x1bOA".to_vec());
        assert_eq!(b("C-Up", true), b"\x1b[1;5A".to_vec());
        assert_eq!(b("F1", false), b"\x1bOP".to_vec());
        assert_eq!(b("F5", false), b"\x1b[15~".to_vec());
        assert_eq!(b("PageDown", false), b"\x1b[6~".to_vec());
        assert_eq!(b("Enter", false), b"\r".to_vec());
        assert_eq!(b("Escape", false), b"\x1b".to_vec());
    }

    #[test]
    fn send_keys_mixes_names_and_text() {
        let args: Vec<String> = ["echo hi", "Enter", "C-c", "x"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            send_keys_bytes(&args, false, false),
            b"echo hi\r\x03x".to_vec()
        );
        assert_eq!(send_keys_bytes(&args[1..2], true, false), b"Enter".to_vec());
    }
}
