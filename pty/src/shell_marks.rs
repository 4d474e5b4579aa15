//! Finds the shell integration marks in a pane's output: OSC 133 (prompt, command start, output
//! start with the command line, command end with the exit code) and OSC 7 (the working
//! directory), with their exact byte positions, across chunk boundaries.
//!
//! This runs on every chunk a pane prints, so it is built to cost almost nothing: outside a
//! sequence it only jumps from ESC to ESC with `memchr`, and it gives up on any OSC that is not
//! one of ours after two or four bytes. vt100 ignores these OSCs, so the screen is unaffected.

use memchr::{memchr, memchr2};

/// Longest mark payload kept; longer ones (a huge command line) are cut, not buffered.
const MAX_PAYLOAD: usize = 64 * 1024;

/// The OSCs we keep (payload prefixes after `ESC ]`).
const PREFIXES: [&[u8]; 2] = [b"133;", b"7;"];

/// One shell integration mark.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mark {
    /// `133;A`: a prompt is about to be drawn.
    PromptStart,
    /// `133;B`: the prompt ended; the user types the command.
    InputStart,
    /// `133;C`: the command runs; its output follows. Carries the command line when the
    /// integration sent one (`cmdline=` raw to the end, or `cmdline_url=` percent-encoded).
    OutputStart { cmdline: Option<String> },
    /// `133;D;N`: the command finished with exit code N (absent when the shell did not say).
    Finished { exit_code: Option<i32> },
    /// `7;file://host/path`: the shell's working directory.
    Cwd(String),
}

/// A mark found in a chunk, with where its bytes are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    pub mark: Mark,
    /// Where the sequence starts in this chunk (0 when it started in an earlier chunk).
    pub start: usize,
    /// How many of its bytes came in earlier chunks.
    pub carried: usize,
    /// Just past its terminator in this chunk.
    pub end: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Ground,
    /// Saw ESC.
    Esc,
    /// Inside `ESC ]`, matching the payload against [`PREFIXES`].
    Prefix,
    /// Inside one of our OSCs, collecting the payload until BEL or `ESC \`.
    Body,
    /// Saw ESC inside our OSC.
    BodyEsc,
}

/// The scanner's state between chunks.
#[derive(Debug)]
pub struct Scanner {
    state: State,
    payload: Vec<u8>,
    /// Bytes of the current sequence so far (ESC included).
    len: usize,
}

impl Default for Scanner {
    fn default() -> Self {
        Self {
            state: State::Ground,
            payload: Vec::new(),
            len: 0,
        }
    }
}

impl Scanner {
    /// Scans one chunk, appending the marks it completes to `hits`.
    pub fn scan(&mut self, chunk: &[u8], hits: &mut Vec<Hit>) {
        let mut start: Option<usize> = None;
        let mut i = 0;
        while i < chunk.len() {
            match self.state {
                State::Ground => match memchr(0x1b, &chunk[i..]) {
                    None => return,
                    Some(k) => {
                        start = Some(i + k);
                        i += k + 1;
                        self.len = 1;
                        self.state = State::Esc;
                    }
                },
                State::Esc => {
                    if chunk[i] == b']' {
                        i += 1;
                        self.len += 1;
                        self.payload.clear();
                        self.state = State::Prefix;
                    } else {
                        // Not an OSC; this byte may itself be an ESC, so look at it again.
                        self.state = State::Ground;
                    }
                }
                State::Prefix => {
                    let b = chunk[i];
                    if b == 0x1b {
                        self.state = State::Ground;
                        continue;
                    }
                    i += 1;
                    self.len += 1;
                    self.payload.push(b);
                    if PREFIXES.contains(&self.payload.as_slice()) {
                        self.state = State::Body;
                    } else if !PREFIXES.iter().any(|p| p.starts_with(&self.payload)) {
                        self.state = State::Ground;
                    }
                }
                State::Body => match memchr2(0x07, 0x1b, &chunk[i..]) {
                    None => {
                        self.keep(&chunk[i..]);
                        self.len += chunk.len() - i;
                        i = chunk.len();
                    }
                    Some(k) => {
                        self.keep(&chunk[i..i + k]);
                        self.len += k + 1;
                        i += k + 1;
                        if chunk[i - 1] == 0x07 {
                            self.finish(start, i, hits);
                        } else {
                            self.state = State::BodyEsc;
                        }
                    }
                },
                State::BodyEsc => {
                    if chunk[i] == b'\\' {
                        i += 1;
                        self.len += 1;
                        self.finish(start, i, hits);
                    } else {
                        // ESC without `\` ends the OSC (as in vt100) and starts a new sequence.
                        self.len = self.len.saturating_sub(1);
                        let esc = i.checked_sub(1);
                        self.finish(start, i.saturating_sub(1), hits);
                        start = esc;
                        self.len = 1;
                        self.state = State::Esc;
                    }
                }
            }
        }
    }

    /// Whether a sequence is open at the end of the last chunk.
    pub fn in_sequence(&self) -> bool {
        self.state != State::Ground
    }

