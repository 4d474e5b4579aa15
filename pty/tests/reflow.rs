//! The patched vt100's resize (vendor/vt100/src/reflow.rs, `Grid::set_size`): a width change
//! rewraps the primary screen's lines instead of cutting its rows, and a height change moves
//! rows to and from the scrollback without inventing blank ones, so shrinking a pane and growing
//! it back brings its content back.

use std::num::NonZeroU16;

use proptest::prelude::*;

fn nz(n: u16) -> NonZeroU16 {
    NonZeroU16::new(n).expect("test sizes are positive")
}

fn parser(rows: u16, cols: u16, scrollback: usize, bytes: &[u8]) -> vt100::Parser {
    let mut p = vt100::Parser::new(nz(rows), nz(cols), scrollback);
    p.process(bytes);
    p
}

fn resize(p: &mut vt100::Parser, rows: u16, cols: u16) {
    p.screen_mut().set_size(nz(rows), nz(cols));
}

/// Every logical line of the scrollback and the screen (rows joined where they wrapped), oldest
/// first, trailing blanks trimmed, trailing empty lines dropped.
fn logical_lines(p: &mut vt100::Parser) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut open = false;
    let cols = p.screen().size().1.get();
    calyx_pty::for_each_page(p, |screen, take| {
        for (i, text) in screen.rows(0, cols).take(take).enumerate() {
            let wrapped = screen.row_wrapped(u16::try_from(i).expect("rows fit u16"));
            match lines.last_mut() {
                Some(line) if open => line.push_str(&text),
                _ => lines.push(text),
            }
            open = wrapped;
        }
    });
    for line in &mut lines {
        line.truncate(line.trim_end().len());
    }
    while lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    lines
}

/// The screen's rows as text, trailing blanks trimmed.
fn screen_rows(p: &vt100::Parser) -> Vec<String> {
    let cols = p.screen().size().1.get();
    p.screen()
        .rows(0, cols)
        .map(|r| r.trim_end().to_string())
        .collect()
}

/// The text of the cell under the cursor.
fn under_cursor(p: &vt100::Parser) -> String {
    let (row, col) = p.screen().cursor_position();
    p.screen()
        .cell(row, col)
        .map(|c| c.contents().to_string())
        .unwrap_or_default()
}

/// Checks the grid invariants a resize must keep: the cursor is on screen, and a wide character
/// always has its continuation cell in the same row.
fn assert_sane(p: &vt100::Parser) {
    let screen = p.screen();
    let (rows, cols) = (screen.size().0.get(), screen.size().1.get());
    let (crow, ccol) = screen.cursor_position();
    // (col == cols: waiting after a character in the last column)
    assert!(
        crow < rows && ccol <= cols,
        "cursor {crow},{ccol} off a {rows}x{cols} screen"
    );
    for row in 0..rows {
        let cells = screen.row_cells(row).expect("visible row");
        assert_eq!(cells.len(), usize::from(cols), "row {row} width");
        for (col, cell) in cells.iter().enumerate() {
            if cell.is_wide() {
                assert!(
                    cells
                        .get(col + 1)
                        .is_some_and(vt100::Cell::is_wide_continuation),
                    "row {row}: wide cell at {col} without its continuation"
                );
            }
        }
    }
}

const LINES: &[u8] = b"row 1 abcdefghijklmnopqrstuvwxyz0123456789\r\n\
    short\r\n\
    \r\n\
    row 4 the quick brown fox jumps over the lazy dog, twice: the quick brown fox\r\n\
    $ ";

#[test]
fn narrowing_then_widening_restores_every_line_exactly() {
    let mut p = parser(10, 80, 500, LINES);
    let before = screen_rows(&p);
    let cursor = p.screen().cursor_position();
    for cols in [20, 7, 1, 33] {
        resize(&mut p, 10, cols);
        assert_sane(&p);
        resize(&mut p, 10, 80);
        assert_eq!(screen_rows(&p), before, "through {cols} columns");
        assert_eq!(
            p.screen().cursor_position(),
            cursor,
            "through {cols} columns"
        );
        assert_eq!(p.screen().scrollback_len(), 0);
    }
}

