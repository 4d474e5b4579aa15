//! Decodes the bytes a client's terminal sends into keys, pastes, mouse events and focus changes,
//! keeping each event's original bytes so anything calyx does not bind reaches the pane unchanged.

use crate::keys::{Key, KeyCode};

/// A mouse button or wheel action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MouseKind {
    Press(u8),
    Release(u8),
    Drag(u8),
    Move,
    WheelUp,
    WheelDown,
}

/// A mouse event in client coordinates (0-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MouseEvent {
    pub kind: MouseKind,
    pub x: u16,
    pub y: u16,
    /// The modifier bits of the SGR button code (4 shift, 8 alt, 16 ctrl).
    pub modifiers: u8,
}

/// One decoded input event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputEvent {
    Key {
        key: Key,
        raw: Vec<u8>,
    },
    Paste(Vec<u8>),
    Mouse(MouseEvent),
    Focus(bool),
    /// The terminal's answer to calyx's query of its default colours (OSC 10 foreground,
    /// OSC 11 background), as it said it (`rgb:1e1e/1e1e/1e1e`). Never reaches a pane.
    TerminalColour {
        slot: u8,
        colour: String,
    },
    /// A sequence calyx does not understand: forwarded verbatim.
    Raw(Vec<u8>),
}

const PASTE_START: &[u8] = b"\x1b[200~";
const PASTE_END: &[u8] = b"\x1b[201~";

/// Stateful decoder: a read may end inside an escape sequence or a paste.
#[derive(Debug, Default)]
pub struct InputParser {
    pending: Vec<u8>,
    in_paste: Option<Vec<u8>>,
}

impl InputParser {
    /// Decodes `bytes`. A lone ESC at the end of a read is the Escape key (terminals send
    /// sequences in one write), so no escape-time delay is needed.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<InputEvent> {
        self.pending.extend_from_slice(bytes);
        let mut out = Vec::new();
        let mut i = 0;
        let buf = std::mem::take(&mut self.pending);
        while i < buf.len() {
            if let Some(paste) = self.in_paste.as_mut() {
                match find(&buf[i..], PASTE_END) {
                    Some(at) => {
                        paste.extend_from_slice(&buf[i..i + at]);
                        out.push(InputEvent::Paste(std::mem::take(paste)));
                        self.in_paste = None;
                        i += at + PASTE_END.len();
                    }
                    None => {
                        // Keep a possible partial end marker for the next read.
                        let keep = partial_suffix(&buf[i..], PASTE_END);
                        paste.extend_from_slice(&buf[i..buf.len() - keep]);
                        self.pending = buf[buf.len() - keep..].to_vec();
                        return out;
                    }
                }
                continue;
            }
            match decode_one(&buf[i..]) {
                Decoded::Event(ev, used) => {
                    out.push(ev);
                    i += used;
                }
                Decoded::PasteStart(used) => {
                    self.in_paste = Some(Vec::new());
                    i += used;
                }
                Decoded::Incomplete => {
                    self.pending = buf[i..].to_vec();
                    // A sequence that never completes must not swallow input forever.
                    if self.pending.len() > 64 {
                        out.push(InputEvent::Raw(std::mem::take(&mut self.pending)));
                    }
                    return out;
                }
            }
        }
        out
    }
}

