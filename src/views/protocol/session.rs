//! One page's protocol session: the rules of issue 17's "Host protocol", applied to each
//! [`Input`] in turn.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use serde_json::{json, Value};

use super::context::{changed_fields, host_capabilities, host_context, DISPLAY_MODES};
use super::rules::{check_app_tool, check_link, notification, response, truncate};
use super::{
    codes, CallView, HostAction, HostLook, Input, JsonRpcError, Output, PageInfo, MAX_IN_FLIGHT,
    MAX_LOG_LINES, MAX_MODEL_CONTEXT_BYTES, PROTOCOL_VERSION,
};

/// How long a view has to answer `ui/resource-teardown` before its page is closed anyway.
pub const TEARDOWN_TIMEOUT: Duration = Duration::from_secs(2);

/// Methods a view may send that go to its server unchanged.
const FORWARDED: [&str; 4] = [
    "resources/read",
    "resources/list",
    "resources/templates/list",
    "prompts/list",
];

/// Server notifications a view gets forwarded (the host capabilities promise `listChanged`).
const FORWARDED_NOTIFICATIONS: [&str; 2] = [
    "notifications/tools/list_changed",
    "notifications/resources/list_changed",
];

/// A request of the view that waits for an answer from elsewhere.
#[derive(Debug)]
struct Pending {
    /// The view's JSON-RPC id, echoed in the answer.
    id: Value,
    kind: PendingKind,
}

#[derive(Debug)]
enum PendingKind {
    /// Forwarded to the view's server.
    Upstream,
    /// Asked the user; on yes the page opens the URL.
    OpenLink(String),
    /// Asked the user.
    Message,
    /// Offered in the page's download bar.
    Download,
}

#[derive(Debug, PartialEq)]
enum Teardown {
    NotStarted,
    /// `ui/resource-teardown` went out with this id.
    Waiting(Value),
    Closed,
}

/// The protocol state of one connected page. A page that connects later starts a new session,
/// which replays the call from the record.
#[derive(Debug)]
pub struct Session {
    call: CallView,
    look: HostLook,
    page: PageInfo,
    mode: String,
    /// `appCapabilities.availableDisplayModes`: the only modes the view may be switched to.
    app_modes: Vec<String>,
    app_info: Value,
    app_capabilities: Value,
    /// `ui/initialize` was answered: context changes are sent from then on.
    initialize_answered: bool,
    /// `ui/notifications/initialized` arrived: messages flow.
    initialized: bool,
    /// Messages held until `initialized`.
    queue: Vec<Value>,
    input_sent: bool,
    result_sent: bool,
    cancel_sent: bool,
    pending: HashMap<u64, Pending>,
    next_key: u64,
    teardown: Teardown,
    logs: VecDeque<Value>,
    model_context: Option<Value>,
    app_tools: app_tools::AppTools,
    /// The host context the view last learned (for `host-context-changed` diffs).
    last_context: Value,
}

impl Session {
    /// A session for a page that just connected.
    pub fn new(call: CallView, look: HostLook) -> Self {
        Session {
            call,
            look,
            page: PageInfo::default(),
            mode: "inline".to_string(),
            app_modes: Vec::new(),
            app_info: Value::Null,
            app_capabilities: Value::Null,
            initialize_answered: false,
            initialized: false,
            queue: Vec::new(),
            input_sent: false,
            result_sent: false,
            cancel_sent: false,
            pending: HashMap::new(),
            next_key: 0,
            teardown: Teardown::NotStarted,
            app_tools: app_tools::AppTools::default(),
            logs: VecDeque::new(),
            model_context: None,
            last_context: Value::Null,
        }
    }

    /// The view's log lines (`notifications/message`), the last [`MAX_LOG_LINES`].
    pub fn logs(&self) -> impl Iterator<Item = &Value> {
        self.logs.iter()
    }

    /// The view's last `ui/update-model-context` parameters.
    pub fn model_context(&self) -> Option<&Value> {
        self.model_context.as_ref()
    }

    /// The display mode the page shows now.
    pub fn display_mode(&self) -> &str {
        &self.mode
    }

    /// What the view said about itself in `ui/initialize` (`appInfo`, `appCapabilities`).
    pub fn app(&self) -> (&Value, &Value) {
        (&self.app_info, &self.app_capabilities)
    }