#[test]
fn a_full_screen_keeps_its_bottom_row_and_gets_its_rows_back_from_the_scrollback() {
    let mut out = String::new();
    for i in 1..=30 {
        out.push_str(&format!("line {i} {}\r\n", "x".repeat(i % 7 * 5)));
    }
    out.push_str("$ ");
    let mut p = parser(10, 40, 200, out.as_bytes());
    let before = screen_rows(&p);
    let lines = logical_lines(&mut p);
    resize(&mut p, 10, 12);
    assert_sane(&p);
    assert_eq!(
        p.screen().cursor_position().0,
        9,
        "the prompt stays on the bottom row"
    );
    assert_eq!(screen_rows(&p)[9], "$");
    assert_eq!(logical_lines(&mut p), lines);
    resize(&mut p, 10, 40);
    assert_eq!(screen_rows(&p), before);
    assert_eq!(logical_lines(&mut p), lines);
}

#[test]
fn long_lines_wrap_when_narrowed_and_unwrap_when_widened() {
    let line = "0123456789abcdefghijklmnopqrstuvwxyz+-*/ABCDEFGHIJ";
    let mut p = parser(10, 80, 0, format!("{line}\r\nnext").as_bytes());
    resize(&mut p, 10, 20);
    assert_eq!(
        screen_rows(&p)[..4],
        [
            "0123456789abcdefghij",
            "klmnopqrstuvwxyz+-*/",
            "ABCDEFGHIJ",
            "next"
        ]
    );
    assert!(p.screen().row_wrapped(0) && p.screen().row_wrapped(1));
    assert!(!p.screen().row_wrapped(2) && !p.screen().row_wrapped(3));
    assert_eq!(p.screen().cursor_position(), (3, 4));
    resize(&mut p, 10, 50);
    assert_eq!(screen_rows(&p)[..2], [line, "next"]);
    assert!(!p.screen().row_wrapped(0));
    // Text typed after the resize continues the wrapped line where it ended.
    resize(&mut p, 10, 15);
    p.process(b"\x1b[4;6Hxyz");
    assert_eq!(logical_lines(&mut p)[0], format!("{line}xyz"));
}

#[test]
fn clearing_the_screen_ends_the_line_that_wrapped_into_it() {
    // A 10-column screen of 3 rows: the long line's head scrolls into the scrollback, its tail
    // (the row after the head) stays on screen, then `ESC[2J` erases the tail and a prompt is
    // printed where it was.
    let mut p = parser(3, 10, 100, b"a\r\nb\r\n0123456789abcdefghij");
    p.process(b"\r\nend");
    assert!(p.screen().row_wrapped(0), "the head wraps into the tail");
    p.process(b"\r\nx");
    p.process(b"\x1b[2J\x1b[H$ ");
    // Widening pulls the scrollback back: the erased tail's head must not swallow the prompt.
    resize(&mut p, 3, 40);
    let lines = logical_lines(&mut p);
    assert!(
        lines.iter().any(|l| l == "$"),
        "the prompt is a line of its own: {lines:?}"
    );
    assert!(
        !lines.iter().any(|l| l.contains("$") && l.len() > 1),
        "{lines:?}"
    );
}

#[test]
fn the_cursor_stays_on_its_character() {
    // The cursor on the 'j' of a line that wraps at most widths tried.
    let mut p = parser(
        8,
        60,
        50,
        b"first line\r\nthe quick brown fox jumps over the lazy dog\x1b[23D",
    );
    assert_eq!(under_cursor(&p), "j");
    for cols in [9, 4, 2, 1, 17, 60] {
        resize(&mut p, 8, cols);
        assert_sane(&p);
        assert_eq!(under_cursor(&p), "j", "at {cols} columns");
    }
    assert_eq!(p.screen().cursor_position(), (1, 20));
}

