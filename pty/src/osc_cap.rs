//! A cap on how much of one OSC string reaches the parser.
//!
//! vte (built with `std`, as vt100 uses it) buffers an OSC string whole until its terminator, so
//! a program that prints `ESC ]` and then gigabytes without BEL or ST would grow the pane's
//! memory without bound. This filter passes every byte through unchanged except the bytes of an
//! OSC string beyond [`MAX_OSC_BYTES`], which it drops; the terminator still passes, so the
//! parser leaves the string as the program meant (with its content cut).
//!
//! Only OSC needs this: vte hands DCS bytes to the performer one at a time and drops SOS, PM and
//! APC strings without buffering them.

use std::borrow::Cow;

/// Longest OSC string kept: room for an OSC 52 copy of about 750 KB of text.
pub const MAX_OSC_BYTES: usize = 1 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum State {
    #[default]
    Ground,
    /// After ESC: `]` opens an OSC string.
    Escape,
    /// Inside an OSC string, with this many bytes of it seen so far.
    Osc(usize),
}

/// Tracks OSC strings across chunks and drops what exceeds the cap.
#[derive(Debug, Clone, Default)]
pub struct OscCap {
    state: State,
    limit: Option<usize>,
}

impl OscCap {
    /// A filter with a different cap (tests).
    #[cfg(test)]
    fn with_limit(limit: usize) -> Self {
        Self {
            state: State::Ground,
            limit: Some(limit),
        }
    }

    fn limit(&self) -> usize {
        self.limit.unwrap_or(MAX_OSC_BYTES)
    }

    /// The bytes to parse: `input` itself unless an OSC string in it ran over the cap.
    pub fn filter<'a>(&mut self, input: &'a [u8]) -> Cow<'a, [u8]> {
        let limit = self.limit();
        // Once something is dropped: the output so far, and how much of `input` it covers.
        let mut out: Option<(Vec<u8>, usize)> = None;
        let mut i = 0;
        while i < input.len() {
            match self.state {
                State::Ground => match memchr::memchr(0x1b, &input[i..]) {
                    Some(at) => {
                        i += at + 1;
                        self.state = State::Escape;
                    }
                    None => i = input.len(),
                },
                State::Escape => {
                    self.state = match input[i] {
                        b']' => State::Osc(0),
                        // A second ESC starts a new escape, as in the parser.
                        0x1b => State::Escape,
                        _ => State::Ground,
                    };
                    i += 1;
                }
                State::Osc(seen) => {
                    let rest = &input[i..];
                    let body = rest
                        .iter()
                        .position(|&b| matches!(b, 0x07 | 0x18 | 0x1a | 0x1b))
                        .unwrap_or(rest.len());
                    let keep = body.min(limit.saturating_sub(seen));
                    if keep < body {
                        let (buf, copied) = out.get_or_insert_with(|| (Vec::new(), 0));
                        buf.extend_from_slice(&input[*copied..i + keep]);
                        *copied = i + body;
                    }
                    i += body;
                    // The terminator (if this chunk has it) is handled as in the parser: ESC
                    // may be the start of ST or of a new sequence.
                    self.state = match input.get(i) {
                        Some(0x1b) => State::Escape,
                        Some(_) => State::Ground,
                        None => State::Osc(seen.saturating_add(body)),
                    };
                    if i < input.len() {
                        i += 1;
                    }
                }
            }
        }
        match out {
            Some((mut buf, copied)) => {
                buf.extend_from_slice(&input[copied..]);
                Cow::Owned(buf)
            }
            None => Cow::Borrowed(input),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(cap: &mut OscCap, chunks: &[&[u8]]) -> Vec<u8> {
        chunks
            .iter()
            .flat_map(|c| cap.filter(c).into_owned())
            .collect()
    }

    #[test]
    fn ordinary_output_and_short_oscs_pass_unchanged_without_copying() {
        let mut cap = OscCap::with_limit(16);
        let text = b"plain \x1b[1mbold\x1b[0m \x1b]0;title\x07 \x1b]8;;http://x\x1b\\link";
        assert!(matches!(cap.filter(text), Cow::Borrowed(_)));
    }

    #[test]
    fn an_unterminated_osc_keeps_only_the_cap_and_the_text_after_it_survives() {
        let mut cap = OscCap::with_limit(8);
        let mut big = b"a\x1b]0;".to_vec();
        big.extend(std::iter::repeat_n(b'x', 100));
        let out = run(&mut cap, &[&big, &[b'y'; 50], b"\x07after"]);
        assert_eq!(out, b"a\x1b]0;xxxxxx\x07after");
    }

    #[test]
    fn the_cap_counts_across_chunks_and_resets_after_the_terminator() {
        let mut cap = OscCap::with_limit(4);
        let out = run(
            &mut cap,
            &[b"\x1b]", b"12", b"345", b"\x1b\\", b"\x1b]ab\x07"],
        );
        assert_eq!(out, b"\x1b]1234\x1b\\\x1b]ab\x07".to_vec());
    }

    #[test]
    fn memory_stays_bounded_for_a_gigabyte_style_flood() {
        let mut cap = OscCap::default();
        let chunk = vec![b'z'; 64 * 1024];
        let mut passed = cap.filter(b"\x1b]52;c;").len();
        for _ in 0..64 {
            passed += cap.filter(&chunk).len();
        }
        assert!(passed <= MAX_OSC_BYTES + 8, "{passed}");
    }
}
