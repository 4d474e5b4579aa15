//! Unit tests of the session and window bookkeeping in `state.rs`: focus, zoom, closing a pane,
//! window selection and removal, pane sizes, and the size several clients agree on. No panes
//! run here: these are the pure parts the server's actions are built from.

use ratatui::layout::Rect;
use tokio::time::Instant;

use super::*;
use crate::layout::{Layout, SplitDir};

/// A window whose layout is `layout`, focused on `active`.
fn window(layout: Layout, active: PaneId) -> Window {
    Window {
        layout,
        ..Window::new(format!("w{active}"), true, active)
    }
}

/// Panes 1 | (2 over 3): the layout tmux makes with `%` then `"` on the right pane.
fn three_panes() -> Window {
    let mut l = Layout::Pane(1);
    l.split(1, 2, SplitDir::Horizontal);
    l.split(2, 3, SplitDir::Vertical);
    window(l, 3)
}

/// A session of `windows`, numbered from 0 in order.
fn session(windows: Vec<Window>, rows: u16, cols: u16) -> Session {
    let mut s = Session {
        id: 0,
        name: "s".into(),
        windows,
        active_window: 0,
        last_window: None,
        env: Vec::new(),
        rows,
        cols,
        roomy_size: (rows, cols),
        last_used: Instant::now(),
        sidebar: false,
        pane_borders: Default::default(),
    };
    s.renumber_windows(0);
    s
}

#[test]
fn focus_remembers_the_previous_pane_ends_zoom_and_clears_the_bell() {
    let mut w = three_panes();
    w.zoomed = true;
    w.bell = true;
    w.focus(1);
    assert_eq!((w.active, w.last_active), (1, Some(3)));
    assert!(!w.zoomed);
    assert!(!w.bell);
    // Focusing the focused pane keeps the zoom and the last pane.
    w.zoomed = true;
    w.focus(1);
    assert!(w.zoomed);
    assert_eq!(w.last_active, Some(3));
}

#[test]
fn closing_the_focused_pane_returns_focus_to_the_last_one() {
    let mut w = three_panes();
    w.focus(1);
    w.focus(3);
    w.zoomed = true;
    assert!(w.remove_pane(3));
    assert_eq!(w.active, 1, "back to the pane focused before");
    assert!(!w.zoomed);
    assert_eq!(w.layout.panes(), vec![1, 2]);
}

#[test]
fn closing_a_pane_heals_the_layout_and_falls_back_to_the_first_pane() {
    let mut w = three_panes();
    // No last pane: focus goes to the first in layout order.
    assert!(w.remove_pane(3));
    assert_eq!(w.active, 1);
    let rects = w.layout.rects(Rect::new(0, 0, 80, 24));
    assert_eq!(
        rects,
        vec![(1, Rect::new(0, 0, 40, 24)), (2, Rect::new(40, 0, 40, 24))],
        "pane 2 takes the whole right half"
    );
    // Closing an unfocused pane that was the last focused one forgets it.
    w.focus(2);
    w.focus(1);
    assert!(w.remove_pane(2));
    assert_eq!((w.active, w.last_active), (1, None));
    // The last pane is not removed: the window goes instead.
    assert!(!w.remove_pane(1));
    assert_eq!(w.layout, Layout::Pane(1));
    assert!(!w.remove_pane(42), "a pane that is not here");
}

#[test]
fn next_and_previous_pane_wrap_in_layout_order() {
    let mut w = three_panes();
    assert_eq!(w.cycle(true), Some(1));
    assert_eq!(w.cycle(false), Some(2));
    w.focus(1);
    assert_eq!(w.cycle(true), Some(2));
    assert_eq!(w.cycle(false), Some(3));
    let single = window(Layout::Pane(9), 9);
    assert_eq!(single.cycle(true), Some(9));
    assert_eq!(single.cycle(false), Some(9));
}

#[test]
fn zoom_toggles_only_with_more_than_one_pane() {
    let mut w = three_panes();
    w.toggle_zoom();
    assert!(w.zoomed);
    w.toggle_zoom();
    assert!(!w.zoomed);
    let mut single = window(Layout::Pane(1), 1);
    single.toggle_zoom();
    assert!(!single.zoomed);
}

#[test]
fn a_zoomed_pane_fills_the_window_and_the_others_keep_their_size() {
    // 80x25 terminal: the status line takes the last row.
    let mut s = session(vec![three_panes()], 25, 80);
    assert_eq!(s.window_area(), Rect::new(0, 0, 80, 24));
    let sizes = s.pane_sizes();
    assert_eq!(sizes, vec![(1, 22, 38), (2, 10, 38), (3, 10, 38)]);
    assert_eq!(s.visible_rects().len(), 3);
    if let Some(w) = s.window_mut() {
        w.toggle_zoom();
    }
    assert_eq!(s.pane_sizes(), vec![(1, 22, 38), (2, 10, 38), (3, 22, 78)]);
    assert_eq!(s.visible_rects(), vec![(3, Rect::new(0, 0, 80, 24))]);
}