#[test]
fn the_cursor_above_other_lines_stays_on_its_character() {
    // Lines below the cursor's are rewrapped after it: the cursor must not be matched again.
    let long = "0123456789".repeat(5);
    let text = format!("{long}\r\n{long}\r\nc\r\nd\r\ne\r\nf\x1b[2;8H");
    let mut p = parser(12, 60, 50, text.as_bytes());
    assert_eq!(under_cursor(&p), "7");
    resize(&mut p, 12, 15);
    assert_eq!(p.screen().cursor_position(), (4, 7));
    resize(&mut p, 12, 60);
    assert_eq!(p.screen().cursor_position(), (1, 7));
}

#[test]
fn the_cursor_past_the_text_keeps_its_place_in_the_line() {
    // A prompt: the cursor sits just after "$ ", on a blank cell.
    let mut p = parser(5, 30, 50, b"$ \x1b[5C");
    assert_eq!(p.screen().cursor_position(), (0, 7));
    resize(&mut p, 5, 4);
    assert_eq!(p.screen().cursor_position(), (1, 3));
    p.process(b"x");
    resize(&mut p, 5, 30);
    assert_eq!(screen_rows(&p)[0], "$      x");
}

#[test]
fn wide_characters_are_never_split() {
    let text = "ab\u{4e2d}\u{6587}cd\u{5b57}";
    let mut p = parser(6, 20, 50, text.as_bytes());
    resize(&mut p, 6, 3);
    assert_sane(&p);
    assert_eq!(
        screen_rows(&p)[..4],
        ["ab", "\u{4e2d}", "\u{6587}c", "d\u{5b57}"]
    );
    resize(&mut p, 6, 2);
    assert_sane(&p);
    resize(&mut p, 6, 20);
    assert_eq!(screen_rows(&p)[0], text);
    assert_eq!(p.screen().cursor_position(), (0, 10));
}

#[test]
fn trailing_blanks_make_no_rows() {
    // A line coloured to the end of its 80-column row (erased blanks): narrowing makes rows for
    // its text only, the blanks filling the rest of the last one.
    let mut p = parser(
        6,
        80,
        50,
        b"\x1b[44mblue line, wrapped\x1b[K\x1b[0m\r\nnext\r\n",
    );
    resize(&mut p, 6, 10);
    assert_eq!(screen_rows(&p)[..4], ["blue line,", " wrapped", "next", ""]);
    assert_eq!(
        p.screen().cell(1, 9).map(vt100::Cell::bgcolor),
        Some(vt100::Color::Idx(4))
    );
    assert_eq!(p.screen().cursor_position(), (3, 0));
}

#[test]
fn attributes_and_links_survive_a_rewrap() {
    let bytes = b"plain \x1b[1;31mbold red\x1b[0m \x1b]8;;https://example.com/x\x1b\\linked text\x1b]8;;\x1b\\ \x1b[9mstruck\x1b[0m";
    let mut p = parser(6, 60, 50, bytes);
    let formatted: Vec<String> = p
        .screen()
        .rows_formatted(0, 60)
        .map(|r| r.to_string())
        .collect();
    resize(&mut p, 6, 7);
    let screen = p.screen();
    // "plain b|old red|...": 'o' of "bold" starts row 1.
    let o = screen.cell(1, 0).expect("cell");
    assert_eq!(
        (o.contents(), o.bold(), o.fgcolor()),
        ("o", true, vt100::Color::Idx(1))
    );
    let linked: Vec<(u16, u16)> = (0..6)
        .flat_map(|r| (0..7).map(move |c| (r, c)))
        .filter(|&(r, c)| {
            screen.cell(r, c).is_some_and(|cell| {
                screen
                    .link(cell.link())
                    .is_some_and(|l| l.uri() == "https://example.com/x")
            })
        })
        .collect();
    assert_eq!(linked.len(), "linked text".len());
    resize(&mut p, 6, 60);
    let after: Vec<String> = p
        .screen()
        .rows_formatted(0, 60)
        .map(|r| r.to_string())
        .collect();
    assert_eq!(after, formatted);
}

#[test]
fn the_alternate_screen_is_cut_not_rewrapped_and_the_primary_rewraps_beneath_it() {
    let mut p = parser(
        6,
        40,
        50,
        b"primary line that is rather long\r\n\x1b[?1049hfull screen app line",
    );
    resize(&mut p, 6, 10);
    resize(&mut p, 6, 40);
    assert_eq!(
        screen_rows(&p)[0],
        "full scree",
        "the alternate screen keeps today's cut"
    );
    assert_eq!(screen_rows(&p)[1], "");
    p.process(b"\x1b[?1049l");
    assert_eq!(screen_rows(&p)[0], "primary line that is rather long");
}

