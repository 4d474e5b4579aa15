//! One pane's terminal: the live vt100 screen (a small scrollback: fast) plus the byte-log
//! history.

use std::num::NonZeroU16;

use crate::answerback::Answerback;
use crate::commands::CommandLog;
use crate::history::History;

/// Limits of one pane's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistoryLimits {
    /// Lines of scrollback kept (about: the byte log counts newlines, not wrapped rows).
    pub lines: usize,
    /// Hard cap on retained output bytes, so a runaway program cannot eat the machine.
    pub bytes: usize,
}

impl Default for HistoryLimits {
    fn default() -> Self {
        Self {
            lines: 10_000,
            bytes: 4 << 20,
        }
    }
}

/// What a pane's output changed, drained after each `process` by the owner of the terminal.
#[derive(Debug, Default)]
pub struct Drained {
    pub replies: Vec<u8>,
    pub bells: u32,
    pub clipboard: Vec<Vec<u8>>,
}

/// The terminal state of one pane.
pub struct Terminal {
    parser: vt100::Parser<Answerback>,
    history: History,
    limits: HistoryLimits,
    charset: crate::charset::Charset,
    /// Drops the part of an OSC string beyond 1 MiB (vte would buffer it all).
    osc_cap: crate::osc_cap::OscCap,
    /// Commands the shell integration reported (empty for programs that send no marks).
    commands: CommandLog,
    /// The title and input modes, published after each parse for readers that must not wait
    /// for the lock (see [`crate::glance`]).
    glance: crate::glance::Publisher,
}

/// Rows the live screen keeps above it, only so that resizing gives content back: rows a height
/// shrink or a narrowing rewrap pushed up come back when the pane grows again (capture and copy
/// mode read the byte-log history, replayed at any size; the live screen is never scrolled
/// back). 100 covers shrinking a 100-row pane to one row, or narrowing a full 50-row screen to
/// half its width and back. It is not free: each row costs 32 bytes a cell up to its last
/// non-blank one, and 200 rows made the idle server of `scripts/bench-idle-memory.py` (16 panes)
/// 6 MiB larger (22 to 28 MiB); 100 rows, 3.6 MiB (to 25.5). A rewrap walks at most this many
/// rows.
pub const LIVE_SCROLLBACK_ROWS: usize = 100;

fn dim(n: u16) -> NonZeroU16 {
    NonZeroU16::new(n.max(1)).unwrap_or(NonZeroU16::MIN)
}

impl Terminal {
    /// A blank terminal of the given size (within [`crate::limits`]).
    pub fn new(rows: u16, cols: u16, limits: HistoryLimits) -> Self {
        let (rows, cols) = crate::limits::clamp_size(rows, cols);
        let mut history = History::new(limits.lines, limits.bytes);
        history.resized(rows, cols);
        Self {
            parser: vt100::Parser::new_with_callbacks(
                dim(rows),
                dim(cols),
                LIVE_SCROLLBACK_ROWS,
                Answerback::default(),
            ),
            history,
            limits,
            charset: crate::charset::Charset::default(),
            osc_cap: crate::osc_cap::OscCap::default(),
            commands: CommandLog::default(),
            glance: crate::glance::Publisher::default(),
        }
    }

