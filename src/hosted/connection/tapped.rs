//! rmcp's reqwest client for Streamable HTTP with the raw `tools/list` tap: every SSE event a
//! server sends passes [`record`] as text before rmcp types it (rmcp's `Tool` drops the
//! `execution` field that marks task-required tools). A `tools/list` answered with a plain
//! JSON body is typed inside rmcp before anyone sees it, so for that one case the request is
//! repeated (it is idempotent) and the repeat's raw body is read.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use futures::stream::BoxStream;
use futures::StreamExt;
use reqwest::header::{HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;

use super::oversized_event;
use super::raw_tap::{record, TaskRequired};
use super::sse::SseParser;
use super::MAX_MESSAGE;

/// reqwest with the tap.
#[derive(Clone)]
pub struct TappedHttp {
    pub client: reqwest::Client,
    pub task_required: TaskRequired,
}

type Events = BoxStream<'static, Result<Sse, SseError>>;
type HttpResult<T> = Result<T, StreamableHttpError<reqwest::Error>>;

fn tap(events: Events, task_required: TaskRequired) -> Events {
    events
        .map(move |event| {
            if let Ok(Sse {
                data: Some(data), ..
            }) = &event
            {
                record(data.as_bytes(), &task_required);
            }
            event
        })
        .boxed()
}

fn is_tools_list(message: &ClientJsonRpcMessage) -> bool {
    // Matched on the typed message: serializing every outgoing message to look at its method
    // cost a full copy of each call's arguments.
    matches!(
        message,
        rmcp::model::JsonRpcMessage::Request(request)
            if matches!(request.request, rmcp::model::ClientRequest::ListToolsRequest(_))
    )
}

impl TappedHttp {
    /// Repeats a `tools/list` POST and records what its raw answer declares. Failures are
    /// ignored: the typed answer rmcp already has stands, only the exclusion would be missed.
    async fn record_raw_tools_list(
        &self,
        uri: &str,
        message: &ClientJsonRpcMessage,
        session_id: Option<&str>,
        auth_header: Option<&str>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) {
        let mut request = self
            .client
            .post(uri)
            .header(ACCEPT, "application/json, text/event-stream")
            .json(message);
        for (name, value) in custom_headers {
            request = request.header(name, value);
        }
        if let Some(token) = auth_header {
            request = request.bearer_auth(token);
        }
        if let Some(session) = session_id {
            request = request.header("Mcp-Session-Id", session);
        }
        let Ok(response) = request.send().await else {
            return;
        };
        let is_sse = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let mut body = response.bytes_stream();
        let mut parser = SseParser::new(MAX_MESSAGE);
        let mut json = Vec::new();
        while let Some(Ok(chunk)) = body.next().await {
            if is_sse {
                let Ok(events) = parser.push(&chunk) else {
                    return;
                };
                for event in events {
                    record(event.data.as_bytes(), &self.task_required);
                }
            } else if json.len() + chunk.len() > MAX_MESSAGE {
                return;
            } else {
                json.extend_from_slice(&chunk);
            }
        }
        if !is_sse {
            record(&json, &self.task_required);
        }
    }
}

impl StreamableHttpClient for TappedHttp {
    type Error = reqwest::Error;

    fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> impl Future<Output = HttpResult<StreamableHttpPostResponse>> + Send + '_ {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
    }

    fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> impl Future<Output = HttpResult<StreamableHttpPostResponse>> + Send + '_ {
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_sse_event_size = max_sse_event_size;
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> HttpResult<StreamableHttpPostResponse> {
        let oversized_answers = oversized_event::request_id(&message);
        let again = is_tools_list(&message).then(|| {
            (
                message.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
            )
        });
        let response = self
            .client
            .post_message_with_response_limits(
                uri.clone(),
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await?;
        Ok(match response {
            StreamableHttpPostResponse::Sse(events, session) => {
                let events = tap(events, self.task_required.clone());
                let events = match oversized_answers {
                    Some(id) => oversized_event::answer_oversized(events, id),
                    None => events,
                };
                StreamableHttpPostResponse::Sse(events, session)
            }
            StreamableHttpPostResponse::Json(typed, session) => {
                if let Some((message, session_id, auth, headers)) = again {
                    self.record_raw_tools_list(
                        &uri,
                        &message,
                        session_id.as_deref(),
                        auth.as_deref(),
                        headers,
                    )
                    .await;
                }
                StreamableHttpPostResponse::Json(typed, session)
            }
            other => other,
        })
    }

    fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> impl Future<Output = HttpResult<()>> + Send + '_ {
        self.client
            .delete_session(uri, session_id, auth_header, custom_headers)
    }

    fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> impl Future<Output = HttpResult<Events>> + Send + '_ {
        self.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            MAX_MESSAGE,
        )
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> HttpResult<Events> {
        let events = self
            .client
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await?;
        Ok(tap(events, self.task_required.clone()))
    }
}
