//! A frame that repaints only the columns a row says changed (`vt100::Screen::row_change`,
//! `CopiedRows::copy_changes`) must show exactly what drawing the whole screen shows, whatever
//! the output did: wide characters written over, erased or cut by the edge, inserted and
//! deleted cells, colours, scrolls.

use std::num::NonZeroU16;
use std::ops::Range;

use calyx_tui::{CopiedRows, PaneView};
use proptest::prelude::*;
use ratatui::buffer::{Buffer, Cell};
use ratatui::layout::Rect;
use ratatui::widgets::Widget;

const ROWS: u16 = 5;

fn output() -> impl Strategy<Value = Vec<u8>> {
    let fragment = prop_oneof![
        "[a-z ]{1,6}".prop_map(String::into_bytes),
        "[a-z]".prop_map(String::into_bytes),
        Just("\u{4e2d}".as_bytes().to_vec()),
        Just("\u{1F600}x".as_bytes().to_vec()),
        Just(b"\x08".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"\r".to_vec()),
        Just(b"\x1b[41m".to_vec()),
        Just(b"\x1b[1;32m".to_vec()),
        Just(b"\x1b[0m".to_vec()),
        (1u16..=ROWS, 1u16..20).prop_map(|(r, c)| format!("\x1b[{r};{c}H").into_bytes()),
        (1u16..6).prop_map(|n| format!("\x1b[{n}D").into_bytes()),
        Just(b"\x1b[K".to_vec()),
        Just(b"\x1b[1K".to_vec()),
        Just(b"\x1b[2@".to_vec()),
        Just(b"\x1b[P".to_vec()),
        Just(b"\x1b[3X".to_vec()),
        Just(b"\x1b[L".to_vec()),
        Just(b"\x1b[2J".to_vec()),
    ];
    prop::collection::vec(fragment, 1..6).prop_map(|v| v.concat())
}

/// What changed in each row since the frame drew `drawn`: the columns, when the row's previous
/// version is the one drawn.
fn changes(screen: &vt100::Screen, drawn: &[u64]) -> Vec<Option<Range<u16>>> {
    (0..ROWS)
        .map(|r| {
            screen
                .row_change(r)
                .filter(|(prior, _)| drawn.get(usize::from(r)) == Some(prior))
                .map(|(_, cols)| cols)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn repainting_changed_columns_shows_the_screen(
        chunks in prop::collection::vec(output(), 1..24),
        width in 3u16..16,
        inset in 0u16..3,
    ) {
        let Some(rows) = NonZeroU16::new(ROWS) else { return Ok(()) };
        let cols = NonZeroU16::new(width).unwrap_or(NonZeroU16::MIN);
        let mut parser = vt100::Parser::new(rows, cols, 0);
        // The pane's area may be narrower than its screen: wide characters get cut there.
        let area = Rect::new(1, 0, width - inset, ROWS);
        let frame = Rect::new(0, 0, width + 2, ROWS);
        let mut by_draw = Buffer::empty(frame);
        let mut by_paint = Buffer::empty(frame);
        let mut drawn = vec![0u64; usize::from(ROWS)];
        let mut copy = CopiedRows::default();
        for chunk in chunks {
            parser.process(&chunk);
            let screen = parser.screen();
            let versions: Vec<u64> = (0..ROWS).map(|r| screen.row_version(r)).collect();
            let redraw: Vec<bool> =
                versions.iter().zip(&drawn).map(|(now, then)| *now == 0 || now != then).collect();
            let changed = changes(screen, &drawn);
            copy.copy_changes(screen, area, &redraw, &changed);
            copy.draw(area, &mut by_draw);
            // As the server's frame does it: each row painted aside, then copied in.
            for row in (0..ROWS).filter(|r| redraw[usize::from(*r)]) {
                let Some(columns) = copy.columns(row, usize::from(area.width)) else {
                    continue;
                };
                let mut painted = vec![Cell::EMPTY; columns.len()];
                prop_assert!(copy.paint(row, &mut painted));
                let at = usize::from(row) * usize::from(frame.width) + usize::from(area.x);
                by_paint.content[at + columns.start..at + columns.end].clone_from_slice(&painted);
            }
            let mut expected = Buffer::empty(frame);
            PaneView { screen, highlights: &[] }.render(area, &mut expected);
            prop_assert_eq!(&by_draw, &expected, "drawn after {:?}", String::from_utf8_lossy(&chunk));
            prop_assert_eq!(&by_paint, &expected, "painted after {:?}", String::from_utf8_lossy(&chunk));
            drawn = versions;
        }
    }
}