    /// Feeds program output: it is parsed into the screen and kept in the history.
    pub fn process(&mut self, bytes: &[u8]) {
        let bytes = self.osc_cap.filter(bytes);
        let bytes = self.charset.translate(&bytes);
        self.history.push(&bytes);
        self.commands.feed(&bytes);
        let parsed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.parser.process(&bytes);
        }));
        if parsed.is_err() {
            self.recover_from_parser_panic();
        }
        self.publish_glance();
    }

    /// The title and input modes as of the last parse, readable without this terminal's lock:
    /// the `Arc` stays the same for the terminal's life.
    pub fn glance(&self) -> std::sync::Arc<crate::glance::Glance> {
        self.glance.glance()
    }

    fn publish_glance(&mut self) {
        let screen = self.parser.screen();
        let callbacks = self.parser.callbacks();
        let modes = crate::glance::Modes {
            application_cursor: screen.application_cursor(),
            bracketed_paste: screen.bracketed_paste(),
            focus_events: callbacks.focus_events,
            synchronized_output: callbacks.synchronized_output,
            mouse_any_motion: screen.mouse_protocol_mode() == vt100::MouseProtocolMode::AnyMotion,
        };
        self.glance
            .publish(self.parser.callbacks().title.as_deref(), modes);
    }

    /// A panic inside the vendored parser (a bug: random-input property tests guard against
    /// them) must not kill the pane's reader thread and with it the pane. The screen it left
    /// may break its own invariants, so it is replaced by a blank one of the same size, with a
    /// line saying why; the history keeps every byte, so capture and copy mode lose nothing.
    fn recover_from_parser_panic(&mut self) {
        let (rows, cols) = self.parser.screen().size();
        let callbacks = std::mem::take(self.parser.callbacks_mut());
        self.parser =
            vt100::Parser::new_with_callbacks(rows, cols, LIVE_SCROLLBACK_ROWS, callbacks);
        self.parser
            .process(b"\x1b[2m[calyx: the screen was reset after an internal error]\x1b[m\r\n");
    }

    /// Switches the reference path on (`true`) or off: every character written to the screen
    /// one at a time, as before the fast text path (vendor/vt100 `text_run.rs`). What the
    /// screen shows is the same either way; `pty/tests/fast_path.rs` checks that, and
    /// `examples/parse_stages.rs` prices the difference.
    #[doc(hidden)]
    pub fn set_reference_path(&mut self, reference: bool) {
        self.parser.set_reference_text_path(reference);
    }

    /// Takes the query replies the last `process` calls produced (the reader thread writes them
    /// back to the program at once).
    pub fn take_replies(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.parser.callbacks_mut().replies)
    }

    /// Takes the bells and clipboard writes since the last call (the owner acts on them).
    pub fn take_events(&mut self) -> (u32, Vec<Vec<u8>>) {
        let cb = self.parser.callbacks_mut();
        (
            std::mem::take(&mut cb.bells),
            std::mem::take(&mut cb.clipboard),
        )
    }

    /// Takes everything the last `process` calls produced besides screen changes.
    pub fn drain(&mut self) -> Drained {
        let cb = self.parser.callbacks_mut();
        Drained {
            replies: std::mem::take(&mut cb.replies),
            bells: std::mem::take(&mut cb.bells),
            clipboard: std::mem::take(&mut cb.clipboard),
        }
    }

    /// The commands this pane's shell reported (OSC 133), with their output.
    pub fn commands(&self) -> &CommandLog {
        &self.commands
    }

    /// The live screen.
    pub fn screen(&self) -> &vt100::Screen {
        self.parser.screen()
    }

    /// The OSC title the program set, if any.
    pub fn title(&self) -> Option<&str> {
        self.parser.callbacks().title.as_deref()
    }

    /// Whether the program asked for focus in/out reports (DECSET 1004).
    pub fn wants_focus_events(&self) -> bool {
        self.parser.callbacks().focus_events
    }

    /// Whether the program is inside a synchronized update (DECSET 2026): renderers hold the
    /// previous frame of this pane until it ends, so agents do not flicker.
    pub fn synchronized_output(&self) -> bool {
        self.parser.callbacks().synchronized_output
    }

    /// Changes the size of the live screen (within [`crate::limits`]). A shrink hands the
    /// cells it no longer needs back to the allocator (vt100 shrinks its rows' storage).
    pub fn resize(&mut self, rows: u16, cols: u16) {
        let (rows, cols) = crate::limits::clamp_size(rows, cols);
        let (r, c) = self.parser.screen().size();
        if (r.get(), c.get()) != (rows, cols) {
            self.parser.screen_mut().set_size(dim(rows), dim(cols));
            self.history.resized(rows, cols);
        }
    }

    /// Retained output bytes.
    pub fn history_bytes(&self) -> usize {
        self.history.len_bytes()
    }

    /// Forgets the history (the screen stays), and the rows kept above the live screen, so a
    /// later grow does not bring them back. The history then starts with the screen as it is,
    /// so a capture of the whole history, or copy mode, still shows what is on screen (as
    /// tmux's clear-history keeps the visible lines).
    pub fn clear_history(&mut self) {
        self.history.clear();
        self.parser.screen_mut().clear_scrollback();
        let screen = self.parser.screen().state_formatted();
        self.history.push(screen.as_bytes());
    }

    /// The retained output as owned pieces, each with the size to resize to before it, and
    /// the size the history starts at: what an in-place upgrade hands to the next server,
    /// which rebuilds the pane with [`Terminal::from_history`].
    pub fn history_pieces(&self) -> HistoryPieces {
        let (start, pieces) = self.history.sized_chunks();
        HistoryPieces {
            start,
            pieces: pieces
                .into_iter()
                .map(|(bytes, size)| (bytes.to_vec(), size))
                .collect(),
        }
    }

    /// A terminal of `rows` x `cols` whose history is `history` and whose screen is what that
    /// output drew: the output is parsed again through the sizes it was printed at (so a
    /// capture of the history replays exactly as before), with query answers, bells and
    /// clipboard writes dropped (the program had its answers already).
    pub fn from_history(
        rows: u16,
        cols: u16,
        limits: HistoryLimits,
        history: &HistoryPieces,
    ) -> Self {
        let (first_rows, first_cols) = history.start.unwrap_or((rows, cols));
        let mut terminal = Terminal::new(first_rows, first_cols, limits);
        for (bytes, size) in &history.pieces {
            if let Some((r, c)) = size {
                terminal.resize(*r, *c);
            }
            terminal.process(bytes);
            let _ = terminal.drain();
        }
        terminal.resize(rows, cols);
        terminal
    }

    /// Rebuilds the history as a parser with scrollback at the given size, by replaying the
    /// retained output with query replies suppressed, through the sizes the pane had as it was
    /// printed (a shell's redraw after a resize lands where it did on the live screen; see
    /// [`crate::history_sizes`]), then resized to `rows` x `cols`. The result's scrollback plus
    /// screen is the pane's whole retained text.
    pub fn replay_history(&self, rows: u16, cols: u16) -> Replay {
        let (start, pieces) = self.history.sized_chunks();
        let (first_rows, first_cols) = start.unwrap_or((rows, cols));
        let mut replay = vt100::Parser::new_with_callbacks(
            dim(first_rows),
            dim(first_cols),
            self.limits.lines,
            Answerback {
                mute: true,
                ..Answerback::default()
            },
        );
        for (piece, size) in pieces {
            if let Some((r, c)) = size {
                replay.screen_mut().set_size(dim(r), dim(c));
            }
            replay.process(piece);
        }
        replay.screen_mut().set_size(dim(rows), dim(cols));
        Replay(replay)
    }
}

