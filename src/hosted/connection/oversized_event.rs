//! A Streamable HTTP answer whose SSE event is over 64 MiB: rmcp stops reading the stream and
//! fails the request with a bare "Transport closed", which tells the agent nothing. Here the
//! size error becomes a JSON-RPC error answer to that request carrying [`OVERSIZED`], so the
//! agent reads the same sentence as on stdio; the session and other calls go on (issue 16,
//! "Limits").

use futures::stream::BoxStream;
use futures::StreamExt;
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::SseError;
use serde_json::{json, Value};
use sse_stream::Sse;

use super::in_flight::OVERSIZED;

type Events = BoxStream<'static, Result<Sse, SseError>>;

/// What rmcp 3.11.0's size-limited SSE reader says (its error type is private).
const TOO_LARGE: &str = "SSE event exceeded the maximum size";

/// True when `error` (or what caused it) is rmcp's event-size limit.
fn is_too_large(error: &SseError) -> bool {
    let mut cause: Option<&dyn std::error::Error> = Some(error);
    while let Some(e) = cause {
        if e.to_string().contains(TOO_LARGE) {
            return true;
        }
        cause = e.source();
    }
    false
}

/// The id of `message` when it is a request (only a request has an answer to replace).
pub fn request_id(message: &ClientJsonRpcMessage) -> Option<Value> {
    match message {
        rmcp::model::JsonRpcMessage::Request(request) => serde_json::to_value(&request.id).ok(),
        _ => None,
    }
}

/// `events` with a size-limit error replaced by an error answer to `id` naming the 64 MiB
/// limit.
pub fn answer_oversized(events: Events, id: Value) -> Events {
    events
        .map(move |event| match event {
            Err(error) if is_too_large(&error) => {
                let answer = json!({
                    "jsonrpc": "2.0",
                    "id": id,
                    "error": {"code": -32603, "message": OVERSIZED},
                });
                Ok(Sse::default().data(answer.to_string()))
            }
            other => other,
        })
        .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_size_error_becomes_an_answer_with_the_sentence() {
        let too_large: Box<dyn std::error::Error + Send + Sync> =
            format!("{TOO_LARGE} of 67108864 bytes").into();
        let events: Events = futures::stream::iter(vec![
            Ok(Sse::default().data("{}")),
            Err(SseError::Body(too_large)),
        ])
        .boxed();
        let out: Vec<_> = answer_oversized(events, json!(7)).collect().await;
        assert_eq!(out.len(), 2);
        let Ok(Sse {
            data: Some(data), ..
        }) = &out[1]
        else {
            panic!("not an event: {:?}", out[1]);
        };
        let answer: Value = serde_json::from_str(data).expect("json");
        assert_eq!(answer["id"], 7);
        assert_eq!(answer["error"]["message"], OVERSIZED);
    }
}
