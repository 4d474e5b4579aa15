//! The fixture's tools: what the npm servers cannot do on demand (issue 16, "Tests").

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    Implementation, JsonObject, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler};
use serde_json::{json, Value};

/// A tool name with a `.`, which the published-name rule must replace.
pub const DOTTED: &str = "dotted.name";
/// A 56-character tool name: published under the alias `fx` it would be 59 characters, over
/// the 48 the model APIs allow.
pub const LONG: &str = "a_tool_name_long_enough_that_its_published_name_is_59chr";
/// The tool the fixture lists with `execution.taskSupport: "required"` (added to the raw
/// `tools/list` answer by [`crate::raw`], since rmcp's `Tool` has no field for it).
pub const NEEDS_TASK: &str = "needs_task";
/// The largest result `big` makes, in MiB.
const BIG_MAX_MIB: u64 = 128;

/// The text `big {mib}` answers with: `mib` MiB of `a`..`z` repeated, so a test can rebuild it
/// and compare byte for byte.
pub fn big_text(mib: u64) -> String {
    let len = usize::try_from(mib << 20).unwrap_or(0);
    (0..len)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect()
}

/// The fixture's state, shared by every session of one process (the HTTP mode serves several).
#[derive(Clone, Default)]
pub struct Fixture {
    /// Tools added by `add_tool`, in order.
    added: Arc<Mutex<Vec<String>>>,
    /// Where `slow` appends `cancelled <request id>` when its call is cancelled.
    cancel_record: Option<PathBuf>,
}

impl Fixture {
    pub fn new(cancel_record: Option<PathBuf>) -> Self {
        Fixture {
            cancel_record,
            ..Fixture::default()
        }
    }

    fn tools(&self) -> Vec<Tool> {
        let object = |properties: Value| -> Arc<JsonObject> {
            let schema = json!({"type": "object", "properties": properties});
            Arc::new(schema.as_object().cloned().unwrap_or_default())
        };
        let mut tools = vec![
            Tool::new(
                "echo",
                "Answers with `message`.",
                object(json!({"message": {"type": "string"}})),
            ),
            Tool::new(
                "add_tool",
                "Adds a tool `added-N` and sends notifications/tools/list_changed.",
                object(json!({})),
            ),
            Tool::new(
                "slow",
                "Reports progress once, then waits until it is cancelled (recorded).",
                object(json!({})),
            ),
            Tool::new(
                "big",
                "Answers with `mib` MiB of text.",
                object(json!({"mib": {"type": "integer"}})),
            ),
            Tool::new(DOTTED, "A name with a dot.", object(json!({}))),
            Tool::new(LONG, "A long name.", object(json!({}))),
            Tool::new(NEEDS_TASK, "Must run as a task.", object(json!({}))),
            Tool::new(
                "elicit-form",
                "Asks the client a form (elicitation/create) and answers with its ElicitResult as JSON.",
                object(json!({})),
            ),
            Tool::new(
                "elicit-url",
                "Asks the client to open `url` (URL elicitation `id`); with `complete`, sends \
                 notifications/elicitation/complete once accepted. Answers with the ElicitResult.",
                object(json!({
                    "url": {"type": "string"},
                    "id": {"type": "string"},
                    "complete": {"type": "boolean"}
                })),
            ),
            Tool::new(
                "exit",
                "Exits the process at once with `code` (no answer).",
                object(json!({"code": {"type": "integer"}})),
            ),
            Tool::new(
                "forget_sessions",
                "Over HTTP: every session is forgotten at the next request, as by a restart \
                 (the client's next message gets 404).",
                object(json!({})),
            ),
        ];
        tools.extend(crate::view::tools(object));
        let added = self.added.lock().unwrap_or_else(|e| e.into_inner());
        for name in added.iter() {
            tools.push(Tool::new(
                Cow::Owned(name.clone()),
                "Added by add_tool.",
                object(json!({})),
            ));
        }
        tools
    }

    async fn slow(&self, context: RequestContext<RoleServer>) -> CallToolResult {
        if let Some(token) = context.meta.get_progress_token() {
            let step = ProgressNotificationParam::new(token, 1.0)
                .with_total(2.0)
                .with_message("waiting to be cancelled");
            let _ = context.peer.notify_progress(step).await;
        }
        context.ct.cancelled().await;
        if let Some(path) = &self.cancel_record {
            let line = format!("cancelled {}\n", context.id);
            let appended = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .and_then(|mut f| std::io::Write::write_all(&mut f, line.as_bytes()));
            if let Err(e) = appended {
                eprintln!(
                    "mcp_fixture: cannot record the cancel in {}: {e}",
                    path.display()
                );
            }
        }
        text("cancelled")
    }

