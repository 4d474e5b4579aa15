//! The agent book: one row per pane with an agent, updated by events, exits and the clock.

use std::collections::BTreeMap;
use std::time::Duration;

use calyx_integrations::{AgentKind, EventKind, NormalizedEvent};
use tokio::time::Instant;

use super::child::{apply_child, child_id, retire_all};
use super::rules::{is_forward_moving, main_target};
use super::state::{remember, AgentRow, AgentState, HistoryEntry, PendingTool, Rule, Transition};

/// Where the main row would go for `ev` if a subagent's request were not waiting (None: it
/// is not waiting, or `ev` ends the wait or the session, and the usual rules apply).
fn subagent_waits(row: &AgentRow, ev: &NormalizedEvent) -> Option<AgentState> {
    let pending = row.pending.as_ref()?;
    if row.state != AgentState::Blocked || pending.agent_id.is_none() {
        return None;
    }
    let resume = match ev.kind {
        EventKind::Stop | EventKind::Interrupt => AgentState::Idle,
        EventKind::UserPromptSubmit
        | EventKind::PreToolUse
        | EventKind::PostToolUse
        | EventKind::Activity
        | EventKind::SubagentStart => AgentState::Working,
        EventKind::Notification | EventKind::Compaction | EventKind::SubagentStop => pending.resume,
        // The main agent asks too, the session starts again or ends: the usual rules.
        EventKind::PermissionRequest | EventKind::SessionStart | EventKind::SessionEnd => {
            return None
        }
    };
    Some(resume)
}

/// Working with no event for this long becomes unknown: an interrupt that fires no hook
/// (Claude's Esc) or a hung agent must not look busy forever. Blocked never ages: a dialog
/// waits for a human however long it takes.
pub const WORKING_STALE_AFTER: Duration = Duration::from_secs(15 * 60);

/// [`AgentBook::pane_evidence_idle`] only acts when no hook arrived for this long, so the
/// owner's "pane went quiet" guess cannot overrule a hook that is in flight.
pub const QUIET_MIN: Duration = Duration::from_secs(2);

/// Every agent row, keyed by pane. Owned by the server's owner loop; pure logic.
#[derive(Debug, Default)]
pub struct AgentBook {
    rows: BTreeMap<u64, AgentRow>,
}

/// The event name an MCP client's connect is recorded under in a row's history.
const MCP_CONNECT: &str = "mcp connect";

impl AgentBook {
    /// Applies one normalized hook event from the agent in `pane`, returning the state changes
    /// it caused (the main row's and its subagents').
    pub fn apply(
        &mut self,
        pane: u64,
        kind: AgentKind,
        ev: &NormalizedEvent,
        now: Instant,
    ) -> Vec<Transition> {
        let out = self.apply_event(pane, kind, ev, now);
        if let Some(row) = self.rows.get_mut(&pane) {
            row.hooked = true;
        }
        out
    }

    /// calyx holds a gate of `pane`'s agent for a human: the agent waits (blocked), whatever
    /// event carried the gate (pi's gate is its tool_call, not a permission event).
    pub fn awaiting_human(
        &mut self,
        pane: u64,
        kind: AgentKind,
        tool: Option<String>,
        now: Instant,
    ) -> Vec<Transition> {
        self.apply_own(
            pane,
            kind,
            EventKind::PermissionRequest,
            "calyx:approval",
            tool,
            now,
        )
    }

    /// A human (or a rule the human set) answered `pane`'s held request: the agent goes on
    /// working with `tool`, as after the tool ran.
    pub fn human_answered(
        &mut self,
        pane: u64,
        kind: AgentKind,
        tool: Option<String>,
        now: Instant,
    ) -> Vec<Transition> {
        self.apply_own(
            pane,
            kind,
            EventKind::PostToolUse,
            "calyx:decision",
            tool,
            now,
        )
    }

    /// An event calyx itself knows happened to `pane`'s agent (named `name` in the row's
    /// history), applied as the CLI's own would be.
    fn apply_own(
        &mut self,
        pane: u64,
        kind: AgentKind,
        what: EventKind,
        name: &str,
        tool: Option<String>,
        now: Instant,
    ) -> Vec<Transition> {
        let mut event = NormalizedEvent::new(what, name);
        event.tool_name = tool;
        self.apply(pane, kind, &event, now)
    }

