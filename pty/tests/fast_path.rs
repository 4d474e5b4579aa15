//! The fast text path (vendor/vt100 `text_run.rs`: printable ASCII written a row segment at a
//! time, and rows handed to the scrollback without copying their cells) must not change what
//! the screen shows. Random streams and the recordings in fixtures/streams go through a pane's
//! terminal twice, once on the fast path and once on the reference path (every character
//! written one at a time, as upstream vt100 does), each cut into its own random chunks; the
//! grids (screen and scrollback, cell by cell: text, width, attributes, links), the wrap flags,
//! the cursor, the modes, the title, the answers to queries, the history and the commands
//! must all be the same.

use calyx_pty::{Answerback, HistoryLimits, Terminal};
use proptest::prelude::*;

mod support;
use support::all_rows;

/// Rows the vt100-level comparison keeps above the screen (as a pane's live screen does).
const SCROLLBACK: usize = calyx_pty::terminal::LIVE_SCROLLBACK_ROWS;

fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/../fixtures/streams/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

const RECORDINGS: [&str; 10] = [
    "bash-readline.bin",
    "claude-turn.bin",
    "codex-turn.bin",
    "crossterm-startup.bin",
    "curses-app.bin",
    "less-search.bin",
    "ls-color.bin",
    "ls-hyperlink.bin",
    "top.bin",
    "vim-edit.bin",
];

/// Pieces of terminal output that exercise the text path's edges: runs of ASCII of every
/// length (so rows fill, wrap and scroll), wide and combining characters for the runs to
/// overwrite, cursor moves into the middle of them, erasures, insertions, scroll regions,
/// the alternate screen, SGR and OSC 8 state that printed cells copy, REP (which repeats the
/// last printed character), queries, line drawing, and bytes that are not valid UTF-8.
/// Not U+FE0F: an emoji it widens in the last column leaves a wide cell without a
/// continuation, and the next character written there panics upstream vt100's wide-character
/// clean-up on either path (`Screen::text_cleanup`'s `unwrap`s; emoji widths are issue 15).
fn piece() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        6 => "[ -~]{1,90}".prop_map(String::into_bytes),
        2 => Just(b"\r\n".to_vec()),
        1 => Just(b"\n".to_vec()),
        1 => Just(b"\r".to_vec()),
        1 => Just(b"\t".to_vec()),
        1 => Just(b"\x08".to_vec()),
        1 => Just(b"\x07".to_vec()),
        1 => Just(b"\x7f".to_vec()),
        2 => prop::sample::select(vec![
            "\u{4e2d}", "\u{6587}", "\u{1F600}", "\u{e9}", "\u{2713}", "e\u{301}", "\u{301}",
            "\u{200d}", "\u{fffd}", "\u{85}", "\u{17D8}",
        ])
        .prop_map(|s| s.as_bytes().to_vec()),
        1 => prop::sample::select(vec![
            b"\xff".to_vec(), b"\xe4\xb8".to_vec(), b"\xc3".to_vec(), b"\x9b".to_vec(),
        ]),
        3 => (1u16..40, 1u16..120).prop_map(|(r, c)| format!("\x1b[{r};{c}H").into_bytes()),
        2 => (prop::sample::select(vec!['A', 'B', 'C', 'D', 'G', 'd', '@', 'P', 'X', 'L', 'M',
                                         'S', 'T', 'b', 'K', 'J', 'E', 'F']),
              0u16..30)
            .prop_map(|(f, n)| format!("\x1b[{n}{f}").into_bytes()),
        1 => prop::sample::select(vec![
            b"\x1b[1K".to_vec(), b"\x1b[2K".to_vec(), b"\x1b[1J".to_vec(), b"\x1b[2J".to_vec(),
            b"\x1b[3J".to_vec(), b"\x1b[?1049h".to_vec(), b"\x1b[?1049l".to_vec(),
            b"\x1b[?47h".to_vec(), b"\x1b[?6h".to_vec(), b"\x1b[?6l".to_vec(),
            b"\x1b7".to_vec(), b"\x1b8".to_vec(), b"\x1bM".to_vec(), b"\x1bc".to_vec(),
            b"\x1b[3;8r".to_vec(), b"\x1b[r".to_vec(), b"\x1b(0".to_vec(), b"\x1b(B".to_vec(),
            b"\x1b[6n".to_vec(), b"\x1b[?2026$p".to_vec(), b"\x1b]2;title; with; semis\x07".to_vec(),
            b"\x1b]133;C;cmdline=ls\x07".to_vec(), b"\x1b]133;D;0\x07".to_vec(),
            b"\x1b]133;A\x07".to_vec(), b"\x1b]7;file://h/tmp\x07".to_vec(),
            b"\x1b[?25l".to_vec(), b"\x1b[?1h".to_vec(), b"\x1b[?2004h".to_vec(),
        ]),
        3 => prop::sample::select(vec![
            b"\x1b[0m".to_vec(), b"\x1b[1;31m".to_vec(), b"\x1b[7m".to_vec(), b"\x1b[9m".to_vec(),
            b"\x1b[38;5;208m".to_vec(), b"\x1b[48;2;10;20;30m".to_vec(), b"\x1b[4;2m".to_vec(),
            b"\x1b]8;id=a;https://e.example/a\x1b\\".to_vec(), b"\x1b]8;;\x1b\\".to_vec(),
            b"\x1b]8;;https://e.example/b\x07".to_vec(),
        ]),
        // Fragments that leave the parser inside a sequence at a chunk's end.
        1 => prop::sample::select(vec![
            b"\x1b".to_vec(), b"\x1b[".to_vec(), b"\x1b[3".to_vec(), b"\x1b]0;t".to_vec(),
            b"\x1bP".to_vec(), b"\x18".to_vec(),
        ]),
    ]
}

