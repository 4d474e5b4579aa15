//! What each agent CLI asks of `calyx hook`, the process its hooks run: how long a gate may
//! wait before the CLI kills the hook, and when a hook must stand down because it fired for
//! another program. (How a gate's answer is worded lives with the approvals' answer schemas.)

use std::time::Duration;

use crate::AgentKind;

/// A gate waits for a human. Above the server's 570 s approval expiry and below the CLI's 600 s
/// hook timeout, so the server answers before the hook gives up and the hook answers before the
/// CLI kills it.
pub const APPROVAL_TIMEOUT: Duration = Duration::from_secs(585);

/// Hermes kills a hook after at most 300 s (its `MAX_TIMEOUT_SECONDS`); the server answers
/// Hermes at 280 s, and the hook gives up at 290 s, before Hermes cuts it off.
pub const HERMES_APPROVAL_TIMEOUT: Duration = Duration::from_secs(290);

/// How long `calyx hook KIND --approval` waits for the server.
pub fn approval_timeout(kind: AgentKind) -> Duration {
    match kind {
        AgentKind::Hermes => HERMES_APPROVAL_TIMEOUT,
        _ => APPROVAL_TIMEOUT,
    }
}

/// Whether `kind`'s hook fired for another program and must do nothing: Grok runs Claude
/// Code's hooks too (its stdout would become a Grok decision in a vocabulary Grok does not
/// know), and says so in `GROK_HOOK_EVENT`.
pub fn fired_for_another_cli(kind: AgentKind, env: impl Fn(&str) -> Option<String>) -> bool {
    let set = |name: &str| env(name).is_some_and(|v| !v.is_empty());
    kind == AgentKind::ClaudeCode && set("GROK_HOOK_EVENT")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hermes_gives_up_before_it_kills_the_hook() {
        assert!(approval_timeout(AgentKind::Hermes) < Duration::from_secs(300));
        assert_eq!(approval_timeout(AgentKind::Gemini), APPROVAL_TIMEOUT);
        assert!(APPROVAL_TIMEOUT < Duration::from_secs(600));
    }

    #[test]
    fn only_claude_hooks_run_by_grok_stand_down() {
        let grok = |name: &str| (name == "GROK_HOOK_EVENT").then(|| "pre_tool_use".to_string());
        assert!(fired_for_another_cli(AgentKind::ClaudeCode, grok));
        assert!(!fired_for_another_cli(AgentKind::Grok, grok));
        assert!(!fired_for_another_cli(AgentKind::ClaudeCode, |_| None));
    }
}
