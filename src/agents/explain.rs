//! `calyx agents explain PANE`: why a row shows what it shows.

use std::fmt::Write as _;

use tokio::time::Instant;

use super::book::AgentBook;
use super::view::short_duration;
use crate::approvals::visible;

/// A payload-supplied field as text for the user's terminal: control characters escaped.
fn shown(field: Option<&str>) -> String {
    field.map_or_else(|| "-".to_string(), visible)
}

impl AgentBook {
    /// A human-readable account of a pane's row: its state and the rule behind it, its
    /// subagents, and the last events received (oldest first) with the rule each triggered.
    /// Everything that came in a payload is escaped: this is printed to the user's terminal.
    pub fn explain(&self, pane: u64, now: Instant) -> String {
        let Some(row) = self.row(pane) else {
            return format!("pane {pane}: no agent events received\n");
        };
        let mut s = String::new();
        let _ = writeln!(
            s,
            "pane {pane}: {} is {} for {} ({})",
            row.kind.display_name(),
            row.state.as_str(),
            short_duration(now.saturating_duration_since(row.since)),
            row.rule.describe()
        );
        let _ = writeln!(
            s,
            "session {}  cwd {}  last tool {}",
            shown(row.session_id.as_deref()),
            shown(row.cwd.as_deref()),
            shown(row.last_tool.as_deref())
        );
        for c in &row.subagents {
            let _ = writeln!(
                s,
                "  subagent {} ({}) last tool {}, running {}",
                shown(c.agent_type.as_deref()),
                visible(&c.agent_id),
                shown(c.last_tool.as_deref()),
                short_duration(now.saturating_duration_since(c.started))
            );
        }
        let _ = writeln!(s, "last {} events (oldest first):", row.history.len());
        for h in &row.history {
            let who = match (&h.subagent, &h.session_id) {
                (Some(a), _) => format!(" [subagent {}]", visible(a)),
                (None, Some(sid)) => format!(" [session {}]", visible(sid)),
                (None, None) => String::new(),
            };
            let kind = h
                .event_kind
                .map(|k| format!(" ({k:?})"))
                .unwrap_or_default();
            let _ = writeln!(
                s,
                "  -{:>4} {}{}{} -> {}: {}",
                short_duration(now.saturating_duration_since(h.at)),
                visible(&h.what),
                kind,
                who,
                h.state_after.as_str(),
                h.rule.describe()
            );
        }
        s
    }
}
