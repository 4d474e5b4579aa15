//! What a human decided about a gated call, and how a request ended, as calyx's types; and the
//! bytes each CLI reads for them. Nothing here can produce an allow on its own: an allow is only
//! built from a [`Decision`] that a human (or a rule the human set) made. The bytes themselves
//! are per-CLI knowledge and live in `calyx_integrations::gate::answer`; this module turns a
//! [`Decision`] or a [`Silence`] into the [`Verdict`] that crate words for each CLI.

use calyx_integrations::gate::{on_silence, verdict_body, Verdict};
use serde_json::Value;

use super::gate::Schema;

/// What the human decided.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    Allow,
    /// Allow, and the human set a calyx rule for this tool (`a`/`A`): CLIs that can remember
    /// a permission themselves (OpenCode's "always") are told to.
    AllowAlways,
    /// Allow, and tell the CLI to remember this permission (Claude Code's own suggestion).
    AllowRemember {
        suggestion: Value,
    },
    Deny {
        message: Option<String>,
    },
    /// Deny, and stop the agent's turn (`x`): Claude Code's `interrupt: true`. CLIs without a
    /// way to stop from a hook get a plain deny.
    DenyAndStop {
        message: Option<String>,
    },
}

impl Decision {
    /// Whether this is one of the allows (for the record and the agent row).
    pub fn allows(&self) -> bool {
        !matches!(self, Decision::Deny { .. } | Decision::DenyAndStop { .. })
    }
}

/// Why a request ended without a human's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Silence {
    Expired,
    Withdrawn,
    ShuttingDown,
}

impl Silence {
    /// Why, in words for a caller that gets no decision (and for the deny CLIs without a
    /// prompt of their own are sent).
    pub fn reason(self) -> &'static str {
        match self {
            Silence::Expired => EXPIRED_REASON,
            Silence::Withdrawn => WITHDRAWN_REASON,
            Silence::ShuttingDown => SHUTDOWN_REASON,
        }
    }
}

/// How a request ended: what the queue answers, as a type. Only the edges turn it into bytes:
/// the HTTP route into each CLI's answer ([`Outcome::body`]), MCP's acting tools into a tool
/// result.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// A human decided, or a rule the human set allowed it.
    Decided(Decision),
    /// Nobody decided: it expired, was withdrawn, or calyx stopped.
    NoDecision(Silence),
}

impl Outcome {
    /// The response body `schema`'s CLI reads for this outcome; None is an empty 200.
    pub fn body(&self, schema: Schema) -> Option<Value> {
        match self {
            Outcome::Decided(decision) => body(schema, decision),
            Outcome::NoDecision(why) => silence_body(schema, *why),
        }
    }
}

/// The deny reason for CLIs without a fallback prompt when nobody answered in time.
pub const EXPIRED_REASON: &str = "No approval was given in calyx before the request expired.";
/// The deny reason when calyx dropped a request unanswered (its agent moved on, its pane closed).
pub const WITHDRAWN_REASON: &str = "calyx withdrew this request without an approval.";
/// The deny reason when calyx stopped with the request unanswered.
pub const SHUTDOWN_REASON: &str = "calyx shut down before this request was approved.";
/// The message sent with a plain deny.
pub const DEFAULT_DENY: &str = "Denied by the user in calyx.";

/// The response body for a decision; None is an empty 200 (for the deny-only hooks of Gemini,
/// Hermes and Kimi, whose "allow" is stepping aside). A deny without words says
/// [`DEFAULT_DENY`].
pub fn body(schema: Schema, decision: &Decision) -> Option<Value> {
    let deny = |message: &Option<String>, stop: bool| {
        let reason = message
            .as_deref()
            .filter(|m| !m.trim().is_empty())
            .unwrap_or(DEFAULT_DENY);
        verdict_body(schema, &Verdict::Deny { reason, stop })
    };
    match decision {
        Decision::Allow => verdict_body(schema, &Verdict::Allow),
        Decision::AllowAlways => verdict_body(schema, &Verdict::AllowAlways),
        Decision::AllowRemember { suggestion } => {
            verdict_body(schema, &Verdict::AllowRemember(suggestion))
        }
        Decision::Deny { message } => deny(message, false),
        Decision::DenyAndStop { message } => deny(message, true),
    }
}

