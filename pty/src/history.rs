//! A pane's history kept as the raw bytes it printed, capped by lines and by bytes.
//!
//! Keeping vt100's own scrollback costs 3x in parse speed and ~7x tmux's memory (see
//! docs/design.md). Instead the live screen is a parser with no scrollback, and the history is the
//! retained output, replayed into a parser with scrollback only when someone looks at it (copy
//! mode, `capture --scrollback`), through the sizes the pane had as it printed (see
//! [`crate::history_sizes`]) and then at the current size, so history reflows on resize.

use std::collections::VecDeque;

/// Retained output of one pane: the newest bytes, at most `max_lines` newlines and `max_bytes`.
#[derive(Debug)]
pub struct History {
    chunks: VecDeque<Vec<u8>>,
    /// Newline count of each chunk, parallel to `chunks`, so trimming by lines never rescans.
    chunk_lines: VecDeque<usize>,
    bytes: usize,
    lines: usize,
    max_lines: usize,
    max_bytes: usize,
    /// Where the output was resized, so a replay goes through the same sizes (see
    /// [`crate::history_sizes`]).
    sizes: crate::history_sizes::Sizes,
}

/// Chunks smaller than this are merged into the previous one, so a stream of tiny writes (an
/// agent echoing keys) does not cost one allocation each.
const MERGE_BELOW: usize = 4096;

impl History {
    /// A history keeping about `max_lines` lines (plus one screen, which the caller adds) and never
    /// more than `max_bytes` bytes.
    pub fn new(max_lines: usize, max_bytes: usize) -> Self {
        Self {
            chunks: VecDeque::new(),
            chunk_lines: VecDeque::new(),
            bytes: 0,
            lines: 0,
            max_lines,
            max_bytes: max_bytes.max(1),
            sizes: crate::history_sizes::Sizes::default(),
        }
    }

    /// Records that the terminal became `rows` x `cols` after the bytes pushed so far.
    pub fn resized(&mut self, rows: u16, cols: u16) {
        self.sizes.resized(rows, cols);
    }

    /// The size the retained output starts at (None: never recorded), and the retained bytes
    /// cut where the terminal was resized, each piece with the size it was printed at.
    pub fn sized_chunks(&self) -> crate::history_sizes::SizedPieces<'_> {
        self.sizes.split(self.chunks.iter().map(Vec::as_slice))
    }

    /// Appends output, then drops whole chunks from the front while over a cap.
    pub fn push(&mut self, data: &[u8]) {
        if data.is_empty() {
            return;
        }
        let newlines = memchr_count(data);
        match (self.chunks.back_mut(), self.chunk_lines.back_mut()) {
            (Some(last), Some(count)) if last.len() < MERGE_BELOW => {
                last.extend_from_slice(data);
                *count += newlines;
            }
            _ => {
                self.chunks.push_back(data.to_vec());
                self.chunk_lines.push_back(newlines);
            }
        }
        self.bytes += data.len();
        self.lines += newlines;
        self.sizes.pushed(data.len());
        self.trim();
    }

    fn trim(&mut self) {
        while self.chunks.len() > 1 && (self.bytes > self.max_bytes || self.lines > self.max_lines)
        {
            let front_lines = self.chunk_lines.front().copied().unwrap_or(0);
            let front_bytes = self.chunks.front().map_or(0, Vec::len);
            // Keep the front chunk when dropping it would leave fewer lines than wanted and the
            // byte cap is not the reason.
            if self.bytes <= self.max_bytes && self.lines - front_lines < self.max_lines {
                break;
            }
            self.chunks.pop_front();
            self.chunk_lines.pop_front();
            self.bytes -= front_bytes;
            self.lines -= front_lines;
            self.sizes.dropped(front_bytes);
        }
        // A single huge chunk over the byte cap: keep its tail.
        if self.bytes > self.max_bytes {
            if let Some(front) = self.chunks.front_mut() {
                let excess = self.bytes - self.max_bytes;
                let cut = excess.min(front.len());
                let dropped_lines = memchr_count(&front[..cut]);
                front.drain(..cut);
                self.sizes.dropped(cut);
                self.bytes -= cut;
                self.lines -= dropped_lines;
                if let Some(count) = self.chunk_lines.front_mut() {
                    *count -= dropped_lines;
                }
            }
        }
    }

    /// Bytes currently retained.
    pub fn len_bytes(&self) -> usize {
        self.bytes
    }

    /// Newlines currently retained.
    pub fn len_lines(&self) -> usize {
        self.lines
    }

    /// The retained bytes, oldest first.
    pub fn chunks(&self) -> impl Iterator<Item = &[u8]> {
        self.chunks.iter().map(Vec::as_slice)
    }

    /// Forgets everything (clear-history).
    pub fn clear(&mut self) {
        self.sizes.dropped(self.bytes);
        self.chunks.clear();
        self.chunk_lines.clear();
        self.bytes = 0;
        self.lines = 0;
    }
}

fn memchr_count(data: &[u8]) -> usize {
    data.iter().filter(|&&b| b == b'\n').count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_everything_under_the_caps() {
        let mut h = History::new(100, 1 << 20);
        h.push(b"one\ntwo\n");
        h.push(b"three\n");
        assert_eq!(h.len_lines(), 3);
        let all: Vec<u8> = h.chunks().flatten().copied().collect();
        assert_eq!(all, b"one\ntwo\nthree\n");
    }

    #[test]
    fn byte_cap_is_never_exceeded() {
        let mut h = History::new(usize::MAX, 10_000);
        for _ in 0..1000 {
            h.push(&[b'x'; 999]);
            assert!(h.len_bytes() <= 10_000, "{}", h.len_bytes());
        }
        assert!(h.len_bytes() >= 9_000);
    }

    #[test]
    fn line_cap_drops_old_lines_but_keeps_enough() {
        let mut h = History::new(1000, usize::MAX);
        for i in 0..50_000 {
            h.push(format!("line {i}\n").as_bytes());
        }
        assert!(h.len_lines() >= 1000, "{}", h.len_lines());
        assert!(h.len_lines() < 1000 + 1000, "{}", h.len_lines());
        let all: Vec<u8> = h.chunks().flatten().copied().collect();
        assert!(String::from_utf8_lossy(&all).ends_with("line 49999\n"));
    }
}