    /// Whether the session ended ([`Output::Closed`] was returned).
    pub fn is_closed(&self) -> bool {
        self.teardown == Teardown::Closed
    }

    /// Applies one input; `app_tool` looks a tool of the view's server up by its original
    /// name (as the server listed it), for the visibility rule on a view's `tools/call`.
    pub fn handle(
        &mut self,
        input: Input,
        app_tool: &dyn Fn(&str) -> Option<Value>,
    ) -> Vec<Output> {
        let mut out = Vec::new();
        if self.is_closed() {
            return out;
        }
        match input {
            Input::FromView(message) => self.on_view_message(message, app_tool, &mut out),
            Input::FromPage(message) => self.on_page_control(&message, &mut out),
            Input::Record(call) => {
                self.call = call;
                self.refresh_context(&mut out);
                if self.initialized {
                    self.deliver_call(&mut out);
                }
            }
            Input::ServerNotification(message) => {
                let method = message["method"].as_str().unwrap_or_default();
                if FORWARDED_NOTIFICATIONS.contains(&method) {
                    self.send(
                        notification(method, message.get("params").cloned()),
                        &mut out,
                    );
                }
            }
            Input::Reply { key, result } => self.reply(key, result, &mut out),
            Input::Look(look) => {
                self.look = look;
                self.refresh_context(&mut out);
            }
            Input::Teardown => self.start_teardown(&mut out),
            Input::CallAppTool {
                key,
                name,
                arguments,
            } => self.call_app_tool(key, name, arguments, &mut out),
            Input::TeardownTimeout => {
                if matches!(self.teardown, Teardown::Waiting(_)) {
                    self.close(&mut out);
                }
            }
        }
        out
    }

    /// Sends a message to the view now, or holds it until `initialized`.
    fn send(&mut self, message: Value, out: &mut Vec<Output>) {
        if self.initialized {
            out.push(Output::ToView(message));
        } else {
            self.queue.push(message);
        }
    }

    /// `tool-input` once, then the result or the cancellation once.
    fn deliver_call(&mut self, out: &mut Vec<Output>) {
        if !self.input_sent {
            self.input_sent = true;
            let arguments = self.call.arguments.clone();
            self.send(
                notification(
                    "ui/notifications/tool-input",
                    Some(json!({ "arguments": arguments })),
                ),
                out,
            );
        }
        if self.result_sent || self.cancel_sent {
            return;
        }
        if let Some(result) = self.call.result.clone() {
            self.result_sent = true;
            self.send(
                notification("ui/notifications/tool-result", Some(result)),
                out,
            );
        } else if let Some(reason) = self.call.cancelled.clone() {
            self.cancel_sent = true;
            self.send(
                notification(
                    "ui/notifications/tool-cancelled",
                    Some(json!({ "reason": reason })),
                ),
                out,
            );
        }
    }

    fn context(&self) -> Value {
        host_context(
            self.call.upstream_id.as_ref(),
            &self.call.tool,
            &self.look,
            &self.mode,
            &self.page,
        )
    }

    /// After a change of look, page size or mode: `host-context-changed` with only what changed.
    fn refresh_context(&mut self, out: &mut Vec<Output>) {
        if !self.initialize_answered {
            return;
        }
        let context = self.context();
        if let Some(changed) = changed_fields(&self.last_context, &context) {
            self.send(
                notification("ui/notifications/host-context-changed", Some(changed)),
                out,
            );
        }
        self.last_context = context;
    }

    fn on_view_message(
        &mut self,
        message: Value,
        app_tool: &dyn Fn(&str) -> Option<Value>,
        out: &mut Vec<Output>,
    ) {
        let method = message.get("method").and_then(Value::as_str);
        let id = message.get("id").filter(|id| !id.is_null()).cloned();
        if let Teardown::Waiting(waited) = &self.teardown {
            // A view being torn down is heard only for its reply: its page has been revoked
            // (its other posts would act for a view that no longer exists).
            if method.is_none() && id.as_ref() == Some(waited) {
                self.close(out);
            }
            return;
        }
        match (method, id) {
            (Some(method), Some(id)) => {
                let params = message.get("params").cloned().unwrap_or(Value::Null);
                self.view_request(method, id, params, app_tool, out);
            }
            (Some(method), None) => {
                let params = message.get("params").cloned().unwrap_or(Value::Null);
                self.view_notification(method, params, out);
            }
            (None, Some(id)) => {
                // A response: to the teardown, or to a request for the view's own tools.
                if self.teardown == Teardown::Waiting(id.clone()) {
                    self.close(out);
                } else {
                    self.app_tools_response(&id, &message, out);
                }
            }
            (None, None) => {}
        }
    }

