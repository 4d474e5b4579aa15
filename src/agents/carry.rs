//! Agent rows carried across an in-place upgrade (`calyx server-upgrade`): what the new
//! server needs to show the same sidebar and keep judging the same sessions (the CLI, the
//! state, the session id, where it works, its transcript, its last tool). Timers restart at
//! the upgrade and the per-row event history starts empty: those are about the old process.

use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use super::book::AgentBook;
use super::state::{AgentRow, AgentState};

/// One agent row as handed over.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CarriedRow {
    pub pane: u64,
    /// The CLI (`AgentKind::as_str`).
    pub kind: String,
    /// The state (`AgentState::as_str`).
    pub state: String,
    pub session_id: Option<String>,
    pub cwd: Option<String>,
    pub transcript_path: Option<String>,
    pub last_tool: Option<String>,
    pub hooked: bool,
}

fn state_named(name: &str) -> AgentState {
    [
        AgentState::Working,
        AgentState::Blocked,
        AgentState::Idle,
        AgentState::Done,
    ]
    .into_iter()
    .find(|s| s.as_str() == name)
    .unwrap_or(AgentState::Unknown)
}

impl AgentBook {
    /// The rows to hand over.
    pub fn carry_out(&self) -> Vec<CarriedRow> {
        self.iter()
            .map(|row| CarriedRow {
                pane: row.pane,
                kind: row.kind.as_str().to_string(),
                state: row.state.as_str().to_string(),
                session_id: row.session_id.clone(),
                cwd: row.cwd.clone(),
                transcript_path: row.transcript_path.clone(),
                last_tool: row.last_tool.clone(),
                hooked: row.hooked,
            })
            .collect()
    }

    /// Takes in handed-over rows (a row of a CLI this binary does not know is left out).
    pub fn carry_in(&mut self, rows: &[CarriedRow], now: Instant) {
        for carried in rows {
            let Ok(kind) = carried.kind.parse() else {
                continue;
            };
            let mut row = AgentRow::new(carried.pane, kind, now);
            row.state = state_named(&carried.state);
            row.session_id = carried.session_id.clone();
            row.cwd = carried.cwd.clone();
            row.transcript_path = carried.transcript_path.clone();
            row.last_tool = carried.last_tool.clone();
            row.hooked = carried.hooked;
            self.insert_row(row);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_carried_out_come_back_in_with_their_state_and_session() {
        let now = Instant::now();
        let carried = vec![
            CarriedRow {
                pane: 3,
                kind: "claude-code".into(),
                state: "working".into(),
                session_id: Some("abc".into()),
                cwd: Some("/w".into()),
                transcript_path: Some("/t.jsonl".into()),
                last_tool: Some("Bash".into()),
                hooked: true,
            },
            CarriedRow {
                pane: 4,
                kind: "no-such-cli".into(),
                state: "idle".into(),
                session_id: None,
                cwd: None,
                transcript_path: None,
                last_tool: None,
                hooked: false,
            },
        ];
        let mut book = AgentBook::default();
        book.carry_in(&carried, now);
        assert_eq!(book.carry_out(), carried[..1].to_vec());
        let row = book.row(3).expect("row");
        assert_eq!(row.state, AgentState::Working);
    }
}
