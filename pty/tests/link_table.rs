//! The OSC 8 link table of the patched vt100 under a hostile stream (issue 13): a program
//! printing endless distinct links keeps the table bounded, costs a constant amount of work
//! per link (counted in cells the table's compactions visit, never timed), and every linked
//! cell still points at its own link, as `capture --ansi` writes them out.

use calyx_pty::{HistoryLimits, Terminal};
use proptest::prelude::*;

/// Most entries a screen's link table holds (vendor/vt100/src/link.rs).
const MAX_LINKS: usize = 4096;

/// Link `i`: its URI and the text printed inside it, `<i>`.
fn link(i: usize) -> String {
    format!("\x1b]8;id=n{i};https://e.example/{i}\x1b\\<{i}>\x1b]8;;\x1b\\")
}

/// The number in a link's URI.
fn number_of(uri: &str) -> Option<usize> {
    uri.strip_prefix("https://e.example/")?.parse().ok()
}

/// Checks every run of cells sharing a link: the link exists, and the run's text is part of
/// the text that link was printed with (once, or several times in a row). Returns how many cells carry a link.
fn check_links(screen: &vt100::Screen) -> usize {
    let (rows, _) = screen.size();
    let mut linked = 0;
    for row in 0..rows.get() {
        let cells = screen.row_cells(row).unwrap_or_default();
        let mut col = 0;
        while col < cells.len() {
            let index = cells[col].link();
            let end = cells[col..]
                .iter()
                .position(|c| c.link() != index)
                .map_or(cells.len(), |n| col + n);
            if index != 0 {
                let uri = screen
                    .link(index)
                    .map(|l| l.uri().to_string())
                    .unwrap_or_else(|| panic!("row {row} col {col}: index {index} has no link"));
                let n = number_of(&uri).unwrap_or_else(|| panic!("unexpected uri {uri:?}"));
                let text: String = cells[col..end].iter().map(|c| c.contents()).collect();
                // The same link printed twice in a row is one run of one link (`<n><n>`), so
                // the run is part of that link's text repeated, and of no other link's.
                let own = format!("<{n}>");
                let repeated = own.repeat(text.len() / own.len() + 2);
                assert!(
                    repeated.contains(&text),
                    "row {row} col {col}: text {text:?} under the link of <{n}>"
                );
                linked += end - col;
            }
            col = end;
        }
    }
    linked
}

#[test]
fn a_hundred_thousand_distinct_links_cost_constant_work_each_and_stay_bounded() {
    // 400x50 with 100 rows above: 60,000 cells, holding about 8,000 of these 5-8 cell links at
    // once, more than the table.
    let mut t = Terminal::new(50, 400, HistoryLimits::default());
    let total = 100_000;
    let mut chunk = String::new();
    for i in 0..total {
        chunk.push_str(&link(i));
        if i % 500 == 499 {
            t.process(chunk.as_bytes());
            chunk.clear();
            assert!(t.screen().link_table_len() <= MAX_LINKS);
            // Scanning the screen for every link (what the table did once full of live links)
            // would be 60,000 cells a link.
            let scanned = t.screen().link_scan_cells();
            assert!(
                scanned <= 200 * (i as u64 + 1),
                "compactions visited {scanned} cells for {} links",
                i + 1
            );
        }
    }
    t.process(chunk.as_bytes());
    assert!(t.screen().link_table_len() <= MAX_LINKS);
    assert!(check_links(t.screen()) > 0);
}

