//! Hook payloads from every agent CLI, normalized into one event model.
//!
//! Each CLI speaks its own dialect (PascalCase, camelCase, snake_case, plugin callbacks, bus
//! events); the agent state machine should not care. [`normalize`] turns one raw payload into a
//! [`NormalizedEvent`], or says the event is known but irrelevant (`Ok(None)`), or that the shape
//! is unknown (`Err`, which the caller logs and otherwise ignores: a CLI upgrade must never crash
//! the server). The event name always comes from the payload itself, because `calyx hook KIND`
//! forwards nothing but stdin; where a CLI leaves the name out (Copilot, OpenCode plugin hooks,
//! sometimes Cursor) it is inferred from which keys are present.

mod antigravity;
mod claude;
mod codex;
mod copilot;
mod cursor;
mod fields;
mod gemini;
mod grok;
mod hermes;
mod kimi;
mod opencode;
mod pi;

use serde_json::Value;

use crate::kind::AgentKind;

/// What happened, in the vocabulary of the agent state machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// A session began (startup, resume, clear): stamps the session identity, the agent is idle.
    SessionStart,
    /// The user submitted a prompt: a turn begins.
    UserPromptSubmit,
    /// A tool call is about to run (fires for every call, approved or not).
    PreToolUse,
    /// A tool call finished, successfully or not (a failed call still means the turn runs on);
    /// also used for "the permission dialog was answered" events.
    PostToolUse,
    /// The agent waits for a human to approve something: the pane is blocked.
    /// Permission-type notifications (Claude/Copilot `permission_prompt`, Gemini
    /// `ToolPermission`) are normalized to this kind too.
    PermissionRequest,
    /// An informational notification that changes no state (its type is in `notification_type`).
    Notification,
    /// The turn ended: the agent waits for the next prompt.
    Stop,
    /// The session ended: the agent is done.
    SessionEnd,
    /// A subagent started (`agent_id` names it).
    SubagentStart,
    /// A subagent finished (`agent_id` names it).
    SubagentStop,
    /// The user interrupted the turn (Codex `Interrupt`, Cursor `stop` with `aborted`): idle.
    Interrupt,
    /// Context compaction (PreCompact/PostCompact/PreCompress): evidence of life that must not
    /// stamp idle, because compaction happens mid-turn.
    Compaction,
    /// The agent is busy but the CLI did not say with what (OpenCode `session.status busy`, pi
    /// `turn_start`): moves an idle row to working, never clears blocked.
    Activity,
}

/// One hook event with the fields calyx cares about pulled out of whichever key the CLI used.
#[derive(Debug, Clone, PartialEq)]
pub struct NormalizedEvent {
    /// What happened.
    pub kind: EventKind,
    /// The CLI's own name for the event, kept for `calyx agents explain` and logs.
    pub raw_event_name: String,
    /// The CLI's session id: detects a new session replacing an old one in the same pane.
    pub session_id: Option<String>,
    /// Set only for events that belong to a subagent (Claude's `agent_id`; `agent_type` alone
    /// marks a main thread started with `--agent`, not a subagent).
    pub agent_id: Option<String>,
    /// The subagent's type or role, shown in its child row.
    pub agent_type: Option<String>,
    /// The tool involved, for "last tool" and approval texts.
    pub tool_name: Option<String>,
    /// The tool's arguments, for approval texts and matching a pending permission.
    pub tool_input: Option<Value>,
    /// The agent's working directory, shown in the sidebar.
    pub cwd: Option<String>,
    /// Where the CLI keeps its transcript, for later transcript-backed features.
    pub transcript_path: Option<String>,
    /// The CLI's permission mode (e.g. `bypassPermissions`), for gating decisions.
    pub permission_mode: Option<String>,
    /// The notification's type (`permission_prompt`, `idle_prompt`, `ToolPermission` ...).
    pub notification_type: Option<String>,
    /// Why a stop/end/start happened (`end_turn`, `exit`, `startup` ...), for explain output.
    pub reason: Option<String>,
}

impl NormalizedEvent {
    /// An event of `kind` with only its name set; normalizers fill in the rest.
    pub fn new(kind: EventKind, raw_event_name: impl Into<String>) -> Self {
        NormalizedEvent {
            kind,
            raw_event_name: raw_event_name.into(),
            session_id: None,
            agent_id: None,
            agent_type: None,
            tool_name: None,
            tool_input: None,
            cwd: None,
            transcript_path: None,
            permission_mode: None,
            notification_type: None,
            reason: None,
        }
    }

    /// True when the event belongs to a subagent rather than the pane's main agent.
    pub fn is_subagent(&self) -> bool {
        self.agent_id.is_some()
    }
}

/// Why a payload could not be normalized. The caller logs it and drops the event.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NormalizeError {
    /// The payload is not a JSON object (every CLI sends objects).
    #[error("{kind} payload is not a JSON object")]
    NotAnObject {
        /// The CLI the payload was attributed to.
        kind: AgentKind,
    },
    /// No event name in the payload and none could be inferred from its keys.
    #[error("{kind} payload has no recognizable event name")]
    NoEventName {
        /// The CLI the payload was attributed to.
        kind: AgentKind,
    },
    /// An event name this version of calyx does not know.
    #[error("unknown {kind} event {name:?}")]
    UnknownEvent {
        /// The CLI the payload was attributed to.
        kind: AgentKind,
        /// The event name as the CLI sent it.
        name: String,
    },
    /// A relevant event whose session could not be resolved; dropped rather than guessed,
    /// because a guess could land on the wrong row.
    #[error("{kind} event {name:?} carries no session id")]
    NoSession {
        /// The CLI the payload was attributed to.
        kind: AgentKind,
        /// The event name as the CLI sent it.
        name: String,
    },
}

/// Turns one raw hook payload of CLI `kind` into a normalized event.
///
/// `Ok(None)`: a known event that says nothing about the agent's state (model requests,
/// streaming deltas, config reloads). `Err`: a shape this version does not understand.
pub fn normalize(
    kind: AgentKind,
    payload: &Value,
) -> Result<Option<NormalizedEvent>, NormalizeError> {
    if !payload.is_object() {
        return Err(NormalizeError::NotAnObject { kind });
    }
    match kind {
        AgentKind::ClaudeCode => claude::normalize(payload),
        AgentKind::Codex => codex::normalize(payload),
        AgentKind::OpenCode => opencode::normalize(payload),
        AgentKind::Hermes => hermes::normalize(payload),
        AgentKind::Grok => grok::normalize(payload),
        AgentKind::Pi => pi::normalize(payload),
        AgentKind::Gemini => gemini::normalize(payload),
        AgentKind::Copilot => copilot::normalize(payload),
        AgentKind::Kimi => kimi::normalize(payload),
        AgentKind::Antigravity => antigravity::normalize(payload),
        AgentKind::Cursor => cursor::normalize(payload),
    }
}

#[cfg(test)]
mod tests;