enum Decoded {
    Event(InputEvent, usize),
    PasteStart(usize),
    Incomplete,
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn partial_suffix(hay: &[u8], needle: &[u8]) -> usize {
    (1..needle.len().min(hay.len() + 1))
        .rev()
        .find(|&n| hay.ends_with(&needle[..n]))
        .unwrap_or(0)
}

fn key_event(key: Key, raw: &[u8]) -> InputEvent {
    InputEvent::Key {
        key,
        raw: raw.to_vec(),
    }
}

fn decode_one(b: &[u8]) -> Decoded {
    let first = b[0];
    if first != 0x1b {
        return decode_plain(b);
    }
    if b.len() == 1 {
        return Decoded::Event(key_event(Key::plain(KeyCode::Escape), b), 1);
    }
    match b[1] {
        b'[' => decode_csi(b),
        b']' if b.len() > 2 => match decode_colour_reply(b) {
            Some(decoded) => decoded,
            None => decode_alt(b),
        },
        b'O' => {
            if b.len() < 3 {
                return Decoded::Incomplete;
            }
            let code = match b[2] {
                b'A' => KeyCode::Up,
                b'B' => KeyCode::Down,
                b'C' => KeyCode::Right,
                b'D' => KeyCode::Left,
                b'H' => KeyCode::Home,
                b'F' => KeyCode::End,
                b'P' => KeyCode::F(1),
                b'Q' => KeyCode::F(2),
                b'R' => KeyCode::F(3),
                b'S' => KeyCode::F(4),
                _ => return Decoded::Event(InputEvent::Raw(b[..3].to_vec()), 3),
            };
            Decoded::Event(key_event(Key::plain(code), &b[..3]), 3)
        }
        // ESC before a CSI or SS3 key: how rxvt, macOS Terminal and xterm with metaSendsEscape
        // send Alt with a cursor or function key (ESC ESC [ A is M-Up).
        0x1b if matches!(b.get(2), Some(b'[' | b'O')) => match decode_one(&b[1..]) {
            Decoded::Event(InputEvent::Key { mut key, .. }, used) => {
                key.alt = true;
                Decoded::Event(key_event(key, &b[..1 + used]), 1 + used)
            }
            Decoded::Incomplete => Decoded::Incomplete,
            // ESC before a mouse report, paste or unknown sequence: the Escape key, then it.
            _ => Decoded::Event(key_event(Key::plain(KeyCode::Escape), &b[..1]), 1),
        },
        0x1b => Decoded::Event(key_event(Key::plain(KeyCode::Escape), &b[..1]), 1),
        _ => decode_alt(b),
    }
}

/// Alt + a key: ESC before it.
fn decode_alt(b: &[u8]) -> Decoded {
    match decode_plain(&b[1..]) {
        Decoded::Event(InputEvent::Key { mut key, .. }, used) => {
            key.alt = true;
            Decoded::Event(key_event(key, &b[..1 + used]), 1 + used)
        }
        Decoded::Event(_, used) => {
            Decoded::Event(InputEvent::Raw(b[..1 + used].to_vec()), 1 + used)
        }
        other => other,
    }
}

/// `ESC ] 10 ; <colour> ST` or `ESC ] 11 ; ...` (ST: `ESC \` or BEL), the answer to the
/// client's query of the terminal's default colours; None when `b` is not one (then `ESC ]`
/// is Alt + `]`, as a lone one at the end of a read always is).
fn decode_colour_reply(b: &[u8]) -> Option<Decoded> {
    const PREFIXES: [&[u8]; 2] = [b"\x1b]10;", b"\x1b]11;"];
    let prefix = PREFIXES.iter().find(|p| b.starts_with(p));
    let Some(prefix) = prefix else {
        // A reply cut after `ESC ] 1`: wait for the rest.
        let partial = PREFIXES.iter().any(|p| p.starts_with(b));
        return partial.then_some(Decoded::Incomplete);
    };
    let body = &b[prefix.len()..];
    let (end, terminator) = match body.iter().position(|&c| c == 0x07 || c == 0x1b) {
        Some(at) if body[at] == 0x07 => (at, 1),
        Some(at) if at + 1 < body.len() => (at, 2),
        // `ESC` at the end: the `\` of the terminator is still to come.
        Some(_) | None => return Some(Decoded::Incomplete),
    };
    let colour = std::str::from_utf8(&body[..end]).ok()?;
    let slot = if prefix[3] == b'0' { 10 } else { 11 };
    let used = prefix.len() + end + terminator;
    Some(Decoded::Event(
        InputEvent::TerminalColour {
            slot,
            colour: colour.to_string(),
        },
        used,
    ))
}

fn decode_plain(b: &[u8]) -> Decoded {
    let first = b[0];
    let key = match first {
        b'\r' | b'\n' => Key::plain(KeyCode::Enter),
        b'\t' => Key::plain(KeyCode::Tab),
        0x7f | 0x08 => Key::plain(KeyCode::Backspace),
        0 => Key::ctrl(' '),
        0x1b => Key::plain(KeyCode::Escape),
        1..=0x1a => Key::ctrl((b'a' + first - 1) as char),
        0x1c..=0x1f => Key::ctrl((b'\\' + first - 0x1c) as char),
        _ => {
            let len = utf8_len(first);
            if b.len() < len {
                return Decoded::Incomplete;
            }
            return match std::str::from_utf8(&b[..len])
                .ok()
                .and_then(|s| s.chars().next())
            {
                Some(c) => Decoded::Event(key_event(Key::plain(KeyCode::Char(c)), &b[..len]), len),
                None => Decoded::Event(InputEvent::Raw(b[..1].to_vec()), 1),
            };
        }
    };
    Decoded::Event(key_event(key, &b[..1]), 1)
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => 1,
    }
}