#[test]
fn a_height_grow_with_nothing_to_pull_back_adds_rows_at_the_bottom() {
    let mut out = String::new();
    for i in 1..=8 {
        out.push_str(&format!("{i}\r\n"));
    }
    // No scrollback: the rows a shrink pushed up are gone, and a grow must not stand in blank
    // rows for them at the top.
    let mut p = parser(10, 20, 0, out.as_bytes());
    resize(&mut p, 4, 20);
    assert_eq!(screen_rows(&p), ["6", "7", "8", ""]);
    assert_eq!(p.screen().cursor_position(), (3, 0));
    resize(&mut p, 10, 20);
    assert_eq!(screen_rows(&p)[..5], ["6", "7", "8", "", ""]);
    assert_eq!(p.screen().cursor_position(), (3, 0));
    // With a scrollback, it gives back what it holds, then adds rows at the bottom.
    let mut p = parser(10, 20, 2, out.as_bytes());
    resize(&mut p, 4, 20);
    resize(&mut p, 10, 20);
    assert_eq!(screen_rows(&p)[..6], ["4", "5", "6", "7", "8", ""]);
    assert_eq!(p.screen().cursor_position(), (5, 0));
}

/// Terminal output of all kinds: text, wide characters, attributes, cursor moves, erases,
/// scrolls, the alternate screen.
fn output() -> impl Strategy<Value = Vec<u8>> {
    let fragment = prop_oneof![
        4 => "[a-z ]{1,40}".prop_map(String::into_bytes),
        2 => Just(b"\r\n".to_vec()),
        1 => Just("\u{4e2d}\u{1F600}x".as_bytes().to_vec()),
        1 => Just(b"\x1b[44m".to_vec()),
        1 => Just(b"\x1b[0m".to_vec()),
        1 => (1u16..30, 1u16..90).prop_map(|(r, c)| format!("\x1b[{r};{c}H").into_bytes()),
        1 => Just(b"\x1b[K".to_vec()),
        1 => Just(b"\x1b[2J".to_vec()),
        1 => Just(b"\x1b[5C".to_vec()),
        1 => Just(b"\x1b7".to_vec()),
        1 => Just(b"\x1b8".to_vec()),
        1 => Just(b"\x1b[2;5r".to_vec()),
        1 => Just(b"\x1b[r".to_vec()),
        1 => Just(b"\x1b[?1049h".to_vec()),
        1 => Just(b"\x1b[?1049l".to_vec()),
    ];
    prop::collection::vec(fragment, 1..30).prop_map(|v| v.concat())
}

