//! What the MCP App view server reaches through the hosted servers: a view's requests go to
//! its own server's live connection (the one its tool was called on), typed as rmcp wants
//! them and answered as JSON; its tool listing comes from what the server published; and the
//! actions a view asks of the user (open a link, send a message) go to `actions`.

use std::sync::Arc;

use rmcp::model::{CallToolRequestParams, PaginatedRequestParams, ReadResourceRequestParams};
use rmcp::service::ServiceError;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::sync::broadcast;

use super::publish::Registry;
use crate::views::protocol::{codes, HostAction, JsonRpcError};
use crate::views::registry::ViewId;
use crate::views::server::{BoxFuture, ViewUpstream};

/// Answers the actions a view asks of the user (`ui/open-link`, `ui/message`).
pub type ActionAnswer = Arc<
    dyn Fn(ViewId, HostAction) -> BoxFuture<'static, Result<Value, JsonRpcError>> + Send + Sync,
>;

/// The view server's way to the hosted servers.
pub struct HostedUpstream {
    registry: Registry,
    actions: ActionAnswer,
}

impl HostedUpstream {
    /// Requests go to the servers `registry` publishes; actions to `actions`.
    pub fn new(registry: Registry, actions: ActionAnswer) -> Self {
        HostedUpstream { registry, actions }
    }
}

/// `params` as rmcp's request type, or the view's `-32602`.
fn typed<T: DeserializeOwned>(params: Value) -> Result<T, JsonRpcError> {
    serde_json::from_value(params)
        .map_err(|e| JsonRpcError::new(codes::INVALID_PARAMS, format!("invalid params: {e}")))
}

/// Optional pagination params (`{}`, null or absent are all "first page").
fn page(params: Value) -> Result<Option<PaginatedRequestParams>, JsonRpcError> {
    match params {
        Value::Null => Ok(None),
        other => typed(other).map(Some),
    }
}

/// The server's JSON-RPC error as it said it; anything else as an internal error naming it.
fn upstream_error(alias: &str, error: ServiceError) -> JsonRpcError {
    match error {
        ServiceError::McpError(error) => JsonRpcError {
            code: i64::from(error.code.0),
            message: error.message.to_string(),
            data: error.data,
        },
        other => JsonRpcError::new(
            -32603,
            format!("server `{alias}` failed the request: {other}"),
        ),
    }
}

fn json<T: serde::Serialize>(value: T) -> Result<Value, JsonRpcError> {
    serde_json::to_value(value).map_err(|e| JsonRpcError::new(-32603, e.to_string()))
}

impl ViewUpstream for HostedUpstream {
    fn request<'a>(
        &'a self,
        alias: &'a str,
        method: &'a str,
        params: Value,
    ) -> BoxFuture<'a, Result<Value, JsonRpcError>> {
        Box::pin(async move {
            let Some(server) = self.registry.get(alias) else {
                return Err(JsonRpcError::new(
                    codes::SERVER_ERROR,
                    format!("server `{alias}` is not connected"),
                ));
            };
            let peer = &server.peer;
            let error = |e| upstream_error(alias, e);
            match method {
                "tools/call" => {
                    let params: CallToolRequestParams = typed(params)?;
                    json(peer.call_tool(params).await.map_err(error)?)
                }
                "resources/read" => {
                    let params: ReadResourceRequestParams = typed(params)?;
                    json(peer.read_resource(params).await.map_err(error)?)
                }
                "resources/list" => json(peer.list_resources(page(params)?).await.map_err(error)?),
                "resources/templates/list" => json(
                    peer.list_resource_templates(page(params)?)
                        .await
                        .map_err(error)?,
                ),
                "prompts/list" => json(peer.list_prompts(page(params)?).await.map_err(error)?),
                other => Err(JsonRpcError::new(
                    codes::METHOD_NOT_FOUND,
                    format!("method not found: {other}"),
                )),
            }
        })
    }

    fn tool(&self, alias: &str, name: &str) -> Option<Value> {
        let server = self.registry.get(alias)?;
        let tools = &server.tools;
        let tool = tools
            .published
            .iter()
            .map(|(_, tool)| tool)
            .chain(tools.app_only.iter())
            .find(|tool| tool.name == name)?;
        serde_json::to_value(tool).ok()
    }

    fn action<'a>(
        &'a self,
        view: ViewId,
        action: HostAction,
    ) -> BoxFuture<'a, Result<Value, JsonRpcError>> {
        (self.actions)(view, action)
    }

    fn notifications(&self) -> Option<broadcast::Receiver<(String, Value)>> {
        Some(self.registry.upstream_changes())
    }
}
