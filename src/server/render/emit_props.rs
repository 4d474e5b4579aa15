//! Random pane output through the whole parser-to-screen path: the pane's terminal parses it,
//! `PaneView` draws the screen into a frame, `write_rows` turns the frame into the bytes a
//! client's terminal gets, and a fresh terminal parses those. Nothing may panic at any size, and
//! the user's terminal must show the text the pane's screen holds. (`pty/tests/fuzz_terminal.rs`
//! covers the parser and history alone.)

use calyx_pty::{HistoryLimits, Terminal};
use calyx_tui::{FrameLinks, PaneView};
use proptest::prelude::*;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget as _;

use super::emit::{changed_cells, write_rows, write_spans, Span};

/// Random bytes mixed with escape-sequence fragments, wide characters and hyperlinks.
fn pane_output() -> impl Strategy<Value = Vec<u8>> {
    let fragment = prop_oneof![
        any::<u8>().prop_map(|b| vec![b]),
        "[ -~]{1,12}".prop_map(String::into_bytes),
        Just(b"\x1b[".to_vec()),
        Just(b"\x1b]".to_vec()),
        Just(b"\x1b[?".to_vec()),
        Just(b"\x1b[1;31m".to_vec()),
        Just(b"\x1b[38;5;208;48;2;1;2;3m".to_vec()),
        Just(b"\x1b[7;9;4m".to_vec()),
        Just(b"\x1b[0m".to_vec()),
        Just(b"\x1b[?1049h".to_vec()),
        Just(b"\x1b[?1049l".to_vec()),
        Just(b"\x1b[2J".to_vec()),
        Just(b"\x1b[K".to_vec()),
        Just(b"\x1b[5;3H".to_vec()),
        Just(b"\x1b(0lqk\x1b(B".to_vec()),
        Just(b"\x07".to_vec()),
        Just("\u{1F600}".as_bytes().to_vec()),
        Just("\u{4e2d}\u{6587}".as_bytes().to_vec()),
        Just("e\u{301}".as_bytes().to_vec()),
        (0u16..300).prop_map(|n| n.to_string().into_bytes()),
        Just(b";".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"\t".to_vec()),
        Just(b"\x1b]8;;https://e.com/x\x1b\\".to_vec()),
        Just(b"\x1b]8;;\x1b\\".to_vec()),
    ];
    prop::collection::vec(fragment, 0..300).prop_map(|v| v.concat())
}

