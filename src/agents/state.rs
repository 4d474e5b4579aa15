//! The data of one agent row and the transitions between states.

use std::collections::VecDeque;

use calyx_integrations::{AgentKind, EventKind};
use serde_json::Value;
use tokio::time::Instant;

/// What the agent in a pane is doing, as far as its hooks tell us.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AgentState {
    /// In a turn: thinking or running tools.
    Working,
    /// Waiting for a human to approve something: the most urgent state.
    Blocked,
    /// Turn over, waiting for the next prompt.
    Idle,
    /// Session over or the agent process exited: the row stays only as a record.
    Done,
    /// No trustworthy signal: a fresh row, or working with no event for too long.
    Unknown,
}

impl AgentState {
    /// Sort key for the sidebar: what needs a human comes first.
    pub fn urgency(self) -> u8 {
        match self {
            AgentState::Blocked => 0,
            AgentState::Working => 1,
            AgentState::Idle => 2,
            AgentState::Unknown => 3,
            AgentState::Done => 4,
        }
    }

    /// The state named by [`AgentState::as_str`] (another machine's snapshot names them).
    pub fn from_name(name: &str) -> Option<Self> {
        [
            AgentState::Working,
            AgentState::Blocked,
            AgentState::Idle,
            AgentState::Done,
            AgentState::Unknown,
        ]
        .into_iter()
        .find(|s| s.as_str() == name)
    }

    /// Lowercase name for CLI output and explain texts.
    pub fn as_str(self) -> &'static str {
        match self {
            AgentState::Working => "working",
            AgentState::Blocked => "blocked",
            AgentState::Idle => "idle",
            AgentState::Done => "done",
            AgentState::Unknown => "unknown",
        }
    }
}

/// Which rule last decided a row's state (or decided to leave it alone). Kept on the row and
/// in its history so `calyx agents explain` can say *why* a pane shows what it shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// The row was just created from its first event.
    Created,
    /// SessionStart stamps the session and means idle.
    SessionStarted,
    /// A prompt began a turn.
    PromptSubmitted,
    /// A tool event means the turn is running.
    ToolActivity,
    /// PreToolUse within [`BLOCKED_GRACE`](super::BLOCKED_GRACE) of blocking: hooks are
    /// delivered asynchronously, so it may predate the dialog.
    BlockedGrace,
    /// A PostToolUse for a different tool than the one waiting for approval.
    UnrelatedToolWhileBlocked,
    /// A permission request or permission notification.
    PermissionAsked,
    /// Stop: the turn ended.
    TurnEnded,
    /// The user interrupted the turn.
    Interrupted,
    /// Compaction is mid-turn: the state is kept.
    CompactionKeepsState,
    /// Unspecific activity moved the row to working.
    ActivityObserved,
    /// Unspecific activity never clears blocked.
    ActivityWhileBlocked,
    /// An informational notification: no state change.
    NotificationOnly,
    /// SessionEnd: the agent is done.
    SessionEnded,
    /// A trailing event of an older session (or another CLI) in this pane: ignored.
    StaleOldSession,
    /// A trailing event after the row was done: ignored.
    StaleAfterDone,
    /// A forward-moving event of a new session (or CLI) replaced the row.
    NewSession,
    /// Working with no event for [`WORKING_STALE_AFTER`](super::WORKING_STALE_AFTER).
    Aged,
    /// The pane's process exited.
    PaneExited,
    /// The owner saw the pane go quiet with its prompt back (e.g. Claude's Esc interrupt,
    /// which fires no hook).
    PaneQuiet,
    /// A subagent event (the parent's state is unchanged unless noted).
    SubagentEvent,
    /// The main agent moved on while a subagent's request still waits for the human.
    SubagentStillWaits,
    /// The subagent whose request the row waited on ended.
    WaitingSubagentEnded,
}

