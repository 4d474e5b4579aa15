//! One POST of one message, and its answer read in the same task: 202 for a notification or
//! response, a JSON body, or an SSE stream carrying the answer with the server's requests and
//! notifications interleaved. A stream that breaks before the answer is resumed with a GET
//! carrying `Last-Event-ID` when the server numbered its events (what rmcp did); otherwise
//! the call gets an error answer instead of waiting for ever.

use bytes::Bytes;
use reqwest::header::{HeaderValue, ACCEPT, CONTENT_TYPE, RETRY_AFTER};
use reqwest::{Method, Response, StatusCode};
use rmcp::model::RequestId;
use rmcp::transport::streamable_http_client::{HttpStatusError, StreamableHttpError};

use super::{read, write, HttpError, Outgoing, Shared, SESSION_ID};

/// What a call gets when the server forgot the session.
pub(super) const EXPIRED: &str =
    "the server no longer knows this session (HTTP 404): calyx reconnects, try again";

/// How many times a broken answer stream is resumed.
const RESUMES: usize = 3;

/// The longest a stream's `retry` field makes a resume wait: a server cannot park a call for
/// longer than this between attempts.
const LONGEST_RETRY: std::time::Duration = std::time::Duration::from_secs(30);

/// How much of an error body a failure quotes.
const ERROR_PREVIEW: usize = 512;

/// What a content type says the body is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Body {
    Json,
    Events,
    Other,
}

fn body_kind(response: &Response) -> Body {
    let Some(value) = response.headers().get(CONTENT_TYPE) else {
        return Body::Other;
    };
    let essence = value
        .as_bytes()
        .split(|&b| b == b';')
        .next()
        .unwrap_or_default()
        .trim_ascii()
        .to_ascii_lowercase();
    match essence.as_slice() {
        b"application/json" => Body::Json,
        b"text/event-stream" => Body::Events,
        _ => Body::Other,
    }
}

/// POSTs `body` (the serialized message `outgoing` describes) and delivers its answer.
pub(super) async fn post(
    shared: &Shared,
    body: Bytes,
    outgoing: Outgoing,
) -> Result<(), HttpError> {
    let session_attached = read(&shared.session).is_some();
    let response = shared
        .send(|bearer| {
            shared
                .request(Method::POST, bearer)
                .header(ACCEPT, "application/json, text/event-stream")
                .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
                .body(body.clone())
        })
        .await?;
    let status = response.status();
    if status == StatusCode::NOT_FOUND && session_attached {
        // The call gets the sentence before the session ends (rmcp would otherwise fail it
        // with a bare "Transport closed"); the supervisor reconnects. A request's send then
        // reports success: an error here would race the delivered sentence with rmcp's own
        // "Transport send error" for the same call, and either could reach the caller first.
        let request = outgoing.request.clone();
        if let Some(id) = request.clone() {
            shared.deliver_error(id, EXPIRED.into()).await;
        }
        shared.end(EXPIRED);
        return match request {
            Some(_) => Ok(()),
            None => Err(StreamableHttpError::SessionExpired),
        };
    }
    if outgoing.initialize && status.is_success() {
        if let Some(session) = response.headers().get(SESSION_ID) {
            write(&shared.session, session.clone());
        }
    }
    if status == StatusCode::ACCEPTED || status == StatusCode::NO_CONTENT {
        return Ok(());
    }
    let kind = body_kind(&response);
    if !status.is_success() {
        return failed(shared, response, status, kind).await;
    }
    let Some(awaited) = outgoing.request.as_ref() else {
        // A notification or an answer: nothing in the body is awaited, but a server may still
        // send messages on a stream.
        if kind == Body::Events {
            shared.read_events(response, None, false).await;
        }
        return Ok(());
    };
    match kind {
        Body::Json => {
            let Some(bytes) = shared.read_body(response).await? else {
                shared.deliver_oversized(awaited.clone()).await;
                return Ok(());
            };
            let _ = shared.deliver(&bytes, outgoing.initialize).await;
            Ok(())
        }
        Body::Events => {
            let read = shared
                .read_events(response, Some(awaited), outgoing.initialize)
                .await;
            finish_stream(shared, read, awaited, outgoing.initialize).await;
            Ok(())
        }
        Body::Other => {
            let content_type = response
                .headers()
                .get(CONTENT_TYPE)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
            Err(StreamableHttpError::UnexpectedContentType(content_type))
        }
    }
}

