//! The agent CLIs calyx integrates with, and their names on the command line and on screen.

use std::fmt;
use std::str::FromStr;

/// One supported agent CLI. The hook route is told which one is calling (`calyx hook KIND`),
/// because the payload shapes differ and several CLIs cannot be told apart by payload alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AgentKind {
    /// Anthropic's Claude Code.
    ClaudeCode,
    /// OpenAI's Codex CLI.
    Codex,
    /// OpenCode (events posted by calyx's own plugin).
    OpenCode,
    /// Nous Research's Hermes agent (shell hooks).
    Hermes,
    /// xAI's Grok CLI.
    Grok,
    /// pi (events posted by calyx's own extension).
    Pi,
    /// Google's Gemini CLI.
    Gemini,
    /// GitHub Copilot CLI.
    Copilot,
    /// Moonshot's Kimi Code.
    Kimi,
    /// Google's Antigravity CLI (`agy`).
    Antigravity,
    /// Cursor Agent.
    Cursor,
}

/// Returned by [`AgentKind::from_str`] for a name no CLI has; carries the offending name so the
/// CLI can say what it did not understand.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown agent kind {0:?} (expected one of: {names})", names = AgentKind::ALL.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(", "))]
pub struct UnknownAgentKind(pub String);

impl AgentKind {
    /// Every kind, in a stable order (used for help texts and exhaustive tests).
    pub const ALL: [AgentKind; 11] = [
        AgentKind::ClaudeCode,
        AgentKind::Codex,
        AgentKind::OpenCode,
        AgentKind::Hermes,
        AgentKind::Grok,
        AgentKind::Pi,
        AgentKind::Gemini,
        AgentKind::Copilot,
        AgentKind::Kimi,
        AgentKind::Antigravity,
        AgentKind::Cursor,
    ];

    /// The machine name used on the command line (`calyx hook claude-code`) and in configs.
    pub fn as_str(self) -> &'static str {
        match self {
            AgentKind::ClaudeCode => "claude-code",
            AgentKind::Codex => "codex",
            AgentKind::OpenCode => "opencode",
            AgentKind::Hermes => "hermes",
            AgentKind::Grok => "grok",
            AgentKind::Pi => "pi",
            AgentKind::Gemini => "gemini",
            AgentKind::Copilot => "copilot",
            AgentKind::Kimi => "kimi",
            AgentKind::Antigravity => "antigravity",
            AgentKind::Cursor => "cursor",
        }
    }

    /// The product name shown to people (sidebar, notifications).
    pub fn display_name(self) -> &'static str {
        match self {
            AgentKind::ClaudeCode => "Claude Code",
            AgentKind::Codex => "Codex",
            AgentKind::OpenCode => "OpenCode",
            AgentKind::Hermes => "Hermes",
            AgentKind::Grok => "Grok",
            AgentKind::Pi => "pi",
            AgentKind::Gemini => "Gemini CLI",
            AgentKind::Copilot => "Copilot CLI",
            AgentKind::Kimi => "Kimi Code",
            AgentKind::Antigravity => "Antigravity",
            AgentKind::Cursor => "Cursor Agent",
        }
    }
}

impl FromStr for AgentKind {
    type Err = UnknownAgentKind;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        AgentKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| UnknownAgentKind(s.to_string()))
    }
}

impl fmt::Display for AgentKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for kind in AgentKind::ALL {
            assert_eq!(kind.as_str().parse::<AgentKind>(), Ok(kind));
        }
    }

    #[test]
    fn unknown_name_is_an_error() {
        assert!("claude".parse::<AgentKind>().is_err());
        assert_eq!(AgentKind::ClaudeCode.display_name(), "Claude Code");
    }
}