impl Rule {
    /// One line for explain output.
    pub fn describe(self) -> &'static str {
        match self {
            Rule::Created => "row created from its first event",
            Rule::SessionStarted => "SessionStart stamps the session: idle",
            Rule::PromptSubmitted => "a prompt started a turn: working",
            Rule::ToolActivity => "tool activity: working",
            Rule::BlockedGrace => {
                "PreToolUse within 1.5 s of blocking may predate the dialog: still blocked"
            }
            Rule::UnrelatedToolWhileBlocked => {
                "PostToolUse of another tool does not answer the dialog: still blocked"
            }
            Rule::PermissionAsked => "permission requested: blocked",
            Rule::TurnEnded => "Stop ended the turn: idle",
            Rule::Interrupted => "interrupted: idle",
            Rule::CompactionKeepsState => "compaction happens mid-turn: state kept",
            Rule::ActivityObserved => "activity observed: working",
            Rule::ActivityWhileBlocked => "activity never clears blocked",
            Rule::NotificationOnly => "informational notification: state kept",
            Rule::SessionEnded => "SessionEnd: done",
            Rule::StaleOldSession => "trailing event of an older session: ignored",
            Rule::StaleAfterDone => "trailing event after done: ignored",
            Rule::NewSession => "a new session took over the pane: row replaced",
            Rule::Aged => "working with no event for 15 min: unknown",
            Rule::PaneExited => "the pane's process exited: done",
            Rule::PaneQuiet => "pane went quiet with its prompt back: idle",
            Rule::SubagentEvent => "subagent event",
            Rule::SubagentStillWaits => {
                "the main agent moved on, but a subagent still waits for approval: still blocked"
            }
            Rule::WaitingSubagentEnded => {
                "the subagent that waited for approval ended: back to the main agent's state"
            }
        }
    }
}

/// A state change, the input of the notification policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transition {
    /// The pane whose row changed.
    pub pane: u64,
    /// The CLI in that pane, for notification titles.
    pub kind: AgentKind,
    /// `Some(agent_id)` when a subagent's child row changed (these never notify).
    pub subagent: Option<String>,
    /// State before.
    pub from: AgentState,
    /// State after.
    pub to: AgentState,
    /// The tool involved, for notification bodies ("wants to run Bash").
    pub tool: Option<String>,
}

/// A running subagent shown as a child row under its parent.
#[derive(Debug, Clone, PartialEq)]
pub struct SubagentRow {
    /// The CLI's id for the subagent (Claude `agent_id`, Grok `subagentId` ...).
    pub agent_id: String,
    /// Its type or role, shown in the child row.
    pub agent_type: Option<String>,
    /// Its last tool, shown in the child row.
    pub last_tool: Option<String>,
    /// When it started, for the elapsed time.
    pub started: Instant,
    /// When it last reported anything.
    pub last_event: Instant,
}

/// The tool waiting for approval, so a PostToolUse of another tool does not clear blocked.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct PendingTool {
    pub(super) tool_name: Option<String>,
    pub(super) tool_input: Option<Value>,
    /// The subagent that asked (None: the main agent). Only its own events answer it: another
    /// subagent's tool use, or the main turn ending, leaves the pane waiting for the human.
    pub(super) agent_id: Option<String>,
    /// Where the row goes when the request ends with its subagent (denied in the CLI's own
    /// dialog, which fires no tool event): the main agent's state meanwhile.
    pub(super) resume: AgentState,
}

/// One line of a row's history, for explain.
#[derive(Debug, Clone)]
pub(super) struct HistoryEntry {
    pub(super) at: Instant,
    /// The CLI's event name, or a synthetic one (`<tick>`, `<pane exit>`).
    pub(super) what: String,
    pub(super) event_kind: Option<EventKind>,
    pub(super) session_id: Option<String>,
    pub(super) subagent: Option<String>,
    pub(super) rule: Rule,
    pub(super) state_after: AgentState,
}

/// How many ended subagents and sessions a row remembers.
pub(super) const REMEMBERED: usize = 32;

