//! The legacy HTTP+SSE transport (protocol 2024-11-05), which rmcp dropped in 0.11: GET the
//! URL with `Accept: text/event-stream`, wait for the `endpoint` event naming where to POST,
//! refuse an endpoint on another origin (a server must not send calyx's headers elsewhere),
//! POST each JSON-RPC message there (202), and read the answers as `message` events on the
//! stream. The configured headers go on the GET and on every POST. An event over 64 MiB fails
//! every call in flight with "the server sent a message over 64 MiB" and ends the stream. When
//! the stream ends the session ends: rmcp's service sees the transport close and the supervisor reconnects with a
//! new GET and a new `initialize`.

use std::borrow::Cow;
use std::future::Future;

use futures::StreamExt;
use reqwest::header::{HeaderMap, HeaderValue, ACCEPT, CONTENT_TYPE};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleClient;
use thiserror::Error;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use url::Url;

use super::http_client::{deepest, unreachable_reason};
use super::in_flight::{answered_id, fail_all, request_id, InFlight};
use super::raw_tap::{record, TaskRequired};
use super::sse::{SseEvent, SseParser};
use super::MAX_MESSAGE;

/// Messages read ahead of rmcp.
const INCOMING_BUFFER: usize = 64;

/// What can go wrong on a legacy connection.
#[derive(Debug, Error)]
pub enum LegacyError {
    #[error("cannot reach {host}: {reason}")]
    Unreachable { host: String, reason: String },
    #[error("GET {url} answered HTTP {status}")]
    Status { url: String, status: u16 },
    #[error(
        "GET {url} answered {content_type}, not an event stream: is this a legacy HTTP+SSE URL?"
    )]
    NotEventStream { url: String, content_type: String },
    #[error("the event stream ended before the server named its message endpoint")]
    NoEndpoint,
    #[error("the server named a message endpoint that is not a URL: {0}")]
    BadEndpoint(String),
    #[error("the server named a message endpoint on another origin ({endpoint}); calyx only posts to {origin}")]
    ForeignEndpoint { endpoint: String, origin: String },
    #[error("{0}")]
    Stream(String),
    #[error("posting a message failed: {0}")]
    Post(String),
    #[error("posting a message answered HTTP {0}")]
    PostStatus(u16),
}

/// A legacy HTTP+SSE session, as rmcp's client transport.
pub struct LegacySse {
    client: reqwest::Client,
    endpoint: Url,
    headers: HeaderMap,
    /// Requests posted and not yet answered, failed together if an event is over 64 MiB.
    in_flight: InFlight,
    incoming: mpsc::Receiver<RxJsonRpcMessage<RoleClient>>,
    reader: JoinHandle<()>,
}

impl LegacySse {
    /// Opens the event stream at `url` and waits for its `endpoint` event. Incoming messages
    /// pass the raw tap (`task_required`) before rmcp types them.
    pub async fn connect(
        client: reqwest::Client,
        url: &Url,
        headers: HeaderMap,
        task_required: TaskRequired,
    ) -> Result<LegacySse, LegacyError> {
        let (mut stream, mut parser) = open(&client, url, &headers).await?;
        let mut early = Vec::new();
        let endpoint = loop {
            let Some(chunk) = stream.next().await else {
                return Err(LegacyError::NoEndpoint);
            };
            let chunk = chunk.map_err(|e| LegacyError::Stream(deepest(&e)))?;
            let events = parser
                .push(&chunk)
                .map_err(|e| LegacyError::Stream(e.to_string()))?;
            let mut events = events.into_iter();
            if let Some(found) = events.by_ref().find(|e| e.event == "endpoint") {
                early.extend(events);
                break found.data;
            }
        };
        let endpoint = same_origin_endpoint(url, &endpoint)?;
        let (sender, incoming) = mpsc::channel(INCOMING_BUFFER);
        let in_flight = InFlight::default();
        let taps = Taps {
            task_required,
            in_flight: in_flight.clone(),
        };
        let reader = tokio::spawn(async move {
            for event in early {
                if !deliver(&sender, event, &taps).await {
                    return;
                }
            }
            while let Some(Ok(chunk)) = stream.next().await {
                let Ok(events) = parser.push(&chunk) else {
                    // The event is lost, and with it an answer someone waits for: fail every
                    // call in flight and end the session (the supervisor reconnects).
                    for line in fail_all(&taps.in_flight).split(|&b| b == b'\n') {
                        if let Ok(message) = serde_json::from_slice(line) {
                            let _ = sender.send(message).await;
                        }
                    }
                    return;
                };
                for event in events {
                    if !deliver(&sender, event, &taps).await {
                        return;
                    }
                }
            }
        });
        Ok(LegacySse {
            client,
            endpoint,
            headers,
            in_flight,
            incoming,
            reader,
        })
    }

    /// Where messages are posted.
    pub fn endpoint(&self) -> &Url {
        &self.endpoint
    }
}

type ByteStream = futures::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>;

