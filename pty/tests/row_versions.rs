//! The patched vt100's row versions: calyx's renderer skips (or moves, after a scroll) every
//! row whose version it drew before, so a version must never stand for two different contents,
//! whatever the output did in between (scrolls, inserted and deleted lines and cells, erases,
//! scroll regions, the alternate screen, resets, resizes). A row also says which of its columns
//! changed since its previous version (`Screen::row_change`), and the renderer repaints only
//! those: every other column must hold what that version held.

use std::collections::HashMap;

use calyx_pty::{HistoryLimits, Terminal};
use proptest::prelude::*;

fn output() -> impl Strategy<Value = Vec<u8>> {
    let fragment = prop_oneof![
        "[a-z ]{1,12}".prop_map(String::into_bytes),
        Just(b"\r\n".to_vec()),
        Just(b"\n".to_vec()),
        Just(b"\r".to_vec()),
        Just("\u{4e2d}\u{1F600}".as_bytes().to_vec()),
        Just(b"\x1b[41m".to_vec()),
        Just(b"\x1b[0m".to_vec()),
        Just(b"\x1b[H".to_vec()),
        (1u16..30, 1u16..90).prop_map(|(r, c)| format!("\x1b[{r};{c}H").into_bytes()),
        Just(b"\x1b[2J".to_vec()),
        Just(b"\x1b[J".to_vec()),
        Just(b"\x1b[1J".to_vec()),
        Just(b"\x1b[K".to_vec()),
        Just(b"\x1b[1K".to_vec()),
        Just(b"\x1b[2L".to_vec()),
        Just(b"\x1b[M".to_vec()),
        Just(b"\x1b[3@".to_vec()),
        Just(b"\x1b[2P".to_vec()),
        Just(b"\x1b[4X".to_vec()),
        Just(b"\x1b[2S".to_vec()),
        Just(b"\x1b[T".to_vec()),
        Just(b"\x1bM".to_vec()),
        Just(b"\x1bD".to_vec()),
        (1u16..10, 10u16..30).prop_map(|(t, b)| format!("\x1b[{t};{b}r").into_bytes()),
        Just(b"\x1b[r".to_vec()),
        Just(b"\x1b[?1049h".to_vec()),
        Just(b"\x1b[?1049l".to_vec()),
        Just(b"\x1bc".to_vec()),
    ];
    prop::collection::vec(fragment, 1..40).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_row_version_always_stands_for_the_same_cells(
        chunks in prop::collection::vec((output(), proptest::option::of((3u16..30, 5u16..90))), 1..12),
    ) {
        let mut t = Terminal::new(12, 40, HistoryLimits::default());
        let mut seen: HashMap<u64, Vec<vt100::Cell>> = HashMap::new();
        for (bytes, resize) in chunks {
            t.process(&bytes);
            if let Some((rows, cols)) = resize {
                t.resize(rows, cols);
            }
            let screen = t.screen();
            let (rows, _) = screen.size();
            for row in 0..rows.get() {
                let version = screen.row_version(row);
                prop_assert_ne!(version, 0, "row {} has no version after output", row);
                let cells = screen.row_cells(row).unwrap_or_default().to_vec();
                // What the row says changed since its previous version: every other cell
                // is as that version had it.
                if let Some((prior, changed)) = screen.row_change(row) {
                    prop_assert_ne!(prior, version);
                    if let Some(before) = seen.get(&prior) {
                        let common = before.len().min(cells.len());
                        for col in (0..common).filter(|c| !changed.contains(&(*c as u16))) {
                            prop_assert_eq!(
                                &before[col], &cells[col],
                                "row {} col {} changed outside {:?} since version {}",
                                row, col, changed, prior
                            );
                        }
                    }
                }
                match seen.get(&version) {
                    Some(before) => prop_assert_eq!(before, &cells, "version {} changed", version),
                    None => {
                        seen.insert(version, cells);
                    }
                }
            }
        }
    }
}

#[test]
fn an_unchanged_row_keeps_its_version_and_a_scroll_moves_it() {
    let mut t = Terminal::new(4, 10, HistoryLimits::default());
    t.process(b"a\r\nb\r\nc\r\nd");
    let before: Vec<u64> = (0..4).map(|r| t.screen().row_version(r)).collect();
    t.process(b"x");
    let after: Vec<u64> = (0..4).map(|r| t.screen().row_version(r)).collect();
    assert_eq!(
        before[..3],
        after[..3],
        "rows not written to keep their versions"
    );
    assert_ne!(before[3], after[3]);
    t.process(b"\r\n");
    let scrolled: Vec<u64> = (0..4).map(|r| t.screen().row_version(r)).collect();
    assert_eq!(
        scrolled[..3],
        after[1..],
        "a scroll moves the versions up with the rows"
    );
}