    fn keep(&mut self, bytes: &[u8]) {
        let room = MAX_PAYLOAD.saturating_sub(self.payload.len());
        self.payload
            .extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    fn finish(&mut self, start: Option<usize>, end: usize, hits: &mut Vec<Hit>) {
        self.state = State::Ground;
        let (start, carried) = match start {
            Some(s) => (s, 0),
            None => (0, self.len.saturating_sub(end)),
        };
        if let Some(mark) = parse(&self.payload) {
            hits.push(Hit {
                mark,
                start,
                carried,
                end,
            });
        }
        self.payload.clear();
    }
}

/// The mark a payload (`133;...` or `7;...`) stands for.
fn parse(payload: &[u8]) -> Option<Mark> {
    if let Some(url) = payload.strip_prefix(b"7;") {
        return cwd_from_url(&String::from_utf8_lossy(url)).map(Mark::Cwd);
    }
    let rest = payload.strip_prefix(b"133;")?;
    let (kind, options) = match rest.iter().position(|&b| b == b';') {
        Some(k) => (&rest[..k], &rest[k + 1..]),
        None => (rest, &b""[..]),
    };
    match kind {
        b"A" => Some(Mark::PromptStart),
        b"B" => Some(Mark::InputStart),
        b"C" => Some(Mark::OutputStart {
            cmdline: cmdline(options),
        }),
        b"D" => {
            let code = options.split(|&b| b == b';').next().unwrap_or_default();
            let exit_code = std::str::from_utf8(code)
                .ok()
                .and_then(|c| c.trim().parse().ok());
            Some(Mark::Finished { exit_code })
        }
        _ => None,
    }
}

/// The command line in `133;C` options: `cmdline=` takes the rest raw (it may contain `;`),
/// `cmdline_url=` is percent-encoded up to the next `;`.
fn cmdline(options: &[u8]) -> Option<String> {
    let mut rest = options;
    while !rest.is_empty() {
        if let Some(raw) = rest.strip_prefix(b"cmdline=") {
            let text = String::from_utf8_lossy(raw).replace("\r\n", "\n");
            return Some(text);
        }
        let end = rest.iter().position(|&b| b == b';').unwrap_or(rest.len());
        if let Some(url) = rest[..end].strip_prefix(b"cmdline_url=") {
            return Some(percent_decode(url));
        }
        rest = rest.get(end + 1..).unwrap_or_default();
    }
    None
}

/// The path of a `file://host/path` URL, percent-decoded.
fn cwd_from_url(url: &str) -> Option<String> {
    let rest = url.strip_prefix("file://")?;
    let path = &rest[rest.find('/')?..];
    Some(percent_decode(path.as_bytes()))
}

/// Decodes `%XX` escapes; anything malformed is kept as it is.
pub fn percent_decode(bytes: &[u8]) -> String {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan_all(chunks: &[&[u8]]) -> Vec<(Mark, usize, usize, usize)> {
        let mut s = Scanner::default();
        let mut out = Vec::new();
        for c in chunks {
            let mut hits = Vec::new();
            s.scan(c, &mut hits);
            out.extend(
                hits.into_iter()
                    .map(|h| (h.mark, h.start, h.carried, h.end)),
            );
        }
        out
    }

    #[test]
    fn finds_marks_with_positions() {
        let text =
            b"x\x1b]133;C;cmdline=echo a;b\x07out\x1b]133;D;2\x1b\\\x1b]7;file://h/tmp/a%20b\x07";
        let hits = scan_all(&[text]);
        assert_eq!(
            hits[0].0,
            Mark::OutputStart {
                cmdline: Some("echo a;b".into())
            }
        );
        assert_eq!((hits[0].1, hits[0].3), (1, 26));
        assert_eq!(&text[hits[0].3..hits[1].1], b"out");
        assert_eq!(hits[1].0, Mark::Finished { exit_code: Some(2) });
        assert_eq!(hits[2].0, Mark::Cwd("/tmp/a b".into()));
        assert_eq!(hits[2].3, text.len());
    }

    #[test]
    fn marks_split_anywhere_are_found_once_with_carried_bytes() {
        let text: &[u8] = b"ab\x1b]133;D;127\x07cd";
        for cut in 0..=text.len() {
            let hits = scan_all(&[&text[..cut], &text[cut..]]);
            assert_eq!(hits.len(), 1, "cut at {cut}");
            let (mark, start, carried, end) = hits[0].clone();
            assert_eq!(
                mark,
                Mark::Finished {
                    exit_code: Some(127)
                }
            );
            if cut >= 14 {
                assert_eq!((start, carried, end), (2, 0, 14));
            } else if cut <= 2 {
                assert_eq!((start, carried, end), (2 - cut, 0, 14 - cut));
            } else {
                assert_eq!((start, carried), (0, cut - 2), "cut at {cut}");
                assert_eq!(end, 14 - cut);
            }
        }
    }

    #[test]
    fn other_sequences_and_plain_text_yield_nothing() {
        let hits = scan_all(&[b"\x1b[31mred\x1b]0;title\x07\x1b]1337;x\x07\x1b]13\x1b]133;A\x07"]);
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].0, Mark::PromptStart);
    }

    #[test]
    fn url_encoded_command_lines_and_missing_exit_codes() {
        let hits = scan_all(&[b"\x1b]133;C;cmdline_url=ls%20-l%0Apwd;x=1\x07\x1b]133;D\x07"]);
        assert_eq!(
            hits[0].0,
            Mark::OutputStart {
                cmdline: Some("ls -l\npwd".into())
            }
        );
        assert_eq!(hits[1].0, Mark::Finished { exit_code: None });
        assert_eq!(percent_decode(b"100%"), "100%");
        assert_eq!(percent_decode(b"%4"), "%4");
    }
}