    /// An agent CLI's MCP client connected from `pane`, naming itself `kind`. A pane without
    /// an agent row gets one (idle: an agent that just connected sits at its prompt), so
    /// agents whose hooks are not installed still show; so does a pane whose row is another
    /// CLI's. A row of the same CLI is left alone while it is live, and for good once its
    /// hooks report it: a CLI with hooks announces its next session itself, while its MCP
    /// client may connect again on the way out (Codex's does after its SessionEnd), which
    /// must not bring the ended row back.
    pub fn mcp_connected(&mut self, pane: u64, kind: AgentKind, now: Instant) -> Vec<Transition> {
        let left_to_hooks = |r: &AgentRow| r.hooked || r.state != AgentState::Done;
        if self
            .rows
            .get(&pane)
            .is_some_and(|r| r.kind == kind && left_to_hooks(r))
        {
            return Vec::new();
        }
        let event = NormalizedEvent::new(EventKind::SessionStart, MCP_CONNECT);
        self.apply_event(pane, kind, &event, now)
    }

    fn apply_event(
        &mut self,
        pane: u64,
        kind: AgentKind,
        ev: &NormalizedEvent,
        now: Instant,
    ) -> Vec<Transition> {
        let mut out = Vec::new();
        let row = match self.rows.get_mut(&pane) {
            Some(row) => row,
            // Nothing to end for a pane we never saw.
            None if matches!(ev.kind, EventKind::SessionEnd | EventKind::SubagentStop) => {
                return out
            }
            None => self
                .rows
                .entry(pane)
                .or_insert_with(|| AgentRow::new(pane, kind, now)),
        };

        // A late event of a session that ended here never takes the row over again.
        if ev
            .session_id
            .as_ref()
            .is_some_and(|s| row.session_id.as_ref() != Some(s) && row.ended_sessions.contains(s))
        {
            let state = row.state;
            row.record(entry(ev, now, None, Rule::StaleOldSession, state));
            return out;
        }

        if let Some(id) = child_id(row, ev) {
            apply_child(row, &id, ev, now, &mut out);
            let state = row.state;
            row.record(entry(ev, now, Some(id), Rule::SubagentEvent, state));
            return out;
        }

        let other_session = matches!((&row.session_id, &ev.session_id),
            (Some(old), Some(new)) if old != new);
        if other_session || row.kind != kind {
            if !is_forward_moving(ev.kind) {
                let state = row.state;
                row.record(entry(ev, now, None, Rule::StaleOldSession, state));
                return out;
            }
            retire_all(row, &mut out);
            row.kind = kind;
            row.hooked = false;
            row.session_id = None;
            row.transcript_path = None;
            row.last_tool = None;
            row.pending = None;
            row.rule = Rule::NewSession;
            let state = row.state;
            row.record(entry(ev, now, None, Rule::NewSession, state));
        }

        let stale = row.state == AgentState::Done && !is_forward_moving(ev.kind);
        if !stale {
            row.last_event = now;
            if row.session_id.is_none() {
                row.session_id = ev.session_id.clone();
            }
            if ev.cwd.is_some() {
                row.cwd = ev.cwd.clone();
            }
            if ev.transcript_path.is_some() {
                row.transcript_path = ev.transcript_path.clone();
            }
            if ev.tool_name.is_some()
                && matches!(
                    ev.kind,
                    EventKind::PreToolUse | EventKind::PostToolUse | EventKind::PermissionRequest
                )
            {
                row.last_tool = ev.tool_name.clone();
            }
        }
        if matches!(ev.kind, EventKind::SessionStart | EventKind::SessionEnd) {
            retire_all(row, &mut out);
        }
        if ev.kind == EventKind::SessionEnd {
            if let Some(session) = ev.session_id.as_ref().or(row.session_id.as_ref()).cloned() {
                remember(&mut row.ended_sessions, &session);
            }
        }
        // While a subagent's request waits, the main agent's progress only changes where the
        // row returns to: the pane still needs the human.
        if let Some(resume) = subagent_waits(row, ev) {
            if let Some(p) = row.pending.as_mut() {
                p.resume = resume;
            }
            let state = row.state;
            row.rule = Rule::SubagentStillWaits;
            row.record(entry(ev, now, None, Rule::SubagentStillWaits, state));
            return out;
        }
        let (to, rule) = main_target(row, ev, now);
        if ev.kind == EventKind::PermissionRequest {
            let resume = match &row.pending {
                Some(p) if row.state == AgentState::Blocked => p.resume,
                _ => row.state,
            };
            row.pending = Some(PendingTool {
                tool_name: ev.tool_name.clone(),
                tool_input: ev.tool_input.clone(),
                agent_id: None,
                resume,
            });
        }
        row.set_state(to, rule, ev.tool_name.clone(), now, &mut out);
        row.record(entry(ev, now, None, rule, to));
        out
    }

