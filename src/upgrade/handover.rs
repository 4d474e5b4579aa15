//! What a server hands to the server that replaces it in place (`calyx server-upgrade`):
//! plain data, written as JSON into a memfd the new process inherits. Descriptors travel as
//! their numbers (the `execve` keeps them open at the same numbers); everything else is copied.
//!
//! The layout part is this server's own model (ids kept: a pane's `CALYX_PANE_ID` and surface
//! id are in its program's environment and in the agents' hook payloads, so they must not
//! change), not `sessions.json`'s records, which renumber panes on restore.

use std::io::{Read, Seek, Write};

use base64::Engine;
use serde::{Deserialize, Serialize};

use crate::layout::{Layout, PaneId};

/// The hand-over format's version: a server refuses (in its dry run, before anything is
/// handed over) a state of another version.
pub const HANDOVER_VERSION: u32 = 1;

/// The version of the socket protocol this binary speaks; `calyx server-upgrade` refuses a
/// binary that speaks another one (its clients could not talk to it).
pub const PROTOCOL_VERSION: u32 = 1;

/// Everything handed over.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Handover {
    pub version: u32,
    /// The Unix socket's path and its listening descriptor.
    pub socket_path: String,
    pub socket_fd: i32,
    /// The agent endpoint's listening socket, port and token (None: it was not running).
    pub endpoint: Option<HandedEndpoint>,
    pub next_pane: PaneId,
    pub next_session: u32,
    pub sessions: Vec<HandedSession>,
    pub panes: Vec<HandedPane>,
    /// Agent rows.
    #[serde(default)]
    pub agents: Vec<crate::agents::carry::CarriedRow>,
    /// The "always" approval rules the human made.
    #[serde(default)]
    pub approval_rules: Vec<crate::approvals::carry::CarriedRule>,
    /// MCP peers and their unread messages.
    #[serde(default)]
    pub peers: Vec<crate::mcp::peers::CarriedPeer>,
}

/// The agent endpoint's listener.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct HandedEndpoint {
    pub fd: i32,
    pub port: u16,
    pub token: String,
}

/// One session, with its ids.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HandedSession {
    pub id: u32,
    pub name: String,
    pub env: Vec<(String, String)>,
    pub rows: u16,
    pub cols: u16,
    pub roomy_size: (u16, u16),
    pub active_window: usize,
    pub last_window: Option<usize>,
    pub sidebar: bool,
    pub windows: Vec<HandedWindow>,
}

/// One window.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HandedWindow {
    pub number: usize,
    pub name: String,
    pub auto_name: bool,
    pub layout: Layout,
    pub active: PaneId,
    pub last_active: Option<PaneId>,
    pub zoomed: bool,
    pub synchronized: bool,
}

/// One pane: its running program and what its terminal printed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HandedPane {
    pub id: PaneId,
    pub session: u32,
    pub surface_id: String,
    pub record_id: String,
    pub program: String,
    pub start_command: Vec<String>,
    pub start_cwd: String,
    pub rows: u16,
    pub cols: u16,
    /// The PTY master's descriptor (kept open across the exec).
    pub master_fd: i32,
    pub pid: u32,
    /// The shell integration switched on in it (`bash`, `zsh`, `fish`).
    pub shell: Option<String>,
    /// The size the history starts at.
    pub history_start: Option<(u16, u16)>,
    /// The retained output, base64, each piece with the size to resize to before it.
    pub history: Vec<HandedPiece>,
}

/// A piece of a pane's retained output.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct HandedPiece {
    pub bytes: String,
    pub size: Option<(u16, u16)>,
}

impl HandedPane {
    /// The history as the terminal rebuilds it; an undecodable piece is an error (a state
    /// that does not read is refused before the upgrade, in the dry run).
    pub fn history_pieces(&self) -> anyhow::Result<calyx_pty::HistoryPieces> {
        let engine = base64::engine::general_purpose::STANDARD;
        let pieces = self
            .history
            .iter()
            .map(|p| Ok((engine.decode(&p.bytes)?, p.size)))
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(calyx_pty::HistoryPieces {
            start: self.history_start,
            pieces,
        })
    }

    /// Encodes a terminal's history for the hand-over.
    pub fn encode_history(history: &calyx_pty::HistoryPieces) -> Vec<HandedPiece> {
        let engine = base64::engine::general_purpose::STANDARD;
        history
            .pieces
            .iter()
            .map(|(bytes, size)| HandedPiece {
                bytes: engine.encode(bytes),
                size: *size,
            })
            .collect()
    }
}