/// Remembers `id` in a bounded list of ended ids.
pub(super) fn remember(list: &mut VecDeque<String>, id: &str) {
    if list.iter().any(|x| x == id) {
        return;
    }
    if list.len() == REMEMBERED {
        list.pop_front();
    }
    list.push_back(id.to_string());
}

/// How many history entries a row keeps for explain.
pub(super) const HISTORY_LEN: usize = 20;

/// Everything calyx knows about the agent in one pane.
#[derive(Debug, Clone)]
pub struct AgentRow {
    /// The pane this row describes.
    pub pane: u64,
    /// The CLI in the pane.
    pub kind: AgentKind,
    /// What it is doing.
    pub state: AgentState,
    /// When it entered `state`, for "blocked for 3m".
    pub since: Instant,
    /// When the last event arrived (aging, tie-breaking the sort).
    pub last_event: Instant,
    /// The session the row belongs to, to tell a new session from stale trailing events.
    pub session_id: Option<String>,
    /// The agent's working directory as the hooks report it.
    pub cwd: Option<String>,
    /// Where the CLI keeps its transcript, when its hooks report it (saved with the session).
    pub transcript_path: Option<String>,
    /// The last tool the main agent used.
    pub last_tool: Option<String>,
    /// Running subagents, oldest first.
    pub subagents: Vec<SubagentRow>,
    /// The rule that last acted on the row.
    pub rule: Rule,
    pub(super) pending: Option<PendingTool>,
    pub(super) history: VecDeque<HistoryEntry>,
    /// History lines ever recorded (the history itself keeps the last [`HISTORY_LEN`]), so a
    /// script can tell which of the lines `calyx agents explain` shows arrived after a point.
    pub events_recorded: u64,
    /// Subagents that ended (the newest [`REMEMBERED`]): their late events (hooks are
    /// delivered asynchronously) must not bring them back as running children.
    pub(super) retired_children: VecDeque<String>,
    /// Sessions of this pane that ended (the newest [`REMEMBERED`]): their late events must not
    /// take the row over from the session that followed.
    pub(super) ended_sessions: VecDeque<String>,
    /// A hook event reached the row since its CLI took the pane: the CLI's hooks report it,
    /// so they, not its MCP client connecting, say when a session starts and ends.
    pub hooked: bool,
}

impl AgentRow {
    /// The name of the last event this row received (for `calyx doctor`).
    pub fn last_event_name(&self) -> Option<&str> {
        self.history.back().map(|h| h.what.as_str())
    }

    pub(super) fn new(pane: u64, kind: AgentKind, now: Instant) -> Self {
        AgentRow {
            pane,
            kind,
            state: AgentState::Unknown,
            since: now,
            last_event: now,
            session_id: None,
            cwd: None,
            transcript_path: None,
            last_tool: None,
            subagents: Vec::new(),
            rule: Rule::Created,
            pending: None,
            history: VecDeque::with_capacity(HISTORY_LEN),
            events_recorded: 0,
            retired_children: VecDeque::new(),
            ended_sessions: VecDeque::new(),
            hooked: false,
        }
    }

    /// Moves to `to` (recording a transition if it is a change) and remembers the rule.
    pub(super) fn set_state(
        &mut self,
        to: AgentState,
        rule: Rule,
        tool: Option<String>,
        now: Instant,
        out: &mut Vec<Transition>,
    ) {
        self.rule = rule;
        if to != AgentState::Blocked {
            self.pending = None;
        }
        if to == self.state {
            return;
        }
        out.push(Transition {
            pane: self.pane,
            kind: self.kind,
            subagent: None,
            from: self.state,
            to,
            tool,
        });
        self.state = to;
        self.since = now;
    }

    /// Appends a history line, dropping the oldest beyond [`HISTORY_LEN`].
    pub(super) fn record(&mut self, entry: HistoryEntry) {
        if self.history.len() == HISTORY_LEN {
            self.history.pop_front();
        }
        self.history.push_back(entry);
        self.events_recorded += 1;
    }
}