fn decode_csi(b: &[u8]) -> Decoded {
    // Find the final byte (0x40..=0x7e) after parameters and intermediates.
    let Some(end) = b[2..]
        .iter()
        .position(|&c| (0x40..=0x7e).contains(&c))
        .map(|p| p + 2)
    else {
        return Decoded::Incomplete;
    };
    let seq = &b[..=end];
    let used = end + 1;
    let final_byte = b[end];
    let params = &b[2..end];
    if seq == PASTE_START {
        return Decoded::PasteStart(used);
    }
    if params.first() == Some(&b'<') && (final_byte == b'M' || final_byte == b'm') {
        return match parse_sgr_mouse(&params[1..], final_byte == b'M') {
            Some(ev) => Decoded::Event(InputEvent::Mouse(ev), used),
            None => Decoded::Event(InputEvent::Raw(seq.to_vec()), used),
        };
    }
    if params.is_empty() && final_byte == b'I' {
        return Decoded::Event(InputEvent::Focus(true), used);
    }
    if params.is_empty() && final_byte == b'O' {
        return Decoded::Event(InputEvent::Focus(false), used);
    }
    let text = std::str::from_utf8(params).unwrap_or("");
    let mut nums = text.split(';').map(|p| p.parse::<u16>().unwrap_or(0));
    let n1 = nums.next().unwrap_or(0);
    let modifier = nums.next().unwrap_or(1).max(1) - 1;
    let code = match final_byte {
        b'A' => KeyCode::Up,
        b'B' => KeyCode::Down,
        b'C' => KeyCode::Right,
        b'D' => KeyCode::Left,
        b'H' => KeyCode::Home,
        b'F' => KeyCode::End,
        b'Z' => KeyCode::BackTab,
        b'P' => KeyCode::F(1),
        b'Q' => KeyCode::F(2),
        b'R' => KeyCode::F(3),
        b'S' => KeyCode::F(4),
        b'~' => match n1 {
            1 | 7 => KeyCode::Home,
            2 => KeyCode::Insert,
            3 => KeyCode::Delete,
            4 | 8 => KeyCode::End,
            5 => KeyCode::PageUp,
            6 => KeyCode::PageDown,
            11..=15 => KeyCode::F((n1 - 10) as u8),
            17..=21 => KeyCode::F((n1 - 11) as u8),
            23 | 24 => KeyCode::F((n1 - 12) as u8),
            _ => return Decoded::Event(InputEvent::Raw(seq.to_vec()), used),
        },
        _ => return Decoded::Event(InputEvent::Raw(seq.to_vec()), used),
    };
    let key = Key {
        code,
        shift: modifier & 1 != 0,
        alt: modifier & 2 != 0,
        ctrl: modifier & 4 != 0,
    };
    Decoded::Event(key_event(key, seq), used)
}