    /// `elicit-form` / `elicit-url`: asks the client, answers with what it said.
    async fn elicit(
        &self,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let url_mode = request.name == "elicit-url";
        let id = argument(request, "id")
            .and_then(Value::as_str)
            .unwrap_or("fixture-1")
            .to_string();
        let params = if url_mode {
            let url = argument(request, "url")
                .and_then(Value::as_str)
                .unwrap_or("https://example.com/fixture");
            json!({
                "mode": "url",
                "message": "The fixture wants a page opened",
                "url": url,
                "elicitationId": id,
            })
        } else {
            json!({
                "mode": "form",
                "message": "The fixture asks a few things",
                "requestedSchema": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "title": "Name", "minLength": 2},
                        "age": {"type": "integer", "title": "Age", "minimum": 0, "maximum": 150, "default": 30},
                        "tier": {"type": "string", "title": "Tier", "oneOf": [
                            {"const": "free", "title": "Free"}, {"const": "pro", "title": "Pro"}
                        ], "default": "free"},
                        "tags": {"type": "array", "title": "Tags", "items": {"type": "string", "enum": ["red", "green", "blue"]}},
                        "agree": {"type": "boolean", "title": "Agree"}
                    },
                    "required": ["name"]
                }
            })
        };
        let params = serde_json::from_value(params)
            .map_err(|e| ErrorData::internal_error(format!("elicitation params: {e}"), None))?;
        // rmcp's `create_elicitation` needs its `elicitation` feature; the plain request is the same.
        let request_sent =
            rmcp::model::ServerRequest::ElicitRequest(rmcp::model::ElicitRequest::new(params));
        let answer = match context.peer.send_request(request_sent).await {
            Ok(rmcp::model::ClientResult::ElicitResult(answer)) => answer,
            Ok(other) => {
                return Err(ErrorData::internal_error(
                    format!("elicitation/create: not an ElicitResult: {other:?}"),
                    None,
                ))
            }
            Err(e) => {
                return Err(ErrorData::internal_error(
                    format!("elicitation/create: {e}"),
                    None,
                ))
            }
        };
        let accepted = answer.action == rmcp::model::ElicitationAction::Accept;
        if url_mode && accepted && argument(request, "complete") == Some(&Value::Bool(true)) {
            let done = rmcp::model::CustomNotification::new(
                "notifications/elicitation/complete",
                Some(json!({"elicitationId": id})),
            );
            let _ = context
                .peer
                .send_notification(rmcp::model::ServerNotification::CustomNotification(done))
                .await;
        }
        Ok(text(serde_json::to_string(&answer).unwrap_or_default()))
    }

    async fn add_tool(&self, context: &RequestContext<RoleServer>) -> CallToolResult {
        let name = {
            let mut added = self.added.lock().unwrap_or_else(|e| e.into_inner());
            let name = format!("added-{}", added.len() + 1);
            added.push(name.clone());
            name
        };
        let _ = context.peer.notify_tool_list_changed().await;
        text(name)
    }
}

fn text(t: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(t.into())])
}

fn argument<'a>(request: &'a CallToolRequestParams, key: &str) -> Option<&'a Value> {
    request.arguments.as_ref().and_then(|a| a.get(key))
}

impl ServerHandler for Fixture {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_resources()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("calyx-mcp-fixture", "1.0.0"))
            .with_instructions("The calyx test fixture.")
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourcesResult, ErrorData> {
        crate::view::list()
    }

    async fn read_resource(
        &self,
        request: rmcp::model::ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, ErrorData> {
        crate::view::read(&request).map(rmcp::model::ReadResourceResponse::Complete)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let result = match request.name.as_ref() {
            "echo" => {
                let message = argument(&request, "message").and_then(Value::as_str);
                text(message.unwrap_or_default())
            }
            "add_tool" => self.add_tool(&context).await,
            "elicit-form" | "elicit-url" => self.elicit(&request, &context).await?,
            "slow" => self.slow(context).await,
            "show_time" => text(crate::view::TIME_TEXT),
            "show_checks" | "show_life" => text(crate::view::CHECKS_TEXT),
            "show_wait" => {
                context.ct.cancelled().await;
                text("cancelled")
            }
            "big" => {
                let mib = argument(&request, "mib")
                    .and_then(Value::as_u64)
                    .unwrap_or(1);
                if mib > BIG_MAX_MIB {
                    return Err(ErrorData::invalid_params(
                        format!("mib must be at most {BIG_MAX_MIB}"),
                        None,
                    ));
                }
                text(big_text(mib))
            }
            "forget_sessions" => {
                crate::http::FORGET_SESSIONS.store(true, std::sync::atomic::Ordering::SeqCst);
                text("forgetting")
            }
            "exit" => {
                let code = argument(&request, "code")
                    .and_then(Value::as_i64)
                    .unwrap_or(0);
                std::process::exit(i32::try_from(code).unwrap_or(1));
            }
            name if name == DOTTED || name == LONG || name == NEEDS_TASK => text(name),
            name if self.tools().iter().any(|t| t.name == name) => text(name),
            name => {
                return Err(ErrorData::invalid_params(
                    format!("no tool named {name:?}"),
                    None,
                ))
            }
        };
        Ok(result.into())
    }
}
