/// A parser for terminal output which produces an in-memory representation of
/// the terminal contents.
pub struct Parser<CB: crate::Callbacks = ()> {
    parser: vte::Parser,
    screen: crate::screen::WrappedScreen<CB>,
    /// calyx: the start of a UTF-8 character the last chunk cut off, held
    /// back until the next (see `process`).
    split_char: [u8; 3],
    split_len: u8,
}

/// calyx: how many bytes at the end of `bytes` begin a UTF-8 character
/// they do not complete (0 to 3).
fn incomplete_utf8_tail(bytes: &[u8]) -> usize {
    for back in 1..=bytes.len().min(3) {
        let b = bytes[bytes.len() - back];
        if b & 0xc0 == 0x80 {
            // A continuation byte: its lead is further back.
            continue;
        }
        let needs = match b {
            0xc0..=0xdf => 2,
            0xe0..=0xef => 3,
            0xf0..=0xf7 => 4,
            _ => 1,
        };
        return if needs > back { back } else { 0 };
    }
    0
}

impl Parser {
    /// The default number of rows used when creating a parser with
    /// [`Parser::default`].
    ///
    /// The value of this constant is 24.
    // `unwrap` is not `const` in this crate's MSRV.
    pub const DEFAULT_ROWS: core::num::NonZeroU16 =
        match core::num::NonZeroU16::new(24) {
            Some(n) => n,
            None => unreachable!(),
        };

    /// The default number of columns used when creating a parser with
    /// [`Parser::default`].
    ///
    /// The value of this constant is 80.
    pub const DEFAULT_COLS: core::num::NonZeroU16 =
        match core::num::NonZeroU16::new(80) {
            Some(n) => n,
            None => unreachable!(),
        };

    /// Creates a new terminal parser of the given size and with the given
    /// amount of scrollback.
    #[must_use]
    pub fn new(
        rows: core::num::NonZeroU16,
        cols: core::num::NonZeroU16,
        scrollback_capacity: usize,
    ) -> Self {
        Self::new_with_callbacks(rows, cols, scrollback_capacity, ())
    }
}

impl<CB: crate::Callbacks> Parser<CB> {
    /// Creates a new terminal parser of the given size and with the given
    /// amount of scrollback. Terminal events will be reported via method
    /// calls on the provided [`Callbacks`](crate::Callbacks) implementation.
    pub fn new_with_callbacks(
        rows: core::num::NonZeroU16,
        cols: core::num::NonZeroU16,
        scrollback_capacity: usize,
        callbacks: CB,
    ) -> Self {
        let screen = crate::screen::Screen::new(
            crate::grid::Size { rows, cols },
            scrollback_capacity,
        );
        Self {
            parser: vte::Parser::new(),
            split_char: [0; 3],
            split_len: 0,
            screen: crate::screen::WrappedScreen {
                screen,
                callbacks,
                pending: crate::text_run::PendingText::default(),
            },
        }
    }

    /// Processes the contents of the given byte string, and updates the
    /// in-memory terminal state.
    pub fn process(&mut self, bytes: &[u8]) {
        // calyx: read before and set after, so a reset (RIS replaces the
        // screen) cannot bring an old generation back.
        let generation = self.screen.screen.generation();
        // calyx: vte 0.15 completes a character cut between two chunks by
        // decoding up to four bytes, and then skips all of them but the
        // character's own as if they were the start of another one: a
        // newline (or any other byte) right after a cut character was
        // lost, so the screen depended on where reads cut the output. So
        // vte never sees a cut character: the cut-off start is held back
        // and put before the next chunk.
        let held = usize::from(self.split_len);
        let tail = incomplete_utf8_tail(bytes);
        if held > 0 {
            let mut joined =
                alloc::vec::Vec::with_capacity(held + bytes.len());
            joined.extend_from_slice(&self.split_char[..held]);
            joined.extend_from_slice(bytes);
            let tail = incomplete_utf8_tail(&joined);
            let (now, later) = joined.split_at(joined.len() - tail);
            self.parser.advance(&mut self.screen, now);
            self.hold(later);
        } else {
            let (now, later) = bytes.split_at(bytes.len() - tail);
            self.parser.advance(&mut self.screen, now);
            self.hold(later);
        }
        // calyx: the fast text path's last run (see `text_run.rs`).
        self.screen.flush_text();
        self.screen.screen.stamp_rows();
        self.screen.screen.set_generation(generation.wrapping_add(1));
    }

    /// calyx: keeps the (at most 3) bytes of a cut character for the next
    /// `process`.
    fn hold(&mut self, bytes: &[u8]) {
        let n = bytes.len().min(self.split_char.len());
        self.split_char[..n].copy_from_slice(&bytes[..n]);
        self.split_len = u8::try_from(n).unwrap_or(0);
    }

