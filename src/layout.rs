//! A window's layout: a binary tree of splits whose leaves are panes.
//!
//! Pure geometry, no I/O: splitting, closing (the layout heals), rectangles for a window area,
//! directional neighbours, key resizing and border dragging are all computed here and unit tested.

use ratatui::layout::Rect;
use serde::{Deserialize, Serialize};

mod edit;

/// A pane's global id (shown as `%N`, like tmux).
pub type PaneId = u32;

/// How a split arranges its two children.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SplitDir {
    /// Side by side: first on the left, second on the right (tmux `split-window -h`).
    Horizontal,
    /// Stacked: first above, second below (tmux `split-window -v`).
    Vertical,
}

/// A direction for focus moves and resizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Direction {
    Left,
    Right,
    Up,
    Down,
}

/// Smallest outer size of a pane: a border on each side plus one cell of content.
const MIN_CELLS: u16 = 3;

/// The layout tree (saved as is in sessions.json, see `persist`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Layout {
    Pane(PaneId),
    Split {
        dir: SplitDir,
        /// The first child's share in thousandths.
        ratio: u16,
        first: Box<Layout>,
        second: Box<Layout>,
    },
}

impl Layout {
    /// Splits the leaf `target`, putting `new` after it (right or below). False if absent.
    pub fn split(&mut self, target: PaneId, new: PaneId, dir: SplitDir) -> bool {
        match self {
            Layout::Pane(id) if *id == target => {
                *self = Layout::Split {
                    dir,
                    ratio: 500,
                    first: Box::new(Layout::Pane(target)),
                    second: Box::new(Layout::Pane(new)),
                };
                true
            }
            Layout::Pane(_) => false,
            Layout::Split { first, second, .. } => {
                first.split(target, new, dir) || second.split(target, new, dir)
            }
        }
    }

    /// Removes the leaf `target`; its sibling takes the parent's place. Returns false when
    /// `target` is absent or is the whole layout (the caller closes the window then).
    pub fn remove(&mut self, target: PaneId) -> bool {
        let Layout::Split { first, second, .. } = self else {
            return false;
        };
        if matches!(**first, Layout::Pane(id) if id == target) {
            *self = std::mem::replace(second.as_mut(), Layout::Pane(0));
            return true;
        }
        if matches!(**second, Layout::Pane(id) if id == target) {
            *self = std::mem::replace(first.as_mut(), Layout::Pane(0));
            return true;
        }
        first.remove(target) || second.remove(target)
    }

    /// Pane ids in layout order (left to right, top to bottom).
    pub fn panes(&self) -> Vec<PaneId> {
        let mut out = Vec::new();
        self.collect(&mut out);
        out
    }

    fn collect(&self, out: &mut Vec<PaneId>) {
        match self {
            Layout::Pane(id) => out.push(*id),
            Layout::Split { first, second, .. } => {
                first.collect(out);
                second.collect(out);
            }
        }
    }

    /// Whether the layout holds `pane`.
    pub fn contains(&self, pane: PaneId) -> bool {
        match self {
            Layout::Pane(id) => *id == pane,
            Layout::Split { first, second, .. } => first.contains(pane) || second.contains(pane),
        }
    }

    /// Each pane's outer rectangle (border included) inside `area`, in layout order.
    pub fn rects(&self, area: Rect) -> Vec<(PaneId, Rect)> {
        let mut out = Vec::new();
        self.place(area, &mut out);
        out
    }

    fn place(&self, area: Rect, out: &mut Vec<(PaneId, Rect)>) {
        match self {
            Layout::Pane(id) => out.push((*id, area)),
            Layout::Split {
                dir,
                ratio,
                first,
                second,
            } => {
                let (a, b) = halves(area, *dir, *ratio, first, second);
                first.place(a, out);
                second.place(b, out);
            }
        }
    }

    /// Moves the divider nearest to `pane` in `dir` by `cells`. False if there is none.
    pub fn resize(&mut self, pane: PaneId, dir: Direction, cells: u16, area: Rect) -> bool {
        let want = match dir {
            Direction::Left | Direction::Right => SplitDir::Horizontal,
            Direction::Up | Direction::Down => SplitDir::Vertical,
        };
        let grow = matches!(dir, Direction::Right | Direction::Down);
        self.resize_inner(pane, want, grow, cells, area)
    }