/// The response for silence: None means an empty body (the CLI asks in its own prompt); the
/// CLIs whose empty answer would run the call get a deny saying why (Cursor an explicit "ask").
pub fn silence_body(schema: Schema, why: Silence) -> Option<Value> {
    on_silence(schema, why.reason())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(v: &Option<Value>) -> String {
        v.as_ref().map(Value::to_string).unwrap_or_default()
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
    fn deny_and_stop_interrupts_claude_and_is_a_plain_deny_elsewhere() {
        let stop = Decision::DenyAndStop {
            message: Some("wrong branch".into()),
        };
        assert!(!stop.allows());
        assert_eq!(
            text(&body(Schema::Claude, &stop)),
            r#"{"hookSpecificOutput":{"decision":{"behavior":"deny","interrupt":true,"message":"wrong branch"},"hookEventName":"PermissionRequest"}}"#
        );
        let deny = Decision::Deny {
            message: Some("wrong branch".into()),
        };
        for schema in Schema::ALL.into_iter().filter(|s| *s != Schema::Claude) {
            assert_eq!(body(schema, &stop), body(schema, &deny), "{schema:?}");
        }
    }

    #[test]
    fn codex_never_carries_forbidden_keys() {
        let suggestion = json!({"type": "x"});
        for d in [
            Decision::Allow,
            Decision::AllowRemember { suggestion },
            Decision::Deny { message: None },
            Decision::DenyAndStop { message: None },
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
        for schema in [
            Schema::Claude,
            Schema::Codex,
            Schema::CopilotFlat,
            Schema::OpenCode,
        ] {
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

    #[test]
    fn opencode_replies_byte_for_byte() {
        assert_eq!(
            text(&body(Schema::OpenCode, &Decision::Allow)),
            r#"{"reply":"once"}"#
        );
        assert_eq!(
            text(&body(Schema::OpenCode, &Decision::AllowAlways)),
            r#"{"reply":"always"}"#
        );
        assert_eq!(
            text(&body(
                Schema::OpenCode,
                &Decision::Deny {
                    message: Some("use the staging db".into())
                }
            )),
            r#"{"message":"use the staging db","reply":"reject"}"#
        );
        assert_eq!(
            text(&body(Schema::OpenCode, &Decision::Deny { message: None })),
            r#"{"message":"Denied by the user in calyx.","reply":"reject"}"#
        );
    }

    #[test]
    fn deny_only_hooks_answer_deny_or_nothing() {
        assert_eq!(
            text(&body(
                Schema::GeminiDenyOnly,
                &Decision::Deny {
                    message: Some("x".into())
                }
            )),
            r#"{"decision":"deny","reason":"x"}"#
        );
        assert_eq!(
            text(&body(
                Schema::HermesBlockOnly,
                &Decision::Deny { message: None }
            )),
            r#"{"decision":"block","reason":"Denied by the user in calyx."}"#
        );
        // Their allow is stepping aside: an empty answer, never an "allow" they would misread.
        for schema in [Schema::GeminiDenyOnly, Schema::HermesBlockOnly] {
            for d in [
                Decision::Allow,
                Decision::AllowAlways,
                Decision::AllowRemember {
                    suggestion: json!({}),
                },
            ] {
                assert_eq!(body(schema, &d), None, "{schema:?} {d:?}");
            }
        }
        // Silence: an explicit deny in each one's own words.
        assert_eq!(
            text(&silence_body(Schema::GeminiDenyOnly, Silence::Expired)),
            r#"{"decision":"deny","reason":"No approval was given in calyx before the request expired."}"#
        );
        assert_eq!(
            text(&silence_body(
                Schema::HermesBlockOnly,
                Silence::ShuttingDown
            )),
            r#"{"decision":"block","reason":"calyx shut down before this request was approved."}"#
        );
        assert_eq!(
            text(&silence_body(Schema::DecisionFlat, Silence::Withdrawn)),
            r#"{"decision":"deny","reason":"calyx withdrew this request without an approval."}"#
        );
    }

    #[test]
    fn kimi_denies_in_its_pretooluse_shape_or_steps_aside() {
        assert_eq!(
            text(&body(
                Schema::KimiDenyOnly,
                &Decision::Deny {
                    message: Some("not on prod".into())
                }
            )),
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not on prod"}}"#
        );
        assert_eq!(body(Schema::KimiDenyOnly, &Decision::Allow), None);
        assert_eq!(body(Schema::KimiDenyOnly, &Decision::AllowAlways), None);
        // Kimi fails open on an empty answer: silence is an explicit deny.
        assert_eq!(
            text(&silence_body(Schema::KimiDenyOnly, Silence::Expired)),
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"No approval was given in calyx before the request expired."}}"#
        );
    }

    #[test]
    fn cursor_permission_bytes_and_ask_on_silence() {
        assert_eq!(
            text(&body(Schema::CursorPermission, &Decision::Allow)),
            r#"{"permission":"allow"}"#
        );
        assert_eq!(
            text(&body(Schema::CursorPermission, &Decision::AllowAlways)),
            r#"{"permission":"allow"}"#
        );
        assert_eq!(
            text(&body(
                Schema::CursorPermission,
                &Decision::Deny {
                    message: Some("no".into())
                }
            )),
            r#"{"agentMessage":"no","agent_message":"no","permission":"deny","userMessage":"no","user_message":"no"}"#
        );
        for why in [Silence::Expired, Silence::Withdrawn, Silence::ShuttingDown] {
            assert_eq!(
                text(&silence_body(Schema::CursorPermission, why)),
                r#"{"permission":"ask"}"#
            );
        }
    }

    #[test]
    fn always_is_a_plain_allow_where_the_cli_has_no_memory_of_its_own() {
        assert_eq!(
            body(Schema::Claude, &Decision::AllowAlways),
            body(Schema::Claude, &Decision::Allow)
        );
        assert_eq!(
            body(Schema::Codex, &Decision::AllowAlways),
            body(Schema::Codex, &Decision::Allow)
        );
        assert_eq!(
            text(&body(Schema::CopilotFlat, &Decision::AllowAlways)),
            r#"{"behavior":"allow"}"#
        );
    }
}
