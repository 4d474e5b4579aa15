//! The last 64 KiB a stdio server wrote to stderr. Read continuously so a chatty server never
//! blocks on a full pipe; shown (last 20 lines) under a failed server's row and in Details.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// How much stderr is kept.
pub const RING_BYTES: usize = 64 << 10;

/// A shared byte ring; cloning shares it.
#[derive(Debug, Clone, Default)]
pub struct StderrRing {
    bytes: Arc<Mutex<VecDeque<u8>>>,
}

impl StderrRing {
    /// Appends output, dropping the oldest bytes beyond [`RING_BYTES`].
    pub fn push(&self, chunk: &[u8]) {
        let Ok(mut bytes) = self.bytes.lock() else {
            return;
        };
        let chunk = &chunk[chunk.len().saturating_sub(RING_BYTES)..];
        let overflow = (bytes.len() + chunk.len()).saturating_sub(RING_BYTES);
        bytes.drain(..overflow);
        bytes.extend(chunk);
    }

    /// The last `n` lines (a partial first line, cut by the ring, is left out when the ring is
    /// full), as text with invalid UTF-8 replaced.
    pub fn tail(&self, n: usize) -> Vec<String> {
        let Ok(bytes) = self.bytes.lock() else {
            return Vec::new();
        };
        let full = bytes.len() >= RING_BYTES;
        let text =
            String::from_utf8_lossy(&bytes.iter().copied().collect::<Vec<u8>>()).into_owned();
        let mut lines: Vec<&str> = text.lines().collect();
        if full && !lines.is_empty() {
            lines.remove(0);
        }
        let start = lines.len().saturating_sub(n);
        lines[start..].iter().map(|l| l.to_string()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_64_kib_and_the_last_lines() {
        let ring = StderrRing::default();
        ring.push(b"starting\nwarn: x\n");
        assert_eq!(ring.tail(20), ["starting", "warn: x"]);
        assert_eq!(ring.tail(1), ["warn: x"]);
        for i in 0..10_000 {
            ring.push(format!("line {i}\n").as_bytes());
        }
        let tail = ring.tail(20);
        assert_eq!(tail.len(), 20);
        assert_eq!(tail[19], "line 9999");
        assert!(ring.bytes.lock().expect("lock").len() <= RING_BYTES);
        ring.push(&vec![b'x'; RING_BYTES * 2]);
        assert_eq!(ring.bytes.lock().expect("lock").len(), RING_BYTES);
    }
}