    fn resize_inner(
        &mut self,
        pane: PaneId,
        want: SplitDir,
        grow: bool,
        cells: u16,
        area: Rect,
    ) -> bool {
        let Layout::Split {
            dir,
            ratio,
            first,
            second,
        } = self
        else {
            return false;
        };
        let (a, b) = halves(area, *dir, *ratio, first, second);
        let in_first = first.contains(pane);
        // Prefer the deepest matching split, so the border next to the pane moves.
        let deeper = if in_first {
            first.resize_inner(pane, want, grow, cells, a)
        } else if second.contains(pane) {
            second.resize_inner(pane, want, grow, cells, b)
        } else {
            return false;
        };
        if deeper {
            return true;
        }
        if *dir != want {
            return false;
        }
        let total = extent(area, *dir);
        let current = extent(a, *dir);
        let target = if grow {
            current.saturating_add(cells)
        } else {
            current.saturating_sub(cells)
        };
        *ratio = ratio_for(target, total);
        true
    }

    /// The path to the split whose divider is at (x, y) in `area`, for border dragging.
    pub fn divider_at(&self, area: Rect, x: u16, y: u16) -> Option<Vec<bool>> {
        let Layout::Split {
            dir,
            ratio,
            first,
            second,
        } = self
        else {
            return None;
        };
        let (a, b) = halves(area, *dir, *ratio, first, second);
        let inside = |r: Rect| x >= r.x && x < r.right() && y >= r.y && y < r.bottom();
        if inside(a) {
            if let Some(mut path) = first.divider_at(a, x, y) {
                path.insert(0, false);
                return Some(path);
            }
        }
        if inside(b) {
            if let Some(mut path) = second.divider_at(b, x, y) {
                path.insert(0, true);
                return Some(path);
            }
        }
        let on_divider = match dir {
            SplitDir::Horizontal => {
                (x + 1 == a.right() || x == b.x) && y >= area.y && y < area.bottom()
            }
            SplitDir::Vertical => {
                (y + 1 == a.bottom() || y == b.y) && x >= area.x && x < area.right()
            }
        };
        on_divider.then(Vec::new)
    }

    /// Moves the divider of the split at `path` so the first child ends at (x, y).
    pub fn drag_divider(&mut self, path: &[bool], area: Rect, x: u16, y: u16) {
        let Layout::Split {
            dir,
            ratio,
            first,
            second,
        } = self
        else {
            return;
        };
        let (a, b) = halves(area, *dir, *ratio, first, second);
        match path.split_first() {
            Some((false, rest)) => first.drag_divider(rest, a, x, y),
            Some((true, rest)) => second.drag_divider(rest, b, x, y),
            None => {
                let (pos, start) = match dir {
                    SplitDir::Horizontal => (x, area.x),
                    SplitDir::Vertical => (y, area.y),
                };
                let target = pos.saturating_sub(start).saturating_add(1);
                *ratio = ratio_for(target, extent(area, *dir));
            }
        }
    }

    /// Puts pane `a` where `b` is and `b` where `a` is (tmux's swap-pane); the splits keep
    /// their shapes. False unless both are here.
    pub fn swap(&mut self, a: PaneId, b: PaneId) -> bool {
        if a == b || !self.contains(a) || !self.contains(b) {
            return false;
        }
        self.swap_leaves(a, b);
        true
    }

    fn swap_leaves(&mut self, a: PaneId, b: PaneId) {
        match self {
            Layout::Pane(id) if *id == a => *id = b,
            Layout::Pane(id) if *id == b => *id = a,
            Layout::Pane(_) => {}
            Layout::Split { first, second, .. } => {
                first.swap_leaves(a, b);
                second.swap_leaves(a, b);
            }
        }
    }

    /// Gives panes side by side equal widths and panes stacked equal heights (tmux's
    /// `select-layout -E`): a split's share follows how many panes each side lines up in its
    /// direction, so three splits in a row make four equal panes, not 1/2, 1/4, 1/8, 1/8.
    pub fn equalize(&mut self) {
        if let Layout::Split {
            dir,
            ratio,
            first,
            second,
        } = self
        {
            let (a, b) = (first.span(*dir), second.span(*dir));
            *ratio = u16::try_from(a * 1000 / (a + b))
                .unwrap_or(500)
                .clamp(1, 999);
            first.equalize();
            second.equalize();
        }
    }

    /// The fewest cells this layout needs in direction `dir` for every pane to keep
    /// MIN_CELLS: the sum of its sides across a split that way, the larger side otherwise.
    pub fn min_extent(&self, dir: SplitDir) -> u16 {
        match self {
            Layout::Pane(_) => MIN_CELLS,
            Layout::Split {
                dir: d,
                first,
                second,
                ..
            } if *d == dir => first.min_extent(dir).saturating_add(second.min_extent(dir)),
            Layout::Split { first, second, .. } => {
                first.min_extent(dir).max(second.min_extent(dir))
            }
        }
    }

    /// How many panes line up across this layout in direction `dir`: a split the same way
    /// adds its sides' counts, any other layout counts as one.
    fn span(&self, dir: SplitDir) -> u32 {
        match self {
            Layout::Split {
                dir: d,
                first,
                second,
                ..
            } if *d == dir => first.span(dir) + second.span(dir),
            _ => 1,
        }
    }
}

