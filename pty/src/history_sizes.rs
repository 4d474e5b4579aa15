//! Where a pane's retained output was resized, so that a replay of the history (capture,
//! copy mode) goes through the same sizes as the live screen did.
//!
//! Why: a shell redraws its prompt on SIGWINCH for the size it is told (bash moves up over
//! the rows its prompt took at the old width, erasing each). Replayed at one size only, those
//! moves land on other rows: at the full width they erased the lines printed above the prompt,
//! and `capture --scrollback` and copy mode lost them (issue 15, item 2). Replayed through the
//! recorded sizes, the output meets the screen it was written for.

use std::collections::VecDeque;

/// At most this many resizes are kept (the newest): a replay rewraps its whole scrollback at
/// each, and a drag of a window edge makes dozens. Output before the oldest kept one replays at
/// the size in effect at the start of the history.
const KEPT: usize = 32;

/// A terminal size: rows, columns.
pub type Size = (u16, u16);

/// The size a history starts at (None: never recorded), and its bytes cut at each resize, each
/// piece with the size to resize to before it (None: no change).
pub type SizedPieces<'a> = (Option<Size>, Vec<(&'a [u8], Option<Size>)>);

/// The resizes within the retained bytes, by position in the stream of output.
#[derive(Debug, Default)]
pub struct Sizes {
    /// Stream position of the first retained byte.
    start: u64,
    /// Stream position after the last byte pushed.
    end: u64,
    /// The size at `start` (None: never recorded).
    start_size: Option<(u16, u16)>,
    /// (position, rows, cols): from `position` on, the output was printed at that size.
    at: VecDeque<(u64, u16, u16)>,
}

impl Sizes {
    /// `len` bytes were pushed.
    pub fn pushed(&mut self, len: usize) {
        self.end += len as u64;
    }

    /// The terminal became `rows` x `cols` here.
    pub fn resized(&mut self, rows: u16, cols: u16) {
        match self.at.back_mut() {
            // Nothing printed since the last resize: it is replaced.
            Some(last) if last.0 == self.end => *last = (self.end, rows, cols),
            _ => self.at.push_back((self.end, rows, cols)),
        }
        while self.at.len() > KEPT {
            self.at.pop_front();
        }
        self.settle();
    }

    /// `len` bytes were dropped from the front of the history.
    pub fn dropped(&mut self, len: usize) {
        self.start = (self.start + len as u64).min(self.end);
        self.settle();
    }

    /// Resizes at or before the first retained byte set the size the history starts at.
    fn settle(&mut self) {
        while let Some(&(at, rows, cols)) = self.at.front() {
            if at > self.start {
                break;
            }
            self.start_size = Some((rows, cols));
            self.at.pop_front();
        }
    }

    /// The size the history starts at, and `chunks` (the retained bytes, oldest first) cut at
    /// each resize: each piece with the size to resize to before it (None: no change).
    pub fn split<'a>(&self, chunks: impl Iterator<Item = &'a [u8]>) -> SizedPieces<'a> {
        let mut pieces = Vec::new();
        let mut pos = self.start;
        let mut next = self.at.iter().peekable();
        for chunk in chunks {
            let mut rest = chunk;
            while !rest.is_empty() {
                let mut size = None;
                while let Some(&&(at, rows, cols)) = next.peek() {
                    if at > pos {
                        break;
                    }
                    size = Some((rows, cols));
                    next.next();
                }
                // Up to the next resize (at least one byte: it lies past `pos`).
                let until = next.peek().map_or(rest.len(), |&&(at, ..)| {
                    usize::try_from(at - pos)
                        .unwrap_or(usize::MAX)
                        .min(rest.len())
                });
                let (piece, tail) = rest.split_at(until);
                pieces.push((piece, size));
                pos += until as u64;
                rest = tail;
            }
        }
        // Resizes after the last byte: the replay ends at the size asked for anyway.
        (self.start_size, pieces)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_is_cut_where_it_was_resized() {
        let mut s = Sizes::default();
        s.resized(24, 80);
        s.pushed(5);
        s.resized(5, 10);
        s.resized(6, 12); // nothing printed between: replaces the one before
        s.pushed(3);
        s.resized(24, 80);
        s.pushed(2);
        let (start, pieces) = s.split([&b"hello"[..], &b"abcde"[..]].into_iter());
        assert_eq!(start, Some((24, 80)));
        assert_eq!(
            pieces,
            vec![
                (&b"hello"[..], None),
                (&b"abc"[..], Some((6, 12))),
                (&b"de"[..], Some((24, 80))),
            ]
        );
    }

    #[test]
    fn dropping_the_front_moves_the_start_size() {
        let mut s = Sizes::default();
        s.resized(24, 80);
        s.pushed(5);
        s.resized(5, 10);
        s.pushed(5);
        s.dropped(7);
        let (start, pieces) = s.split([&b"xyz"[..]].into_iter());
        assert_eq!(start, Some((5, 10)));
        assert_eq!(pieces, vec![(&b"xyz"[..], None)]);
    }
}
