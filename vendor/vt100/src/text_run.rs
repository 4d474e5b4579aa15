//! calyx: the fast text path. Most of what a program prints is runs of
//! printable ASCII (and other one-column characters) between control
//! characters and escape sequences. vte
//! hands them over a character at a time; instead of writing each one
//! through `WrappedScreen::text` (a width lookup, a wrap check, the wide
//! character clean-up and a cell write per character), `print` collects the
//! run here and it is written in bulk, a row segment at a time, before
//! anything else touches the screen: every other `Perform` method and the
//! end of `Parser::process` flush it first, so nothing can observe the
//! screen with a run pending. The reference path (`set_reference`) writes
//! every character through `text` as upstream did; tests compare the two.
//! Since calyx's vte hands whole runs over (`print_str`, patch 20),
//! printable ASCII is written from vte's buffer without the pending run;
//! `print` still collects what comes a character at a time.

use alloc::vec::Vec;
use unicode_width::UnicodeWidthChar as _;

/// Bytes collected before they are written anyway, so the buffer stays
/// small (a flood's 64 KiB chunk is mostly one long run).
const MAX_PENDING: usize = 4096;

/// Text printed but not yet written to the screen: printable ASCII, and
/// other characters one column wide (accented letters, symbols, box
/// drawing), as UTF-8.
#[derive(Debug, Default)]
pub struct PendingText {
    bytes: Vec<u8>,
    /// Whether `bytes` holds anything but ASCII (then it is written a
    /// character at a time, still a row segment at once).
    wider: bool,
    /// Whether every character takes the per-character path.
    reference: bool,
}

impl PendingText {
    pub fn set_reference(&mut self, reference: bool) {
        self.reference = reference;
    }

    /// Takes `c` into the run when it can be written in bulk (printable
    /// ASCII or another one-column character, fast path on); false when
    /// the caller must write it itself (after flushing the run).
    #[inline(always)]
    pub fn take(&mut self, c: char) -> bool {
        if (' '..='~').contains(&c) && !self.reference {
            // The range check makes `c` one byte.
            self.bytes.push(c as u8);
            return true;
        }
        self.take_other(c)
    }

    /// `take` for anything but printable ASCII: kept out of line, so the
    /// ASCII check stays small enough to inline into vte's loop.
    #[inline(never)]
    fn take_other(&mut self, c: char) -> bool {
        if self.reference {
            return false;
        }
        // One column, as `text` would find (its width lookup, once here);
        // not U+FFFD or C1, which `print` hands to `unhandled_char`. A
        // combining character (width 0) or a wide one is written by `text`
        // after the run, so it finds the run's last cell written.
        if c.is_ascii()
            || c == '\u{fffd}'
            || ('\u{80}'..'\u{a0}').contains(&c)
            || c.width() != Some(1)
        {
            return false;
        }
        let mut utf8 = [0u8; 4];
        self.bytes
            .extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
        self.wider = true;
        true
    }

    /// Whether the run is long enough to write now.
    #[inline]
    pub fn full(&self) -> bool {
        self.bytes.len() >= MAX_PENDING
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

/// How many bytes at the start of `bytes` are printable ASCII (` `..=`~`):
/// 16 at a time while a whole block is (a loop without early exit, which the
/// compiler turns into vector compares), then byte by byte.
#[inline]
fn printable_ascii_prefix(bytes: &[u8]) -> usize {
    const BLOCK: usize = 16;
    let mut i = 0;
    while let Some(block) = bytes.get(i..i + BLOCK) {
        let mut other = false;
        for &b in block {
            other |= !(b' '..=b'~').contains(&b);
        }
        if other {
            break;
        }
        i += BLOCK;
    }
    i + bytes[i..]
        .iter()
        .position(|b| !(b' '..=b'~').contains(b))
        .unwrap_or(bytes.len() - i)
}

impl<CB: crate::Callbacks> crate::screen::WrappedScreen<CB> {
    /// A run of text vte found between two control characters
    /// (`Perform::print_str`): its printable ASCII stretches are written
    /// straight from vte's buffer (no copy into the pending run, no call
    /// per character); anything else in it (DEL, other characters) goes
    /// through `print` as before. Written exactly as `print` would write
    /// each character, in the same order.
    #[inline]
    pub fn print_run(&mut self, text: &str) {
        if self.pending.reference {
            for c in text.chars() {
                vte::Perform::print(self, c);
            }
            return;
        }
        let mut rest = text;
        while !rest.is_empty() {
            let ascii = printable_ascii_prefix(rest.as_bytes());
            if ascii > 0 {
                let run = &rest.as_bytes()[..ascii];
                if self.pending.is_empty()
                    || self.pending.bytes.len() + ascii > MAX_PENDING
                {
                    // Nothing (or too much) waits: write it from here.
                    self.flush_text();
                    self.write_ascii(run);
                } else {
                    // One-column characters wait before it: it joins them,
                    // so the row segment is written at once.
                    self.pending.bytes.extend_from_slice(run);
                }
                // After an ASCII byte: a character boundary.
                rest = &rest[ascii..];
            }
            let mut chars = rest.chars();
            if let Some(c) = chars.next() {
                vte::Perform::print(self, c);
                rest = chars.as_str();
            }
        }
    }

    /// Writes the pending run to the screen (see the module doc).
    #[inline]
    pub fn flush_text(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let bytes = core::mem::take(&mut self.pending.bytes);
        if core::mem::take(&mut self.pending.wider) {
            // Only whole characters were pushed, so this is UTF-8.
            if let Ok(text) = core::str::from_utf8(&bytes) {
                self.write_narrow(text);
            }
        } else {
            self.write_ascii(&bytes);
        }
        // The buffer's allocation is reused by the next run.
        self.pending.bytes = bytes;
        self.pending.bytes.clear();
    }

    /// Writes printable ASCII as `text` would, a character at a time, but
    /// a row segment at once: only a character that has to wrap (the
    /// cursor waits past the last column) takes the per-character path.
    fn write_ascii(&mut self, mut rest: &[u8]) {
        while let Some((&first, after)) = rest.split_first() {
            let cols = self.screen.grid().size().cols();
            let pos = self.screen.grid().pos();
            if pos.col >= cols {
                self.text(char::from(first));
                rest = after;
                continue;
            }
            let room = usize::from(cols - pos.col);
            let (segment, tail) = rest.split_at(rest.len().min(room));
            self.screen.write_ascii_segment(segment);
            rest = tail;
        }
    }

    /// `write_ascii` for text of one-column characters that are not all
    /// ASCII: a row segment is as many characters as fit.
    fn write_narrow(&mut self, text: &str) {
        let mut chars = text.chars().peekable();
        while let Some(&first) = chars.peek() {
            let cols = self.screen.grid().size().cols();
            let pos = self.screen.grid().pos();
            if pos.col >= cols {
                self.text(first);
                chars.next();
                continue;
            }
            let room = usize::from(cols - pos.col);
            if self.screen.write_narrow_segment(chars.by_ref().take(room))
                == 0
            {
                // No cell to write in (never for a row as wide as the
                // screen): the per-character path decides.
                self.text(first);
                chars.next();
            }
        }
    }
}
