//! The terminal's side of the conversation: replies to queries, and the state vt100 itself does
//! not keep (title, bell, focus-event and synchronized-output modes, clipboard writes).
//!
//! Agent TUIs built on crossterm and ink send cursor position reports, device attribute and mode
//! queries at start-up and stall or misdraw when nobody answers, so every query a real terminal
//! answers is answered here.

/// Collected by the parser callbacks while bytes are processed; drained by the pane afterwards.
#[derive(Debug, Default)]
pub struct Answerback {
    /// Bytes to write back to the program (query replies), in order.
    pub replies: Vec<u8>,
    /// The OSC 0/2 title, once set.
    pub title: Option<String>,
    /// BEL characters seen since the last drain.
    pub bells: u32,
    /// DECSET 1004: the program wants focus in/out events.
    pub focus_events: bool,
    /// DECSET 2026: the program is in the middle of a synchronized update.
    pub synchronized_output: bool,
    /// OSC 52 clipboard writes (base64 payloads) since the last drain.
    pub clipboard: Vec<Vec<u8>>,
    /// Set by the owner to suppress replies (history replays must not answer old queries).
    pub mute: bool,
}

impl Answerback {
    fn reply(&mut self, bytes: &[u8]) {
        if !self.mute {
            self.replies.extend_from_slice(bytes);
        }
    }

    fn mode_state(&self, screen: &vt100::Screen, mode: u16) -> u8 {
        // DECRPM values: 1 set, 2 reset, 0 not recognised.
        let set = |on: bool| if on { 1 } else { 2 };
        match mode {
            1 => set(screen.application_cursor()),
            25 => set(!screen.hide_cursor()),
            47 | 1047 | 1049 => set(screen.alternate_screen()),
            1000 => set(screen.mouse_protocol_mode() == vt100::MouseProtocolMode::PressRelease),
            1002 => set(screen.mouse_protocol_mode() == vt100::MouseProtocolMode::ButtonMotion),
            1003 => set(screen.mouse_protocol_mode() == vt100::MouseProtocolMode::AnyMotion),
            1004 => set(self.focus_events),
            1006 => set(screen.mouse_protocol_encoding() == vt100::MouseProtocolEncoding::Sgr),
            2004 => set(screen.bracketed_paste()),
            2026 => set(self.synchronized_output),
            _ => 0,
        }
    }
}

impl vt100::Callbacks for Answerback {
    fn audible_bell(&mut self, _: &mut vt100::Screen) {
        self.bells = self.bells.saturating_add(1);
    }

    fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
        let text: String = String::from_utf8_lossy(title)
            .chars()
            .filter(|c| !c.is_control())
            .take(256)
            .collect();
        self.title = Some(text);
    }

    fn copy_to_clipboard(&mut self, _: &mut vt100::Screen, _ty: &[u8], data: &[u8]) {
        if self.clipboard.len() < 8 && data.len() <= 1 << 20 {
            self.clipboard.push(data.to_vec());
        }
    }

    fn unhandled_csi(
        &mut self,
        screen: &mut vt100::Screen,
        i1: Option<u8>,
        i2: Option<u8>,
        params: &[&[u16]],
        c: char,
    ) {
        let first = params.first().and_then(|p| p.first()).copied().unwrap_or(0);
        match (i1, i2, c) {
            // DSR: status and cursor position report.
            (None, None, 'n') if first == 5 => self.reply(b"\x1b[0n"),
            (None, None, 'n') if first == 6 => {
                let (row, col) = screen.cursor_position();
                self.reply(format!("\x1b[{};{}R", row + 1, col + 1).as_bytes());
            }
            (Some(b'?'), None, 'n') if first == 6 => {
                let (row, col) = screen.cursor_position();
                self.reply(format!("\x1b[?{};{}R", row + 1, col + 1).as_bytes());
            }
            // Primary device attributes: a VT220-class terminal with ANSI color.
            (None, None, 'c') if first == 0 => self.reply(b"\x1b[?62;22c"),
            // Secondary device attributes.
            (Some(b'>'), None, 'c') if first == 0 => self.reply(b"\x1b[>1;10;0c"),
            // XTVERSION.
            (Some(b'>'), None, 'q') => {
                let version = concat!("\x1bP>|calyx ", env!("CARGO_PKG_VERSION"), "\x1b\\");
                self.reply(version.as_bytes());
            }
            // DECRQM for private modes: CSI ? Ps $ p.
            (Some(b'?'), Some(b'$'), 'p') => {
                let state = self.mode_state(screen, first);
                self.reply(format!("\x1b[?{first};{state}$y").as_bytes());
            }
            // DECRQM for ANSI modes: report "not recognised" rather than stay silent.
            (Some(b'$'), None, 'p') => {
                self.reply(format!("\x1b[{first};0$y").as_bytes());
            }
            // Modes vt100 does not track itself.
            (Some(b'?'), None, 'h' | 'l') => {
                let on = c == 'h';
                for param in params {
                    match param.first().copied() {
                        Some(1004) => self.focus_events = on,
                        Some(2026) => self.synchronized_output = on,
                        _ => {}
                    }
                }
            }
            // XTWINOPS 18: report the text area size in characters.
            (None, None, 't') if first == 18 => {
                let (rows, cols) = screen.size();
                self.reply(format!("\x1b[8;{rows};{cols}t").as_bytes());
            }
            _ => {}
        }
    }

    fn unhandled_osc(&mut self, _: &mut vt100::Screen, params: &[&[u8]]) {
        // OSC 10/11 color queries: answer with a plain light-on-dark palette.
        match params {
            [b"10", b"?"] => self.reply(b"\x1b]10;rgb:d0d0/d0d0/d0d0\x1b\\"),
            [b"11", b"?"] => self.reply(b"\x1b]11;rgb:0000/0000/0000\x1b\\"),
            _ => {}
        }
    }
}
