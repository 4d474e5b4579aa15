//! The agent endpoint: one HTTP/1.1 server (hyper on tokio) on 127.0.0.1, serving agent CLI hooks
//! (`/agent-event`), permission gates (`/approval-request`), MCP (`/mcp`) and `/health`.
//!
//! The HTTP layer owns no calyx state. It authenticates, enforces limits, parses, and turns each
//! request into an [`EndpointRequest`] sent to the server's owner loop, then waits for the reply.

use tokio::sync::{mpsc, oneshot};

mod auth;
mod body;
pub mod endpoint_file;
mod identity;
mod options;
mod response;
mod routes;
mod server;
pub mod token;

pub use identity::{DEFAULT_HOOK_KIND, KIND_HEADER, SESSION_HEADER, SURFACE_HEADER};
pub use options::{
    EndpointOptions, InheritedListener, PortChoice, APPROVAL_TIMEOUT, DEFAULT_PORTS,
    MAX_BODY_BYTES, MAX_HEADER_BYTES, REQUEST_TIMEOUT, SHUTDOWN_GRACE,
};
pub use server::{start, EndpointHandle};

/// Who is calling: the identity headers an agent's hook or MCP client sends.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Identity {
    /// `X-Calyx-Session-ID`: the pane's persistent record id (tried first).
    pub session_id: Option<String>,
    /// `X-Calyx-Surface-ID`: the pane's surface UUID.
    pub surface_id: Option<String>,
    /// `X-Calyx-Agent-Kind`, parsed here at the edge (hook routes assume Claude Code when it
    /// is absent, see [`identity::DEFAULT_HOOK_KIND`]); None: not sent, and no default.
    pub agent_kind: Option<CallerKind>,
}

/// The agent CLI a request names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallerKind {
    Known(calyx_integrations::AgentKind),
    /// A name no CLI has (a hook of a newer calyx, a typo in a script): kept to say so.
    Unknown(String),
}

impl CallerKind {
    /// Parses a header value.
    pub fn parse(name: &str) -> Self {
        name.parse()
            .map_or_else(|_| CallerKind::Unknown(name.to_string()), CallerKind::Known)
    }

    /// The name as sent (the CLI's kind name when known).
    pub fn name(&self) -> &str {
        match self {
            CallerKind::Known(kind) => kind.as_str(),
            CallerKind::Unknown(name) => name,
        }
    }

    /// The CLI, when calyx knows it.
    pub fn known(&self) -> Option<calyx_integrations::AgentKind> {
        match self {
            CallerKind::Known(kind) => Some(*kind),
            CallerKind::Unknown(_) => None,
        }
    }
}

/// What a request asks of the owner loop.
#[derive(Debug)]
pub enum EndpointCall {
    /// `POST /agent-event`: a lifecycle hook payload, forwarded verbatim.
    AgentEvent {
        identity: Identity,
        payload: serde_json::Value,
    },
    /// `POST /approval-request`: a permission gate that waits for the human.
    ApprovalRequest {
        identity: Identity,
        payload: serde_json::Value,
    },
}

/// The owner loop's answer to an [`EndpointCall`].
#[derive(Debug, PartialEq)]
pub enum EndpointReply {
    /// 204, no body (an accepted lifecycle event).
    NoContent,
    /// 200 with this JSON body (an approval decision).
    Json(serde_json::Value),
    /// 200 with an empty body (a gate calyx does not decide: the CLI asks itself).
    EmptyOk,
    /// 400 with `{"error": message}` (for example: the pane does not resolve).
    BadRequest(String),
}

impl EndpointReply {
    /// A CLI's answer body as the reply: JSON, or an empty 200 when the body is empty.
    pub fn from_body(body: Option<serde_json::Value>) -> Self {
        match body {
            Some(v) => EndpointReply::Json(v),
            None => EndpointReply::EmptyOk,
        }
    }
}

/// A request handed to the owner loop, with the channel its reply goes back on.
#[derive(Debug)]
pub struct EndpointRequest {
    pub call: EndpointCall,
    pub reply: oneshot::Sender<EndpointReply>,
}

/// The sending half the HTTP server uses to reach the owner loop.
pub type EndpointSender = mpsc::Sender<EndpointRequest>;
