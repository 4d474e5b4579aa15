//! The screen's rows are a ring (vendor/vt100 patch 23, `Grid::rows`): a scroll of the whole
//! screen moves the ring's start instead of every row, while scroll regions, inserted and
//! deleted lines, reverse scrolls, the alternate screen and resizes work on the rows in order.
//! Random streams of those, with resizes between them (narrower, wider, shorter, taller, so the
//! reflow and the height changes meet a ring started anywhere), go to a parser with the ring
//! and to one that rotates every row as upstream did (the reference path); both must keep the
//! same rows, scrollback and screen, cell by cell with wrap flags, and the same cursor, after
//! every step.

use calyx_pty::Answerback;
use proptest::prelude::*;

mod support;
use support::all_rows;

/// The live screen's scrollback, as a pane's terminal has it.
const SCROLLBACK: usize = calyx_pty::terminal::LIVE_SCROLLBACK_ROWS;

fn piece() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        8 => "[ -~]{0,90}".prop_map(String::into_bytes),
        5 => Just(b"\n".to_vec()),
        3 => Just(b"\r\n".to_vec()),
        1 => prop::sample::select(vec!["\u{4e2d}\u{6587}", "\u{e9}", "e\u{301}"])
            .prop_map(|s| s.as_bytes().to_vec()),
        3 => prop::sample::select(vec![
            b"\x1b[3;8r".to_vec(), b"\x1b[2;5r".to_vec(), b"\x1b[r".to_vec(),
            b"\x1b[2J".to_vec(), b"\x1b[3J".to_vec(), b"\x1b[J".to_vec(), b"\x1b[K".to_vec(),
            b"\x1b[5S".to_vec(), b"\x1b[2T".to_vec(), b"\x1b[S".to_vec(), b"\x1b[T".to_vec(),
            b"\x1b[3L".to_vec(), b"\x1b[2M".to_vec(), b"\x1bM".to_vec(), b"\x1bD".to_vec(),
            b"\x1bE".to_vec(), b"\x1b[H".to_vec(), b"\x1b[20;1H".to_vec(), b"\x1b[4;3H".to_vec(),
            b"\x1b[?1049h".to_vec(), b"\x1b[?1049l".to_vec(), b"\x1b[?6h".to_vec(),
            b"\x1b[?6l".to_vec(), b"\x1b7".to_vec(), b"\x1b8".to_vec(), b"\x1bc".to_vec(),
            b"\x1b[1;31m".to_vec(), b"\x1b[0m".to_vec(), b"\x1b[44m\x1b[2K\x1b[0m".to_vec(),
        ]),
    ]
}

/// A step: some output, or a resize to `(rows, cols)`.
#[derive(Clone, Debug)]
enum Step {
    Output(Vec<u8>),
    Resize(u16, u16),
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    prop::collection::vec(
        prop_oneof![
            6 => prop::collection::vec(piece(), 1..40).prop_map(|v| Step::Output(v.concat())),
            1 => (1u16..30, 1u16..100).prop_map(|(r, c)| Step::Resize(r, c)),
        ],
        1..30,
    )
}

fn size(n: u16) -> std::num::NonZeroU16 {
    std::num::NonZeroU16::new(n).unwrap_or(std::num::NonZeroU16::MIN)
}

fn parser(rows: u16, cols: u16, ring: bool) -> vt100::Parser<Answerback> {
    let mut parser = vt100::Parser::new_with_callbacks(
        size(rows),
        size(cols),
        SCROLLBACK,
        Answerback::default(),
    );
    parser.set_reference_text_path(!ring);
    parser
}

fn same_with_and_without_ring(steps: &[Step], rows: u16, cols: u16) {
    let mut ring = parser(rows, cols, true);
    let mut reference = parser(rows, cols, false);
    for (i, step) in steps.iter().enumerate() {
        match step {
            Step::Output(data) => {
                for chunk in data.chunks(61) {
                    ring.process(chunk);
                    reference.process(chunk);
                }
            }
            Step::Resize(rows, cols) => {
                ring.set_size(size(*rows), size(*cols));
                reference.set_size(size(*rows), size(*cols));
            }
        }
        assert_eq!(
            ring.screen().cursor_position(),
            reference.screen().cursor_position(),
            "cursor after step {i}"
        );
        assert_eq!(
            ring.screen().alternate_screen(),
            reference.screen().alternate_screen(),
            "alternate screen after step {i}"
        );
        let (with, without) = (all_rows(&mut ring), all_rows(&mut reference));
        assert_eq!(with.len(), without.len(), "rows after step {i}");
        for (r, (a, b)) in with.iter().zip(&without).enumerate() {
            assert_eq!(
                a,
                b,
                "row {r} of {} (oldest first) after step {i}",
                with.len()
            );
        }
    }
}

proptest! {
    #[test]
    fn scrolls_regions_and_resizes_keep_the_same_rows_with_the_ring(
        steps in steps(),
        rows in 1u16..30,
        cols in 1u16..100,
    ) {
        same_with_and_without_ring(&steps, rows, cols);
    }
}

/// The ring's start moved by many whole-screen scrolls, then a scroll region, inserted and
/// deleted lines, a reverse scroll and a resize each work on the rows in screen order.
#[test]
fn a_ring_started_mid_screen_meets_regions_and_resizes() {
    let mut data = Vec::new();
    for i in 0..37 {
        data.extend_from_slice(format!("line {i}\r\n").as_bytes());
    }
    data.extend_from_slice(
        b"\x1b[3;7r\x1b[5;1Hin region\n\n\n\n\x1b[2L\x1b[M\x1bM\x1b[r\x1b[H\x1b[2T",
    );
    let steps = [
        Step::Output(data),
        Step::Resize(6, 40),
        Step::Output(b"\x1b[6;1Hafter\r\n\r\nmore".to_vec()),
        Step::Resize(14, 7),
        Step::Output(b"\r\nnarrow and long enough to wrap twice\r\n".to_vec()),
    ];
    same_with_and_without_ring(&steps, 10, 20);
}
