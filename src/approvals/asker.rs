//! Who asks the human: an agent CLI's hook, or one of calyx's own MCP tools acting for a caller.

use calyx_integrations::AgentKind;

/// Who a request comes from. The difference matters after the decision: a hook's agent row
/// waits blocked on the answer and moves on with it, while a tool's request (typing into
/// another pane) blocks no row, and must not touch the row of the pane it types into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asker {
    /// The hook of the agent CLI in the request's pane.
    Hook(AgentKind),
    /// calyx's `pane_run` / `pane_send_keys`, called by the agent of this CLI (the caller's
    /// pane has an agent row) or by an MCP client calyx knows no agent of (None).
    Tool(Option<AgentKind>),
    /// An MCP App view (`ui/open-link`, `ui/message`): blocks no agent row, makes no rule.
    App,
}

impl Asker {
    /// The CLI whose hook asked, if a hook did.
    pub fn hook(self) -> Option<AgentKind> {
        match self {
            Asker::Hook(kind) => Some(kind),
            Asker::Tool(_) | Asker::App => None,
        }
    }

    /// The name `calyx approvals` and `approvals.jsonl` record: the CLI's, or `mcp`.
    pub fn as_str(self) -> &'static str {
        match self {
            Asker::Hook(kind) | Asker::Tool(Some(kind)) => kind.as_str(),
            Asker::Tool(None) => "mcp",
            Asker::App => "app",
        }
    }

    /// The name the approval panel shows.
    pub fn display_name(self) -> &'static str {
        match self {
            Asker::Hook(kind) | Asker::Tool(Some(kind)) => kind.display_name(),
            Asker::Tool(None) => "An MCP client",
            Asker::App => "An MCP App",
        }
    }
}
