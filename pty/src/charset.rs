//! DEC Special Graphics (`ESC ( 0`): the line-drawing character set that ncurses programs use
//! for boxes under TERM=xterm-256color. vt100 does not translate it, so calyx does before
//! parsing: while G0 is the graphics set, printable bytes outside escape sequences become the
//! Unicode box-drawing characters they stand for. Streams that never select the set take a
//! fast path that only searches for the designation.

/// Where the scanner is in the byte stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Scan {
    #[default]
    Ground,
    Escape,
    /// After `ESC (`: the next byte names the G0 set.
    Designate,
    Csi,
    /// An OSC/DCS/APC/PM string, up to BEL or ST.
    Text,
    TextEscape,
}

/// Translates DEC line drawing for one pane's stream.
#[derive(Debug, Default)]
pub struct Charset {
    graphics: bool,
    scan: Scan,
}

const SELECT_GRAPHICS: &[u8] = b"\x1b(0";

fn graphic(b: u8) -> Option<char> {
    Some(match b {
        b'`' => '◆',
        b'a' => '▒',
        b'f' => '°',
        b'g' => '±',
        b'j' => '┘',
        b'k' => '┐',
        b'l' => '┌',
        b'm' => '└',
        b'n' => '┼',
        b'o' => '⎺',
        b'p' => '⎻',
        b'q' => '─',
        b'r' => '⎼',
        b's' => '⎽',
        b't' => '├',
        b'u' => '┤',
        b'v' => '┴',
        b'w' => '┬',
        b'x' => '│',
        b'y' => '≤',
        b'z' => '≥',
        b'{' => 'π',
        b'|' => '≠',
        b'}' => '£',
        b'~' => '·',
        _ => return None,
    })
}

impl Charset {
    /// Returns the bytes to parse: `input` itself when no translation is needed.
    pub fn translate<'a>(&mut self, input: &'a [u8]) -> std::borrow::Cow<'a, [u8]> {
        if !self.graphics && self.scan == Scan::Ground && !contains(input, SELECT_GRAPHICS) {
            return std::borrow::Cow::Borrowed(input);
        }
        let mut out = Vec::with_capacity(input.len() + input.len() / 2);
        for &b in input {
            match self.scan {
                Scan::Ground => {
                    if b == 0x1b {
                        self.scan = Scan::Escape;
                    } else if self.graphics {
                        if let Some(c) = graphic(b) {
                            let mut utf8 = [0u8; 4];
                            out.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
                            continue;
                        }
                    }
                }
                Scan::Escape => {
                    self.scan = match b {
                        b'[' => Scan::Csi,
                        b']' | b'P' | b'_' | b'^' => Scan::Text,
                        b'(' => Scan::Designate,
                        0x1b => Scan::Escape,
                        _ => Scan::Ground,
                    }
                }
                Scan::Designate => {
                    self.graphics = b == b'0';
                    self.scan = Scan::Ground;
                }
                Scan::Csi => {
                    if (0x40..=0x7e).contains(&b) {
                        self.scan = Scan::Ground;
                    }
                }
                Scan::Text => match b {
                    0x07 => self.scan = Scan::Ground,
                    0x1b => self.scan = Scan::TextEscape,
                    _ => {}
                },
                Scan::TextEscape => {
                    self.scan = if b == b'\\' { Scan::Ground } else { Scan::Text };
                }
            }
            out.push(b);
        }
        std::borrow::Cow::Owned(out)
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    let Some((&first, rest)) = needle.split_first() else {
        return true;
    };
    let mut from = 0;
    while let Some(at) = hay[from..].iter().position(|&b| b == first) {
        let start = from + at;
        if hay[start + 1..].starts_with(rest) {
            return true;
        }
        from = start + 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_drawing_becomes_box_characters() {
        let mut c = Charset::default();
        let out = c.translate(b"\x1b(0lqk\x1b(B lqk \x1b(0x\x1b[1mx");
        assert_eq!(
            String::from_utf8_lossy(&out),
            "\x1b(0┌─┐\x1b(B lqk \x1b(0│\x1b[1m│"
        );
    }

    #[test]
    fn plain_streams_pass_through_untouched_and_state_spans_reads() {
        let mut c = Charset::default();
        assert!(matches!(
            c.translate(b"hello \x1b[31mred"),
            std::borrow::Cow::Borrowed(_)
        ));
        let _ = c.translate(b"\x1b(0q");
        let out = c.translate(b"qq\x1b]2;title q\x07q");
        assert_eq!(String::from_utf8_lossy(&out), "──\x1b]2;title q\x07─");
    }
}