#[test]
fn the_newest_link_after_a_flood_is_intact() {
    let mut t = Terminal::new(50, 200, HistoryLimits::default());
    let flood: String = (0..20_000).map(|i| link(i) + " ").collect();
    t.process(flood.as_bytes());
    // The screen is then cleared and the scrollback forgotten: every old link is dead. Within
    // one new link per 64 cells of the screen (30,000 / 64 < 500: the most a table full of
    // live links waits before it is compacted again), links work again.
    t.process(b"\x1b[2J\x1b[3J\x1b[H");
    t.clear_history();
    let fillers: String = (100_000..100_500).map(link).collect();
    t.process(fillers.as_bytes());
    t.process(b"\x1b[2J\x1b[H");
    t.process(link(777_777).as_bytes());
    let s = t.screen();
    let uri = s
        .cell(0, 1)
        .and_then(|c| s.link(c.link()))
        .map(|l| l.uri().to_string());
    assert_eq!(uri.as_deref(), Some("https://e.example/777777"));
}

#[test]
fn an_identical_link_anywhere_in_the_table_reuses_its_entry() {
    let mut t = Terminal::new(50, 200, HistoryLimits::default());
    t.process(link(0).as_bytes());
    for i in 1..200 {
        t.process(link(i).as_bytes());
    }
    let len = t.screen().link_table_len();
    t.process(link(0).as_bytes());
    assert_eq!(t.screen().link_table_len(), len);
}

/// `capture --ansi` output (`rows_formatted`) parsed again gives the same cells and links.
fn round_trips(screen: &vt100::Screen) {
    let (rows, cols) = screen.size();
    let mut again = vt100::Parser::new(rows, cols, 0);
    let formatted: Vec<String> = screen.rows_formatted(0, cols.get()).collect();
    for (i, row) in formatted.iter().enumerate() {
        again.process(format!("\x1b[{};1H", i + 1).as_bytes());
        again.process(row.as_bytes());
    }
    let a = again.screen();
    for row in 0..rows.get() {
        for col in 0..cols.get() {
            let (x, y) = (screen.cell(row, col), a.cell(row, col));
            let uri = |s: &vt100::Screen, c: Option<&vt100::Cell>| {
                c.and_then(|c| s.link(c.link()))
                    .map(|l| l.uri().to_string())
            };
            assert_eq!(
                x.map(|c| c.contents().to_string()),
                y.map(|c| c.contents().to_string()),
                "text at {row},{col}"
            );
            assert_eq!(uri(screen, x), uri(a, y), "link at {row},{col}");
        }
    }
}

/// What a fuzzed program prints.
#[derive(Debug, Clone)]
enum Op {
    /// A link never printed before.
    Fresh,
    /// The link printed this many links ago.
    Again(usize),
    Text(String),
    Newline,
    ClearScreen,
    Resize(u16, u16),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => Just(Op::Fresh),
        2 => (0usize..5000).prop_map(Op::Again),
        2 => "[a-z ]{0,12}".prop_map(Op::Text),
        2 => Just(Op::Newline),
        1 => Just(Op::ClearScreen),
        1 => (2u16..60, 2u16..120).prop_map(|(r, c)| Op::Resize(r, c)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn links_stay_bounded_and_every_linked_cell_points_at_its_own_link(
        ops in prop::collection::vec(op(), 1..400),
        burst in 20usize..200,
    ) {
        let mut t = Terminal::new(20, 60, HistoryLimits::default());
        let mut printed: Vec<usize> = Vec::new();
        let mut next = 0usize;
        for op in ops {
            let bytes = match op {
                // A burst of fresh links, so the table fills within a case.
                Op::Fresh => (0..burst)
                    .map(|_| {
                        next += 1;
                        printed.push(next);
                        link(next)
                    })
                    .collect::<String>(),
                Op::Again(back) => match printed.len().checked_sub(back + 1) {
                    Some(at) => link(printed[at]),
                    None => String::new(),
                },
                Op::Text(s) => s,
                Op::Newline => "\r\n".to_string(),
                Op::ClearScreen => "\x1b[2J\x1b[H".to_string(),
                Op::Resize(r, c) => {
                    t.resize(r, c);
                    String::new()
                }
            };
            t.process(bytes.as_bytes());
            prop_assert!(t.screen().link_table_len() <= MAX_LINKS);
            check_links(t.screen());
        }
        round_trips(t.screen());
    }
}
