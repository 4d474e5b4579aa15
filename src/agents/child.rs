//! Subagents: child rows under their parent.
//!
//! A subagent event is one that carries an agent id (Claude's `agent_id`; `agent_type` alone is
//! a main thread started with `--agent`), or whose session id is a known child's id (Grok's
//! child teardown arrives as SessionEnd with the child's session; OpenCode children are
//! sessions of their own). A parent's Stop does not retire running children; SubagentStop,
//! the child's own Stop or SessionEnd (an OpenCode task session going idle is the task's end:
//! OpenCode 1.18.33 never deletes it), the parent's SessionEnd, a pane exit or a new session
//! does.

use calyx_integrations::{EventKind, NormalizedEvent};
use tokio::time::Instant;

use super::rules::main_target;
use super::state::{remember, AgentRow, AgentState, PendingTool, Rule, SubagentRow, Transition};

/// The child this event belongs to, if it is a subagent event.
pub(super) fn child_id(row: &AgentRow, ev: &NormalizedEvent) -> Option<String> {
    if let Some(id) = &ev.agent_id {
        return Some(id.clone());
    }
    let sid = ev.session_id.as_ref()?;
    if row.session_id.as_ref() == Some(sid) {
        return None;
    }
    let child = row.subagents.iter().any(|c| &c.agent_id == sid)
        || row.retired_children.iter().any(|c| c == sid);
    child.then(|| sid.clone())
}

/// Applies a subagent event: updates or retires the child, and lets the parent become blocked
/// (a subagent's permission dialog blocks the pane) or leave blocked.
pub(super) fn apply_child(
    row: &mut AgentRow,
    id: &str,
    ev: &NormalizedEvent,
    now: Instant,
    out: &mut Vec<Transition>,
) {
    row.last_event = now;
    let ends = matches!(
        ev.kind,
        EventKind::SubagentStop | EventKind::SessionEnd | EventKind::Stop
    );
    if ends {
        retire_child(row, id, out);
        // The request the row waited on was this subagent's, and it ended unanswered by a
        // tool event (denied in the CLI's own dialog): the pane no longer waits.
        if row.state == AgentState::Blocked
            && row
                .pending
                .as_ref()
                .is_some_and(|p| p.agent_id.as_deref() == Some(id))
        {
            let resume = row
                .pending
                .as_ref()
                .map_or(AgentState::Working, |p| p.resume);
            row.set_state(resume, Rule::WaitingSubagentEnded, None, now, out);
        }
        return;
    }
    // A late event of a subagent that ended, or of a session that is over, brings back no
    // running child (hooks are delivered asynchronously).
    let known = row.subagents.iter().any(|c| c.agent_id == id);
    if !known && (row.state == AgentState::Done || row.retired_children.iter().any(|c| c == id)) {
        return;
    }
    if !known && row.subagents.len() >= MAX_CHILDREN {
        // A runaway source of ids: the oldest child makes room.
        let oldest = row.subagents[0].agent_id.clone();
        retire_child(row, &oldest, out);
    }
    if !known {
        row.subagents.push(SubagentRow {
            agent_id: id.to_string(),
            agent_type: ev.agent_type.clone(),
            last_tool: None,
            started: now,
            last_event: now,
        });
        out.push(Transition {
            pane: row.pane,
            kind: row.kind,
            subagent: Some(id.to_string()),
            from: AgentState::Unknown,
            to: AgentState::Working,
            tool: None,
        });
    }
    if let Some(child) = row.subagents.iter_mut().find(|c| c.agent_id == id) {
        child.last_event = now;
        if child.agent_type.is_none() {
            child.agent_type = ev.agent_type.clone();
        }
        if ev.tool_name.is_some() {
            child.last_tool = ev.tool_name.clone();
        }
    }
    // Only the subagent that asked answers its request with its tool events.
    let asked_by_this_child = row
        .pending
        .as_ref()
        .is_some_and(|p| p.agent_id.as_deref() == Some(id));
    let parent_cares = match ev.kind {
        EventKind::PermissionRequest => true,
        EventKind::PreToolUse | EventKind::PostToolUse => {
            row.state == AgentState::Blocked && asked_by_this_child
        }
        EventKind::SubagentStart => {
            matches!(row.state, AgentState::Idle | AgentState::Unknown)
        }
        _ => false,
    };
    if parent_cares {
        let (to, rule) = main_target(row, ev, now);
        if to == AgentState::Blocked && ev.kind == EventKind::PermissionRequest {
            let resume = match &row.pending {
                Some(p) if row.state == AgentState::Blocked => p.resume,
                _ => row.state,
            };
            row.pending = Some(PendingTool {
                tool_name: ev.tool_name.clone(),
                tool_input: ev.tool_input.clone(),
                agent_id: Some(id.to_string()),
                resume,
            });
        }
        let rule = if ev.kind == EventKind::SubagentStart {
            Rule::SubagentEvent
        } else {
            rule
        };
        row.set_state(to, rule, ev.tool_name.clone(), now, out);
    }
}

/// Running children a row keeps at most.
const MAX_CHILDREN: usize = 64;

/// Removes one child, recording its transition to done; its id is remembered so late events
/// do not bring it back.
pub(super) fn retire_child(row: &mut AgentRow, id: &str, out: &mut Vec<Transition>) {
    remember(&mut row.retired_children, id);
    if let Some(pos) = row.subagents.iter().position(|c| c.agent_id == id) {
        let child = row.subagents.remove(pos);
        out.push(Transition {
            pane: row.pane,
            kind: row.kind,
            subagent: Some(child.agent_id),
            from: AgentState::Working,
            to: AgentState::Done,
            tool: None,
        });
    }
}

/// Retires every child (session over, pane exited, new session).
pub(super) fn retire_all(row: &mut AgentRow, out: &mut Vec<Transition>) {
    let ids: Vec<String> = row.subagents.iter().map(|c| c.agent_id.clone()).collect();
    for id in ids {
        retire_child(row, &id, out);
    }
}
