//! How panes are framed (`pane_borders` in config.toml), as geometry: which area a window's
//! layout tree divides, and where each pane's content lies inside the cell the tree gives it.
//!
//! - `box`: every pane has a full frame of its own. The tree divides the window area; a pane's
//!   content is its cell minus one cell on each side, so a lone pane in a 160x44 window area
//!   is 158x42 and two side by side are 78 each.
//! - `separators` (tmux's model): neighbours share one separator line. The tree divides the
//!   window area grown by one column and one row, and each cell keeps its last column and row
//!   for the separator to its right and below; the outermost of those fall just outside the
//!   window, so a lone pane gets the whole window area (160x44) and two side by side get 80,
//!   a separator, and 79 (tmux's split of 160 columns).
//!
//! Every geometry consumer (PTY sizes, drawing, mouse hits, border drags, key resizes) goes
//! through [`PaneBorders::layout_area`] and [`PaneBorders::content`], so they agree.

use ratatui::layout::Rect;

/// The `pane_borders` setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PaneBorders {
    /// A full frame around each pane, with its title and agent badge on the top edge.
    #[default]
    Box,
    /// One shared line between neighbouring panes, none at the window's edges.
    Separators,
}

impl PaneBorders {
    /// The area a window's layout tree divides into pane cells, for a window area.
    pub fn layout_area(self, window: Rect) -> Rect {
        match self {
            PaneBorders::Box => window,
            PaneBorders::Separators => Rect {
                width: window.width.saturating_add(1),
                height: window.height.saturating_add(1),
                ..window
            },
        }
    }

    /// Where a pane's screen is drawn inside the cell the layout gave it.
    pub fn content(self, cell: Rect) -> Rect {
        match self {
            PaneBorders::Box => Rect::new(
                cell.x.saturating_add(1),
                cell.y.saturating_add(1),
                cell.width.saturating_sub(2),
                cell.height.saturating_sub(2),
            ),
            PaneBorders::Separators => Rect {
                width: cell.width.saturating_sub(1),
                height: cell.height.saturating_sub(1),
                ..cell
            },
        }
    }

    /// The (rows, cols) a pane's terminal gets in `cell`: its content, at least 1x1 (a
    /// terminal cannot be smaller).
    pub fn content_size(self, cell: Rect) -> (u16, u16) {
        let content = self.content(cell);
        (content.height.max(1), content.width.max(1))
    }