#[test]
fn separators_give_panes_the_window_less_one_line_between_neighbours() {
    // 80x25 terminal, 80x24 window area: 1 | (2 over 3) is 40 + 1 + 39 columns, and the right
    // column is 12 + 1 + 11 rows.
    let mut s = session(vec![three_panes()], 25, 80);
    s.pane_borders = PaneBorders::Separators;
    assert_eq!(s.layout_area(), Rect::new(0, 0, 81, 25));
    assert_eq!(s.pane_sizes(), vec![(1, 24, 40), (2, 12, 39), (3, 11, 39)]);
    if let Some(w) = s.window_mut() {
        w.toggle_zoom();
    }
    // Zoomed: the whole window area, no separator.
    assert_eq!(s.pane_sizes(), vec![(1, 24, 40), (2, 12, 39), (3, 24, 80)]);
    // Beside the sidebar, a lone pane takes every column left of it.
    let mut s = session(vec![window(Layout::Pane(1), 1)], 30, 120);
    s.pane_borders = PaneBorders::Separators;
    s.sidebar = true;
    assert_eq!(s.pane_sizes(), vec![(1, 29, 120 - SIDEBAR_WIDTH)]);
}

#[test]
fn the_sidebar_takes_columns_from_the_window_area() {
    let mut s = session(vec![window(Layout::Pane(1), 1)], 30, 120);
    s.sidebar = true;
    assert_eq!(
        s.window_area(),
        Rect::new(SIDEBAR_WIDTH, 0, 120 - SIDEBAR_WIDTH, 29)
    );
    // Never more than a third of a narrow terminal.
    s.cols = 60;
    assert_eq!(s.window_area(), Rect::new(20, 0, 40, 29));
    assert_eq!(s.pane_sizes(), vec![(1, 27, 38)]);
}

#[test]
fn tiny_sessions_give_every_pane_at_least_one_cell() {
    let s = session(vec![three_panes()], 2, 2);
    for (_, rows, cols) in s.pane_sizes() {
        assert!(rows >= 1 && cols >= 1);
    }
    let huge = session(vec![three_panes()], 200, 500);
    assert_eq!(huge.pane_sizes()[0], (1, 197, 248));
}

#[test]
fn selecting_and_cycling_windows_tracks_the_last_window() {
    let mut s = session(
        vec![
            window(Layout::Pane(1), 1),
            window(Layout::Pane(2), 2),
            window(Layout::Pane(3), 3),
        ],
        24,
        80,
    );
    assert_eq!(s.cycle_window(true), 1);
    assert_eq!(s.cycle_window(false), 2);
    s.select_window(2);
    assert_eq!((s.active_window, s.last_window), (2, Some(0)));
    assert_eq!(s.cycle_window(true), 0);
    assert_eq!(s.active_pane(), Some(3));
    // Selecting the active window or one that does not exist changes nothing.
    s.select_window(2);
    s.select_window(9);
    assert_eq!((s.active_window, s.last_window), (2, Some(0)));
}

#[test]
fn removing_a_window_keeps_the_active_one_where_it_can() {
    let mut s = session(
        vec![
            window(Layout::Pane(1), 1),
            window(Layout::Pane(2), 2),
            window(Layout::Pane(3), 3),
        ],
        24,
        80,
    );
    s.select_window(2);
    // A window before the active one: the active window's index moves down with it.
    let w = s.take_window(0).expect("window 0");
    assert_eq!(w.active, 1);
    assert_eq!(s.active_pane(), Some(3));
    assert_eq!(
        s.last_window, None,
        "indices moved: last-window is forgotten"
    );
    // The active window itself: the one before it becomes active.
    s.take_window(1);
    assert_eq!(s.active_pane(), Some(2));
    assert!(s.take_window(5).is_none());
    s.take_window(0);
    assert!(s.windows.is_empty());
    assert_eq!(s.active_pane(), None);
}

#[test]
fn several_clients_share_the_smallest_size() {
    assert_eq!(
        smallest_size([(40, 120), (30, 200), (50, 100)]),
        Some((30, 100))
    );
    assert_eq!(smallest_size([(24, 80)]), Some((24, 80)));
    // A 1x1 terminal still leaves a pane row and the status line.
    assert_eq!(smallest_size([(1, 1), (50, 200)]), Some((2, 2)));
    assert_eq!(smallest_size(std::iter::empty()), None);
}

#[test]
fn swapping_the_focused_pane_moves_it_and_focus_goes_with_it() {
    let mut w = three_panes();
    w.focus(1);
    w.zoomed = true;
    assert!(w.swap_focused(true));
    assert_eq!(
        (w.layout.panes(), w.active, w.zoomed),
        (vec![2, 1, 3], 1, false)
    );
    // Backwards from the first place wraps to the last.
    w.focus(2);
    assert!(w.swap_focused(false));
    assert_eq!(w.layout.panes(), vec![3, 1, 2]);
    let mut one = window(Layout::Pane(7), 7);
    assert!(!one.swap_focused(true));
}

#[test]
fn breaking_a_pane_out_gives_it_a_window_of_its_own() {
    let mut s = session(vec![three_panes()], 40, 100);
    assert!(s.break_pane(0));
    assert_eq!(s.windows.len(), 2);
    assert_eq!(s.windows[0].layout.panes(), vec![1, 2]);
    assert_ne!(s.windows[0].active, 3);
    assert_eq!((s.active_window, s.last_window), (1, Some(0)));
    assert_eq!(s.windows[1].layout, Layout::Pane(3));
    assert_eq!(s.windows[1].active, 3);
    // A window with one pane has nothing to break out.
    assert!(!s.break_pane(0));
    assert_eq!(s.windows.len(), 2);
}
