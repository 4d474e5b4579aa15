//! The patched vt100's screen generation: renderers copy a pane's cells from the last frame while
//! it stays the same, so every change to the screen must move it, including a reset (RIS) that
//! replaces the screen.

use calyx_pty::{HistoryLimits, Terminal};

#[test]
fn generation_moves_on_output_resize_and_reset_only() {
    let mut t = Terminal::new(5, 20, HistoryLimits::default());
    let g0 = t.screen().generation();
    assert_eq!(t.screen().generation(), g0, "reading does not move it");
    t.process(b"hello");
    let g1 = t.screen().generation();
    assert_ne!(g1, g0);
    t.resize(6, 20);
    let g2 = t.screen().generation();
    assert_ne!(g2, g1);
    // RIS builds a new screen inside the parser: the generation still moves forward.
    t.process(b"\x1bc");
    let g3 = t.screen().generation();
    assert!(![g0, g1, g2].contains(&g3), "{g0} {g1} {g2} {g3}");
}