    fn view_request(
        &mut self,
        method: &str,
        id: Value,
        params: Value,
        app_tool: &dyn Fn(&str) -> Option<Value>,
        out: &mut Vec<Output>,
    ) {
        let answer = match method {
            "ui/initialize" => Ok(self.initialize(&params)),
            "ping" => Ok(json!({})),
            "ui/request-display-mode" => Ok(self.request_display_mode(&params, out)),
            "ui/update-model-context" => self.update_model_context(params, out),
            "tools/call" => match check_app_tool(&params, app_tool) {
                Ok(()) => return self.defer(id, PendingKind::Upstream, method, params, out),
                Err(e) => Err(e),
            },
            m if FORWARDED.contains(&m) => {
                return self.defer(id, PendingKind::Upstream, method, params, out)
            }
            "ui/open-link" => match check_link(&params) {
                Ok(url) => return self.defer(id, PendingKind::OpenLink(url), method, params, out),
                Err(e) => Err(e),
            },
            "ui/message" => return self.defer(id, PendingKind::Message, method, params, out),
            "ui/download-file" => {
                return self.defer(id, PendingKind::Download, method, params, out)
            }
            _ => Err(JsonRpcError::new(
                codes::METHOD_NOT_FOUND,
                format!("method not found: {}", truncate(method, 100)),
            )),
        };
        out.push(Output::ToView(response(id, answer)));
    }

    /// A request answered later: forwarded upstream, asked of the user, or offered by the page.
    fn defer(
        &mut self,
        id: Value,
        kind: PendingKind,
        method: &str,
        params: Value,
        out: &mut Vec<Output>,
    ) {
        if self.pending.len() >= MAX_IN_FLIGHT {
            let busy = JsonRpcError::new(codes::SERVER_ERROR, "too many requests in flight");
            out.push(Output::ToView(response(id, Err(busy))));
            return;
        }
        self.next_key += 1;
        let key = self.next_key;
        let output = match &kind {
            PendingKind::Upstream => Output::Upstream {
                key,
                method: method.to_string(),
                params,
            },
            PendingKind::OpenLink(url) => Output::Action {
                key: Some(key),
                action: HostAction::OpenLink { url: url.clone() },
            },
            PendingKind::Message => Output::Action {
                key: Some(key),
                action: HostAction::SendMessage { params },
            },
            PendingKind::Download => {
                out.push(Output::ToPage(
                    json!({ "type": "download", "key": key, "params": params }),
                ));
                Output::Action {
                    key: None,
                    action: HostAction::DownloadOffered { params },
                }
            }
        };
        out.push(output);
        self.pending.insert(key, Pending { id, kind });
    }

    fn reply(&mut self, key: u64, result: Result<Value, JsonRpcError>, out: &mut Vec<Output>) {
        let Some(pending) = self.pending.remove(&key) else {
            return;
        };
        if let (PendingKind::OpenLink(url), Ok(_)) = (&pending.kind, &result) {
            out.push(Output::ToPage(json!({ "type": "open-link", "url": url })));
        }
        out.push(Output::ToView(response(pending.id, result)));
    }

