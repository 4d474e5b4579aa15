//! Which cells of a composed frame are OSC 8 hyperlinks. ratatui cells cannot carry a link, so
//! the frame keeps this side table next to its `Buffer`; the server's row emitter reads both.

use std::sync::Arc;

/// Longest URI passed on, in bytes (vt100 already drops longer ones; checked again here because
/// this is the last stop before the user's terminal).
const MAX_URI_BYTES: usize = 2048;

/// The hyperlinks of one frame: per cell an index into a list of OSC 8 payloads.
#[derive(Debug, Clone, Default)]
pub struct FrameLinks {
    width: u16,
    height: u16,
    /// Row-major, one entry per frame cell: 0 for none, else 1 + an index into `targets`.
    /// Empty until the first link is added, so frames without links cost nothing.
    cells: Vec<u16>,
    /// `params;URI` of each link, ready to go between `ESC ] 8 ;` and `ESC \`.
    targets: Vec<Arc<str>>,
}

/// Whether a URI or id is safe inside an OSC sequence sent to the user's terminal: no control
/// characters (C0, DEL, C1), which is what could end the sequence early or start another.
fn safe(s: &str) -> bool {
    !s.chars().any(char::is_control)
}

impl FrameLinks {
    /// An empty table for a frame of this size.
    pub fn new(width: u16, height: u16) -> Self {
        Self {
            width,
            height,
            cells: Vec::new(),
            targets: Vec::new(),
        }
    }

    /// Whether no cell has a link.
    pub fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }

    /// Registers a link and returns its handle for [`FrameLinks::set`]; None when the URI or id
    /// is unsafe to pass on, or there are too many links in one frame.
    pub fn add(&mut self, uri: &str, id: Option<&str>) -> Option<u16> {
        if uri.is_empty() || uri.len() > MAX_URI_BYTES || !safe(uri) {
            return None;
        }
        let id = id.filter(|id| safe(id) && !id.contains([';', ':']));
        let payload: Arc<str> = match id {
            Some(id) => format!("id={id};{uri}").into(),
            None => format!(";{uri}").into(),
        };
        let handle = u16::try_from(self.targets.len() + 1).ok()?;
        self.targets.push(payload);
        Some(handle)
    }

    /// Marks the cell at (x, y) as part of link `handle` (from [`FrameLinks::add`]).
    pub fn set(&mut self, x: u16, y: u16, handle: u16) {
        if x >= self.width || y >= self.height {
            return;
        }
        if self.cells.is_empty() {
            self.cells = vec![0; usize::from(self.width) * usize::from(self.height)];
        }
        let i = usize::from(y) * usize::from(self.width) + usize::from(x);
        if let Some(cell) = self.cells.get_mut(i) {
            *cell = handle;
        }
    }

    /// The OSC 8 payload (`params;URI`) of the cell at (x, y), if it is a link.
    pub fn at(&self, x: u16, y: u16) -> Option<&str> {
        if self.cells.is_empty() || x >= self.width || y >= self.height {
            return None;
        }
        let i = usize::from(y) * usize::from(self.width) + usize::from(x);
        let handle = usize::from(*self.cells.get(i)?);
        handle
            .checked_sub(1)
            .and_then(|t| self.targets.get(t))
            .map(|s| &**s)
    }

    /// Copies the links of `rect` from another frame of the same size (a busy pane keeps last
    /// frame's cells, and so its links).
    pub fn copy_rect(&mut self, other: &Self, x0: u16, y0: u16, width: u16, height: u16) {
        if other.cells.is_empty() {
            return;
        }
        // other's handle -> ours (0: not added yet).
        let mut map = vec![0u16; other.targets.len() + 1];
        for y in y0..y0.saturating_add(height) {
            for x in x0..x0.saturating_add(width) {
                let i = usize::from(y) * usize::from(other.width) + usize::from(x);
                let Some(&h) = other.cells.get(i).filter(|_| x < other.width) else {
                    continue;
                };
                if h == 0 {
                    continue;
                }
                let Some(slot) = map.get_mut(usize::from(h)) else {
                    continue;
                };
                if *slot == 0 {
                    let Some(target) = other.targets.get(usize::from(h) - 1) else {
                        continue;
                    };
                    self.targets.push(target.clone());
                    *slot = u16::try_from(self.targets.len()).unwrap_or(0);
                }
                let handle = *slot;
                self.set(x, y, handle);
            }
        }
    }

    /// Whether row `y` links the same cells to the same targets in both frames (which must be
    /// the same size).
    pub fn row_eq(&self, other: &Self, y: u16) -> bool {
        if self.cells.is_empty() && other.cells.is_empty() {
            return true;
        }
        (0..self.width.max(other.width)).all(|x| self.at(x, y) == other.at(x, y))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsafe_links_are_refused_and_ids_are_dropped_when_unsafe() {
        let mut l = FrameLinks::new(4, 2);
        assert_eq!(l.add("https://e.com/\x1b[31m", None), None);
        assert_eq!(l.add("https://e.com/\u{9c}", None), None);
        assert_eq!(l.add(&"a".repeat(3000), None), None);
        assert_eq!(l.add("", None), None);
        let h = l.add("https://e.com", Some("x\x07")).unwrap_or(0);
        let k = l.add("https://e.com/k", Some("k1")).unwrap_or(0);
        l.set(1, 1, h);
        l.set(2, 1, k);
        l.set(9, 9, k);
        assert_eq!(l.at(1, 1), Some(";https://e.com"));
        assert_eq!(l.at(2, 1), Some("id=k1;https://e.com/k"));
        assert_eq!(l.at(0, 0), None);
    }

    #[test]
    fn rows_compare_by_target_not_by_handle() {
        let mut a = FrameLinks::new(3, 1);
        let mut b = FrameLinks::new(3, 1);
        let _ = b.add("https://other", None);
        let ha = a.add("https://e.com", None).unwrap_or(0);
        let hb = b.add("https://e.com", None).unwrap_or(0);
        a.set(0, 0, ha);
        assert!(!a.row_eq(&b, 0));
        b.set(0, 0, hb);
        assert!(a.row_eq(&b, 0));
        assert!(FrameLinks::new(3, 1).row_eq(&FrameLinks::new(3, 1), 0));
    }
}