fn parse_sgr_mouse(params: &[u8], press: bool) -> Option<MouseEvent> {
    let text = std::str::from_utf8(params).ok()?;
    let mut it = text.split(';');
    let code: u16 = it.next()?.parse().ok()?;
    let x: u16 = it.next()?.parse().ok()?;
    let y: u16 = it.next()?.parse().ok()?;
    let button = (code & 0b11) as u8;
    let modifiers = (code & 0b11100) as u8;
    let kind = if code & 64 != 0 {
        if button == 0 {
            MouseKind::WheelUp
        } else {
            MouseKind::WheelDown
        }
    } else if code & 32 != 0 {
        if button == 3 {
            MouseKind::Move
        } else {
            MouseKind::Drag(button)
        }
    } else if press {
        MouseKind::Press(button)
    } else {
        MouseKind::Release(button)
    };
    Some(MouseEvent {
        kind,
        x: x.saturating_sub(1),
        y: y.saturating_sub(1),
        modifiers,
    })
}

/// Encodes a mouse event for a program in a pane at pane-relative 0-based (x, y), in the
/// encoding the program asked for.
pub fn encode_mouse(ev: &MouseEvent, x: u16, y: u16, sgr: bool) -> Vec<u8> {
    let (mut code, release) = match ev.kind {
        MouseKind::Press(b) => (u16::from(b), false),
        MouseKind::Release(b) => (u16::from(b), true),
        MouseKind::Drag(b) => (u16::from(b) + 32, false),
        MouseKind::Move => (35, false),
        MouseKind::WheelUp => (64, false),
        MouseKind::WheelDown => (65, false),
    };
    code += u16::from(ev.modifiers);
    if sgr {
        format!(
            "\x1b[<{};{};{}{}",
            code,
            x + 1,
            y + 1,
            if release { 'm' } else { 'M' }
        )
        .into_bytes()
    } else {
        let code = if release {
            3 + u16::from(ev.modifiers)
        } else {
            code
        };
        let clamp = |v: u16| (v + 33).min(255) as u8;
        vec![
            0x1b,
            b'[',
            b'M',
            (code + 32).min(255) as u8,
            clamp(x),
            clamp(y),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_terminals_colour_answers_are_events_in_any_chunking() {
        let answers = b"\x1b]11;rgb:1e1e/1e1e/1e1e\x1b\\\x1b]10;rgb:ffff/ffff/ffff\x07x";
        // A read ending right after a reply's `ESC` or `ESC ]` is the Escape key or Alt + `]`
        // (terminals write a reply in one piece); every other split point is fine.
        let second = find(answers, b"\x1b]10").expect("second reply");
        let splits = (3..answers.len()).filter(|&at| at != second + 1 && at != second + 2);
        for split in splits {
            let mut parser = InputParser::default();
            let mut events = parser.feed(&answers[..split]);
            events.extend(parser.feed(&answers[split..]));
            assert_eq!(
                events[..2],
                [
                    InputEvent::TerminalColour {
                        slot: 11,
                        colour: "rgb:1e1e/1e1e/1e1e".into()
                    },
                    InputEvent::TerminalColour {
                        slot: 10,
                        colour: "rgb:ffff/ffff/ffff".into()
                    },
                ],
                "split at {split}"
            );
            assert!(
                matches!(&events[2], InputEvent::Key { key, .. } if key.code == KeyCode::Char('x')),
                "{events:?}"
            );
        }
    }

    #[test]
    fn alt_bracket_is_still_a_key() {
        let mut parser = InputParser::default();
        let events = parser.feed(b"\x1b]");
        assert!(
            matches!(&events[..], [InputEvent::Key { key, .. }] if key.alt && key.code == KeyCode::Char(']')),
            "{events:?}"
        );
        let events = parser.feed(b"\x1b]a");
        assert!(
            matches!(&events[..], [InputEvent::Key { key, .. }, ..] if key.alt && key.code == KeyCode::Char(']')),
            "{events:?}"
        );
    }

    fn keys(events: &[InputEvent]) -> Vec<String> {
        events
            .iter()
            .map(|e| match e {
                InputEvent::Key { key, .. } => key.name(),
                other => format!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn decodes_keys_with_their_raw_bytes() {
        let mut p = InputParser::default();
        let ev = p.feed(b"a\x02\x1b[A\x1bOB\x1b[1;5C\x1bx\x1b[15~\r\x7f");
        assert_eq!(
            keys(&ev),
            ["a", "C-b", "Up", "Down", "C-Right", "M-x", "F5", "Enter", "BSpace"]
        );
        assert_eq!(
            ev[2],
            InputEvent::Key {
                key: Key::plain(KeyCode::Up),
                raw: b"\x1b[A".to_vec()
            }
        );
    }

    #[test]
    fn escape_prefixed_cursor_and_function_keys_are_alt_keys() {
        let mut p = InputParser::default();
        let ev = p.feed(b"\x1b\x1b[A\x1b\x1bOP\x1b\x1b[15~\x1b\x1bx");
        assert_eq!(keys(&ev), ["M-Up", "M-F1", "M-F5", "Escape", "M-x"]);
        assert_eq!(
            ev[0],
            InputEvent::Key {
                key: Key {
                    alt: true,
                    ..Key::plain(KeyCode::Up)
                },
                raw: b"\x1b\x1b[A".to_vec()
            }
        );
        // Escape before a mouse report is the Escape key, then the report.
        let ev = p.feed(b"\x1b\x1b[<0;1;1M");
        assert_eq!(keys(&ev[..1]), ["Escape"]);
        assert!(matches!(ev[1], InputEvent::Mouse(_)));
    }

    #[test]
    fn lone_escape_and_split_sequences() {
        let mut p = InputParser::default();
        assert_eq!(keys(&p.feed(b"\x1b")), ["Escape"]);
        assert!(p.feed(b"\x1b[1;").is_empty());
        assert_eq!(keys(&p.feed(b"2A")), ["S-Up"]);
        assert_eq!(keys(&p.feed("é中".as_bytes())), ["é", "中"]);
    }

    #[test]
    fn pastes_are_one_event_even_across_reads() {
        let mut p = InputParser::default();
        assert!(p.feed(b"\x1b[200~hello\x02 wor").is_empty());
        let ev = p.feed(b"ld\x1b[201");
        assert!(ev.is_empty());
        let ev = p.feed(b"~x");
        assert_eq!(ev[0], InputEvent::Paste(b"hello\x02 world".to_vec()));
        assert_eq!(keys(&ev[1..]), ["x"]);
    }

    #[test]
    fn sgr_mouse_and_focus() {
        let mut p = InputParser::default();
        let ev = p.feed(b"\x1b[<0;10;5M\x1b[<64;1;1M\x1b[<32;11;5M\x1b[<0;11;5m\x1b[I\x1b[O");
        assert_eq!(
            ev[0],
            InputEvent::Mouse(MouseEvent {
                kind: MouseKind::Press(0),
                x: 9,
                y: 4,
                modifiers: 0
            })
        );
        assert!(matches!(
            ev[1],
            InputEvent::Mouse(MouseEvent {
                kind: MouseKind::WheelUp,
                ..
            })
        ));
        assert!(matches!(
            ev[2],
            InputEvent::Mouse(MouseEvent {
                kind: MouseKind::Drag(0),
                ..
            })
        ));
        assert!(matches!(
            ev[3],
            InputEvent::Mouse(MouseEvent {
                kind: MouseKind::Release(0),
                ..
            })
        ));
        assert_eq!(ev[4], InputEvent::Focus(true));
        assert_eq!(ev[5], InputEvent::Focus(false));
    }

    #[test]
    fn mouse_encodes_for_panes() {
        let ev = MouseEvent {
            kind: MouseKind::Press(0),
            x: 50,
            y: 20,
            modifiers: 0,
        };
        assert_eq!(encode_mouse(&ev, 3, 4, true), b"\x1b[<0;4;5M".to_vec());
        assert_eq!(
            encode_mouse(&ev, 3, 4, false),
            vec![0x1b, b'[', b'M', 32, 36, 37]
        );
    }

    #[test]
    fn garbage_never_panics_or_hangs() {
        let mut p = InputParser::default();
        let mut seed = 7u32;
        for _ in 0..10_000 {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let bytes = seed.to_le_bytes();
            let _ = p.feed(&bytes[..(seed % 4) as usize]);
        }
        let _ = p.feed(b"\x1b[");
        let ev = p.feed(&[b'1'; 100]);
        assert!(
            !ev.is_empty(),
            "an endless sequence is flushed as raw input"
        );
    }
}
