//! Which hook calls are permission gates calyx answers, and in which response schema.
//!
//! Seed 000 §4 and the real runs in fixtures/payloads/README.md decide this: Claude Code and
//! Codex gate on PermissionRequest only (PreToolUse fires for calls the CLI would run anyway);
//! Copilot's permissionRequest takes a flat `behavior`; Grok's PreToolUse runs before Grok's own
//! permission system, so calyx gates it only under bypassPermissions; pi has no prompt of its
//! own, so calyx's extension gates every tool call. Everything else passes through at once.

use calyx_integrations::{AgentKind, EventKind, NormalizedEvent};

/// The response schema a gated CLI reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schema {
    /// `hookSpecificOutput.decision.behavior`, with `updatedPermissions` for "always".
    Claude,
    /// The same envelope, but Codex rejects the whole response if `updatedPermissions`,
    /// `updatedInput` or `interrupt` is present: never emitted.
    Codex,
    /// Copilot: a flat `{"behavior": ...}`; the Claude envelope is ignored.
    CopilotFlat,
    /// Grok and pi: a flat `{"decision": ...}`; silence is not a fallback for them.
    DecisionFlat,
}

impl Schema {
    /// Whether silence (expiry, shutdown, withdrawal) lets the CLI ask in its own prompt. Where
    /// it does not, expiry is an explicit deny.
    pub fn silence_falls_back(self) -> bool {
        !matches!(self, Schema::DecisionFlat)
    }
}

/// Whether calyx holds this request for a human.
pub fn gate(kind: AgentKind, event: &NormalizedEvent) -> Option<Schema> {
    let name = event.raw_event_name.as_str();
    match kind {
        AgentKind::ClaudeCode if name == "PermissionRequest" => Some(Schema::Claude),
        AgentKind::Codex if name == "PermissionRequest" => Some(Schema::Codex),
        AgentKind::Copilot if name == "permissionRequest" => Some(Schema::CopilotFlat),
        AgentKind::Grok
            if event.kind == EventKind::PreToolUse
                && event.permission_mode.as_deref() == Some("bypassPermissions") =>
        {
            Some(Schema::DecisionFlat)
        }
        // calyx's pi extension posts every `tool_call`; scripts post the PermissionRequest shape.
        AgentKind::Pi if event.kind == EventKind::PermissionRequest || name == "tool_call" => {
            Some(Schema::DecisionFlat)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(kind: EventKind, name: &str, mode: Option<&str>) -> NormalizedEvent {
        let mut e = NormalizedEvent::new(kind, name);
        e.permission_mode = mode.map(str::to_string);
        e
    }

    #[test]
    fn only_real_gates_are_held() {
        assert_eq!(
            gate(
                AgentKind::ClaudeCode,
                &ev(EventKind::PermissionRequest, "PermissionRequest", None)
            ),
            Some(Schema::Claude)
        );
        // Claude's late permission Notification is not a gate.
        assert_eq!(
            gate(
                AgentKind::ClaudeCode,
                &ev(EventKind::PermissionRequest, "Notification", None)
            ),
            None
        );
        assert_eq!(
            gate(
                AgentKind::ClaudeCode,
                &ev(EventKind::PreToolUse, "PreToolUse", None)
            ),
            None
        );
        assert_eq!(
            gate(
                AgentKind::Codex,
                &ev(EventKind::PermissionRequest, "PermissionRequest", None)
            ),
            Some(Schema::Codex)
        );
        assert_eq!(
            gate(
                AgentKind::Copilot,
                &ev(EventKind::PermissionRequest, "permissionRequest", None)
            ),
            Some(Schema::CopilotFlat)
        );
        assert_eq!(
            gate(
                AgentKind::Grok,
                &ev(EventKind::PreToolUse, "pre_tool_use", Some("default"))
            ),
            None
        );
        assert_eq!(
            gate(
                AgentKind::Grok,
                &ev(
                    EventKind::PreToolUse,
                    "pre_tool_use",
                    Some("bypassPermissions")
                )
            ),
            Some(Schema::DecisionFlat)
        );
        assert_eq!(
            gate(
                AgentKind::Pi,
                &ev(EventKind::PermissionRequest, "PermissionRequest", None)
            ),
            Some(Schema::DecisionFlat)
        );
        assert_eq!(
            gate(
                AgentKind::Gemini,
                &ev(EventKind::PreToolUse, "BeforeTool", None)
            ),
            None
        );
    }
}
