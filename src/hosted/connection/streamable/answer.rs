//! Reading what the server sends back: a JSON body or an SSE stream, each message passing the
//! raw `tools/list` tap as bytes and typed straight from them (`serde_json::from_slice` on the
//! event's own buffer: no text copy of a payload that may be 64 MiB), then handed to rmcp. An
//! event or body over the limit (64 MiB) becomes an error answer to the request it was for, carrying
//! [`OVERSIZED`], as on stdio and the legacy transport.

use futures::StreamExt;
use reqwest::Response;
use rmcp::model::{ErrorData, JsonRpcMessage, RequestId, ServerJsonRpcMessage, ServerResult};
use rmcp::transport::streamable_http_client::StreamableHttpError;

use super::{HttpError, Shared};
use crate::hosted::connection::in_flight::OVERSIZED;
use crate::hosted::connection::raw_tap::record;
use crate::hosted::connection::sse::SseParser;

/// How a stream of events ended.
#[derive(Debug, Default)]
pub(super) struct Read {
    /// The message answering the awaited request passed.
    pub answered: bool,
    /// At least one event arrived.
    pub any: bool,
    /// The last event id seen (for `Last-Event-ID` on a resume).
    pub last_id: Option<String>,
    /// An event over the limit ended the stream.
    pub oversized: bool,
    /// The reconnection time the stream asked for (its `retry` field).
    pub retry: Option<std::time::Duration>,
}

impl Shared {
    /// Types `bytes` as one message and hands it to rmcp; false once nobody listens. With
    /// `initialize`, the answer's protocol version goes on every later request.
    pub(super) async fn deliver(&self, bytes: &[u8], initialize: bool) -> Result<Delivered, ()> {
        record(bytes, &self.task_required);
        let message: ServerJsonRpcMessage = match serde_json::from_slice(bytes) {
            Ok(message) => message,
            Err(error) => {
                tracing::warn!("{} sent a message that is not JSON-RPC: {error}", self.url);
                return Ok(Delivered::default());
            }
        };
        let answers = answered_id(&message);
        if initialize {
            if let JsonRpcMessage::Response(response) = &message {
                if let ServerResult::InitializeResult(result) = &response.result {
                    if let Ok(value) = result.protocol_version.as_str().parse() {
                        super::write(&self.version, value);
                    }
                }
            }
        }
        self.incoming.send(message).await.map_err(|_| ())?;
        Ok(Delivered { answers })
    }

    /// Hands rmcp an error answer to `id` saying the answer was over 64 MiB.
    pub(super) async fn deliver_oversized(&self, id: RequestId) {
        let error = ErrorData::internal_error(OVERSIZED, None);
        let _ = self
            .incoming
            .send(ServerJsonRpcMessage::error(error, Some(id)))
            .await;
    }

    /// Hands rmcp an error answer to `id` with `message` (an answer that will not come).
    pub(super) async fn deliver_error(&self, id: RequestId, message: String) {
        let error = ErrorData::internal_error(message, None);
        let _ = self
            .incoming
            .send(ServerJsonRpcMessage::error(error, Some(id)))
            .await;
    }

    /// Reads an SSE answer to its end, delivering each `message` event; `awaited` is the
    /// request it answers (if any) and `initialize` whether that is `initialize`.
    pub(super) async fn read_events(
        &self,
        response: Response,
        awaited: Option<&RequestId>,
        initialize: bool,
    ) -> Read {
        let mut read = Read::default();
        let mut parser = SseParser::new(self.max_message);
        let mut body = response.bytes_stream();
        while let Some(chunk) = body.next().await {
            let Ok(chunk) = chunk else {
                // The connection broke: the caller resumes or makes up the answer.
                break;
            };
            let events = match parser.push_raw(&chunk) {
                Ok(events) => events,
                Err(_) => {
                    read.oversized = true;
                    return read;
                }
            };
            read.retry = parser.retry().or(read.retry);
            for event in events {
                read.any = true;
                if event.id.is_some() {
                    read.last_id = event.id.clone();
                }
                // An empty data field is a priming event (SEP-1699), not a message.
                if event.event != "message" || event.data.is_empty() {
                    continue;
                }
                let Ok(delivered) = self.deliver(&event.data, initialize).await else {
                    return read;
                };
                if awaited.is_some() && delivered.answers.as_ref() == awaited {
                    read.answered = true;
                }
            }
        }
        read
    }

    /// Reads a JSON body of at most 64 MiB (`Ok(None)` when it is larger).
    pub(super) async fn read_body(&self, response: Response) -> Result<Option<Vec<u8>>, HttpError> {
        let expected = response.content_length().unwrap_or(0) as usize;
        if expected > self.max_message {
            return Ok(None);
        }
        let mut body = Vec::with_capacity(expected);
        let mut stream = response.bytes_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(StreamableHttpError::Client)?;
            if body.len() + chunk.len() > self.max_message {
                return Ok(None);
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Some(body))
    }
}

/// What delivering a message found.
#[derive(Debug, Default)]
pub(super) struct Delivered {
    /// The request id the message answers (a response or an error).
    pub answers: Option<RequestId>,
}

fn answered_id(message: &ServerJsonRpcMessage) -> Option<RequestId> {
    match message {
        JsonRpcMessage::Response(response) => Some(response.id.clone()),
        JsonRpcMessage::Error(error) => error.id.clone(),
        _ => None,
    }
}
