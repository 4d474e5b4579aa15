//! The bytes each CLI reads as an answer to its gate. Nothing here produces an allow on its
//! own: an allow is only built from a [`Verdict`] calyx hands over, and calyx builds an
//! allowing verdict only from a decision a human made (or a rule the human set). Silence and
//! refusal ([`on_silence`], [`refused`]) are answered with the CLI's own prompt (an empty
//! answer, or Cursor's explicit "ask") or with a deny, never with an allow.

use serde_json::{json, Value};

use super::{schema_of, Schema};
use crate::AgentKind;

/// What calyx tells a CLI about one gated call, in words every schema can carry.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Verdict<'a> {
    /// Allow this call once.
    Allow,
    /// Allow, and the human set a rule for this tool: CLIs that can remember a permission
    /// themselves (OpenCode's "always") are told to.
    AllowAlways,
    /// Allow, and tell the CLI to remember the permission it suggested (Claude Code's
    /// `permission_suggestions` entry, passed back as it came).
    AllowRemember(&'a Value),
    /// Deny with `reason`; `stop` also ends the agent's turn where the CLI can be told so from
    /// a hook (Claude Code's `interrupt`), and is a plain deny elsewhere.
    Deny { reason: &'a str, stop: bool },
}

/// The response body `schema`'s CLI reads for `verdict`; None is an empty 200 (the deny-only
/// hooks of Gemini, Hermes and Kimi, whose "allow" is stepping aside).
pub fn verdict_body(schema: Schema, verdict: &Verdict) -> Option<Value> {
    let value = match (schema, *verdict) {
        (Schema::Claude, Verdict::Deny { reason, stop }) => {
            let mut decision = json!({"behavior": "deny", "message": reason});
            if stop {
                decision["interrupt"] = json!(true);
            }
            envelope(decision)
        }
        // Codex rejects the whole answer if `interrupt` or `updatedPermissions` is present.
        (Schema::Codex, Verdict::Deny { reason, .. }) => {
            envelope(json!({"behavior": "deny", "message": reason}))
        }
        (Schema::Claude, Verdict::AllowRemember(suggestion)) => {
            envelope(json!({"behavior": "allow", "updatedPermissions": [suggestion]}))
        }
        (Schema::Claude | Schema::Codex, _) => envelope(json!({"behavior": "allow"})),
        (Schema::CopilotFlat, Verdict::Deny { reason, .. }) => {
            json!({"behavior": "deny", "message": reason})
        }
        (Schema::CopilotFlat, _) => json!({"behavior": "allow"}),
        (Schema::DecisionFlat | Schema::GeminiDenyOnly, Verdict::Deny { reason, .. }) => {
            json!({"decision": "deny", "reason": reason})
        }
        (Schema::DecisionFlat, _) => json!({"decision": "allow"}),
        (Schema::OpenCode, Verdict::Allow) => json!({"reply": "once"}),
        (Schema::OpenCode, Verdict::AllowAlways | Verdict::AllowRemember(_)) => {
            json!({"reply": "always"})
        }
        (Schema::OpenCode, Verdict::Deny { reason, .. }) => {
            json!({"reply": "reject", "message": reason})
        }
        (Schema::HermesBlockOnly, Verdict::Deny { reason, .. }) => {
            json!({"decision": "block", "reason": reason})
        }
        (Schema::KimiDenyOnly, Verdict::Deny { reason, .. }) => json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }}),
        (Schema::GeminiDenyOnly | Schema::HermesBlockOnly | Schema::KimiDenyOnly, _) => {
            return None
        }
        // Cursor's messages: `user_message` for the user, `agent_message` for the model (the
        // camelCase spellings of Cursor's first hooks release too: unverified which one a given
        // version reads, and both are ignored where unknown).
        (Schema::CursorPermission, Verdict::Deny { reason, .. }) => {
            json!({"permission": "deny", "user_message": reason, "agent_message": reason,
                   "userMessage": reason, "agentMessage": reason})
        }
        (Schema::CursorPermission, _) => json!({"permission": "allow"}),
    };
    Some(value)
}

fn envelope(decision: Value) -> Value {
    json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}})
}

/// The answer when nobody decided (expired, withdrawn, calyx stopping), with `reason` in
/// words. None is an empty body: the CLI asks in its own prompt. Cursor is told so explicitly
/// (`"ask"`): a permission hook that prints nothing is an error to Cursor when its hooks fail
/// closed. The CLIs whose empty answer would run the call get a deny.
pub fn on_silence(schema: Schema, reason: &str) -> Option<Value> {
    if schema == Schema::CursorPermission {
        return Some(json!({"permission": "ask"}));
    }
    if schema.silence_falls_back() {
        return None;
    }
    verdict_body(
        schema,
        &Verdict::Deny {
            reason,
            stop: false,
        },
    )
}

/// What `kind`'s gate hook prints when no human can answer at all (calyx is not running,
/// refused the request, or stopped answering), `reason` saying why: the same as silence.
/// None: print nothing (the CLI asks itself, or has no gate calyx answers).
pub fn refused(kind: AgentKind, reason: &str) -> Option<Value> {
    on_silence(schema_of(kind)?, reason)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(v: Option<Value>) -> String {
        v.as_ref().map(Value::to_string).unwrap_or_default()
    }

    #[test]
    fn silence_and_refusal_never_allow() {
        for schema in Schema::ALL {
            let t = text(on_silence(schema, "gone"));
            assert!(
                !t.contains("allow") && !t.contains("once"),
                "{schema:?}: {t}"
            );
        }
        for kind in AgentKind::ALL {
            let t = text(refused(kind, "gone"));
            assert!(!t.contains("allow"), "{kind}: {t}");
        }
    }

    #[test]
    fn stop_interrupts_claude_only() {
        let stop = Verdict::Deny {
            reason: "r",
            stop: true,
        };
        assert_eq!(
            text(verdict_body(Schema::Claude, &stop)),
            r#"{"hookSpecificOutput":{"decision":{"behavior":"deny","interrupt":true,"message":"r"},"hookEventName":"PermissionRequest"}}"#
        );
        let plain = Verdict::Deny {
            reason: "r",
            stop: false,
        };
        for schema in Schema::ALL.into_iter().filter(|s| *s != Schema::Claude) {
            assert_eq!(
                verdict_body(schema, &stop),
                verdict_body(schema, &plain),
                "{schema:?}"
            );
        }
    }

    #[test]
    fn a_refused_gate_speaks_each_clis_words() {
        assert_eq!(
            text(refused(AgentKind::Grok, "x")),
            r#"{"decision":"deny","reason":"x"}"#
        );
        assert_eq!(
            text(refused(AgentKind::Cursor, "x")),
            r#"{"permission":"ask"}"#
        );
        assert_eq!(refused(AgentKind::ClaudeCode, "x"), None);
        assert_eq!(refused(AgentKind::Antigravity, "x"), None);
    }
}
