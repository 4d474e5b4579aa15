//! Owned snapshots of rows for display, with ages computed against one `now`.

use std::time::Duration;

use calyx_integrations::AgentKind;
use tokio::time::Instant;

use super::book::AgentBook;
use super::state::{AgentRow, AgentState, Rule};

/// One row as the sidebar and `calyx agents` show it.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentRowView {
    /// The pane, to label and focus it.
    pub pane: u64,
    /// The CLI.
    pub kind: AgentKind,
    /// What it is doing.
    pub state: AgentState,
    /// How long it has been in `state`.
    pub in_state: Duration,
    /// How long since its last event.
    pub since_last_event: Duration,
    /// Its session id.
    pub session_id: Option<String>,
    /// Its working directory.
    pub cwd: Option<String>,
    /// Its last tool.
    pub last_tool: Option<String>,
    /// The rule behind the state.
    pub rule: Rule,
    /// Running subagents.
    pub subagents: Vec<SubagentView>,
}

/// A running subagent as a child row.
#[derive(Debug, Clone, PartialEq)]
pub struct SubagentView {
    /// Its id.
    pub agent_id: String,
    /// Its type or role.
    pub agent_type: Option<String>,
    /// Its last tool.
    pub last_tool: Option<String>,
    /// How long since it started.
    pub elapsed: Duration,
}

impl AgentRowView {
    /// Snapshots `row` as seen at `now`.
    pub fn of(row: &AgentRow, now: Instant) -> Self {
        AgentRowView {
            pane: row.pane,
            kind: row.kind,
            state: row.state,
            in_state: now.saturating_duration_since(row.since),
            since_last_event: now.saturating_duration_since(row.last_event),
            session_id: row.session_id.clone(),
            cwd: row.cwd.clone(),
            last_tool: row.last_tool.clone(),
            rule: row.rule,
            subagents: row
                .subagents
                .iter()
                .map(|c| SubagentView {
                    agent_id: c.agent_id.clone(),
                    agent_type: c.agent_type.clone(),
                    last_tool: c.last_tool.clone(),
                    elapsed: now.saturating_duration_since(c.started),
                })
                .collect(),
        }
    }
}

impl AgentBook {
    /// All rows sorted by urgency (blocked, working, idle, unknown, done); ties go to the row
    /// whose last event is oldest, since it has waited longest.
    pub fn rows(&self, now: Instant) -> Vec<AgentRowView> {
        let mut rows: Vec<&AgentRow> = self.iter().collect();
        rows.sort_by_key(|r| (r.state.urgency(), r.last_event, r.pane));
        rows.into_iter().map(|r| AgentRowView::of(r, now)).collect()
    }
}

/// A compact age for narrow columns: `12s`, `3m`, `2h`, `4d`.
pub fn short_duration(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m", s / 60),
        3600..=86_399 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86_400),
    }
}
