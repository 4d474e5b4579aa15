//! Requests the CLI answered on its own. Claude Code 2.1.197 shows its "Do you want to
//! proceed?" dialog while calyx still holds its PermissionRequest hook, and when the user answers
//! there it neither kills nor waits for the hook (seen with the real CLI in
//! tests/realcli/approvals.sh, step "pane"): the hook would sit in calyx's queue until expiry,
//! and a late answer from calyx would go to a CLI that has moved on. So the events that prove
//! the CLI moved past the call end the request: the call itself finished (same tool, same input),
//! or the turn or session ended, or a new prompt began one (Claude's Esc interrupt fires no hook
//! at all; the next prompt is the first sign).

use calyx_integrations::{AgentKind, EventKind, NormalizedEvent};
use serde_json::Value;

/// The request a CLI's hook made, as far as telling it answered goes.
#[derive(Debug, Clone, Copy)]
pub struct HookRequest<'a> {
    pub kind: AgentKind,
    pub tool: &'a str,
    pub input: &'a Value,
    /// The subagent that asked (None: the main agent).
    pub agent_id: Option<&'a str>,
}

/// Whether `event`, from the agent of `kind` in the pane of `request`, shows that the CLI got
/// its answer elsewhere.
pub fn answered_elsewhere(
    request: HookRequest<'_>,
    kind: AgentKind,
    event: &NormalizedEvent,
) -> bool {
    if kind != request.kind {
        return false;
    }
    let (tool, input) = (request.tool, request.input);
    match event.kind {
        // The session is over: nobody waits for any of its answers.
        EventKind::SessionEnd => event.agent_id.is_none(),
        // The main agent moved on: its own request was answered. A subagent's request is not:
        // Claude Code 2.1.332 runs subagents in the background, past the main turn's Stop,
        // and a new prompt can start while one still waits.
        EventKind::Stop | EventKind::Interrupt | EventKind::UserPromptSubmit => {
            event.agent_id.is_none() && request.agent_id.is_none()
        }
        // The subagent that asked has finished.
        EventKind::SubagentStop => {
            request.agent_id.is_some() && event.agent_id.as_deref() == request.agent_id
        }
        EventKind::PostToolUse => {
            event.tool_name.as_deref() == Some(tool)
                && event.tool_input.as_ref().is_some_and(|i| i == input)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A held Claude Code Bash request (of a subagent when `agent_id` is given).
    fn claude_bash<'a>(input: &'a Value, agent_id: Option<&'a str>) -> HookRequest<'a> {
        HookRequest {
            kind: AgentKind::ClaudeCode,
            tool: "Bash",
            input,
            agent_id,
        }
    }

    fn post(tool: &str, input: Value) -> NormalizedEvent {
        let mut e = NormalizedEvent::new(EventKind::PostToolUse, "PostToolUse");
        e.tool_name = Some(tool.into());
        e.tool_input = Some(input);
        e
    }

    #[test]
    fn the_same_call_finishing_or_the_turn_ending_answers_it() {
        let input = json!({"command": "echo hi > marker.txt", "description": "Write marker file"});
        let claude = AgentKind::ClaudeCode;
        let request = claude_bash(&input, None);
        let yes = |e: &NormalizedEvent| answered_elsewhere(request, claude, e);
        assert!(yes(&post("Bash", input.clone())));
        assert!(yes(&NormalizedEvent::new(EventKind::Stop, "Stop")));
        assert!(yes(&NormalizedEvent::new(
            EventKind::SessionEnd,
            "SessionEnd"
        )));
    }

    #[test]
    fn other_calls_subagents_and_other_clis_do_not() {
        let input = json!({"command": "rm -rf build"});
        let claude = AgentKind::ClaudeCode;
        let request = claude_bash(&input, None);
        let no = |e: &NormalizedEvent| !answered_elsewhere(request, claude, e);
        // A parallel call of the same tool with another command finished.
        assert!(no(&post("Bash", json!({"command": "ls"}))));
        assert!(no(&post("Read", input.clone())));
        // No input to compare: not proof enough.
        let mut bare = NormalizedEvent::new(EventKind::PostToolUse, "PostToolUse");
        bare.tool_name = Some("Bash".into());
        assert!(no(&bare));
        // A subagent's Stop, a PreToolUse, the late permission Notification.
        let mut sub = NormalizedEvent::new(EventKind::Stop, "SubagentStop");
        sub.agent_id = Some("a1".into());
        assert!(no(&sub));
        assert!(no(&NormalizedEvent::new(
            EventKind::PreToolUse,
            "PreToolUse"
        )));
        assert!(no(&NormalizedEvent::new(
            EventKind::PermissionRequest,
            "Notification"
        )));
        // Another CLI in the same pane (a nested agent) proves nothing.
        assert!(!answered_elsewhere(
            request,
            AgentKind::Codex,
            &NormalizedEvent::new(EventKind::Stop, "Stop")
        ));
    }

    #[test]
    fn a_subagents_request_outlives_the_main_turn_and_ends_with_the_subagent() {
        // Claude Code 2.1.332: the Agent tool runs in the background; the main Stop comes while
        // the subagent's permission request is still held.
        let input = json!({"command": "echo hi > marker.txt"});
        let claude = AgentKind::ClaudeCode;
        let request = claude_bash(&input, Some("a1"));
        let main = |k: EventKind| NormalizedEvent::new(k, "main");
        assert!(!answered_elsewhere(request, claude, &main(EventKind::Stop)));
        assert!(!answered_elsewhere(
            request,
            claude,
            &main(EventKind::UserPromptSubmit)
        ));
        let mut other = NormalizedEvent::new(EventKind::SubagentStop, "SubagentStop");
        other.agent_id = Some("a2".into());
        assert!(!answered_elsewhere(request, claude, &other));
        let mut own = NormalizedEvent::new(EventKind::SubagentStop, "SubagentStop");
        own.agent_id = Some("a1".into());
        assert!(answered_elsewhere(request, claude, &own));
        assert!(answered_elsewhere(
            request,
            claude,
            &main(EventKind::SessionEnd)
        ));
    }
}
