//! Strikethrough (SGR 9/29) and OSC 8 hyperlinks in the pane screen: the patched vt100 in
//! vendor/vt100 stores both per cell, and drops links that are unsafe to pass to the user's
//! terminal.

use calyx_pty::{HistoryLimits, Terminal};

fn term(bytes: &[u8]) -> Terminal {
    let mut t = Terminal::new(10, 80, HistoryLimits::default());
    t.process(bytes);
    t
}

/// The link URI of the cell at (row, col), if any.
fn uri_at(t: &Terminal, row: u16, col: u16) -> Option<String> {
    let screen = t.screen();
    let cell = screen.cell(row, col)?;
    screen.link(cell.link()).map(|l| l.uri().to_string())
}

#[test]
fn sgr_9_and_29_toggle_strikethrough_and_capture_keeps_it() {
    let t = term(b"a\x1b[3;9mbc\x1b[29md\x1b[9;1me\x1b[0mf");
    let s = t.screen();
    let struck: Vec<bool> = (0..6)
        .map(|c| s.cell(0, c).is_some_and(|x| x.strikethrough()))
        .collect();
    assert_eq!(struck, [false, true, true, false, true, false]);
    assert!(s.cell(0, 4).is_some_and(|c| c.bold()));
    let formatted = s.contents_formatted();
    assert!(formatted.contains("\x1b[3;9mbc"), "{formatted:?}");
    assert!(formatted.contains("\x1b[29md"), "{formatted:?}");
}

#[test]
fn osc8_links_cells_until_closed_and_survives_sgr_reset() {
    let t = term(b"x\x1b]8;id=a1;https://example.com/p?q=1\x1b\\li\x1b[0mnk\x1b]8;;\x1b\\y");
    assert_eq!(uri_at(&t, 0, 0), None);
    for col in 1..5 {
        assert_eq!(
            uri_at(&t, 0, col).as_deref(),
            Some("https://example.com/p?q=1"),
            "col {col}"
        );
    }
    assert_eq!(uri_at(&t, 0, 5), None);
    let s = t.screen();
    let link = s.cell(0, 1).and_then(|c| s.link(c.link()));
    assert_eq!(link.and_then(|l| l.id()), Some("a1"));
}

#[test]
fn uri_with_semicolons_is_put_back_together_and_bel_terminates() {
    let t = term(b"\x1b]8;;https://e.com/a;b;c\x07L\x1b]8;;\x07");
    assert_eq!(uri_at(&t, 0, 0).as_deref(), Some("https://e.com/a;b;c"));
}

#[test]
fn erased_cells_carry_no_link() {
    let t = term(b"\x1b]8;;https://e.com\x1b\\ab\x1b[2J\x1b[H\x1b[K");
    assert_eq!(uri_at(&t, 0, 0), None);
    assert_eq!(uri_at(&t, 0, 1), None);
}

#[test]
fn unsafe_links_are_dropped() {
    let long = format!("\x1b]8;;https://e.com/{}\x1b\\L", "a".repeat(3000));
    let c1 = "\x1b]8;;https://e.com/\u{9b}31m\x1b\\L".to_string();
    for bytes in [
        long.as_bytes(),
        b"\x1b]8;;https://e.com/\x7f\x1b\\L",
        c1.as_bytes(),
        b"\x1b]8;;https://e.com/\xff\x1b\\L",
    ] {
        // A link open before the bad one must not leak onto the text either.
        let mut all = b"\x1b]8;;https://ok.example\x1b\\O".to_vec();
        all.extend_from_slice(bytes);
        let t = term(&all);
        assert_eq!(uri_at(&t, 0, 0).as_deref(), Some("https://ok.example"));
        assert_eq!(
            uri_at(&t, 0, 1),
            None,
            "{:?}",
            String::from_utf8_lossy(bytes)
        );
    }
    // An id with a control character is dropped; the link stays.
    let t = term("\x1b]8;id=a\u{85}b;https://e.com\x1b\\L".as_bytes());
    let s = t.screen();
    let link = s.cell(0, 0).and_then(|c| s.link(c.link()));
    assert_eq!(
        link.map(|l| (l.uri(), l.id())),
        Some(("https://e.com", None))
    );
}

#[test]
fn endless_distinct_links_keep_the_table_bounded_and_working() {
    let mut t = Terminal::new(5, 40, HistoryLimits::default());
    for i in 0..20_000 {
        t.process(
            format!(
                "\x1b]8;;https://e.com/{i}/{}\x1b\\L{i}\x1b]8;;\x1b\\\r\n",
                "x".repeat(i % 1500)
            )
            .as_bytes(),
        );
    }
    // The newest link is intact; every visible linked cell resolves to the link of its text.
    t.process(b"\x1b]8;;https://e.com/last\x1b\\Z");
    let s = t.screen();
    let (row, col) = s.cursor_position();
    assert_eq!(
        uri_at(&t, row, col - 1).as_deref(),
        Some("https://e.com/last")
    );
    for r in 0..row {
        let text = s.contents_between(r, 0, r, 40);
        if let Some(n) = text.trim().strip_prefix('L') {
            let uri = uri_at(&t, r, 0).unwrap_or_default();
            assert!(
                uri.starts_with(&format!("https://e.com/{n}/")),
                "{text:?} -> {uri:?}"
            );
        }
    }
}

#[test]
fn row_cells_match_cell_by_cell_access() {
    let t = term("ab\x1b[9mc\u{4e2d}d\r\nsecond".as_bytes());
    let s = t.screen();
    for row in 0..2 {
        let cells = s.row_cells(row).unwrap_or_default();
        for (col, cell) in cells.iter().enumerate() {
            assert_eq!(Some(cell), s.cell(row, col as u16));
        }
    }
    assert!(s.row_cells(10).is_none());
}

#[test]
fn recorded_ls_hyperlink_stream() {
    let path = format!(
        "{}/../fixtures/streams/ls-hyperlink.bin",
        env!("CARGO_MANIFEST_DIR")
    );
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let t = term(&bytes);
    let s = t.screen();
    assert!(s.contents().contains("a.txt"));
    assert!(uri_at(&t, 0, 1).is_some_and(|u| u.ends_with("/calyx-links/a.txt")));
    let row1 = s.contents_between(1, 0, 1, 80);
    assert!(row1.starts_with("struck plain link after"), "{row1:?}");
    assert!(s.cell(1, 0).is_some_and(|c| c.strikethrough()));
    assert!(!s.cell(1, 7).is_some_and(|c| c.strikethrough()));
    assert_eq!(
        uri_at(&t, 1, 13).as_deref(),
        Some("https://example.com/a;b?c=1")
    );
    assert_eq!(uri_at(&t, 1, 17), None);
}

#[test]
fn formatted_rows_carry_links_closed_at_row_end() {
    let t = term(
        b"a\x1b]8;id=k;https://e.com/x\x1b\\bc\x1b]8;;\x1b\\d\r\n\x1b]8;;https://e.com/y\x1b\\open",
    );
    let rows: Vec<String> = t.screen().rows_formatted(0, 80).take(2).collect();
    assert_eq!(
        rows[0],
        "a\x1b]8;id=k;https://e.com/x\x1b\\bc\x1b]8;;\x1b\\d"
    );
    assert!(
        rows[1].starts_with("\x1b]8;;https://e.com/y\x1b\\open")
            && rows[1].ends_with("\x1b]8;;\x1b\\"),
        "{:?}",
        rows[1]
    );
}
