//! Turns agent row views into the sidebar widget's rows (the tui crate knows nothing about
//! agents, so the mapping lives here).

use calyx_tui::sidebar::{RowState, SidebarRow, SubagentLine};

use super::state::AgentState;
use super::view::{short_duration, AgentRowView};

/// The widget's state for an agent state.
pub fn row_state(state: AgentState) -> RowState {
    match state {
        AgentState::Working => RowState::Working,
        AgentState::Blocked => RowState::Blocked,
        AgentState::Idle => RowState::Idle,
        AgentState::Done => RowState::Done,
        AgentState::Unknown => RowState::Unknown,
    }
}

/// One sidebar row for `view`; the pane's label and title come from the session layout, which
/// the agent book does not know.
pub fn sidebar_row(view: &AgentRowView, pane_label: String, title: String) -> SidebarRow {
    let cwd_name = view
        .cwd
        .as_deref()
        .map(|c| c.trim_end_matches('/'))
        .and_then(|c| c.rsplit('/').next())
        .unwrap_or_default()
        .to_string();
    SidebarRow {
        pane_label,
        agent_name: view.kind.display_name().to_string(),
        title,
        cwd_name,
        state: row_state(view.state),
        since_text: short_duration(view.in_state),
        subagents: view
            .subagents
            .iter()
            .map(|s| SubagentLine {
                agent_type: s
                    .agent_type
                    .clone()
                    .unwrap_or_else(|| "subagent".to_string()),
                last_tool: s.last_tool.clone().unwrap_or_default(),
                elapsed_text: short_duration(s.elapsed),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use calyx_integrations::{AgentKind, EventKind, NormalizedEvent};
    use tokio::time::Instant;

    use super::*;
    use crate::agents::AgentBook;

    #[test]
    fn views_map_to_sidebar_rows() {
        let t0 = Instant::now();
        let mut book = AgentBook::default();
        let mut ev = NormalizedEvent::new(EventKind::UserPromptSubmit, "UserPromptSubmit");
        ev.cwd = Some("/home/dev/src/app/".into());
        book.apply(1, AgentKind::ClaudeCode, &ev, t0);
        let mut sub = NormalizedEvent::new(EventKind::SubagentStart, "SubagentStart");
        sub.agent_id = Some("a1".into());
        book.apply(1, AgentKind::ClaudeCode, &sub, t0);
        let views = book.rows(t0 + Duration::from_secs(75));
        let row = sidebar_row(&views[0], "1.1".into(), "fix".into());
        assert_eq!(row.agent_name, "Claude Code");
        assert_eq!(row.cwd_name, "app");
        assert_eq!(row.state, RowState::Working);
        assert_eq!(row.since_text, "1m");
        assert_eq!(row.subagents[0].agent_type, "subagent");
        assert_eq!(row.subagents[0].elapsed_text, "1m");
    }
}