/// The text of one frame row as the buffer holds it (a wide character's continuation cell has
/// an empty symbol).
fn buffer_row(buf: &Buffer, y: u16) -> String {
    (0..buf.area.width)
        .map(|x| buf[(x, y)].symbol())
        .collect::<String>()
        .trim_end()
        .to_string()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_pane_output_reaches_the_users_terminal_as_the_pane_shows_it(
        data in pane_output(),
        rows in 1u16..40,
        cols in 1u16..120,
        shrink_rows in 1u16..40,
        shrink_cols in 1u16..120,
    ) {
        let limits = HistoryLimits { lines: 50, bytes: 4096 };
        let mut term = Terminal::new(rows, cols, limits);
        term.process(&data);
        // The pane is resized (the layout changed) and prints the same again.
        term.resize(shrink_rows, shrink_cols);
        term.process(&data);
        let _ = term.drain();
        let (rows, cols) = (shrink_rows, shrink_cols);
        let area = Rect::new(0, 0, cols, rows);
        let mut frame = Buffer::empty(area);
        let mut links = FrameLinks::new(cols, rows);
        PaneView { screen: term.screen(), highlights: &[] }
            .render_with_links(area, &mut frame, &mut links);
        let mut bytes = Vec::new();
        let all: Vec<u16> = (0..rows).collect();
        write_rows(&mut bytes, &frame, &all, Some(&links));
        let nz = |n: u16| std::num::NonZeroU16::new(n).unwrap_or(std::num::NonZeroU16::MIN);
        let mut users = vt100::Parser::new(nz(rows), nz(cols), 0);
        users.process(&bytes);
        let shown: Vec<String> = users
            .screen()
            .rows(0, cols)
            .map(|r| r.trim_end().to_string())
            .collect();
        for y in 0..rows {
            prop_assert_eq!(
                shown.get(usize::from(y)).map(String::as_str).unwrap_or(""),
                buffer_row(&frame, y),
                "row {} of {}x{}",
                y,
                cols,
                rows
            );
        }
    }

    #[test]
    fn random_output_draws_into_any_area_without_panicking(
        data in pane_output(),
        rows in 1u16..30,
        cols in 1u16..100,
        x in 0u16..20,
        y in 0u16..20,
        width in 0u16..120,
        height in 0u16..40,
    ) {
        let mut term = Terminal::new(rows, cols, HistoryLimits { lines: 10, bytes: 1024 });
        term.process(&data);
        // The pane's area may be larger or smaller than its screen, or cut by the frame edge
        // (a 1x1 terminal, a pane being resized).
        let mut frame = Buffer::empty(Rect::new(0, 0, 60, 20));
        PaneView { screen: term.screen(), highlights: &[] }
            .render(Rect::new(x, y, width, height), &mut frame);
        let mut bytes = Vec::new();
        write_rows(&mut bytes, &frame, &(0..20).collect::<Vec<_>>(), None);
        prop_assert!(bytes.ends_with(b"\x1b[0m"));
    }

    #[test]
    fn changed_cells_alone_bring_the_users_terminal_to_the_next_frame(
        before in pane_output(),
        after in pane_output(),
        rows in 1u16..30,
        cols in 1u16..100,
    ) {
        let limits = HistoryLimits { lines: 50, bytes: 4096 };
        let mut term = Terminal::new(rows, cols, limits);
        let area = Rect::new(0, 0, cols, rows);
        let draw = |term: &Terminal| {
            let mut frame = Buffer::empty(area);
            PaneView { screen: term.screen(), highlights: &[] }.render(area, &mut frame);
            frame
        };
        term.process(&before);
        let first = draw(&term);
        let nz = |n: u16| std::num::NonZeroU16::new(n).unwrap_or(std::num::NonZeroU16::MIN);
        let mut users = vt100::Parser::new(nz(rows), nz(cols), 0);
        let mut bytes = Vec::new();
        write_rows(&mut bytes, &first, &(0..rows).collect::<Vec<_>>(), None);
        users.process(&bytes);
        // More output (an echo, a redraw): only the cells that changed are sent.
        term.process(&after);
        let _ = term.drain();
        let next = draw(&term);
        let width = usize::from(cols);
        let spans: Vec<Span> = (0..rows)
            .filter_map(|y| {
                let row = usize::from(y) * width..usize::from(y + 1) * width;
                let (a, b) = changed_cells(&first.content[row.clone()], &next.content[row])?;
                Some(Span { y, x0: a as u16, x1: b as u16 })
            })
            .collect();
        let mut bytes = Vec::new();
        write_spans(&mut bytes, &next, &spans, None);
        users.process(&bytes);
        for y in 0..rows {
            let shown: String = users.screen().rows(0, cols).nth(usize::from(y)).unwrap_or_default();
            prop_assert_eq!(
                shown.trim_end(),
                buffer_row(&next, y),
                "row {} of {}x{}",
                y,
                cols,
                rows
            );
            for x in 0..cols {
                // The second half of a wide character has no attributes of its own.
                let (Some(cell), want) = (users.screen().cell(y, x), &next[(x, y)]) else {
                    continue;
                };
                if want.symbol().is_empty() {
                    continue;
                }
                prop_assert_eq!(cell.bold(), want.modifier.contains(ratatui::style::Modifier::BOLD), "bold at {},{}", x, y);
            }
        }
    }
}
