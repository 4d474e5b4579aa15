//! What a pane's OSC 52 clipboard write does (`set_clipboard` in the config).
//!
//! The program in a pane is not trusted. Before this, any pane, even one in a window nobody
//! looked at, could set the user's own clipboard through calyx (`printf '\e]52;c;...'`): a
//! paste attack, where the next paste into a shell runs the attacker's command. Following
//! tmux's `set-clipboard`, a pane's write now fills calyx's paste buffer (pasted knowingly with
//! `prefix ]`, bracketed when the program asked) and reaches the outer terminal only with
//! `set_clipboard = "on"`, only from the pane the user is looking at, and with a status-line
//! message each time. calyx's own copy mode is not a pane's write and keeps its OSC 52
//! (`Server::copy_text`).

use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine;

use crate::config::SetClipboard;
use crate::layout::PaneId;

use crate::server::owner::Server;

/// Standard base64 that accepts a payload with or without its `=` padding, as terminals do.
const LENIENT: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// The text of an OSC 52 payload (base64 as the program sent it); None for what is not valid
/// base64 (it is dropped rather than passed on as it came).
pub fn decode(payload: &[u8]) -> Option<Vec<u8>> {
    LENIENT.decode(payload).ok()
}

/// The OSC 52 sequence that sets the outer terminal's clipboard to `text`, encoded by calyx
/// (never the program's own bytes).
pub fn osc52(text: &[u8]) -> Vec<u8> {
    let b64 = base64::engine::general_purpose::STANDARD.encode(text);
    let mut out = Vec::with_capacity(b64.len() + 8);
    out.extend_from_slice(b"\x1b]52;c;");
    out.extend_from_slice(b64.as_bytes());
    out.push(0x07);
    out
}

impl Server {
    /// Applies the clipboard writes `pane` made (base64 payloads, oldest first).
    pub(crate) fn pane_clipboard(&mut self, pane: PaneId, writes: Vec<Vec<u8>>) {
        let mode = self.state.config.set_clipboard;
        if mode == SetClipboard::Off {
            return;
        }
        // Only the last one matters: each replaces the one before.
        let Some(text) = writes.iter().rev().find_map(|w| decode(w)) else {
            return;
        };
        if mode == SetClipboard::On {
            self.forward_clipboard(pane, &text);
        }
        self.state.paste_buffer = Some(text);
    }

    /// Sends `text` to the terminals of the clients that show `pane` as their focused pane, and
    /// tells them on the status line.
    fn forward_clipboard(&mut self, pane: PaneId, text: &[u8]) {
        let Some(session) = self.state.panes.get(&pane).map(|p| p.session) else {
            return;
        };
        let focused = self
            .state
            .sessions
            .get(&session)
            .and_then(|s| s.active_pane())
            == Some(pane);
        if !focused {
            return;
        }
        let osc = osc52(text);
        let clients: Vec<_> = self
            .state
            .clients
            .values()
            .filter(|c| c.session == session)
            .map(|c| c.id)
            .collect();
        for id in clients {
            if let Some(c) = self.state.clients.get(&id) {
                let _ = c.send_terminal(osc.clone());
            }
            self.message(
                id,
                format!("pane %{pane} set the clipboard ({} bytes)", text.len()),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_decode_with_or_without_padding_and_junk_is_dropped() {
        assert_eq!(decode(b"aGk=").as_deref(), Some(&b"hi"[..]));
        assert_eq!(decode(b"aGk").as_deref(), Some(&b"hi"[..]));
        assert_eq!(decode(b"\x1b[2J"), None);
        assert_eq!(decode(b"?"), None);
    }

    #[test]
    fn forwarded_writes_are_reencoded() {
        assert_eq!(osc52(b"hi"), b"\x1b]52;c;aGk=\x07");
    }
}
