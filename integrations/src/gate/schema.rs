//! The response schema each gated CLI reads, and what an answer in it can and cannot say.

use std::time::Duration;

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
    /// calyx's OpenCode plugin: `{"reply":"once"|"always"|"reject"}` (+ `message`), which it
    /// passes to OpenCode's permission reply call.
    OpenCode,
    /// Gemini's BeforeTool: only `{"decision":"deny"}` decides; "allow" is an empty answer and
    /// Gemini asks in its own dialog.
    GeminiDenyOnly,
    /// Hermes's pre_tool_call: only `{"decision":"block"}` decides; "allow" is an empty answer
    /// and Hermes applies its own rules (it asks for commands it finds dangerous).
    HermesBlockOnly,
    /// Kimi Code's PreToolUse: only `hookSpecificOutput.permissionDecision: "deny"` decides;
    /// any other answer lets Kimi's own approval panel ask.
    KimiDenyOnly,
    /// Cursor Agent's beforeShellExecution / beforeMCPExecution: `{"permission": ...}`, with
    /// `"ask"` handing the call to Cursor's own prompt.
    CursorPermission,
}

impl Schema {
    /// Every schema, for checks that must hold for each CLI's answers.
    pub const ALL: [Schema; 9] = [
        Schema::Claude,
        Schema::Codex,
        Schema::CopilotFlat,
        Schema::DecisionFlat,
        Schema::OpenCode,
        Schema::GeminiDenyOnly,
        Schema::HermesBlockOnly,
        Schema::KimiDenyOnly,
        Schema::CursorPermission,
    ];
}

/// Hermes kills a hook after at most 300 s (`MAX_TIMEOUT_SECONDS` in hermes 0.19.0), and a
/// killed gate lets the tool run: calyx must answer first.
pub const HERMES_EXPIRY: Duration = Duration::from_secs(280);

impl Schema {
    /// Whether silence (expiry, shutdown, withdrawal) lets the CLI ask in its own prompt. Where
    /// it does not, expiry is an explicit deny. Gemini and Hermes count as "no fallback": their
    /// empty answer runs the tool whenever their own rules would not ask (Gemini's yolo mode,
    /// Hermes's non-dangerous commands), and the user asked calyx for a gate.
    pub fn silence_falls_back(self) -> bool {
        matches!(
            self,
            Schema::Claude
                | Schema::Codex
                | Schema::CopilotFlat
                | Schema::OpenCode
                | Schema::CursorPermission
        )
    }

    /// Whether the CLI can be told "allow" at all. Where it cannot, calyx's allow only steps
    /// aside (empty answer) and the panel says what happens next.
    pub fn can_allow(self) -> bool {
        !matches!(
            self,
            Schema::GeminiDenyOnly | Schema::HermesBlockOnly | Schema::KimiDenyOnly
        )
    }

    /// What `y` does, for the panel, where it is not a plain allow.
    pub fn allow_note(self) -> Option<&'static str> {
        match self {
            Schema::GeminiDenyOnly => Some(
                "Gemini's hook can only deny: y lets Gemini ask in its pane, n/m deny before it runs",
            ),
            Schema::HermesBlockOnly => Some(
                "Hermes's hook can only block: y lets Hermes go on (it asks itself for dangerous commands), n/m block before it runs",
            ),
            Schema::KimiDenyOnly => Some(
                "Kimi's hook can only deny: y lets Kimi ask in its pane, n/m deny before it runs",
            ),
            _ => None,
        }
    }

    /// How long calyx may hold this request (capped by the queue's own expiry).
    pub fn max_wait(self) -> Option<Duration> {
        match self {
            Schema::HermesBlockOnly => Some(HERMES_EXPIRY),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hermes_is_answered_before_it_kills_the_hook() {
        assert!(HERMES_EXPIRY < Duration::from_secs(300));
        assert_eq!(Schema::HermesBlockOnly.max_wait(), Some(HERMES_EXPIRY));
        assert!(!Schema::HermesBlockOnly.can_allow() && !Schema::GeminiDenyOnly.can_allow());
        assert!(Schema::GeminiDenyOnly
            .allow_note()
            .is_some_and(|n| n.contains("ask in its pane")));
    }
}