    /// calyx: switches the fast text path off (`true`) or back on. The
    /// reference path writes every character through the per-character
    /// code; tests compare the two, benchmarks price the difference.
    #[doc(hidden)]
    pub fn set_reference_text_path(&mut self, reference: bool) {
        self.screen.pending.set_reference(reference);
        // calyx: and every scroll rotates the rows (no ring, `Grid::ring`).
        self.screen.screen.set_row_ring(!reference);
    }

    /// Resizes the terminal.
    ///
    /// When the screen height is decreased, this function does the following:
    ///
    /// * If the cursor is not at the bottom of the screen, rows from the
    ///   bottom are discarded until the cursor is at the bottom (or until the
    ///   desired height is reached, whichever is earlier).
    /// * If the screen is still too tall after that, rows from the top of the
    ///   screen are pushed into scrollback. If this would cause scrollback to
    ///   exceed the maximum size, rows from the top of scrollback are
    ///   discarded, and the [`on_scroll`] callback is called for each of them.
    ///
    /// When the screen height is increased, this function does the following:
    ///
    /// * Rows from the bottom of scrollback are pushed to the top of the
    ///   screen and removed from scrollback, until the desired height is
    ///   reached.
    /// * If, after pushing all scrollback to the top, the screen is still too
    ///   short, blank rows are added to the bottom of the screen until the
    ///   desired height is reached.
    ///
    /// calyx: upstream also inserted blank rows at the top for the rows an
    /// unbounded scrollback would have held; that pushed the content down,
    /// and is gone.
    ///
    /// calyx: when the screen width is changed, the primary screen's lines
    /// (scrollback and screen) are rewrapped at the new width (see
    /// `reflow.rs`); the alternate screen's rows are still truncated or
    /// extended with blank cells, as upstream did for both.
    ///
    /// [`on_scroll`]: crate::Callbacks::on_scroll
    pub fn set_size(
        &mut self,
        rows: core::num::NonZeroU16,
        cols: core::num::NonZeroU16,
    ) {
        self.screen.set_size_with_cb(rows, cols);
        self.screen.screen.stamp_rows();
        let generation = self.screen.screen.generation();
        self.screen.screen.set_generation(generation.wrapping_add(1));
    }

    /// Returns a reference to a [`Screen`](crate::Screen) object containing
    /// the terminal state.
    #[must_use]
    pub fn screen(&self) -> &crate::Screen {
        &self.screen.screen
    }

    /// Returns a mutable reference to a [`Screen`](crate::Screen) object
    /// containing the terminal state.
    #[must_use]
    pub fn screen_mut(&mut self) -> &mut crate::Screen {
        // calyx: any change made through this counts as a change of the screen.
        let generation = self.screen.screen.generation();
        self.screen.screen.set_generation(generation.wrapping_add(1));
        &mut self.screen.screen
    }

    /// Returns a reference to the [`Callbacks`](crate::Callbacks) state object
    /// passed into the constructor.
    pub fn callbacks(&self) -> &CB {
        &self.screen.callbacks
    }

    /// Returns a mutable reference to the [`Callbacks`](crate::Callbacks)
    /// state object passed into the constructor.
    pub fn callbacks_mut(&mut self) -> &mut CB {
        &mut self.screen.callbacks
    }

    /// Returns mutable references to both the [screen](Self::screen_mut) and
    /// [callbacks](Self::callbacks_mut).
    pub fn screen_and_callbacks_mut(
        &mut self,
    ) -> (&mut crate::Screen, &mut CB) {
        let generation = self.screen.screen.generation();
        self.screen.screen.set_generation(generation.wrapping_add(1));
        (&mut self.screen.screen, &mut self.screen.callbacks)
    }
}

impl Default for Parser {
    /// Returns a parser with dimensions 80x24 and no scrollback.
    fn default() -> Self {
        Self::new(Self::DEFAULT_ROWS, Self::DEFAULT_COLS, 0)
    }
}

#[cfg(feature = "std")]
impl std::io::Write for Parser {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.process(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(feature = "embedded-io")]
impl embedded_io::ErrorType for Parser {
    type Error = core::convert::Infallible;
}

#[cfg(feature = "embedded-io")]
impl embedded_io::Write for Parser {
    fn write(
        &mut self,
        buf: &[u8],
    ) -> core::result::Result<usize, Self::Error> {
        self.process(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> core::result::Result<(), Self::Error> {
        Ok(())
    }
}

#[cfg(feature = "embedded-io")]
impl embedded_io::WriteReady for Parser {
    fn write_ready(&mut self) -> core::result::Result<bool, Self::Error> {
        Ok(true)
    }
}