/// After a request's answer stream ended: an oversized event or a lost answer becomes an
/// error answer, after resuming a numbered stream where it broke.
async fn finish_stream(
    shared: &Shared,
    mut read: super::answer::Read,
    awaited: &RequestId,
    initialize: bool,
) {
    let mut resumes = 0;
    loop {
        if read.answered {
            return;
        }
        if read.oversized {
            shared.deliver_oversized(awaited.clone()).await;
            return;
        }
        let Some(last_id) = read.last_id.clone().filter(|_| resumes < RESUMES) else {
            break;
        };
        resumes += 1;
        if let Some(pause) = read.retry {
            tokio::select! {
                _ = tokio::time::sleep(pause.min(LONGEST_RETRY)) => {}
                _ = shared.ended.cancelled() => return,
            }
        }
        let Ok(response) = shared
            .send(|bearer| {
                shared
                    .request(Method::GET, bearer)
                    .header(ACCEPT, "text/event-stream")
                    .header("last-event-id", last_id.as_str())
            })
            .await
        else {
            break;
        };
        if !response.status().is_success() || body_kind(&response) != Body::Events {
            break;
        }
        let resumed = shared
            .read_events(response, Some(awaited), initialize)
            .await;
        read = super::answer::Read {
            last_id: resumed.last_id.or(read.last_id),
            retry: resumed.retry.or(read.retry),
            ..resumed
        };
    }
    if !shared.ended.is_cancelled() {
        shared
            .deliver_error(
                awaited.clone(),
                "the server ended the answer stream without answering".into(),
            )
            .await;
    }
}

/// A POST the server refused: a JSON-RPC error in a JSON body is delivered as the answer when
/// it answers something (rmcp did the same); otherwise the status (and the start of the body)
/// is the error.
async fn failed(
    shared: &Shared,
    response: Response,
    status: StatusCode,
    kind: Body,
) -> Result<(), HttpError> {
    let retry_after = response
        .headers()
        .get(RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let auth = status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN;
    if kind == Body::Json && !auth && status != StatusCode::TOO_MANY_REQUESTS {
        if let Ok(Some(bytes)) = shared.read_body(response).await {
            let error = serde_json::from_slice::<rmcp::model::ServerJsonRpcMessage>(&bytes);
            if let Ok(rmcp::model::JsonRpcMessage::Error(error)) = error {
                if error.id.is_some() {
                    let message = rmcp::model::JsonRpcMessage::Error(error);
                    let _ = shared.incoming.send(message).await;
                    return Ok(());
                }
            }
            return Err(status_error(status, retry_after, &bytes));
        }
        return Err(status_error(status, retry_after, b""));
    }
    let preview = preview(response).await;
    Err(status_error(status, retry_after, &preview))
}

fn status_error(status: StatusCode, retry_after: Option<String>, body: &[u8]) -> HttpError {
    if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
        return StreamableHttpError::HttpStatus(HttpStatusError::new(status.as_u16(), retry_after));
    }
    let body = String::from_utf8_lossy(&body[..body.len().min(ERROR_PREVIEW)]);
    StreamableHttpError::UnexpectedServerResponse(format!("HTTP {status}: {}", body.trim()).into())
}

/// The first bytes of an error body (never the whole of a body that may be large).
async fn preview(response: Response) -> Vec<u8> {
    use futures::StreamExt;
    let mut out = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(Ok(chunk)) = stream.next().await {
        out.extend_from_slice(&chunk[..chunk.len().min(ERROR_PREVIEW - out.len())]);
        if out.len() >= ERROR_PREVIEW {
            break;
        }
    }
    out
}
