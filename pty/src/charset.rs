//! DEC Special Graphics (`ESC ( 0`): the line-drawing character set that ncurses programs use
//! for boxes under TERM=xterm-256color. vt100 does not translate it, so calyx does before
//! parsing: while G0 is the graphics set, printable bytes outside escape sequences become the
//! Unicode box-drawing characters they stand for. Streams that never select the set take a
//! fast path that follows their sequences from ESC to ESC (memchr) without copying.

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
        let from = if self.graphics {
            0
        } else {
            match self.skim(input) {
                // The graphics set was not selected: nothing to translate.
                None => return std::borrow::Cow::Borrowed(input),
                Some(at) => at,
            }
        };
        let mut out = Vec::with_capacity(input.len() + input.len() / 2);
        out.extend_from_slice(&input[..from]);
        for &b in &input[from..] {
            if self.graphics && self.scan == Scan::Ground && b != 0x1b {
                if let Some(c) = graphic(b) {
                    let mut utf8 = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
                    continue;
                }
            }
            self.step(b);
            out.push(b);
        }
        std::borrow::Cow::Owned(out)
    }

    /// Follows the stream's sequences while the graphics set is not selected, jumping from ESC
    /// to ESC (and through strings to BEL or ESC) with memchr: where the set gets selected (just
    /// past the designation), if it does. The state stays exact across reads, so a designation
    /// cut between two reads still counts, and `ESC ( 0` inside a string does not.
    fn skim(&mut self, input: &[u8]) -> Option<usize> {
        let mut i = 0;
        while i < input.len() {
            match self.scan {
                Scan::Ground => {
                    i += memchr::memchr(0x1b, &input[i..])? + 1;
                    self.scan = Scan::Escape;
                }
                Scan::Text => {
                    let at = i + memchr::memchr2(0x07, 0x1b, &input[i..])?;
                    self.step(input[at]);
                    i = at + 1;
                }
                // A CSI's parameters cannot select the set: straight to its final byte (the
                // one `step` ends it on), not through `step` a byte at a time (a colour such
                // as `ESC [ 38;5;208 m` is ten of them).
                Scan::Csi => {
                    let at = i + input[i..].iter().position(|b| (0x40..=0x7e).contains(b))?;
                    self.scan = Scan::Ground;
                    i = at + 1;
                }
                _ => {
                    self.step(input[i]);
                    i += 1;
                    if self.graphics {
                        return Some(i);
                    }
                }
            }
        }
        None
    }

    /// The scanner's state after byte `b` (line drawing itself is the caller's).
    fn step(&mut self, b: u8) {
        self.scan = match self.scan {
            Scan::Ground if b == 0x1b => Scan::Escape,
            Scan::Ground => Scan::Ground,
            Scan::Escape => match b {
                b'[' => Scan::Csi,
                b']' | b'P' | b'_' | b'^' => Scan::Text,
                b'(' => Scan::Designate,
                0x1b => Scan::Escape,
                _ => Scan::Ground,
            },
            Scan::Designate => {
                self.graphics = b == b'0';
                Scan::Ground
            }
            Scan::Csi if (0x40..=0x7e).contains(&b) => Scan::Ground,
            Scan::Csi => Scan::Csi,
            Scan::Text => match b {
                0x07 => Scan::Ground,
                0x1b => Scan::TextEscape,
                _ => Scan::Text,
            },
            Scan::TextEscape if b == b'\\' => Scan::Ground,
            Scan::TextEscape => Scan::Text,
        };
    }
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
    fn a_designation_cut_between_reads_still_selects_line_drawing() {
        for cut in 1..3 {
            let mut c = Charset::default();
            let text = b"ab\x1b(0q";
            let split = text.len() - 1 - cut;
            let mut out = c.translate(&text[..split]).into_owned();
            out.extend_from_slice(&c.translate(&text[split..]));
            assert_eq!(String::from_utf8_lossy(&out), "ab\x1b(0─", "cut {cut}");
        }
    }

    #[test]
    fn a_csi_cut_between_reads_still_ends_on_its_final_byte() {
        // `0` and `(` inside the parameters select nothing; the set is selected only after
        // the CSI ends, however the reads cut it.
        let text = b"\x1b[0;40(m(q\x1b(0q";
        for cut in 0..text.len() {
            let mut c = Charset::default();
            let mut out = c.translate(&text[..cut]).into_owned();
            out.extend_from_slice(&c.translate(&text[cut..]));
            assert_eq!(
                String::from_utf8_lossy(&out),
                "\x1b[0;40(m(q\x1b(0─",
                "cut {cut}"
            );
        }
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