    fn initialize(&mut self, params: &Value) -> Value {
        // A repeated ui/initialize replaces what the view said about itself.
        self.app_info = params.get("appInfo").cloned().unwrap_or(Value::Null);
        self.app_capabilities = params
            .get("appCapabilities")
            .cloned()
            .unwrap_or(Value::Null);
        self.app_modes = self.app_capabilities["availableDisplayModes"]
            .as_array()
            .map(|modes| {
                modes
                    .iter()
                    .filter_map(Value::as_str)
                    .filter(|m| DISPLAY_MODES.contains(m))
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        self.initialize_answered = true;
        self.last_context = self.context();
        json!({
            // Only one version is supported: the requested one when it is that, else that.
            "protocolVersion": PROTOCOL_VERSION,
            "hostInfo": { "name": "calyx", "version": env!("CARGO_PKG_VERSION") },
            "hostCapabilities": host_capabilities(&self.call.csp_allowed),
            "hostContext": self.last_context,
        })
    }

    /// The spec's rule: switch only to a mode the view declared; answer the actual mode.
    fn request_display_mode(&mut self, params: &Value, out: &mut Vec<Output>) -> Value {
        let asked = params["mode"].as_str().unwrap_or_default();
        if asked != self.mode && self.app_modes.iter().any(|m| m == asked) {
            self.switch_mode(asked.to_string(), out);
        }
        json!({ "mode": self.mode })
    }

    fn switch_mode(&mut self, mode: String, out: &mut Vec<Output>) {
        self.mode = mode;
        out.push(Output::ToPage(
            json!({ "type": "display-mode", "mode": self.mode }),
        ));
        self.refresh_context(out);
    }

    fn update_model_context(
        &mut self,
        params: Value,
        out: &mut Vec<Output>,
    ) -> Result<Value, JsonRpcError> {
        if params.to_string().len() > MAX_MODEL_CONTEXT_BYTES {
            return Err(JsonRpcError::new(
                codes::SERVER_ERROR,
                "model context too large (1 MiB at most)",
            ));
        }
        self.model_context = Some(params.clone());
        out.push(Output::Action {
            key: None,
            action: HostAction::ModelContext { params },
        });
        Ok(json!({}))
    }

    fn view_notification(&mut self, method: &str, params: Value, out: &mut Vec<Output>) {
        match method {
            "ui/notifications/initialized" => {
                if self.initialized {
                    return;
                }
                self.initialized = true;
                out.extend(self.queue.drain(..).map(Output::ToView));
                self.deliver_call(out);
                self.list_app_tools(out);
            }
            "notifications/tools/list_changed" => self.list_app_tools(out),
            "notifications/message" => {
                if self.logs.len() >= MAX_LOG_LINES {
                    self.logs.pop_front();
                }
                self.logs.push_back(params.clone());
                out.push(Output::Action {
                    key: None,
                    action: HostAction::Log { params },
                });
            }
            "ui/notifications/size-changed" => {
                let mut size = json!({ "type": "size" });
                for side in ["width", "height"] {
                    if let Some(n) = params[side].as_f64().filter(|n| n.is_finite() && *n >= 0.0) {
                        size[side] = json!(n);
                    }
                }
                out.push(Output::ToPage(size));
            }
            "ui/notifications/request-teardown" => out.push(Output::Action {
                key: None,
                action: HostAction::TeardownRequested,
            }),
            _ => {}
        }
    }

    fn on_page_control(&mut self, message: &Value, out: &mut Vec<Output>) {
        match message["calyx"].as_str().unwrap_or_default() {
            "hello" => {
                self.page = PageInfo::from_hello(message);
                self.refresh_context(out);
            }
            "resize" => {
                self.page.sizes = super::ContainerSizes::from_json(&message["sizes"]);
                self.refresh_context(out);
            }
            // The page's own controls (pip's ×, Esc in fullscreen) only go back to inline.
            "inline" if self.mode != "inline" => self.switch_mode("inline".to_string(), out),
            "download-done" => {
                let key = message["key"].as_u64().unwrap_or(0);
                if matches!(
                    self.pending.get(&key).map(|p| &p.kind),
                    Some(PendingKind::Download)
                ) {
                    let result = if message["ok"].as_bool() == Some(true) {
                        json!({})
                    } else {
                        json!({ "isError": true })
                    };
                    self.reply(key, Ok(result), out);
                }
            }
            "close" => out.push(Output::Action {
                key: None,
                action: HostAction::TeardownRequested,
            }),
            _ => {}
        }
    }

    fn start_teardown(&mut self, out: &mut Vec<Output>) {
        if self.teardown != Teardown::NotStarted {
            return;
        }
        if !self.initialized {
            // Nothing may reach a view before `initialized`: there is no one to tell.
            self.close(out);
            return;
        }
        let id = json!("calyx-teardown");
        out.push(Output::ToView(json!({
            "jsonrpc": "2.0",
            "id": id,
            "method": "ui/resource-teardown",
            "params": {},
        })));
        self.teardown = Teardown::Waiting(id);
        out.push(Output::TeardownStarted);
    }

    fn close(&mut self, out: &mut Vec<Output>) {
        self.teardown = Teardown::Closed;
        out.push(Output::Closed);
    }
}

#[path = "app_tools.rs"]
mod app_tools;

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
