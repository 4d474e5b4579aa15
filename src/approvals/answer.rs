//! The bytes each CLI reads as an answer. Nothing here can produce an allow on its own: an
//! allow is only built from a [`Decision`] that a human (or a rule the human set) made.

use serde_json::{json, Value};

use super::gate::Schema;

/// What the human decided.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    Allow,
    /// Allow, and tell the CLI to remember this permission (Claude Code's own suggestion).
    AllowRemember {
        suggestion: Value,
    },
    Deny {
        message: Option<String>,
    },
}

/// Why a request ended without a human's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Silence {
    Expired,
    Withdrawn,
    ShuttingDown,
}

/// The deny reason for CLIs without a fallback prompt when nobody answered in time.
pub const EXPIRED_REASON: &str = "No approval was given in calyx before the request expired.";
/// The message sent with a plain deny.
pub const DEFAULT_DENY: &str = "Denied by the user in calyx.";

/// The response body for a decision.
pub fn body(schema: Schema, decision: &Decision) -> Value {
    let deny_message = |m: &Option<String>| {
        m.clone()
            .filter(|m| !m.trim().is_empty())
            .unwrap_or_else(|| DEFAULT_DENY.to_string())
    };
    match (schema, decision) {
        (Schema::Claude, Decision::Allow)
        | (Schema::Codex, Decision::Allow | Decision::AllowRemember { .. }) => {
            envelope(json!({"behavior": "allow"}))
        }
        (Schema::Claude, Decision::AllowRemember { suggestion }) => {
            envelope(json!({"behavior": "allow", "updatedPermissions": [suggestion]}))
        }
        (Schema::Claude | Schema::Codex, Decision::Deny { message }) => {
            envelope(json!({"behavior": "deny", "message": deny_message(message)}))
        }
        (Schema::CopilotFlat, Decision::Allow | Decision::AllowRemember { .. }) => {
            json!({"behavior": "allow"})
        }
        (Schema::CopilotFlat, Decision::Deny { message }) => {
            json!({"behavior": "deny", "message": deny_message(message)})
        }
        (Schema::DecisionFlat, Decision::Allow | Decision::AllowRemember { .. }) => {
            json!({"decision": "allow"})
        }
        (Schema::DecisionFlat, Decision::Deny { message }) => {
            json!({"decision": "deny", "reason": deny_message(message)})
        }
    }
}

fn envelope(decision: Value) -> Value {
    json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}})
}

/// The response for silence: None means an empty body (the CLI asks in its own prompt).
pub fn silence_body(schema: Schema, _why: Silence) -> Option<Value> {
    if schema.silence_falls_back() {
        None
    } else {
        Some(json!({"decision": "deny", "reason": EXPIRED_REASON}))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(v: &Value) -> String {
        v.to_string()
    }

    #[test]
    fn claude_bodies_byte_for_byte() {
        assert_eq!(
            text(&body(Schema::Claude, &Decision::Allow)),
            r#"{"hookSpecificOutput":{"decision":{"behavior":"allow"},"hookEventName":"PermissionRequest"}}"#
        );
        assert_eq!(
            text(&body(
                Schema::Claude,
                &Decision::Deny {
                    message: Some("not now".into())
                }
            )),
            r#"{"hookSpecificOutput":{"decision":{"behavior":"deny","message":"not now"},"hookEventName":"PermissionRequest"}}"#
        );
        let suggestion =
            json!({"type": "addDirectories", "directories": ["/w"], "destination": "session"});
        assert_eq!(
            text(&body(
                Schema::Claude,
                &Decision::AllowRemember { suggestion }
            )),
            r#"{"hookSpecificOutput":{"decision":{"behavior":"allow","updatedPermissions":[{"destination":"session","directories":["/w"],"type":"addDirectories"}]},"hookEventName":"PermissionRequest"}}"#
        );
    }

    #[test]
    fn codex_never_carries_forbidden_keys() {
        let suggestion = json!({"type": "x"});
        for d in [
            Decision::Allow,
            Decision::AllowRemember { suggestion },
            Decision::Deny { message: None },
        ] {
            let t = text(&body(Schema::Codex, &d));
            for forbidden in ["updatedPermissions", "updatedInput", "interrupt"] {
                assert!(!t.contains(forbidden), "{t}");
            }
        }
        assert_eq!(
            text(&body(Schema::Codex, &Decision::Deny { message: None })),
            r#"{"hookSpecificOutput":{"decision":{"behavior":"deny","message":"Denied by the user in calyx."},"hookEventName":"PermissionRequest"}}"#
        );
    }

    #[test]
    fn flat_schemas() {
        assert_eq!(
            text(&body(Schema::CopilotFlat, &Decision::Allow)),
            r#"{"behavior":"allow"}"#
        );
        assert_eq!(
            text(&body(
                Schema::CopilotFlat,
                &Decision::Deny {
                    message: Some("x".into())
                }
            )),
            r#"{"behavior":"deny","message":"x"}"#
        );
        assert_eq!(
            text(&body(Schema::DecisionFlat, &Decision::Allow)),
            r#"{"decision":"allow"}"#
        );
        assert_eq!(
            text(&body(
                Schema::DecisionFlat,
                &Decision::Deny {
                    message: Some("x".into())
                }
            )),
            r#"{"decision":"deny","reason":"x"}"#
        );
    }

    #[test]
    fn silence_is_a_fallback_or_an_explicit_deny_never_an_allow() {
        for schema in [Schema::Claude, Schema::Codex, Schema::CopilotFlat] {
            assert_eq!(silence_body(schema, Silence::Expired), None);
        }
        let grok = silence_body(Schema::DecisionFlat, Silence::Expired).map(|v| v.to_string());
        assert_eq!(
            grok.as_deref(),
            Some(
                r#"{"decision":"deny","reason":"No approval was given in calyx before the request expired."}"#
            )
        );
    }
}
