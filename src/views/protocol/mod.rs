//! The host side of the MCP Apps protocol for one browser page of one view (issue 17, "Host
//! protocol"), as a pure state machine: no sockets, no clocks, no tasks.
//!
//! The view server feeds it what happens ([`Input`]: a message the page posted, a change of the
//! view's record, an upstream answer, a timer) and carries out what it returns ([`Output`]:
//! messages for the view, control events for the host page, requests for the view's MCP server,
//! actions for calyx). Keeping every rule here means each one is tested without a browser, and
//! the server around it only moves bytes.

mod context;
mod look;
mod rules;
mod session;

pub use context::{ContainerSizes, PageInfo};
pub use look::{parse_terminal_colour, HostLook, LookSettings, Rgb, ThemeSetting, DEFAULT_ACCENT};
pub use session::{Session, TEARDOWN_TIMEOUT};

use serde_json::{json, Value};

/// The protocol version calyx speaks (the spec's "Stable (2026-01-26)").
pub const PROTOCOL_VERSION: &str = "2026-01-26";
/// Requests from one view answered at most at once; more get `-32000`.
pub const MAX_IN_FLIGHT: usize = 8;
/// Log lines (`notifications/message`) kept per view.
pub const MAX_LOG_LINES: usize = 200;
/// The largest `ui/update-model-context` accepted, as JSON text.
pub const MAX_MODEL_CONTEXT_BYTES: usize = 1024 * 1024;
/// The longest `ui/open-link` URL accepted.
pub const MAX_LINK_BYTES: usize = 8 * 1024;

/// JSON-RPC error codes the host answers with.
pub mod codes {
    /// Unknown method (also `sampling/createMessage`: calyx offers no sampling).
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Bad parameters (also a view `tools/call` to a tool not visible to apps).
    pub const INVALID_PARAMS: i64 = -32602;
    /// calyx refused: limits, policy, the user said no.
    pub const SERVER_ERROR: i64 = -32000;
}

/// A JSON-RPC error, as it goes back to the view.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonRpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl JsonRpcError {
    /// An error without data.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        JsonRpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// The `error` member of a response.
    pub fn to_json(&self) -> Value {
        let mut error = json!({ "code": self.code, "message": self.message });
        if let Some(data) = &self.data {
            error["data"] = data.clone();
        }
        error
    }
}

/// What the view's record says about its call: the part of `views::hub::CallRecord` a page
/// needs, so the machine can be driven without a hub.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CallView {
    /// The server's alias (a view's `tools/call` goes only to it).
    pub alias: String,
    /// The tool as its server listed it (`hostContext.toolInfo.tool`).
    pub tool: Value,
    /// The call's arguments (`ui/notifications/tool-input`).
    pub arguments: Value,
    /// The upstream call's JSON-RPC id (`hostContext.toolInfo.id`).
    pub upstream_id: Option<Value>,
    /// The `CallToolResult`, once the call returned.
    pub result: Option<Value>,
    /// Why the call was cancelled, when it was.
    pub cancelled: Option<String>,
    /// `hostCapabilities.sandbox.csp`: the domains actually allowed.
    pub csp_allowed: Value,
}

impl CallView {
    /// The page's view of a hub record.
    pub fn from_snapshot(snapshot: &crate::views::hub::ViewSnapshot) -> Self {
        let call = &snapshot.call;
        CallView {
            alias: snapshot.view.origin.alias.clone(),
            tool: call.tool.clone(),
            arguments: call.arguments.clone(),
            upstream_id: call.upstream_id.clone(),
            result: call.result.clone(),
            cancelled: call.cancelled.clone(),
            csp_allowed: call.csp.as_ref().map_or_else(
                || crate::views::csp::AllowedDomains::default().to_json(),
                |c| c.allowed.to_json(),
            ),
        }
    }
}

/// Something that happened to the page's protocol.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// A JSON-RPC message the view posted (relayed verbatim by the page).
    FromView(Value),
    /// A control message from the host page itself (`{"calyx": kind, ...}`).
    FromPage(Value),
    /// The view's record changed (result, cancellation, ...).
    Record(CallView),
    /// A notification from the view's server (`notifications/*/list_changed` are forwarded).
    ServerNotification(Value),
    /// The answer to [`Output::Upstream`] or [`Output::Action`] number `key`.
    Reply {
        key: u64,
        result: Result<Value, JsonRpcError>,
    },
    /// The look changed (config reload, a client re-attaching with other colours).
    Look(HostLook),
    /// The view is being removed: send `ui/resource-teardown` and wait for its answer.
    Teardown,
    /// The [`TEARDOWN_TIMEOUT`] after [`Output::TeardownStarted`] passed.
    TeardownTimeout,
    /// An agent calls tool `name` the view registered; answered by [`Output::AppToolResult`]
    /// `key`.
    CallAppTool {
        key: u64,
        name: String,
        arguments: Value,
    },
}

/// What the server must do.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// A JSON-RPC message for the view (the page relays it into the sandbox).
    ToView(Value),
    /// A control event for the host page (`{"type": ...}`).
    ToPage(Value),
    /// Send `method` with `params` to the view's server; answer with [`Input::Reply`] `key`.
    Upstream {
        key: u64,
        method: String,
        params: Value,
    },
    /// Something for calyx; when `key` is set, answer with [`Input::Reply`] `key`.
    Action {
        key: Option<u64>,
        action: HostAction,
    },
    /// `ui/resource-teardown` went out: feed [`Input::TeardownTimeout`] after
    /// [`TEARDOWN_TIMEOUT`] unless [`Output::Closed`] came first.
    TeardownStarted,
    /// The page is done with: tell it the view was closed and end its event stream.
    Closed,
    /// The view's answer to [`Input::CallAppTool`] `key`.
    AppToolResult {
        key: u64,
        result: Result<Value, JsonRpcError>,
    },
}

/// What a view asks of calyx itself.
#[derive(Debug, Clone, PartialEq)]
pub enum HostAction {
    /// `ui/notifications/request-teardown`: remove the view.
    TeardownRequested,
    /// `ui/open-link` with an allowed URL: ask the user (answer `{}` or an error).
    OpenLink { url: String },
    /// `ui/message`: ask the user to send it to the pane (answer `{}` or an error).
    SendMessage { params: Value },
    /// `ui/download-file`: the page offers it in its download bar (for the log).
    DownloadOffered { params: Value },
    /// `ui/update-model-context`: the view's new context, replacing the last.
    ModelContext { params: Value },
    /// `notifications/message`: a log line for the server log.
    Log { params: Value },
    /// The view's own tools, as its `tools/list` gave them (at most 64), to publish as
    /// `<alias>-app_<name>` to the pane's sessions; empty when they go (the page closed).
    AppTools { tools: Vec<Value> },
}