fn extent(r: Rect, dir: SplitDir) -> u16 {
    match dir {
        SplitDir::Horizontal => r.width,
        SplitDir::Vertical => r.height,
    }
}

fn ratio_for(first_cells: u16, total: u16) -> u16 {
    if total == 0 {
        return 500;
    }
    let cells = u32::from(first_cells.clamp(
        MIN_CELLS.min(total / 2),
        total.saturating_sub(MIN_CELLS).max(total / 2),
    ));
    let r = (cells * 1000 + u32::from(total) / 2) / u32::from(total);
    u16::try_from(r.clamp(1, 999)).unwrap_or(500)
}

/// Divides `area` between a split's two children by `ratio` (thousandths), each keeping the
/// room its own panes need (see [`Layout::min_extent`]) when the area allows: a child holding
/// three panes side by side is not squeezed into the three cells one pane needs, which would
/// leave some of its panes with no cell of content.
fn halves(area: Rect, dir: SplitDir, ratio: u16, first: &Layout, second: &Layout) -> (Rect, Rect) {
    split_with_minimums(
        area,
        dir,
        ratio,
        (first.min_extent(dir), second.min_extent(dir)),
    )
}

/// Divides `area` by `ratio`, the first child getting at least `minimums.0` cells and the
/// second `minimums.1` when the area has room for both; else the area is shared in proportion
/// to the minimums (half each for equal ones).
fn split_with_minimums(
    area: Rect,
    dir: SplitDir,
    ratio: u16,
    minimums: (u16, u16),
) -> (Rect, Rect) {
    let total = u32::from(extent(area, dir));
    let (min_first, min_second) = (u32::from(minimums.0), u32::from(minimums.1));
    let wanted = (total * u32::from(ratio) + 500) / 1000;
    let first = if total >= min_first + min_second {
        wanted.clamp(min_first, total - min_second)
    } else {
        total * min_first / (min_first + min_second).max(1)
    };
    // `first` never exceeds `total`, a u16.
    let first = u16::try_from(first).unwrap_or(0);
    let total = extent(area, dir);
    let second = total - first;
    match dir {
        SplitDir::Horizontal => (
            Rect::new(area.x, area.y, first, area.height),
            Rect::new(area.x + first, area.y, second, area.height),
        ),
        SplitDir::Vertical => (
            Rect::new(area.x, area.y, area.width, first),
            Rect::new(area.x, area.y + first, area.width, second),
        ),
    }
}

