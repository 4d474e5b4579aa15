//! Layout edits the pane-moving commands need beyond splitting and closing: a pane put beside
//! another on either side (`join-pane -b`), one leaf exchanged for another pane from elsewhere
//! (`swap-pane` across windows), and a pane's side set to an absolute size (`resize-pane -x/-y`,
//! `join-pane -l`; the sizes as typed are `layout_size`'s). Pure geometry like the rest of the
//! layout, unit tested here.

use ratatui::layout::Rect;

use super::{extent, halves, ratio_for, Layout, PaneId, SplitDir};

impl Layout {
    /// Puts `new` beside the leaf `target`, after it (right or below) or, with `before`, in
    /// front of it (left or above), the two sharing `target`'s place equally. False if
    /// `target` is absent.
    pub fn split_beside(
        &mut self,
        target: PaneId,
        new: PaneId,
        dir: SplitDir,
        before: bool,
    ) -> bool {
        if !self.split(target, new, dir) {
            return false;
        }
        if before {
            self.swap(target, new);
        }
        true
    }

    /// Exchanges the leaf `old` for `new` (a pane from another window), in place. False if
    /// `old` is absent or `new` is already here.
    pub fn replace(&mut self, old: PaneId, new: PaneId) -> bool {
        if self.contains(new) || !self.contains(old) {
            return false;
        }
        self.swap_leaves(old, new);
        true
    }

    /// Sets the outer size (border included) of `pane`'s side of the deepest split in `dir`
    /// holding it to `cells`, within what the split's other side must keep. False when no
    /// split in `dir` holds the pane (it already spans the window that way).
    pub fn resize_to(&mut self, pane: PaneId, dir: SplitDir, cells: u16, area: Rect) -> bool {
        let Layout::Split {
            dir: d,
            ratio,
            first,
            second,
        } = self
        else {
            return false;
        };
        let (a, b) = halves(area, *d, *ratio, first, second);
        let in_first = first.contains(pane);
        let deeper = if in_first {
            first.resize_to(pane, dir, cells, a)
        } else if second.contains(pane) {
            second.resize_to(pane, dir, cells, b)
        } else {
            return false;
        };
        if deeper {
            return true;
        }
        if *d != dir {
            return false;
        }
        let total = extent(area, dir);
        let first_cells = if in_first {
            cells
        } else {
            total.saturating_sub(cells)
        };
        *ratio = ratio_for(first_cells, total);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn area() -> Rect {
        Rect::new(0, 0, 100, 40)
    }

    #[test]
    fn a_pane_goes_before_or_after_its_target() {
        let mut l = Layout::Pane(1);
        assert!(l.split_beside(1, 2, SplitDir::Horizontal, true));
        assert_eq!(l.panes(), vec![2, 1]);
        assert!(l.split_beside(1, 3, SplitDir::Vertical, false));
        assert_eq!(l.panes(), vec![2, 1, 3]);
        assert!(!l.split_beside(9, 4, SplitDir::Vertical, false));
    }

    #[test]
    fn replacing_a_leaf_keeps_the_shape() {
        let mut l = Layout::Pane(1);
        l.split(1, 2, SplitDir::Horizontal);
        let before: Vec<Rect> = l.rects(area()).into_iter().map(|(_, r)| r).collect();
        assert!(l.replace(2, 7));
        assert_eq!(l.panes(), vec![1, 7]);
        let after: Vec<Rect> = l.rects(area()).into_iter().map(|(_, r)| r).collect();
        assert_eq!(before, after);
        assert!(!l.replace(1, 7), "7 is already here");
        assert!(!l.replace(9, 8), "9 is not here");
    }

    #[test]
    fn resize_to_sets_the_side_holding_the_pane() {
        let mut l = Layout::Pane(1);
        l.split(1, 2, SplitDir::Horizontal);
        l.split(2, 3, SplitDir::Vertical);
        assert!(l.resize_to(2, SplitDir::Horizontal, 30, area()));
        let rects = l.rects(area());
        assert_eq!(rects[1].1.width, 30, "{rects:?}");
        assert_eq!(rects[0].1.width, 70);
        assert!(l.resize_to(1, SplitDir::Horizontal, 20, area()));
        assert_eq!(l.rects(area())[0].1.width, 20);
        assert!(l.resize_to(3, SplitDir::Vertical, 10, area()));
        assert_eq!(l.rects(area())[2].1.height, 10);
        // Pane 1 spans the whole height: no vertical split holds it.
        assert!(!l.resize_to(1, SplitDir::Vertical, 10, area()));
    }
}