/// A pane's retained output with the sizes it was printed at ([`Terminal::history_pieces`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HistoryPieces {
    /// The size the history starts at (None: never recorded).
    pub start: Option<(u16, u16)>,
    /// The bytes, oldest first, each with the size to resize to before it (None: no change).
    pub pieces: Vec<(Vec<u8>, Option<TermSize>)>,
}

/// A terminal size: rows, columns.
pub type TermSize = (u16, u16);

/// A pane's history replayed into a parser with scrollback ([`Terminal::replay_history`]), for
/// a capture or for copy mode. It can hold tens of MiB (10,000 lines of cells at a wide pane's
/// width) and lives briefly, so dropping it hands the freed memory back to the system: glibc's
/// allocator would otherwise keep it, and the server would stay that large after one capture.
pub struct Replay(vt100::Parser<Answerback>);

impl std::ops::Deref for Replay {
    type Target = vt100::Parser<Answerback>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for Replay {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl Drop for Replay {
    fn drop(&mut self) {
        // Free the big parser first (fields drop only after this returns), then trim.
        let empty = vt100::Parser::new_with_callbacks(dim(1), dim(1), 0, Answerback::default());
        drop(std::mem::replace(&mut self.0, empty));
        release_freed_memory();
    }
}

/// Returns memory the allocator holds but no longer uses to the system (glibc's `malloc_trim`;
/// elsewhere nothing).
pub fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks the allocator's own free lists under its own locks; it
    // takes no pointers and is safe from any thread. It is a glibc extension, so nix (POSIX
    // and kernel interfaces) has no wrapper for it.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Every line of a parser's scrollback and screen as plain text, oldest first, trailing blanks
/// trimmed.
pub fn all_lines<CB: vt100::Callbacks>(parser: &mut vt100::Parser<CB>) -> Vec<String> {
    let cols = parser.screen().size().1.get();
    let mut lines = Vec::new();
    for_each_page(parser, |screen, take| {
        lines.extend(
            screen
                .rows(0, cols)
                .take(take)
                .map(|l| l.trim_end().to_string()),
        );
    });
    lines
}

/// Walks a parser's scrollback and screen a screenful at a time, oldest first: `visit` gets the
/// screen scrolled back to each page and how many of its top rows are new (the last page's
/// rows may overlap the one before). Leaves the parser scrolled to the bottom.
pub fn for_each_page<CB: vt100::Callbacks>(
    parser: &mut vt100::Parser<CB>,
    mut visit: impl FnMut(&vt100::Screen, usize),
) {
    let rows = usize::from(parser.screen().size().0.get());
    parser.screen_mut().set_scrollback(usize::MAX);
    let mut offset = parser.screen().scrollback();
    loop {
        parser.screen_mut().set_scrollback(offset);
        let take = if offset == 0 { rows } else { rows.min(offset) };
        visit(parser.screen(), take);
        if offset == 0 {
            break;
        }
        offset = offset.saturating_sub(rows);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_cursor_position_and_device_attributes() {
        let mut t = Terminal::new(24, 80, HistoryLimits::default());
        t.process(b"hello\x1b[6n\x1b[c\x1b[>c\x1b[?2026$p");
        let d = t.drain();
        let text = String::from_utf8_lossy(&d.replies).to_string();
        assert!(text.starts_with("\x1b[1;6R"), "{text:?}");
        assert!(text.contains("\x1b[?62;22c"), "{text:?}");
        assert!(text.contains("\x1b[>1;10;0c"), "{text:?}");
        assert!(text.contains("\x1b[?2026;2$y"), "{text:?}");
    }

    #[test]
    fn tracks_title_focus_and_sync_modes() {
        let mut t = Terminal::new(24, 80, HistoryLimits::default());
        t.process(b"\x1b]2;agent at work\x07\x1b[?1004h\x1b[?2026h");
        assert_eq!(t.title(), Some("agent at work"));
        assert!(t.wants_focus_events());
        assert!(t.synchronized_output());
        t.process(b"\x1b[?2026$p\x1b[?2026l");
        assert!(!t.synchronized_output());
        let replies = t.drain().replies;
        assert_eq!(replies, b"\x1b[?2026;1$y");
    }

    #[test]
    fn titles_keep_their_semicolons() {
        let mut t = Terminal::new(24, 80, HistoryLimits::default());
        t.process(b"\x1b]2;make; make test\x07");
        assert_eq!(t.title(), Some("make; make test"));
        t.process(b"\x1b]0;vim a;b;c\x1b\\");
        assert_eq!(t.title(), Some("vim a;b;c"));
        t.process(b"\x1b]2;\x07");
        assert_eq!(t.title(), Some(""));
    }

    #[test]
    fn clearing_the_history_keeps_the_screen_in_it() {
        let mut t = Terminal::new(5, 20, HistoryLimits::default());
        for i in 0..30 {
            t.process(format!("line {i}\r\n").as_bytes());
        }
        t.process(b"$ ");
        t.clear_history();
        t.process(b"typed");
        let mut replay = t.replay_history(5, 20);
        let lines = all_lines(&mut replay);
        assert!(!lines.iter().any(|l| l == "line 0"), "{lines:?}");
        let tail: Vec<&str> = lines
            .iter()
            .map(String::as_str)
            .filter(|l| !l.is_empty())
            .collect();
        assert_eq!(
            tail,
            ["line 26", "line 27", "line 28", "line 29", "$ typed"]
        );
    }

    #[test]
    fn a_terminal_rebuilt_from_its_history_shows_and_replays_the_same() {
        let mut t = Terminal::new(5, 20, HistoryLimits::default());
        for i in 0..30 {
            t.process(format!("\x1b[1mline {i}\x1b[m\r\n").as_bytes());
        }
        t.resize(4, 12);
        t.process(b"\x1b]2;title\x07narrow\r\n$ \x1b[6n");
        let _ = t.drain();
        let history = t.history_pieces();
        let mut rebuilt = Terminal::from_history(4, 12, HistoryLimits::default(), &history);
        assert!(
            rebuilt.drain().replies.is_empty(),
            "replayed queries are not answered"
        );
        assert_eq!(rebuilt.history_pieces(), history);
        assert_eq!(
            rebuilt.screen().contents_formatted(),
            t.screen().contents_formatted()
        );
        assert_eq!(
            rebuilt.screen().cursor_position(),
            t.screen().cursor_position()
        );
        assert_eq!(rebuilt.title(), Some("title"));
        let before = t.replay_history(4, 12).screen().contents_formatted();
        assert_eq!(
            rebuilt.replay_history(4, 12).screen().contents_formatted(),
            before
        );
    }

    #[test]
    fn history_replays_into_scrollback_without_answering() {
        let mut t = Terminal::new(5, 20, HistoryLimits::default());
        for i in 0..100 {
            t.process(format!("line {i}\r\n").as_bytes());
        }
        t.process(b"\x1b[6n");
        let _ = t.drain();
        let mut replay = t.replay_history(5, 20);
        assert!(replay.callbacks().replies.is_empty());
        let lines = all_lines(&mut replay);
        assert_eq!(lines.first().map(String::as_str), Some("line 0"));
        assert!(lines.iter().any(|l| l == "line 99"));
        assert_eq!(lines.iter().filter(|l| l.starts_with("line ")).count(), 100);
    }

    #[test]
    fn a_height_shrink_and_grow_gives_the_rows_back() {
        // The user's report: `seq 1 26` on a 100x30 pane, shrunk to 10 rows and grown back.
        let mut t = Terminal::new(30, 100, HistoryLimits::default());
        for i in 1..=26 {
            t.process(format!("{i}\r\n").as_bytes());
        }
        t.process(b"$ ");
        let before = t.screen().contents();
        t.resize(10, 100);
        assert!(t.screen().contents().trim_end().ends_with("25\n26\n$"));
        t.resize(30, 100);
        assert_eq!(t.screen().contents(), before);
        assert_eq!(t.screen().cursor_position(), (26, 2));
    }

    #[test]
    fn a_shrink_in_both_directions_and_grow_gives_the_rows_back() {
        let mut t = Terminal::new(30, 100, HistoryLimits::default());
        for i in 1..=26 {
            t.process(format!("{i} row {}\r\n", "abcdefghij".repeat(4)).as_bytes());
        }
        let before = t.screen().contents();
        t.resize(10, 20);
        t.resize(30, 100);
        assert_eq!(t.screen().contents(), before);
        assert_eq!(
            t.screen().scrollback(),
            0,
            "the live screen is never scrolled back"
        );
    }
}