    /// The pane's process exited: its row must not keep looking alive. Children are retired
    /// and the row becomes done (it stays as a record until [`AgentBook::remove`]).
    pub fn pane_exited(&mut self, pane: u64, now: Instant) -> Vec<Transition> {
        let mut out = Vec::new();
        if let Some(row) = self.rows.get_mut(&pane) {
            retire_all(row, &mut out);
            row.set_state(AgentState::Done, Rule::PaneExited, None, now, &mut out);
            row.record(synthetic(
                "<pane exit>",
                now,
                Rule::PaneExited,
                AgentState::Done,
            ));
        }
        out
    }

    /// Evidence from the pane itself: the owner saw its output go quiet with the agent's
    /// prompt back. Claude's Esc interrupt fires no hook, so without this the row would stay
    /// working until it ages. Acts only on a working row whose last hook is at least
    /// [`QUIET_MIN`] old; never touches blocked (a dialog is also quiet).
    pub fn pane_evidence_idle(&mut self, pane: u64, now: Instant) -> Vec<Transition> {
        let mut out = Vec::new();
        if let Some(row) = self.rows.get_mut(&pane) {
            if row.state == AgentState::Working && now.duration_since(row.last_event) >= QUIET_MIN {
                row.set_state(AgentState::Idle, Rule::PaneQuiet, None, now, &mut out);
                row.record(synthetic(
                    "<pane quiet>",
                    now,
                    Rule::PaneQuiet,
                    AgentState::Idle,
                ));
            }
        }
        out
    }

    /// Puts a row in (one carried across an upgrade), over any row of its pane.
    pub(super) fn insert_row(&mut self, row: AgentRow) {
        self.rows.insert(row.pane, row);
    }

    /// Forgets a pane's row (the pane was closed).
    pub fn remove(&mut self, pane: u64) -> Option<AgentRow> {
        self.rows.remove(&pane)
    }

    /// Applies time-based rules: working rows silent for [`WORKING_STALE_AFTER`] become
    /// unknown. Call it at [`AgentBook::next_deadline`].
    pub fn tick(&mut self, now: Instant) -> Vec<Transition> {
        let mut out = Vec::new();
        for row in self.rows.values_mut() {
            if row.state == AgentState::Working
                && now.duration_since(row.last_event) >= WORKING_STALE_AFTER
            {
                row.set_state(AgentState::Unknown, Rule::Aged, None, now, &mut out);
                row.record(synthetic("<aged>", now, Rule::Aged, AgentState::Unknown));
            }
        }
        out
    }

    /// When the next time-based change is due, so the owner sleeps exactly until then instead
    /// of polling. `None` when nothing can change with time alone.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.rows
            .values()
            .filter(|r| r.state == AgentState::Working)
            .map(|r| r.last_event + WORKING_STALE_AFTER)
            .min()
    }

    /// One pane's row.
    pub fn row(&self, pane: u64) -> Option<&AgentRow> {
        self.rows.get(&pane)
    }

    /// All rows, unordered (by pane).
    pub fn iter(&self) -> impl Iterator<Item = &AgentRow> {
        self.rows.values()
    }

    /// How many rows are blocked and working (status line, `calyx agents` summary).
    pub fn counts(&self) -> (usize, usize) {
        self.rows.values().fold((0, 0), |(b, w), r| match r.state {
            AgentState::Blocked => (b + 1, w),
            AgentState::Working => (b, w + 1),
            _ => (b, w),
        })
    }
}

fn entry(
    ev: &NormalizedEvent,
    now: Instant,
    subagent: Option<String>,
    rule: Rule,
    state_after: AgentState,
) -> HistoryEntry {
    HistoryEntry {
        at: now,
        what: ev.raw_event_name.clone(),
        event_kind: Some(ev.kind),
        session_id: ev.session_id.clone(),
        subagent,
        rule,
        state_after,
    }
}

fn synthetic(what: &str, now: Instant, rule: Rule, state_after: AgentState) -> HistoryEntry {
    HistoryEntry {
        at: now,
        what: what.to_string(),
        event_kind: None,
        session_id: None,
        subagent: None,
        rule,
        state_after,
    }
}