fn stream() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(piece(), 0..120).prop_map(|v| v.concat())
}

/// Chunk lengths to cut a stream into (cycled), so the two paths see different cuts.
fn cuts() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(1usize..300, 1..8)
}

fn chunks<'a>(data: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    let mut rest = data;
    for &cut in cuts.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (head, tail) = rest.split_at(cut.min(rest.len()));
        out.push(head);
        rest = tail;
    }
    out
}

/// Everything a pane's terminal shows or answers, as values to compare.
#[derive(Debug, PartialEq)]
struct Seen {
    rows: Vec<(Vec<vt100::Cell>, bool)>,
    cursor: (u16, u16),
    modes: String,
    title: Option<String>,
    replies: Vec<u8>,
    history_bytes: usize,
    history: Vec<String>,
    commands: Vec<(String, Option<i32>, String)>,
}

fn seen(term: &mut Terminal, rows: u16, cols: u16) -> Seen {
    let screen = term.screen();
    let visible = (0..screen.size().0.get())
        .map(|r| {
            (
                screen.row_cells(r).unwrap_or_default().to_vec(),
                screen.row_wrapped(r),
            )
        })
        .collect();
    let modes = format!(
        "{:?} {} {} {} {} {} {:?} {:?} {:?} {}",
        screen.attributes_formatted(),
        screen.alternate_screen(),
        screen.application_keypad(),
        screen.application_cursor(),
        screen.hide_cursor(),
        screen.bracketed_paste(),
        screen.mouse_protocol_mode(),
        screen.mouse_protocol_encoding(),
        screen.cursor_style(),
        term.synchronized_output(),
    );
    let cursor = screen.cursor_position();
    let title = term.title().map(str::to_owned);
    let replies = term.take_replies();
    let mut replay = term.replay_history(rows, cols);
    let history = calyx_pty::all_lines(&mut replay);
    let commands = term
        .commands()
        .records()
        .map(|r| (r.command.clone(), r.exit_code, r.output.clone()))
        .collect();
    Seen {
        rows: visible,
        cursor,
        modes,
        title,
        replies,
        history_bytes: term.history_bytes(),
        history,
        commands,
    }
}

type Rows = [(Vec<vt100::Cell>, bool)];

/// Panics at the first row that differs, showing both (a whole `Seen` is too long to read).
fn assert_same_rows(fast: &Rows, reference: &Rows, what: &str) {
    for (i, (f, r)) in fast.iter().zip(reference).enumerate() {
        if f != r {
            let text = |row: &(Vec<vt100::Cell>, bool)| {
                let cells: Vec<String> = row
                    .0
                    .iter()
                    .map(|c| {
                        format!(
                            "{:?}{}",
                            c.contents(),
                            if c.is_wide() {
                                "W"
                            } else if c.is_wide_continuation() {
                                "C"
                            } else {
                                ""
                            }
                        )
                    })
                    .collect();
                format!("wrapped {} {}", row.1, cells.join(" "))
            };
            let at = f.0.iter().zip(&r.0).position(|(a, b)| a != b);
            panic!(
                "{what}: row {i} differs at cell {at:?}\nfast:      {}\nreference: {}\nfast cell {:?}\nref cell  {:?}",
                text(f),
                text(r),
                at.and_then(|a| f.0.get(a)),
                at.and_then(|a| r.0.get(a)),
            );
        }
    }
    assert_eq!(fast.len(), reference.len(), "{what}: row count");
}

fn assert_same(fast: &Seen, reference: &Seen) {
    assert_same_rows(&fast.rows, &reference.rows, "screen");
    assert_eq!(fast.cursor, reference.cursor, "cursor");
    assert_eq!(fast.modes, reference.modes, "modes");
    assert_eq!(fast.title, reference.title, "title");
    assert_eq!(fast.replies, reference.replies, "replies");
    assert_eq!(fast.history_bytes, reference.history_bytes, "history bytes");
    assert_eq!(fast.history, reference.history, "history");
    assert_eq!(fast.commands, reference.commands, "commands");
}