    /// How many cells a pane's frame adds to its content across (and down): a box's two
    /// edges, or the one separator a pane's cell keeps.
    pub fn frame_cells(self) -> u16 {
        match self {
            PaneBorders::Box => 2,
            PaneBorders::Separators => 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::{Layout, PaneId, SplitDir};
    use proptest::prelude::*;

    /// What a 160x45 terminal leaves for panes: every row but the status line.
    fn window() -> Rect {
        Rect::new(0, 0, 160, 44)
    }

    fn content_sizes(layout: &Layout, borders: PaneBorders, window: Rect) -> Vec<(u16, u16)> {
        layout
            .rects(borders.layout_area(window))
            .into_iter()
            .map(|(_, cell)| {
                let c = borders.content(cell);
                (c.width, c.height)
            })
            .collect()
    }

    #[test]
    fn a_lone_pane_gets_the_whole_window_with_separators() {
        let lone = Layout::Pane(1);
        assert_eq!(
            content_sizes(&lone, PaneBorders::Separators, window()),
            vec![(160, 44)]
        );
        assert_eq!(
            content_sizes(&lone, PaneBorders::Box, window()),
            vec![(158, 42)]
        );
    }

    #[test]
    fn two_panes_side_by_side_share_one_column_as_tmux_splits() {
        let mut l = Layout::Pane(1);
        l.split(1, 2, SplitDir::Horizontal);
        // tmux's layout_split_pane gives the new (right) cell ((160 + 1) / 2) - 1 = 79
        // columns and the old one the other 80: 80 + 1 + 79.
        assert_eq!(
            content_sizes(&l, PaneBorders::Separators, window()),
            vec![(80, 44), (79, 44)]
        );
        assert_eq!(
            content_sizes(&l, PaneBorders::Box, window()),
            vec![(78, 42), (78, 42)]
        );
        let mut stacked = Layout::Pane(1);
        stacked.split(1, 2, SplitDir::Vertical);
        // 44 rows: 22 + a separator + 21, as tmux splits them.
        assert_eq!(
            content_sizes(&stacked, PaneBorders::Separators, window()),
            vec![(160, 22), (160, 21)]
        );
    }

    #[test]
    fn dragging_a_separator_puts_it_under_the_mouse() {
        let borders = PaneBorders::Separators;
        let area = borders.layout_area(window());
        let mut l = Layout::Pane(1);
        l.split(1, 2, SplitDir::Horizontal);
        l.split(2, 3, SplitDir::Vertical);
        // The separator column is the left cell's last one: x = 80.
        let path = l.divider_at(area, 80, 10).expect("the separator column");
        l.drag_divider(&path, area, 60, 10);
        assert_eq!(
            content_sizes(&l, borders, window()),
            vec![(60, 44), (99, 22), (99, 21)]
        );
        // The row between the right-hand panes is at y = 22; drag it up to y = 10.
        let path = l.divider_at(area, 100, 22).expect("the separator row");
        l.drag_divider(&path, area, 100, 10);
        assert_eq!(
            content_sizes(&l, borders, window()),
            vec![(60, 44), (99, 10), (99, 33)]
        );
    }

    #[test]
    fn content_size_is_never_zero() {
        for borders in [PaneBorders::Box, PaneBorders::Separators] {
            assert_eq!(borders.content_size(Rect::new(0, 0, 1, 1)), (1, 1));
        }
    }

    /// A layout tree with up to `depth` levels of splits in random directions and ratios.
    fn layouts(depth: u32) -> impl Strategy<Value = Layout> {
        let leaf = Just(Layout::Pane(0));
        leaf.prop_recursive(depth, 16, 2, |inner| {
            (any::<bool>(), 1u16..1000, inner.clone(), inner).prop_map(
                |(horizontal, ratio, first, second)| Layout::Split {
                    dir: if horizontal {
                        SplitDir::Horizontal
                    } else {
                        SplitDir::Vertical
                    },
                    ratio,
                    first: Box::new(first),
                    second: Box::new(second),
                },
            )
        })
    }

    /// Gives the leaves distinct ids in layout order.
    fn number(layout: &mut Layout, next: &mut PaneId) {
        match layout {
            Layout::Pane(id) => {
                *id = *next;
                *next += 1;
            }
            Layout::Split { first, second, .. } => {
                number(first, next);
                number(second, next);
            }
        }
    }

    proptest! {
        /// With separators, pane contents and separator cells cover the window area exactly
        /// once (no overlap, no gap, nothing outside it), and every pane keeps at least one
        /// cell whenever the window has room for the layout's panes.
        #[test]
        fn separators_and_panes_tile_the_window(
            layout in layouts(4),
            x in 0u16..30,
            y in 0u16..3,
            extra_w in 0u16..200,
            extra_h in 0u16..60,
        ) {
            let mut layout = layout;
            number(&mut layout, &mut 0);
            let borders = PaneBorders::Separators;
            // The layout needs min_extent cells of layout area, one more than the window.
            let w = layout.min_extent(SplitDir::Horizontal) - 1 + extra_w;
            let h = layout.min_extent(SplitDir::Vertical) - 1 + extra_h;
            let window = Rect::new(x, y, w, h);
            let cells = layout.rects(borders.layout_area(window));
            let mut covered = vec![0u8; usize::from(w) * usize::from(h)];
            for (id, cell) in &cells {
                let content = borders.content(*cell);
                prop_assert!(content.width >= 1 && content.height >= 1, "pane {id}: {content:?}");
                prop_assert!(
                    content.right() <= window.right() && content.bottom() <= window.bottom(),
                    "pane {id} leaves the window: {content:?} in {window:?}"
                );
                // The cell: its content plus the separator to its right and below, clipped.
                for cy in cell.y..cell.bottom().min(window.bottom()) {
                    for cx in cell.x..cell.right().min(window.right()) {
                        let i = usize::from(cy - y) * usize::from(w) + usize::from(cx - x);
                        covered[i] += 1;
                    }
                }
            }
            prop_assert!(covered.iter().all(|n| *n == 1), "a cell covered twice or never");
            // The separator cells are exactly the window cells outside every content.
            let contents: u32 = cells
                .iter()
                .map(|(_, c)| borders.content(*c).area())
                .sum();
            let separators = u32::from(w) * u32::from(h) - contents;
            let in_cells: u32 = cells
                .iter()
                .map(|(_, c)| {
                    let clipped = c.intersection(window);
                    clipped.area() - borders.content(*c).area()
                })
                .sum();
            prop_assert_eq!(separators, in_cells);
        }

        /// In box mode every pane's frame lies inside the window and frames never overlap.
        #[test]
        fn boxes_tile_the_window(
            layout in layouts(4),
            extra_w in 0u16..200,
            extra_h in 0u16..60,
        ) {
            let mut layout = layout;
            number(&mut layout, &mut 0);
            let borders = PaneBorders::Box;
            let w = layout.min_extent(SplitDir::Horizontal) + extra_w;
            let h = layout.min_extent(SplitDir::Vertical) + extra_h;
            let window = Rect::new(0, 0, w, h);
            let cells = layout.rects(borders.layout_area(window));
            let total: u32 = cells.iter().map(|(_, c)| c.area()).sum();
            prop_assert_eq!(total, u32::from(w) * u32::from(h));
            for (i, (_, a)) in cells.iter().enumerate() {
                let content = borders.content(*a);
                prop_assert!(content.width >= 1 && content.height >= 1);
                for (_, b) in &cells[i + 1..] {
                    prop_assert!(!a.intersects(*b), "{a:?} overlaps {b:?}");
                }
            }
        }
    }
}
