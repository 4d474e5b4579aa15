//! Recorded byte streams (fixtures/streams: what real programs wrote to their terminal, recorded
//! by fixtures/streams/record.py; fixtures/streams/README.md says how each was made) replayed
//! into a pane's terminal: the screen shows what the program drew, and its queries get answers.

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

/// The stream cut just before the program leaves the alternate screen for the last time:
/// full-screen programs restore the shell's screen when they exit, hiding what they drew.
fn until_alt_screen_exit(stream: &[u8]) -> &[u8] {
    let end = stream
        .windows(8)
        .rposition(|w| w == b"\x1b[?1049l")
        .unwrap_or(stream.len());
    &stream[..end]
}

/// Every offset just after the end of a synchronized update (`CSI ? 2026 l`): the frames a
/// program that uses mode 2026 meant to be seen.
fn frame_ends(stream: &[u8]) -> Vec<usize> {
    let end = b"\x1b[?2026l";
    stream
        .windows(end.len())
        .enumerate()
        .filter(|(_, w)| *w == end)
        .map(|(i, _)| i + end.len())
        .collect()
}

fn replies(t: &mut Terminal) -> String {
    String::from_utf8_lossy(&t.drain().replies).to_string()
}

fn row(t: &Terminal, r: u16) -> String {
    let (_, cols) = t.screen().size();
    t.screen()
        .rows(0, cols.get())
        .nth(usize::from(r))
        .unwrap_or_default()
        .trim_end()
        .to_string()
}

#[test]
fn bash_readline_editing_shows_the_edited_lines() {
    // Typed: "echo hello wrold", Left x3, C-t (transpose), C-a, M-f, C-e, "!", Enter; Up, C-w,
    // "again", Enter; "exit", Enter. Readline redraws with backspaces, cursor moves and EL.
    let mut t = Terminal::new(24, 80, HistoryLimits::default());
    t.process(&fixture("bash-readline.bin"));
    let lines: Vec<String> = (0..6).map(|r| row(&t, r)).collect();
    assert_eq!(
        lines,
        [
            "$ echo hello world!",
            "hello world!",
            "$ echo hello again",
            "hello again",
            "$ exit",
            "exit"
        ]
    );
    // Bash switches bracketed paste on at each prompt and off to run a command.
    assert!(!t.screen().bracketed_paste());
    assert_eq!(replies(&mut t), "", "bash asks the terminal nothing");
}

#[test]
fn less_search_highlights_the_match_on_the_alternate_screen() {
    let stream = fixture("less-search.bin");
    let mut t = Terminal::new(24, 80, HistoryLimits::default());
    t.process(until_alt_screen_exit(&stream));
    assert!(t.screen().alternate_screen());
    // `/150` jumped to the match and drew it in reverse video at the top.
    assert_eq!(row(&t, 0), "150");
    assert_eq!(row(&t, 22), "172");
    let cell = t.screen().cell(0, 0);
    assert!(cell.is_some_and(|c| c.inverse() && c.contents() == "1"));
    assert!(t.screen().cell(1, 0).is_some_and(|c| !c.inverse()));
    // Quitting restores the screen less started on (empty here) and the keypad mode.
    t.process(&stream[until_alt_screen_exit(&stream).len()..]);
    assert!(!t.screen().alternate_screen());
    assert!(!t.screen().application_cursor());
    assert!(!t.screen().contents().contains("150"));
}

#[test]
fn top_draws_its_summary_and_the_reverse_video_header() {
    let mut t = Terminal::new(24, 80, HistoryLimits::default());
    t.process(&fixture("top.bin"));
    let text = t.screen().contents();
    assert!(text.contains("Tasks:"), "{text}");
    assert!(text.contains("MiB Mem :"), "{text}");
    let header = (0..24u16)
        .find(|r| row(&t, *r).trim_start().starts_with("PID USER"))
        .unwrap_or_else(|| panic!("no header row in:\n{text}"));
    // The header is in reverse video across the screen; the numbers in the summary are bold.
    assert!((0..80u16).all(|c| t.screen().cell(header, c).is_some_and(|c| c.inverse())));
    let bold = (0..80u16).any(|c| t.screen().cell(0, c).is_some_and(|c| c.bold()));
    assert!(bold, "{text}");
    assert!(
        !t.screen().hide_cursor(),
        "top shows the cursor again when it ends"
    );
}

