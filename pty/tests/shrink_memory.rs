//! A screen that shrinks gives its cells' memory back (issue 13: a pane once 3000x3000 kept a
//! gigabyte). Counted as the rows' storage (`Screen::cells_allocated`), not as RSS.

use calyx_pty::{HistoryLimits, Terminal};

#[test]
fn a_huge_screen_shrunk_keeps_storage_for_its_new_size_only() {
    // 200x5000 is a million cells a grid; a full-screen program uses the alternate one too.
    let mut t = Terminal::new(200, 5000, HistoryLimits::default());
    t.process(b"primary text\r\n\x1b[?1049h");
    for row in 1..=200 {
        t.process(format!("\x1b[{row};1H{}", "x".repeat(5000)).as_bytes());
    }
    assert!(t.screen().cells_allocated() >= 1_000_000);
    t.resize(24, 80);
    // Both screens at 24x80, the primary's 100 rows above it (archived rows keep at most
    // about twice their text), and a quarter of slack per row.
    let bound = 2 * 24 * 80 * 5 / 4 + 100 * (2 * 80 + 8);
    let allocated = t.screen().cells_allocated();
    assert!(
        allocated <= bound,
        "{allocated} cells allocated after shrinking to 24x80 (bound {bound})"
    );
}
