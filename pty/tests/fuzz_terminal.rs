//! Random bytes through the parser-to-screen path must never panic, at any size, and the history
//! must stay within its caps.

use calyx_pty::{all_lines, HistoryLimits, Terminal};
use proptest::prelude::*;

fn interesting_bytes() -> impl Strategy<Value = Vec<u8>> {
    // Mix random bytes with escape-sequence fragments so the parser's state machine is exercised.
    let fragment = prop_oneof![
        any::<u8>().prop_map(|b| vec![b]),
        Just(b"\x1b[".to_vec()),
        Just(b"\x1b]".to_vec()),
        Just(b"\x1b[?".to_vec()),
        Just(b"\x07".to_vec()),
        Just(b"\x1bP".to_vec()),
        Just("\u{1F600}".as_bytes().to_vec()),
        Just("\u{4e2d}".as_bytes().to_vec()),
        (0u16..2000).prop_map(|n| n.to_string().into_bytes()),
        Just(b";".to_vec()),
        Just(b"\r\n".to_vec()),
        // Strikethrough and OSC 8 hyperlinks (open with and without id, close, unterminated).
        Just(b"\x1b[9m".to_vec()),
        Just(b"\x1b[29m".to_vec()),
        Just(b"\x1b]8;;".to_vec()),
        Just(b"\x1b]8;id=x;https://e.com/".to_vec()),
        Just(b"\x1b]8;;\x1b\\".to_vec()),
        Just(b"\x1b\\".to_vec()),
    ];
    prop::collection::vec(fragment, 0..400).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_output_never_panics(
        data in interesting_bytes(),
        rows in 1u16..60,
        cols in 1u16..220,
        new_rows in 1u16..60,
        new_cols in 1u16..220,
    ) {
        let limits = HistoryLimits { lines: 50, bytes: 4096 };
        let mut term = Terminal::new(rows, cols, limits);
        term.process(&data);
        let _ = term.drain();
        term.resize(new_rows, new_cols);
        term.process(&data);
        prop_assert!(term.history_bytes() <= 4096);
        let _ = term.screen().contents_formatted();
        // Every link index a cell holds resolves, and what it resolves to is safe to emit.
        let screen = term.screen();
        for row in 0..new_rows {
            for cell in screen.row_cells(row).unwrap_or_default() {
                if cell.link() != 0 {
                    let link = screen.link(cell.link());
                    prop_assert!(link.is_some());
                    prop_assert!(link.is_some_and(|l| !l.uri().chars().any(char::is_control)));
                }
            }
        }
        let mut replay = term.replay_history(new_rows, new_cols);
        let _ = all_lines(&mut replay);
    }
}

#[test]
fn extreme_sizes_are_survived() {
    let mut term = Terminal::new(1, 1, HistoryLimits::default());
    term.process("wide \u{4e2d}\u{1F600} text\r\n\x1b[999;999H\x1b[6n".as_bytes());
    term.resize(200, 500);
    term.process(b"\x1b[200;500Hx");
    term.resize(1, 1);
    term.process(b"y");
    let replies = term.drain().replies;
    assert!(replies.starts_with(b"\x1b[1;1R"), "{replies:?}");
}

/// Emoji that change width after they are drawn (U+FE0F, skin tones, ZWJ) around the last
/// column of narrow screens: upstream vt100 unwrapped the cell after a widened one, which does
/// not exist in the last column.
fn width_changing_text() -> impl Strategy<Value = Vec<u8>> {
    let fragment = prop_oneof![
        Just("\u{2764}".as_bytes().to_vec()),
        Just("\u{FE0F}".as_bytes().to_vec()),
        Just("\u{1F3FD}".as_bytes().to_vec()),
        Just("\u{200D}".as_bytes().to_vec()),
        Just("\u{1F600}".as_bytes().to_vec()),
        Just("\u{301}".as_bytes().to_vec()),
        Just(b"a".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"\x08".to_vec()),
        Just(b"\x1b[?7l".to_vec()),
        Just(b"\x1b[?7h".to_vec()),
        Just(b"\x1b[4h".to_vec()),
        Just(b"\x1b[4l".to_vec()),
        Just(b"\x1b[@".to_vec()),
        Just(b"\x1b[P".to_vec()),
        Just(b"\x1b[K".to_vec()),
        (1u16..8).prop_map(|c| format!("\x1b[{c}G").into_bytes()),
        (1u16..4, 1u16..8).prop_map(|(r, c)| format!("\x1b[{r};{c}H").into_bytes()),
    ];
    prop::collection::vec(fragment, 0..40).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn width_changing_emoji_at_the_edge_never_panic(
        data in width_changing_text(),
        rows in 1u16..4,
        cols in 1u16..7,
    ) {
        let mut term = Terminal::new(rows, cols, HistoryLimits::default());
        term.process(&data);
        term.resize(rows + 1, cols + 1);
        term.process(&data);
        prop_assert!(term.screen().contents_formatted().len() < 1 << 16);
    }
}

#[test]
fn an_emoji_widened_in_the_last_column_does_not_panic() {
    // Found by a random search: a cell widened by U+FE0F in the last column, then a wide
    // character written on it.
    let mut term = Terminal::new(3, 2, HistoryLimits::default());
    term.process("\x1b[3G\u{1F3FD}\u{2764}\u{2764}\u{FE0F}\x1b[1;3H\u{1F3FD}".as_bytes());
    term.process(b"\r\nok");
    assert!(term.screen().contents().contains("ok"));
}
