//! A full scrollback recycles the buffers of the rows it drops (vendor/vt100 `Row::archive`:
//! a scrolled row's buffer swapped with a spare one, or its cells copied into one, patches 17
//! and 22). What it keeps must be exactly what an unbounded scrollback keeps at its end: the
//! same rows, cell by cell, with the same wrap flags. Random streams of lines of every length
//! (so long and short rows alternate, and rows wrap at the margin, wide characters too), with
//! scroll regions, erasures and the alternate screen, go to a parser whose scrollback fills and
//! to one whose scrollback never does; the last rows of the second must be the rows of the
//! first. Its memory stays bounded by the rows it holds plus a few spare buffers.

use calyx_pty::Answerback;
use proptest::prelude::*;

mod support;
use support::all_rows;

/// The live screen's scrollback, as a pane's terminal has it.
const SCROLLBACK: usize = calyx_pty::terminal::LIVE_SCROLLBACK_ROWS;

fn piece() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        8 => "[ -~]{0,130}".prop_map(String::into_bytes),
        4 => Just(b"\n".to_vec()),
        3 => Just(b"\r\n".to_vec()),
        2 => prop::sample::select(vec!["\u{4e2d}\u{6587}", "\u{e9}", "e\u{301}", "\u{1F600}"])
            .prop_map(|s| s.as_bytes().to_vec()),
        1 => prop::sample::select(vec![
            b"\x1b[3;8r".to_vec(), b"\x1b[r".to_vec(), b"\x1b[2J".to_vec(), b"\x1b[3J".to_vec(),
            b"\x1b[K".to_vec(), b"\x1b[1;31m".to_vec(), b"\x1b[0m".to_vec(), b"\x1b[5S".to_vec(),
            b"\x1b[2T".to_vec(), b"\x1b[?1049h".to_vec(), b"\x1b[?1049l".to_vec(),
            b"\x1bM".to_vec(), b"\x1b[H".to_vec(), b"\x1b[20;1H".to_vec(),
        ]),
    ]
}

fn stream() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(piece(), 0..400).prop_map(|v| v.concat())
}

fn parser(rows: u16, cols: u16, scrollback: usize) -> vt100::Parser<Answerback> {
    let size = |n: u16| std::num::NonZeroU16::new(n).unwrap_or(std::num::NonZeroU16::MIN);
    vt100::Parser::new_with_callbacks(size(rows), size(cols), scrollback, Answerback::default())
}

/// Feeds `data` to both parsers and compares what the bounded one keeps with the end of what
/// the unbounded one keeps.
fn same_as_unbounded(data: &[u8], rows: u16, cols: u16) {
    let mut bounded = parser(rows, cols, SCROLLBACK);
    let mut unbounded = parser(rows, cols, usize::MAX);
    for chunk in data.chunks(97) {
        bounded.process(chunk);
        unbounded.process(chunk);
    }
    // Bounded: the rows held (each at most patch 17's waste, or a screen row's width and a
    // quarter) and at most four spare buffers of a screen row and a quarter.
    let width = usize::from(cols) + usize::from(cols) / 4;
    let held = SCROLLBACK + 2 * usize::from(rows);
    assert!(
        bounded.screen().cells_allocated() <= (held + 4) * (2 * width + 8),
        "{} cells allocated for {held} rows of {cols}",
        bounded.screen().cells_allocated()
    );
    let kept = all_rows(&mut bounded);
    let all = all_rows(&mut unbounded);
    assert_eq!(
        kept.len(),
        all.len().min(SCROLLBACK + usize::from(rows)),
        "rows kept"
    );
    let tail = &all[all.len() - kept.len()..];
    for (i, (k, a)) in kept.iter().zip(tail).enumerate() {
        assert_eq!(k, a, "row {i} of {} (oldest first)", kept.len());
    }
    assert_eq!(
        bounded.screen().cursor_position(),
        unbounded.screen().cursor_position()
    );
}

proptest! {
    #[test]
    fn a_full_scrollback_keeps_what_an_unbounded_one_keeps_at_its_end(
        data in stream(),
        rows in 3u16..14,
        cols in 8u16..90,
    ) {
        same_as_unbounded(&data, rows, cols);
    }
}

/// The text `parse_bench plain` scrolls: lines with bare `\n`, so each starts where the last
/// ended and rows alternate between full (wrapped at the margin) and short.
#[test]
fn lines_that_wrap_at_the_margin_scroll_through_a_full_scrollback_unchanged() {
    let mut data = Vec::new();
    for i in 0..3000 {
        let text = match i % 4 {
            0 => format!("plain ascii text line with some words in it {i}\n"),
            1 => format!("\x1b[1;32mgreen\x1b[0m {}\n", "x".repeat(i % 97)),
            2 => format!("unicode: \u{e9}\u{4e2d}\u{6587} \u{2713} {i}\n"),
            _ => format!("{}\r\n", "y".repeat(i % 211)),
        };
        data.extend_from_slice(text.as_bytes());
    }
    same_as_unbounded(&data, 24, 80);
    same_as_unbounded(&data, 50, 200);
}

/// A resize empties the spare buffers: the memory a shrink gives back is not kept by them.
#[test]
fn a_shrink_leaves_no_spare_buffers_of_the_old_width() {
    let nz = |n: u16| std::num::NonZeroU16::new(n).unwrap_or(std::num::NonZeroU16::MIN);
    let mut p = parser(50, 1000, SCROLLBACK);
    // Full rows scroll through the full scrollback, then short ones (more than a screen of
    // them, so that some scroll too): each short row finds a
    // full row's buffer dropped, which it cannot use, so the spares fill with 1000-cell
    // buffers.
    for _ in 0..300 {
        p.process(format!("{}\r\n", "z".repeat(999)).as_bytes());
    }
    for _ in 0..70 {
        p.process(b"s\r\n");
    }
    let before = p.screen().cells_allocated();
    p.set_size(nz(10), nz(20));
    // Reflow keeps the scrollback's last rows (rewrapped at 20 columns), each within a quarter
    // of its length (plus 8): four spare buffers of 1000 cells could not fit in that.
    let allocated = p.screen().cells_allocated();
    let rows = SCROLLBACK + 10;
    assert!(
        allocated <= rows * (20 + 20 / 4 + 8),
        "{allocated} cells allocated for {rows} rows of 20 (before the shrink: {before})"
    );
}