impl Handover {
    /// Reads a hand-over and checks its version and history pieces: what the new binary's dry
    /// run (`calyx server --check-adopt`) does before the old server lets go.
    pub fn read_from(mut reader: impl Read) -> anyhow::Result<Handover> {
        let mut text = Vec::new();
        reader.read_to_end(&mut text)?;
        let handover: Handover = serde_json::from_slice(&text)
            .map_err(|e| anyhow::anyhow!("the handed-over state does not parse: {e}"))?;
        if handover.version != HANDOVER_VERSION {
            anyhow::bail!(
                "the handed-over state is version {}, this calyx reads version {HANDOVER_VERSION}",
                handover.version
            );
        }
        for pane in &handover.panes {
            pane.history_pieces()
                .map_err(|e| anyhow::anyhow!("pane %{}'s history does not decode: {e}", pane.id))?;
            if !handover.sessions.iter().any(|s| s.id == pane.session) {
                anyhow::bail!("pane %{} names a session that is not handed over", pane.id);
            }
        }
        Ok(handover)
    }

    /// Writes this state into a new memfd (not close-on-exec, so the new server inherits it),
    /// rewound for reading.
    pub fn to_memfd(&self) -> anyhow::Result<std::fs::File> {
        let fd = nix::sys::memfd::memfd_create(
            c"calyx-handover",
            nix::sys::memfd::MemFdCreateFlag::empty(),
        )?;
        let mut file = std::fs::File::from(fd);
        serde_json::to_writer(&mut file, self)?;
        file.flush()?;
        file.rewind()?;
        Ok(file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Handover {
        let history = calyx_pty::HistoryPieces {
            start: Some((5, 20)),
            pieces: vec![
                (b"hello\r\n".to_vec(), None),
                (b"\xff\x00".to_vec(), Some((4, 10))),
            ],
        };
        Handover {
            version: HANDOVER_VERSION,
            socket_path: "/tmp/s".into(),
            socket_fd: 3,
            endpoint: Some(HandedEndpoint {
                fd: 4,
                port: 7000,
                token: "t".into(),
            }),
            next_pane: 2,
            next_session: 1,
            sessions: vec![HandedSession {
                id: 0,
                name: "work".into(),
                env: vec![],
                rows: 24,
                cols: 80,
                roomy_size: (24, 80),
                active_window: 0,
                last_window: None,
                sidebar: false,
                windows: vec![HandedWindow {
                    number: 0,
                    name: "sh".into(),
                    auto_name: true,
                    layout: Layout::Pane(1),
                    active: 1,
                    last_active: None,
                    zoomed: false,
                    synchronized: false,
                }],
            }],
            panes: vec![HandedPane {
                id: 1,
                session: 0,
                surface_id: "s".into(),
                record_id: "r".into(),
                program: "sh".into(),
                start_command: vec![],
                start_cwd: "/".into(),
                rows: 23,
                cols: 80,
                master_fd: 5,
                pid: 42,
                shell: None,
                history_start: history.start,
                history: HandedPane::encode_history(&history),
            }],
            agents: Vec::new(),
            approval_rules: Vec::new(),
            peers: Vec::new(),
        }
    }

    #[test]
    fn a_handover_round_trips_through_a_memfd_with_its_history_bytes() {
        let handover = sample();
        let file = handover.to_memfd().expect("memfd");
        let read = Handover::read_from(file).expect("read back");
        assert_eq!(read, handover);
        let pieces = read.panes[0].history_pieces().expect("pieces");
        assert_eq!(pieces.pieces[1], (b"\xff\x00".to_vec(), Some((4, 10))));
    }

    #[test]
    fn another_version_or_a_broken_state_is_refused() {
        let mut handover = sample();
        handover.version = HANDOVER_VERSION + 1;
        let text = serde_json::to_vec(&handover).expect("json");
        let err = Handover::read_from(&text[..]).expect_err("future version");
        assert!(err.to_string().contains("version"), "{err}");
        let err = Handover::read_from(&b"{\"version\":"[..]).expect_err("truncated");
        assert!(err.to_string().contains("does not parse"), "{err}");
        let mut handover = sample();
        handover.panes[0].history[0].bytes = "not base64!".into();
        let text = serde_json::to_vec(&handover).expect("json");
        assert!(Handover::read_from(&text[..]).is_err());
    }
}
