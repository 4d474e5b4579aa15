//! Which hook calls are gates calyx holds for a human, and in which schema they are answered
//! (the reasons, per CLI, are in the [module documentation](super)).

use super::{Policy, Schema};
use crate::{AgentKind, EventKind, NormalizedEvent};

/// Kimi Code tools that act (shell, file writes and edits, fetches, MCP tools), from its
/// published tool names (`Shell`, `WriteFile`, `StrReplaceFile`, `FetchURL`, and Claude-style
/// names in newer versions). Reads and searches run unasked.
pub fn kimi_acts(tool: &str) -> bool {
    matches!(
        tool,
        "Shell" | "Bash" | "WriteFile" | "StrReplaceFile" | "Write" | "Edit" | "FetchURL"
    ) || tool.starts_with("mcp__")
}

/// Gemini 0.61.0 tools its default policy asks about: shell, file writes and edits, web fetch,
/// and MCP tools (`mcp_<server>_<tool>`). Reads, searches and todo lists run unasked.
pub fn gemini_asks(tool: &str) -> bool {
    matches!(
        tool,
        "run_shell_command" | "write_file" | "replace" | "web_fetch"
    ) || tool.starts_with("mcp_")
}

/// Hermes 0.19.0 tools that run commands or change files, and MCP tools (`mcp__...`).
pub fn hermes_acts(tool: &str) -> bool {
    matches!(
        tool,
        "terminal" | "execute_code" | "write_file" | "patch" | "process"
    ) || tool.starts_with("mcp__")
}

/// Whether `kind`'s approval route can carry gates calyx holds (with the user's `policy`): a
/// payload there that calyx cannot read must then be refused, so the hook denies where the
/// CLI's answer to silence would run the call, rather than answered with silence.
pub fn may_gate(kind: AgentKind, policy: Policy) -> bool {
    match kind {
        AgentKind::ClaudeCode
        | AgentKind::Codex
        | AgentKind::Copilot
        | AgentKind::Grok
        | AgentKind::Pi
        | AgentKind::OpenCode => true,
        AgentKind::Gemini => policy.gemini,
        AgentKind::Hermes => policy.hermes,
        AgentKind::Kimi => policy.kimi,
        AgentKind::Cursor => policy.cursor,
        _ => false,
    }
}

/// The answer schema of `kind`'s gates, whatever the event: what its hook prints when calyx
/// cannot answer at all (None: the CLI has no gate calyx answers).
pub fn schema_of(kind: AgentKind) -> Option<Schema> {
    Some(match kind {
        AgentKind::ClaudeCode => Schema::Claude,
        AgentKind::Codex => Schema::Codex,
        AgentKind::Copilot => Schema::CopilotFlat,
        AgentKind::Grok | AgentKind::Pi => Schema::DecisionFlat,
        AgentKind::OpenCode => Schema::OpenCode,
        AgentKind::Gemini => Schema::GeminiDenyOnly,
        AgentKind::Hermes => Schema::HermesBlockOnly,
        AgentKind::Kimi => Schema::KimiDenyOnly,
        AgentKind::Cursor => Schema::CursorPermission,
        _ => return None,
    })
}

