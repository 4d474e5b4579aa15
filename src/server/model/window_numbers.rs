//! Window numbers, as tmux has them: each window keeps the number it was given when another
//! closes (so `s:2` still names the same window), a new window takes the lowest free number
//! from `base_index` (tmux's `base-index`), and `renumber_windows` (tmux's
//! `renumber-windows`) closes the gaps instead. The session's window list stays sorted by
//! number; everything inside the server works with positions in that list, and numbers are
//! only what users see and type.

use super::state::{Session, Window};

impl Session {
    /// The lowest number at least `base_index` that no window has.
    pub fn free_window_number(&self, base_index: usize) -> usize {
        let mut n = base_index;
        // The list is sorted, so one pass finds the first gap.
        for w in self.windows.iter().filter(|w| w.number >= base_index) {
            if w.number != n {
                break;
            }
            n = n.saturating_add(1);
        }
        n
    }

    /// Adds `window` under the lowest free number from `base_index`, in its sorted place;
    /// the active and last windows stay the same windows. Returns its position.
    pub fn insert_window(&mut self, mut window: Window, base_index: usize) -> usize {
        window.number = self.free_window_number(base_index);
        let at = self
            .windows
            .iter()
            .position(|w| w.number > window.number)
            .unwrap_or(self.windows.len());
        let shifted = !self.windows.is_empty();
        self.windows.insert(at, window);
        if shifted && self.active_window >= at {
            self.active_window += 1;
        }
        if let Some(last) = self.last_window.as_mut().filter(|l| **l >= at) {
            *last += 1;
        }
        at
    }

    /// The position of the window numbered `number`.
    pub fn window_numbered(&self, number: usize) -> Option<usize> {
        self.windows.iter().position(|w| w.number == number)
    }

    /// Numbers the windows `base_index`, `base_index + 1`, ... in their order (what
    /// `renumber_windows` does after a window closes).
    pub fn renumber_windows(&mut self, base_index: usize) {
        for (i, w) in self.windows.iter_mut().enumerate() {
            w.number = base_index.saturating_add(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::time::Instant;

    use super::*;

    fn window(pane: u32) -> Window {
        Window::new(String::new(), true, pane)
    }

    fn session() -> Session {
        Session {
            id: 0,
            name: "s".into(),
            windows: Vec::new(),
            active_window: 0,
            last_window: None,
            env: Vec::new(),
            rows: 24,
            cols: 80,
            roomy_size: (24, 80),
            last_used: Instant::now(),
            sidebar: false,
            pane_borders: Default::default(),
        }
    }

    fn numbers(s: &Session) -> Vec<usize> {
        s.windows.iter().map(|w| w.number).collect()
    }

    #[test]
    fn a_new_window_fills_the_lowest_gap_and_the_active_window_stays_put() {
        let mut s = session();
        for pane in 1..=3 {
            s.insert_window(window(pane), 1);
        }
        assert_eq!(numbers(&s), vec![1, 2, 3]);
        s.windows.remove(1);
        s.active_window = 1;
        assert_eq!(s.window_numbered(3), Some(1));
        assert_eq!(s.insert_window(window(4), 1), 1);
        assert_eq!(numbers(&s), vec![1, 2, 3]);
        assert_eq!(s.windows[1].active, 4);
        assert_eq!(s.active_pane(), Some(3), "the active window moved along");
        assert_eq!(s.window_numbered(7), None);
    }

    #[test]
    fn renumbering_closes_gaps_from_the_base() {
        let mut s = session();
        for pane in 1..=3 {
            s.insert_window(window(pane), 0);
        }
        s.windows.remove(0);
        assert_eq!(numbers(&s), vec![1, 2]);
        s.renumber_windows(5);
        assert_eq!(numbers(&s), vec![5, 6]);
        assert_eq!(s.free_window_number(0), 0);
        assert_eq!(s.free_window_number(5), 7);
    }
}
