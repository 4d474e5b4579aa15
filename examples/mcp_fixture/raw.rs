//! What rmcp's types cannot say: `execution.taskSupport: "required"` on one tool. rmcp 3.x's
//! `Tool` has no `execution` field, so the fixture adds it to the serialized `tools/list`
//! answer, on stdio (its own line transport, below) and on HTTP (crate::http).

use std::io;

use futures::{Sink, Stream};
use rmcp::model::{ServerJsonRpcMessage, ServerResult};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::RoleServer;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::tools::NEEDS_TASK;

/// Adds `execution: {taskSupport: "required"}` to the [`NEEDS_TASK`] tool of a JSON-RPC
/// `tools/list` answer; other messages are left alone. True when it changed something.
pub fn mark_task_support(message: &mut Value) -> bool {
    let Some(tools) = message
        .pointer_mut("/result/tools")
        .and_then(Value::as_array_mut)
    else {
        return false;
    };
    let mut changed = false;
    for tool in tools.iter_mut().filter(|t| t["name"] == NEEDS_TASK) {
        tool["execution"] = json!({"taskSupport": "required"});
        changed = true;
    }
    changed
}

/// One outgoing message as a JSON line, with the task-support mark on `tools/list` answers.
fn line(message: &TxJsonRpcMessage<RoleServer>) -> io::Result<Vec<u8>> {
    let is_tools_list = matches!(
        message,
        ServerJsonRpcMessage::Response(r) if matches!(r.result, ServerResult::ListToolsResult(_))
    );
    let mut bytes = if is_tools_list {
        let mut value = serde_json::to_value(message)?;
        mark_task_support(&mut value);
        serde_json::to_vec(&value)?
    } else {
        serde_json::to_vec(message)?
    };
    bytes.push(b'\n');
    Ok(bytes)
}

/// The stdio transport: newline-delimited JSON-RPC on stdin and stdout (no line-length limit:
/// the fixture must be able to send 65 MiB), with [`mark_task_support`] on the way out.
pub fn stdio() -> (
    impl Sink<TxJsonRpcMessage<RoleServer>, Error = io::Error> + Send + Unpin + 'static,
    impl Stream<Item = RxJsonRpcMessage<RoleServer>> + Send + Unpin + 'static,
) {
    let sink = futures::sink::unfold(
        tokio::io::stdout(),
        |mut out, message: TxJsonRpcMessage<RoleServer>| async move {
            out.write_all(&line(&message)?).await?;
            out.flush().await?;
            Ok::<_, io::Error>(out)
        },
    );
    let lines = BufReader::new(tokio::io::stdin()).lines();
    let stream = futures::stream::unfold(lines, |mut lines| async move {
        loop {
            match lines.next_line().await {
                Ok(Some(text)) if text.trim().is_empty() => continue,
                Ok(Some(text)) => match serde_json::from_str(&text) {
                    Ok(message) => return Some((message, lines)),
                    Err(e) => eprintln!("mcp_fixture: not a JSON-RPC message ({e}): {text:.200}"),
                },
                Ok(None) => return None,
                Err(e) => {
                    eprintln!("mcp_fixture: stdin: {e}");
                    return None;
                }
            }
        }
    });
    (Box::pin(sink), Box::pin(stream))
}