/// The GET that opens the event stream.
async fn open(
    client: &reqwest::Client,
    url: &Url,
    headers: &HeaderMap,
) -> Result<(ByteStream, SseParser), LegacyError> {
    let response = client
        .get(url.clone())
        .headers(headers.clone())
        .header(ACCEPT, "text/event-stream")
        .send()
        .await
        .map_err(|e| LegacyError::Unreachable {
            host: url.host_str().unwrap_or_default().to_string(),
            reason: unreachable_reason(&e).unwrap_or_else(|| deepest(&e)),
        })?;
    let status = response.status();
    if !status.is_success() {
        return Err(LegacyError::Status {
            url: url.to_string(),
            status: status.as_u16(),
        });
    }
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("no content type")
        .to_string();
    if !content_type.starts_with("text/event-stream") {
        return Err(LegacyError::NotEventStream {
            url: url.to_string(),
            content_type,
        });
    }
    Ok((response.bytes_stream().boxed(), SseParser::new(MAX_MESSAGE)))
}

/// Whether `url` is a legacy HTTP+SSE server: one GET whose first event names an endpoint.
pub async fn offers_endpoint(client: &reqwest::Client, url: &Url, headers: &HeaderMap) -> bool {
    let Ok((mut stream, mut parser)) = open(client, url, headers).await else {
        return false;
    };
    while let Some(Ok(chunk)) = stream.next().await {
        match parser.push(&chunk) {
            Ok(events) if events.is_empty() => continue,
            Ok(events) => return events[0].event == "endpoint",
            Err(_) => return false,
        }
    }
    false
}

/// What the reader notes about incoming messages.
struct Taps {
    task_required: TaskRequired,
    in_flight: InFlight,
}

/// Hands a `message` event to rmcp; false once nobody listens.
async fn deliver(
    sender: &mpsc::Sender<RxJsonRpcMessage<RoleClient>>,
    event: SseEvent,
    taps: &Taps,
) -> bool {
    if event.event != "message" {
        return true;
    }
    record(event.data.as_bytes(), &taps.task_required);
    if let (Some(id), Ok(mut set)) = (answered_id(event.data.as_bytes()), taps.in_flight.lock()) {
        set.remove(&id);
    }
    match serde_json::from_str(&event.data) {
        Ok(message) => sender.send(message).await.is_ok(),
        Err(error) => {
            tracing::warn!("a legacy SSE server sent a message that is not JSON-RPC: {error}");
            true
        }
    }
}

/// The `endpoint` event's URL resolved against the stream's URL, if it is on the same origin
/// (scheme, host and port).
pub fn same_origin_endpoint(stream_url: &Url, endpoint: &str) -> Result<Url, LegacyError> {
    let resolved = stream_url
        .join(endpoint.trim())
        .map_err(|_| LegacyError::BadEndpoint(endpoint.to_string()))?;
    if resolved.origin() != stream_url.origin() {
        return Err(LegacyError::ForeignEndpoint {
            endpoint: resolved.to_string(),
            origin: stream_url.origin().ascii_serialization(),
        });
    }
    Ok(resolved)
}

impl Transport<RoleClient> for LegacySse {
    type Error = LegacyError;

    fn name() -> Cow<'static, str> {
        "legacy HTTP+SSE".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let request = serde_json::to_vec(&item).map(|body| {
            if let (Some(id), Ok(mut set)) = (request_id(&body), self.in_flight.lock()) {
                set.insert(id);
            }
            self.client
                .post(self.endpoint.clone())
                .headers(self.headers.clone())
                .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
                .body(body)
        });
        async move {
            let request = request.map_err(|e| LegacyError::Post(e.to_string()))?;
            let response = request
                .send()
                .await
                .map_err(|e| LegacyError::Post(deepest(&e)))?;
            // The spec says 202; some servers answer 200 with an empty body.
            if response.status().is_success() {
                Ok(())
            } else {
                Err(LegacyError::PostStatus(response.status().as_u16()))
            }
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.incoming.recv()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.reader.abort();
        self.incoming.close();
        std::future::ready(Ok(()))
    }
}

impl Drop for LegacySse {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).expect("url")
    }

    #[test]
    fn a_relative_endpoint_resolves_against_the_stream() {
        let base = url("http://127.0.0.1:3001/sse");
        assert_eq!(
            same_origin_endpoint(&base, "/message?sessionId=ab-12")
                .expect("same origin")
                .as_str(),
            "http://127.0.0.1:3001/message?sessionId=ab-12"
        );
        assert_eq!(
            same_origin_endpoint(&base, " messages/ \n")
                .expect("same origin")
                .as_str(),
            "http://127.0.0.1:3001/messages/"
        );
        assert_eq!(
            same_origin_endpoint(&base, "http://127.0.0.1:3001/m")
                .expect("same origin")
                .as_str(),
            "http://127.0.0.1:3001/m"
        );
    }

    #[test]
    fn an_endpoint_on_another_origin_is_refused() {
        let base = url("https://mcp.example.com/sse");
        for foreign in [
            "https://evil.example.net/message",
            "http://mcp.example.com/message",
            "https://mcp.example.com:8443/message",
            "//evil.example.net/message",
        ] {
            let refused = same_origin_endpoint(&base, foreign).expect_err(foreign);
            assert!(
                matches!(refused, LegacyError::ForeignEndpoint { .. }),
                "{foreign}: {refused}"
            );
            assert!(refused.to_string().contains("https://mcp.example.com"));
        }
        // The default port written out is the same origin.
        assert!(same_origin_endpoint(&base, "https://mcp.example.com:443/m").is_ok());
    }
}