#[test]
fn vim_edits_a_file_and_its_queries_are_answered() {
    // vim --clean notes.txt: G, o, "third line, wide: 中文 ✓", Escape, :wq.
    let stream = fixture("vim-edit.bin");
    let mut t = Terminal::new(24, 80, HistoryLimits::default());
    t.process(until_alt_screen_exit(&stream));
    let screen = t.screen();
    assert!(screen.alternate_screen());
    let text = screen.contents();
    assert!(
        text.contains("second line\nthird line, wide: 中文 ✓"),
        "{text}"
    );
    assert!(
        row(&t, 22).starts_with("\"notes.txt\" 3L, 52B written"),
        "{text}"
    );
    // The filler lines are drawn in bright blue (SGR 94).
    let tilde = (0..24u16)
        .find(|r| row(&t, *r) == "~")
        .and_then(|r| t.screen().cell(r, 0));
    assert!(tilde.is_some_and(|c| c.fgcolor() == vt100::Color::Idx(12)));
    let wide = (0..80u16)
        .filter_map(|c| t.screen().cell(1, c))
        .find(|c| c.contents() == "中");
    assert!(wide.is_some_and(|c| c.is_wide()));
    // vim measured the width of an ambiguous character with a cursor position report (after
    // drawing one cell it expects the cursor at column 2), asked for the secondary device
    // attributes, the foreground and background colors, and whether the cursor blinks.
    assert_eq!(
        replies(&mut t),
        "\x1b[2;2R\x1b[3;1R\x1b[>1;10;0c\x1b]10;rgb:d0d0/d0d0/d0d0\x1b\\\
         \x1b]11;rgb:0000/0000/0000\x1b\\\x1b[?12;0$y"
    );
    t.process(&stream[until_alt_screen_exit(&stream).len()..]);
    assert!(!t.screen().alternate_screen());
    assert!(!t.screen().hide_cursor());
}

#[test]
fn codex_crossterm_tui_draws_its_turn_in_synchronized_frames() {
    // codex 0.171.0 (ratatui on crossterm) against the fake model: "SCENARIO:plain say hi",
    // Enter, the answer "done", then C-c C-c.
    let stream = fixture("codex-turn.bin");
    let mut t = Terminal::new(30, 100, HistoryLimits::default());
    let ends = frame_ends(&stream);
    assert!(ends.len() > 20, "{} synchronized frames", ends.len());
    // Crossterm's start-up queries, all answered: DECRQM 1007 (alternate scroll, not
    // recognised), primary device attributes (also the end of its keyboard-enhancement probe),
    // the cursor position and both colors.
    let first = ends[0];
    t.process(&stream[..first]);
    assert_eq!(
        replies(&mut t),
        "\x1b[?1007;0$y\x1b[?62;22c\x1b[1;1R\x1b]10;rgb:d0d0/d0d0/d0d0\x1b\\\
         \x1b]11;rgb:0000/0000/0000\x1b\\"
    );
    assert!(t.screen().alternate_screen());
    assert!(t.screen().bracketed_paste());
    assert!(t.wants_focus_events());
    assert_eq!(
        t.screen().mouse_protocol_encoding(),
        vt100::MouseProtocolEncoding::Sgr
    );
    // Some frame shows the prompt and the model's answer; between frames the program is
    // never mid-update, inside one it always is.
    let mut shown = None;
    let mut done = first;
    for &end in &ends[1..] {
        let chunk = &stream[done..end];
        if let Some(open) = chunk.windows(8).position(|w| w == b"\x1b[?2026h") {
            let mut probe = Terminal::new(30, 100, HistoryLimits::default());
            probe.process(&stream[..done + open + 8]);
            assert!(probe.synchronized_output());
        }
        t.process(chunk);
        done = end;
        assert!(!t.synchronized_output());
        let text = t.screen().contents();
        if text.contains("› SCENARIO:plain say hi") && text.contains("• done") {
            shown = Some(text);
            break;
        }
    }
    let text = shown.unwrap_or_else(|| panic!("no frame with the answer"));
    assert!(text.contains(">_ OpenAI Codex (v0.171.0)"), "{text}");
    assert!(text.contains("› Ask Codex to do anything"), "{text}");
    // The title names the task (behind a spinner while the turn runs).
    assert!(
        t.title()
            .is_some_and(|title| title.ends_with("SCENARIO:plain say hi | project")),
        "{:?}",
        t.title()
    );
    // Quitting leaves the alternate screen and every mode it set.
    t.process(&stream[done..]);
    assert!(!t.screen().alternate_screen());
    assert!(!t.screen().bracketed_paste());
    assert!(!t.wants_focus_events());
    assert_eq!(
        t.screen().mouse_protocol_mode(),
        vt100::MouseProtocolMode::None
    );
}

