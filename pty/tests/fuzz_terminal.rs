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
