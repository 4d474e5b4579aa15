//! Content negotiation for `/mcp` POSTs, around rmcp.
//!
//! The protocol asks clients to accept both `application/json` and `text/event-stream`, and
//! rmcp refuses (406) a POST that does not; a session's answers then always come as SSE. Simple
//! clients exist that accept one of the two only. calyx serves them too: the POST goes to rmcp
//! as if it accepted both, and for a client that accepts only JSON, the SSE answer (which rmcp
//! ends after the JSON-RPC response) is turned into that one JSON message. What came before it
//! on the stream (progress notifications) is dropped: that client cannot take it anyway.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{HeaderValue, ACCEPT, CONTENT_LENGTH, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode};

use super::McpBody;

const JSON: &str = "application/json";
const SSE: &str = "text/event-stream";

/// What the client's `Accept` lets calyx answer a POST with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Accepts {
    /// Both (or a wildcard, or no header): rmcp's choice, passed through.
    Either,
    /// Only `application/json`.
    JsonOnly,
    /// Only `text/event-stream`.
    SseOnly,
}

/// Reads the `Accept` header of a request (q=0 entries do not count).
pub(crate) fn accepts<B>(request: &Request<B>) -> Accepts {
    if request.method() != Method::POST {
        return Accepts::Either;
    }
    let Some(value) = request.headers().get(ACCEPT).and_then(|v| v.to_str().ok()) else {
        return Accepts::Either;
    };
    let mut json = false;
    let mut sse = false;
    for entry in value.split(',') {
        let mut parts = entry.split(';').map(str::trim);
        let media = parts.next().unwrap_or("").to_ascii_lowercase();
        let refused = parts.any(|p| {
            p.strip_prefix("q=")
                .and_then(|q| q.parse::<f32>().ok())
                .is_some_and(|q| q <= 0.0)
        });
        if refused {
            continue;
        }
        match media.as_str() {
            "*/*" => return Accepts::Either,
            JSON | "application/*" => json = true,
            SSE | "text/*" => sse = true,
            _ => {}
        }
    }
    match (json, sse) {
        (true, false) => Accepts::JsonOnly,
        (false, true) => Accepts::SseOnly,
        // Neither: rmcp's 406 says what to send.
        _ => Accepts::Either,
    }
}

/// Makes a one-sided request acceptable to rmcp.
pub(crate) fn widen<B>(request: &mut Request<B>, accepts: Accepts) {
    if accepts != Accepts::Either {
        request.headers_mut().insert(
            ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
    }
}

/// Turns rmcp's answer into one a JSON-only client can read: an SSE body becomes its last
/// JSON-RPC response (or error) message, with the same status and headers (the session id).
pub(crate) async fn narrow(response: Response<McpBody>, accepts: Accepts) -> Response<McpBody> {
    let is_sse = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with(SSE));
    if accepts != Accepts::JsonOnly || !is_sse {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(collected) = body.collect().await;
    let text = String::from_utf8_lossy(&collected.to_bytes()).into_owned();
    let Some(message) = last_response(&text) else {
        // A stream without a response (a notification's 202 comes without a body anyway).
        parts.status = StatusCode::ACCEPTED;
        parts.headers.remove(CONTENT_TYPE);
        return Response::from_parts(parts, Full::new(Bytes::new()).boxed());
    };
    parts
        .headers
        .insert(CONTENT_TYPE, HeaderValue::from_static(JSON));
    parts.headers.remove(CONTENT_LENGTH);
    parts.headers.remove("cache-control");
    parts.headers.remove("x-accel-buffering");
    Response::from_parts(parts, Full::new(Bytes::from(message)).boxed())
}

/// The last JSON-RPC response or error among the `data:` lines of an SSE body.
fn last_response(sse: &str) -> Option<String> {
    sse.lines()
        .rev()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .filter(|data| {
            serde_json::from_str::<serde_json::Value>(data).is_ok_and(|v| {
                v.get("id").is_some() && (v.get("result").is_some() || v.get("error").is_some())
            })
        })
        .map(str::to_owned)
        .next()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn post(accept: Option<&str>) -> Request<()> {
        let mut b = Request::builder().method(Method::POST).uri("/mcp");
        if let Some(a) = accept {
            b = b.header(ACCEPT, a);
        }
        b.body(()).expect("request")
    }

    #[test]
    fn reads_what_the_client_accepts() {
        assert_eq!(accepts(&post(None)), Accepts::Either);
        assert_eq!(
            accepts(&post(Some("application/json, text/event-stream"))),
            Accepts::Either
        );
        assert_eq!(accepts(&post(Some("*/*"))), Accepts::Either);
        assert_eq!(accepts(&post(Some("application/json"))), Accepts::JsonOnly);
        assert_eq!(
            accepts(&post(Some("application/json, text/event-stream;q=0"))),
            Accepts::JsonOnly
        );
        assert_eq!(accepts(&post(Some("Text/Event-Stream"))), Accepts::SseOnly);
        assert_eq!(accepts(&post(Some("image/png"))), Accepts::Either);
        let get = Request::builder()
            .method(Method::GET)
            .header(ACCEPT, "text/event-stream")
            .body(())
            .expect("request");
        assert_eq!(accepts(&get), Accepts::Either);
    }

    #[test]
    fn picks_the_response_out_of_an_sse_body() {
        let sse =
            "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n\
                   data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"ok\":true}}\n\n";
        assert_eq!(
            last_response(sse).as_deref(),
            Some("{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"ok\":true}}")
        );
        assert_eq!(last_response("data:\n\n: ping\n\n"), None);
    }
}