#[test]
fn claude_ink_tui_draws_inline_and_its_queries_are_answered() {
    // Claude Code 2.1.197 (ink) against the fake model: "SCENARIO:plain say hi", Enter, the
    // answer "done", then C-c C-c. Ink draws on the primary screen, not the alternate one.
    let mut t = Terminal::new(30, 100, HistoryLimits::default());
    t.process(&fixture("claude-turn.bin"));
    let text = t.screen().contents();
    assert!(!t.screen().alternate_screen());
    for expected in [
        "Claude Code v2.1.197",
        "❯ SCENARIO:plain say hi",
        "● done",
        "? for shortcuts",
        "Resume this session with:",
    ] {
        assert!(text.contains(expected), "{expected:?} in:\n{text}");
    }
    // XTVERSION, primary device attributes (twice) and DECRQM 2026: ink only uses synchronized
    // output when the terminal reports the mode.
    assert_eq!(
        replies(&mut t),
        "\x1bP>|calyx 0.1.0\x1b\\\x1b[?62;22c\x1b[?2026;2$y\x1b[?62;22c"
    );
    // On exit it switched bracketed paste and focus events off again.
    assert!(!t.screen().bracketed_paste());
    assert!(!t.wants_focus_events());
}

#[test]
fn every_recording_parses_the_same_in_any_chunking() {
    // A pane's reader gets the program's output in whatever pieces the PTY returns: escape
    // sequences and UTF-8 characters split across reads must not change the screen or the
    // answers.
    for (name, rows, cols) in [
        ("bash-readline.bin", 24, 80),
        ("less-search.bin", 24, 80),
        ("top.bin", 24, 80),
        ("vim-edit.bin", 24, 80),
        ("codex-turn.bin", 30, 100),
        ("claude-turn.bin", 30, 100),
        ("curses-app.bin", 12, 40),
        ("ls-color.bin", 24, 80),
        ("ls-hyperlink.bin", 24, 80),
    ] {
        let stream = fixture(name);
        let mut whole = Terminal::new(rows, cols, HistoryLimits::default());
        whole.process(&stream);
        let expected = (whole.screen().contents_formatted(), replies(&mut whole));
        for size in [1, 3, 7, 64, 4096] {
            let mut t = Terminal::new(rows, cols, HistoryLimits::default());
            for chunk in stream.chunks(size) {
                t.process(chunk);
            }
            let got = (t.screen().contents_formatted(), replies(&mut t));
            assert!(got == expected, "{name} fed in {size}-byte chunks differs");
        }
    }
}
