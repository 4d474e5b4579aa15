//! Recorded byte streams (fixtures/streams, made by record.py from real programs) replayed into a
//! pane's terminal: the screen shows what the program drew, and the queries get answers.

use calyx_pty::{HistoryLimits, Terminal};

fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/../fixtures/streams/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn crossterm_style_startup_queries_are_all_answered() {
    let mut t = Terminal::new(24, 80, HistoryLimits::default());
    t.process(&fixture("crossterm-startup.bin"));
    let replies = String::from_utf8_lossy(&t.drain().replies).to_string();
    // Cursor position, primary and secondary attributes, DECRQM 2026, background color, status.
    for expected in [
        "\x1b[1;1R",
        "\x1b[?62;22c",
        "\x1b[>1;10;0c",
        "\x1b[?2026;2$y",
        "\x1b]11;rgb:",
        "\x1b[0n",
    ] {
        assert!(
            replies.contains(expected),
            "missing {expected:?} in {replies:?}"
        );
    }
    let screen = t.screen();
    assert!(screen.alternate_screen());
    assert!(screen.hide_cursor());
    assert!(screen.bracketed_paste());
    assert!(screen.application_cursor());
    assert!(t.wants_focus_events());
    assert!(screen.contents().contains("in alt screen"));
}

#[test]
fn ls_colors_render_with_their_attributes() {
    let mut t = Terminal::new(24, 80, HistoryLimits::default());
    t.process(&fixture("ls-color.bin"));
    let screen = t.screen();
    let text = screen.contents();
    assert!(text.contains("kernel"), "{text}");
    // Some cell carries a color from the LS_COLORS palette (directories are blue and bold).
    let colored = (0..24u16).any(|r| {
        (0..80u16).any(|c| {
            screen
                .cell(r, c)
                .is_some_and(|cell| cell.fgcolor() != vt100::Color::Default && cell.bold())
        })
    });
    assert!(colored, "no bold colored cell in:\n{text}");
}

#[test]
fn curses_app_draws_alt_screen_box_colors_wide_chars_and_title() {
    let mut t = Terminal::new(12, 40, HistoryLimits::default());
    // The recording ends with curses leaving the alternate screen: look just before that.
    let stream = fixture("curses-app.bin");
    let leave = stream
        .windows(8)
        .rposition(|w| w == b"\x1b[?1049l")
        .unwrap_or(stream.len());
    t.process(&stream[..leave]);
    assert!(t.screen().alternate_screen());
    let screen = t.screen();
    let text = screen.contents();
    assert!(text.contains("calyx fixture"), "{text}");
    assert!(text.contains("status: ready"), "{text}");
    assert!(text.contains("中文字符 ✓"), "{text}");
    assert_eq!(t.title(), Some("curses fixture"));
    // ncurses drew its box with DEC line drawing (ESC ( 0): calyx shows box characters.
    assert!(text.starts_with("┌────"), "{text}");
    assert!(
        text.lines()
            .nth(1)
            .is_some_and(|l| l.starts_with("│ calyx fixture")),
        "{text}"
    );
    // "ready" is green and bold; "orange" uses the 256-color palette (index 208).
    let row3: Vec<_> = (0..40u16).filter_map(|c| screen.cell(3, c)).collect();
    assert!(row3
        .iter()
        .any(|c| c.contents() == "r" && c.bold() && c.fgcolor() == vt100::Color::Idx(2)));
    let row4: Vec<_> = (0..40u16).filter_map(|c| screen.cell(4, c)).collect();
    assert!(row4
        .iter()
        .any(|c| c.contents() == "o" && c.fgcolor() == vt100::Color::Idx(208)));
    // Wide characters take two cells.
    let wide = (0..40u16)
        .filter_map(|c| screen.cell(5, c))
        .find(|c| c.contents() == "中");
    assert!(wide.is_some_and(|c| c.is_wide()));
}