/// The pane next to `from` in `dir`: the one beyond that edge overlapping it most.
pub fn neighbour(rects: &[(PaneId, Rect)], from: PaneId, dir: Direction) -> Option<PaneId> {
    let (_, r) = rects.iter().find(|(id, _)| *id == from)?;
    let overlap = |a0: u16, a1: u16, b0: u16, b1: u16| a1.min(b1).saturating_sub(a0.max(b0));
    rects
        .iter()
        .filter(|(id, _)| *id != from)
        .filter_map(|(id, o)| {
            let (adjacent, shared) = match dir {
                Direction::Left => (o.right() == r.x, overlap(o.y, o.bottom(), r.y, r.bottom())),
                Direction::Right => (o.x == r.right(), overlap(o.y, o.bottom(), r.y, r.bottom())),
                Direction::Up => (o.bottom() == r.y, overlap(o.x, o.right(), r.x, r.right())),
                Direction::Down => (o.y == r.bottom(), overlap(o.x, o.right(), r.x, r.right())),
            };
            (adjacent && shared > 0).then_some((*id, shared))
        })
        // On a tie, the first in layout order (top or left) wins.
        .fold(
            None,
            |best: Option<(PaneId, u16)>, (id, shared)| match best {
                Some((_, b)) if b >= shared => best,
                _ => Some((id, shared)),
            },
        )
        .map(|(id, _)| id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn area() -> Rect {
        Rect::new(0, 0, 100, 40)
    }

    #[test]
    fn split_places_new_pane_right_or_below() {
        let mut l = Layout::Pane(1);
        assert!(l.split(1, 2, SplitDir::Horizontal));
        assert!(l.split(2, 3, SplitDir::Vertical));
        let rects = l.rects(area());
        assert_eq!(rects[0], (1, Rect::new(0, 0, 50, 40)));
        assert_eq!(rects[1], (2, Rect::new(50, 0, 50, 20)));
        assert_eq!(rects[2], (3, Rect::new(50, 20, 50, 20)));
        assert!(!l.split(9, 10, SplitDir::Vertical));
    }

    #[test]
    fn swapping_two_panes_exchanges_their_places_only() {
        let mut l = Layout::Pane(1);
        l.split(1, 2, SplitDir::Horizontal);
        l.split(2, 3, SplitDir::Vertical);
        let before = l.rects(area());
        assert!(l.swap(1, 3));
        let after = l.rects(area());
        assert_eq!(l.panes(), vec![3, 2, 1]);
        // Same rectangles, in the same order: only who sits in them changed.
        let shapes = |r: &[(PaneId, Rect)]| r.iter().map(|(_, r)| *r).collect::<Vec<_>>();
        assert_eq!(shapes(&before), shapes(&after));
        assert!(!l.swap(1, 9), "a pane that is not here");
        assert!(!l.swap(2, 2));
        assert_eq!(l.panes(), vec![3, 2, 1]);
    }

    #[test]
    fn equalize_gives_every_pane_in_a_row_the_same_size() {
        // Four panes stacked by splitting the bottom one three times: 20, 10, 5, 5 rows.
        let mut l = Layout::Pane(1);
        l.split(1, 2, SplitDir::Vertical);
        l.split(2, 3, SplitDir::Vertical);
        l.split(3, 4, SplitDir::Vertical);
        l.split(4, 5, SplitDir::Horizontal);
        l.equalize();
        let heights: Vec<u16> = l.rects(area()).iter().map(|(_, r)| r.height).collect();
        assert_eq!(heights, vec![10, 10, 10, 10, 10], "{l:?}");
        // The side-by-side pair at the bottom shares its row equally.
        let widths: Vec<u16> = l.rects(area()).iter().map(|(_, r)| r.width).collect();
        assert_eq!(&widths[3..], &[50, 50]);
    }

    #[test]
    fn removing_a_pane_heals_the_layout() {
        let mut l = Layout::Pane(1);
        l.split(1, 2, SplitDir::Horizontal);
        l.split(2, 3, SplitDir::Vertical);
        assert!(l.remove(2));
        assert_eq!(l.panes(), vec![1, 3]);
        assert_eq!(l.rects(area())[1], (3, Rect::new(50, 0, 50, 40)));
        assert!(l.remove(1));
        assert_eq!(l, Layout::Pane(3));
        assert!(!l.remove(3), "the last pane is the window's to close");
    }

    #[test]
    fn neighbours_follow_geometry() {
        let mut l = Layout::Pane(1);
        l.split(1, 2, SplitDir::Horizontal);
        l.split(2, 3, SplitDir::Vertical);
        let rects = l.rects(area());
        assert_eq!(neighbour(&rects, 1, Direction::Right), Some(2));
        assert_eq!(neighbour(&rects, 3, Direction::Up), Some(2));
        assert_eq!(neighbour(&rects, 3, Direction::Left), Some(1));
        assert_eq!(neighbour(&rects, 1, Direction::Left), None);
    }

    #[test]
    fn key_resize_moves_the_nearest_divider() {
        let mut l = Layout::Pane(1);
        l.split(1, 2, SplitDir::Horizontal);
        assert!(l.resize(1, Direction::Right, 10, area()));
        assert_eq!(l.rects(area())[0].1.width, 60);
        assert!(l.resize(2, Direction::Left, 20, area()));
        assert_eq!(l.rects(area())[0].1.width, 40);
        assert!(
            !l.resize(1, Direction::Up, 5, area()),
            "no vertical split to move"
        );
        // Never below the minimum.
        l.resize(1, Direction::Left, 200, area());
        assert_eq!(l.rects(area())[0].1.width, MIN_CELLS);
    }

    #[test]
    fn dragging_a_border_sets_the_divider() {
        let mut l = Layout::Pane(1);
        l.split(1, 2, SplitDir::Horizontal);
        l.split(2, 3, SplitDir::Vertical);
        let path = l.divider_at(area(), 50, 10).expect("the vertical divider");
        assert!(path.is_empty());
        l.drag_divider(&path, area(), 29, 10);
        assert_eq!(l.rects(area())[0].1.width, 30);
        let path = l.divider_at(area(), 60, 19).expect("the nested divider");
        assert_eq!(path, vec![true]);
        l.drag_divider(&path, area(), 60, 9);
        assert_eq!(l.rects(area())[1].1.height, 10);
        assert_eq!(l.divider_at(area(), 10, 10), None);
    }

    #[test]
    fn tiny_areas_do_not_underflow() {
        let mut l = Layout::Pane(1);
        for i in 1..20 {
            l.split(
                i,
                i + 1,
                if i % 2 == 0 {
                    SplitDir::Vertical
                } else {
                    SplitDir::Horizontal
                },
            );
        }
        for (w, h) in [(1, 1), (2, 3), (500, 200)] {
            let rects = l.rects(Rect::new(0, 0, w, h));
            assert_eq!(rects.len(), 20);
            for (_, r) in rects {
                assert!(r.right() <= w && r.bottom() <= h);
            }
        }
    }
}