/// Whether calyx holds this request for a human.
pub fn gate(kind: AgentKind, event: &NormalizedEvent, policy: Policy) -> Option<Schema> {
    let name = event.raw_event_name.as_str();
    let tool = event.tool_name.as_deref().unwrap_or("");
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
        // calyx's pi extension posts the PermissionRequest shape for every tool call; an
        // extension written by an older calyx posts pi's own `tool_call` event.
        AgentKind::Pi if event.kind == EventKind::PermissionRequest || name == "tool_call" => {
            Some(Schema::DecisionFlat)
        }
        // calyx's plugin posts the bus event while OpenCode's dialog is open.
        AgentKind::OpenCode if name == "permission.asked" || name == "permission.updated" => {
            Some(Schema::OpenCode)
        }
        AgentKind::Gemini if policy.gemini && name == "BeforeTool" && gemini_asks(tool) => {
            Some(Schema::GeminiDenyOnly)
        }
        AgentKind::Hermes if policy.hermes && name == "pre_tool_call" && hermes_acts(tool) => {
            Some(Schema::HermesBlockOnly)
        }
        AgentKind::Kimi if policy.kimi && name == "PreToolUse" && kimi_acts(tool) => {
            Some(Schema::KimiDenyOnly)
        }
        AgentKind::Cursor
            if policy.cursor
                && (name == "beforeShellExecution" || name == "beforeMCPExecution") =>
        {
            Some(Schema::CursorPermission)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OFF: Policy = Policy {
        gemini: false,
        hermes: false,
        kimi: false,
        cursor: false,
    };
    const ON: Policy = Policy {
        gemini: true,
        hermes: true,
        kimi: true,
        cursor: true,
    };

    fn ev(kind: EventKind, name: &str, mode: Option<&str>) -> NormalizedEvent {
        let mut e = NormalizedEvent::new(kind, name);
        e.permission_mode = mode.map(str::to_string);
        e
    }

    fn tool_ev(kind: EventKind, name: &str, tool: &str) -> NormalizedEvent {
        let mut e = NormalizedEvent::new(kind, name);
        e.tool_name = Some(tool.to_string());
        e
    }

    #[test]
    fn only_real_gates_are_held() {
        let g = |k, e: &NormalizedEvent| gate(k, e, OFF);
        assert_eq!(
            g(
                AgentKind::ClaudeCode,
                &ev(EventKind::PermissionRequest, "PermissionRequest", None)
            ),
            Some(Schema::Claude)
        );
        // Claude's late permission Notification is not a gate.
        assert_eq!(
            g(
                AgentKind::ClaudeCode,
                &ev(EventKind::PermissionRequest, "Notification", None)
            ),
            None
        );
        assert_eq!(
            g(
                AgentKind::ClaudeCode,
                &ev(EventKind::PreToolUse, "PreToolUse", None)
            ),
            None
        );
        assert_eq!(
            g(
                AgentKind::Codex,
                &ev(EventKind::PermissionRequest, "PermissionRequest", None)
            ),
            Some(Schema::Codex)
        );
        assert_eq!(
            g(
                AgentKind::Copilot,
                &ev(EventKind::PermissionRequest, "permissionRequest", None)
            ),
            Some(Schema::CopilotFlat)
        );
        assert_eq!(
            g(
                AgentKind::Grok,
                &ev(EventKind::PreToolUse, "pre_tool_use", Some("default"))
            ),
            None
        );
        assert_eq!(
            g(
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
            g(
                AgentKind::Pi,
                &ev(EventKind::PermissionRequest, "PermissionRequest", None)
            ),
            Some(Schema::DecisionFlat)
        );
        assert_eq!(
            g(
                AgentKind::OpenCode,
                &ev(EventKind::PermissionRequest, "permission.asked", None)
            ),
            Some(Schema::OpenCode)
        );
        // The reply and OpenCode's plugin hooks are not gates.
        assert_eq!(
            g(
                AgentKind::OpenCode,
                &ev(EventKind::PostToolUse, "permission.replied", None)
            ),
            None
        );
        assert_eq!(
            g(
                AgentKind::OpenCode,
                &tool_ev(EventKind::PreToolUse, "tool.execute.before", "bash")
            ),
            None
        );
    }

    #[test]
    fn deny_only_hooks_gate_only_when_opted_in() {
        let shell = tool_ev(EventKind::PreToolUse, "BeforeTool", "run_shell_command");
        assert_eq!(gate(AgentKind::Gemini, &shell, OFF), None);
        assert_eq!(
            gate(AgentKind::Gemini, &shell, ON),
            Some(Schema::GeminiDenyOnly)
        );
        let terminal = tool_ev(EventKind::PreToolUse, "pre_tool_call", "terminal");
        assert_eq!(gate(AgentKind::Hermes, &terminal, OFF), None);
        assert_eq!(
            gate(AgentKind::Hermes, &terminal, ON),
            Some(Schema::HermesBlockOnly)
        );
        // Each opt-in is its own.
        let only_gemini = Policy {
            gemini: true,
            ..OFF
        };
        assert_eq!(gate(AgentKind::Hermes, &terminal, only_gemini), None);
    }

    #[test]
    fn kimi_and_cursor_are_gates_only_when_opted_in() {
        let shell = tool_ev(EventKind::PreToolUse, "PreToolUse", "Shell");
        let read = tool_ev(EventKind::PreToolUse, "PreToolUse", "ReadFile");
        let observed = tool_ev(EventKind::PermissionRequest, "PermissionRequest", "Shell");
        assert_eq!(gate(AgentKind::Kimi, &shell, OFF), None);
        assert_eq!(
            gate(AgentKind::Kimi, &shell, ON),
            Some(Schema::KimiDenyOnly)
        );
        assert_eq!(gate(AgentKind::Kimi, &read, ON), None);
        // Kimi fires PermissionRequest and forgets it: holding it would answer nobody.
        assert_eq!(gate(AgentKind::Kimi, &observed, ON), None);
        for name in ["beforeShellExecution", "beforeMCPExecution"] {
            let e = tool_ev(EventKind::PreToolUse, name, "Shell");
            assert_eq!(gate(AgentKind::Cursor, &e, OFF), None, "{name}");
            assert_eq!(
                gate(AgentKind::Cursor, &e, ON),
                Some(Schema::CursorPermission),
                "{name}"
            );
        }
        let read_file = tool_ev(EventKind::PreToolUse, "beforeReadFile", "Read");
        assert_eq!(gate(AgentKind::Cursor, &read_file, ON), None);
        let only_kimi = Policy { kimi: true, ..OFF };
        let cursor_shell = tool_ev(EventKind::PreToolUse, "beforeShellExecution", "Shell");
        assert_eq!(gate(AgentKind::Cursor, &cursor_shell, only_kimi), None);
    }

    #[test]
    fn deny_only_hooks_skip_reads_and_observe_only_events() {
        for read in [
            "read_file",
            "list_directory",
            "glob",
            "grep_search",
            "write_todos",
        ] {
            let e = tool_ev(EventKind::PreToolUse, "BeforeTool", read);
            assert_eq!(gate(AgentKind::Gemini, &e, ON), None, "{read}");
        }
        for ask in [
            "write_file",
            "replace",
            "web_fetch",
            "mcp_calyx-ipc_pane_run",
        ] {
            let e = tool_ev(EventKind::PreToolUse, "BeforeTool", ask);
            assert_eq!(
                gate(AgentKind::Gemini, &e, ON),
                Some(Schema::GeminiDenyOnly),
                "{ask}"
            );
        }
        for read in ["read_file", "search_files", "web_search", "todo"] {
            let e = tool_ev(EventKind::PreToolUse, "pre_tool_call", read);
            assert_eq!(gate(AgentKind::Hermes, &e, ON), None, "{read}");
        }
        // Gemini's dialog and Hermes's approval hooks only observe: never held.
        let dialog = tool_ev(
            EventKind::PermissionRequest,
            "Notification",
            "run_shell_command",
        );
        assert_eq!(gate(AgentKind::Gemini, &dialog, ON), None);
        let approval = tool_ev(
            EventKind::PermissionRequest,
            "pre_approval_request",
            "terminal",
        );
        assert_eq!(gate(AgentKind::Hermes, &approval, ON), None);
    }
}