fn line() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        4 => "[a-z0-9 ]{1,30}",
        1 => Just("\u{4e2d}\u{6587}".to_string()),
        1 => Just("\x1b[1;32m".to_string()),
        1 => Just("\x1b[0m".to_string()),
        1 => Just("\x1b]8;;https://x.test/\x1b\\l\x1b]8;;\x1b\\".to_string()),
    ];
    prop::collection::vec(piece, 0..6).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Whatever the text, narrowing to any width (>= 2, where wide characters still fit) and
    /// widening back gives every logical line back, the screen exactly, and the cursor.
    #[test]
    fn narrowing_to_any_width_and_back_restores_every_line(
        lines in prop::collection::vec(line(), 1..30),
        rows in 2u16..12,
        cols in 10u16..60,
        narrow in 2u16..60,
    ) {
        let mut p = parser(rows, cols, 1000, lines.join("\r\n").as_bytes());
        let before = logical_lines(&mut p);
        let screen = screen_rows(&p);
        let cursor = p.screen().cursor_position();
        resize(&mut p, rows, narrow);
        assert_sane(&p);
        prop_assert_eq!(logical_lines(&mut p), before.clone());
        resize(&mut p, rows, cols);
        assert_sane(&p);
        prop_assert_eq!(logical_lines(&mut p), before);
        prop_assert_eq!(screen_rows(&p), screen);
        prop_assert_eq!(p.screen().cursor_position(), cursor);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Any output, any sequence of sizes (down to 1x1): the cursor stays on screen, every row is
    /// as wide as the screen, and no wide character loses its continuation cell; and whatever
    /// state that left, a line printed next survives being narrowed and widened whole.
    #[test]
    fn any_output_and_resizes_keep_the_grid_sane(
        chunks in prop::collection::vec((output(), 1u16..30, 1u16..90), 1..8),
    ) {
        let mut p = parser(12, 40, 30, b"");
        for (bytes, rows, cols) in chunks {
            p.process(&bytes);
            resize(&mut p, rows, cols);
            assert_sane(&p);
            prop_assert_eq!(p.screen().scrollback(), 0);
        }
        // Not 1 row (a one-row screen marks no row wrapped, as upstream), nor so narrow that the
        // marker overflows the 30-row scrollback as it is printed.
        let (rows, cols) = p.screen().size();
        resize(&mut p, rows.get().max(2), cols.get().max(10));
        let marker = "marker line 0123456789 abcdefghijklmnopqrstuvwxyz";
        p.process(format!("\x1b[?1049l\x1b[r\r\n{marker}").as_bytes());
        let rows = rows.get().max(2);
        resize(&mut p, rows, 10);
        assert_sane(&p);
        resize(&mut p, rows, 60);
        assert_sane(&p);
        let lines = logical_lines(&mut p);
        prop_assert!(lines.iter().any(|l| l.contains(marker)), "{:?}", lines);
    }
}

/// The bytes bash 5.2 writes on SIGWINCH with `prompt` after it drew the prompt at a width where
/// it took `rows_drawn` rows: up over those rows, erasing each, then the prompt.
fn bash_redraw(prompt: &str, rows_drawn: usize) -> Vec<u8> {
    let mut out = b"\r\x1b[K\r".to_vec();
    for _ in 1..rows_drawn {
        out.extend_from_slice(b"\x1b[A\x1b[K\r");
    }
    out.extend_from_slice(prompt.as_bytes());
    out
}

#[test]
fn a_shell_redrawing_its_prompt_after_a_widening_erases_no_printed_line() {
    // Issue 15: the prompt took 4 rows at 10 columns; bash moves up 3 rows at the full width,
    // where the rewrapped prompt is one row: the 3 lines above must not be erased.
    let long = "a fairly long line of text that should rewrap correctly when the width returns";
    let prompt = "user@calyx-host:~/src/project$ ";
    let mut p = parser(
        42,
        158,
        1000,
        format!("1\r\n2\r\n3\r\n4\r\n5\r\n{long}\r\n{prompt}").as_bytes(),
    );
    resize(&mut p, 42, 78);
    p.process(&bash_redraw(prompt, 1));
    resize(&mut p, 5, 10);
    p.process(&bash_redraw(prompt, 1));
    resize(&mut p, 42, 78);
    p.process(&bash_redraw(prompt, 4));
    let lines = logical_lines(&mut p);
    for want in ["1", "2", "3", "4", "5", long] {
        assert!(lines.iter().any(|l| l == want), "{want:?} lost: {lines:#?}");
    }
    assert_eq!(lines.last().map(String::as_str), Some(prompt.trim_end()));
    assert_sane(&p);
}

#[test]
fn a_cursor_up_from_a_row_with_text_moves_as_it_always_did() {
    // The same widening, but the program prints on its row before moving up: not a redraw.
    let prompt = "user@calyx-host:~/src/project$ ";
    let mut p = parser(10, 40, 100, format!("a\r\nb\r\n{prompt}").as_bytes());
    resize(&mut p, 10, 10);
    resize(&mut p, 10, 40);
    let before = screen_rows(&p);
    let (row, _) = p.screen().cursor_position();
    p.process(b"x\x1b[A");
    assert_eq!(p.screen().cursor_position().0, row - 1);
    assert_eq!(screen_rows(&p)[..2], before[..2]);
    assert_eq!(p.screen().scrollback_len(), 0);
}