fn vt100_parser(rows: u16, cols: u16, reference: bool) -> vt100::Parser<Answerback> {
    let size = |n: u16| std::num::NonZeroU16::new(n).unwrap_or(std::num::NonZeroU16::MIN);
    let mut parser = vt100::Parser::new_with_callbacks(
        size(rows),
        size(cols),
        SCROLLBACK,
        Answerback::default(),
    );
    parser.set_reference_text_path(reference);
    parser
}

/// Feeds `data` to a pane's terminal on each path, cut differently, and compares all it shows.
fn same_on_both_paths(
    data: &[u8],
    rows: u16,
    cols: u16,
    fast_cuts: &[usize],
    reference_cuts: &[usize],
) {
    // Large enough that nothing is trimmed: the byte log drops whole chunks, so where it cuts
    // depends on the chunking, which differs between the two runs.
    let limits = HistoryLimits {
        lines: 1 << 20,
        bytes: 16 << 20,
    };
    let mut fast = Terminal::new(rows, cols, limits);
    let mut reference = Terminal::new(rows, cols, limits);
    reference.set_reference_path(true);
    let mut fast_replies = Vec::new();
    let mut reference_replies = Vec::new();
    for chunk in chunks(data, fast_cuts) {
        fast.process(chunk);
        fast_replies.extend(fast.take_replies());
    }
    for chunk in chunks(data, reference_cuts) {
        reference.process(chunk);
        reference_replies.extend(reference.take_replies());
    }
    assert_eq!(fast_replies, reference_replies, "answers to queries");
    assert_same(
        &seen(&mut fast, rows, cols),
        &seen(&mut reference, rows, cols),
    );

    // The scrollback above the live screen, which only vt100 itself shows.
    let mut fast = vt100_parser(rows, cols, false);
    let mut reference = vt100_parser(rows, cols, true);
    for chunk in chunks(data, fast_cuts) {
        fast.process(chunk);
    }
    for chunk in chunks(data, reference_cuts) {
        reference.process(chunk);
    }
    assert_same_rows(
        &all_rows(&mut fast),
        &all_rows(&mut reference),
        "scrollback and screen",
    );
    assert_eq!(
        fast.screen().cursor_position(),
        reference.screen().cursor_position()
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(192))]

    #[test]
    fn random_streams_show_the_same_on_both_paths(
        data in stream(),
        rows in 1u16..30,
        cols in 1u16..100,
        fast_cuts in cuts(),
        reference_cuts in cuts(),
    ) {
        same_on_both_paths(&data, rows, cols, &fast_cuts, &reference_cuts);
    }

    #[test]
    fn recordings_show_the_same_on_both_paths(
        which in 0usize..RECORDINGS.len(),
        rows in 2u16..40,
        cols in 10u16..140,
        fast_cuts in cuts(),
        reference_cuts in cuts(),
    ) {
        let data = fixture(RECORDINGS[which]);
        same_on_both_paths(&data, rows, cols, &fast_cuts, &reference_cuts);
    }
}

#[test]
fn every_recording_at_its_own_size_shows_the_same_on_both_paths() {
    for name in RECORDINGS {
        let data = fixture(name);
        for (rows, cols) in [(24, 80), (12, 40)] {
            same_on_both_paths(&data, rows, cols, &[4096], &[1]);
        }
    }
}

#[test]
fn cell_stays_32_bytes() {
    // The fast path must not make a cell larger: a 200x50 pane with 100 rows above it holds
    // 30,000 of them.
    assert_eq!(std::mem::size_of::<vt100::Cell>(), 32);
}

#[test]
fn a_long_run_over_wide_characters_wraps_and_scrolls_the_same_on_both_paths() {
    // A long run that wraps and scrolls, over wide characters, on a small screen.
    let mut data = "\u{4e2d}".repeat(30).into_bytes();
    data.extend_from_slice(b"\x1b[1;2H");
    data.extend(b"abcdefghij".repeat(40));
    same_on_both_paths(&data, 5, 13, &[7], &[64 * 1024]);
}

#[test]
fn a_character_cut_between_reads_keeps_the_newline_after_it() {
    // vte 0.15 completed a cut character from the next four bytes and, when those did not all
    // decode (here the start of another cut character), skipped all it had read: the line
    // feed was lost, so the next character went on the first line (vendor/vt100 patch 18).
    let mut t = Terminal::new(3, 10, HistoryLimits::default());
    t.process(b"a\xcc");
    t.process(b"\x81\n\xe4");
    t.process(b"\xb8\xad");
    let screen = t.screen();
    assert_eq!(screen.cursor_position(), (1, 3));
    let text = |row, col| screen.cell(row, col).map(|c| c.contents().to_string());
    assert_eq!(text(0, 0).as_deref(), Some("a\u{301}"));
    assert_eq!(text(0, 1).as_deref(), Some(""));
    assert_eq!(text(1, 1).as_deref(), Some("\u{4e2d}"));
}
