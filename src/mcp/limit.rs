//! Telling an `initialize` apart before rmcp sees it, and the answer when the session cap is
//! reached: 503 with a JSON-RPC error body, so a client's MCP library can show why.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{HeaderValue, CONTENT_TYPE, RETRY_AFTER};
use hyper::{Method, Response, StatusCode};

use super::sessions::SessionsError;
use super::McpBody;

/// The JSON-RPC id of `body` when the request would open a session: a POST without
/// `Mcp-Session-Id` whose JSON-RPC method is `initialize` (a batch never is one).
pub(crate) fn initialize_id(
    parts: &hyper::http::request::Parts,
    body: &Bytes,
) -> Option<serde_json::Value> {
    if parts.method != Method::POST || parts.headers.contains_key("mcp-session-id") {
        return None;
    }
    let message: serde_json::Value = serde_json::from_slice(body).ok()?;
    (message.get("method")?.as_str()? == "initialize").then(|| {
        message
            .get("id")
            .cloned()
            .unwrap_or(serde_json::Value::Null)
    })
}

/// 503 for an `initialize` that found every session busy.
pub(crate) fn too_many_sessions(id: serde_json::Value, error: &SessionsError) -> Response<McpBody> {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {
            "code": -32000,
            "message": format!(
                "{error}: close a session (DELETE /mcp) or retry later"
            ),
        },
    });
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())).boxed());
    *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
        .headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from_static("5"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(method: Method, session: Option<&str>) -> hyper::http::request::Parts {
        let mut b = hyper::Request::builder().method(method).uri("/mcp");
        if let Some(s) = session {
            b = b.header("Mcp-Session-Id", s);
        }
        b.body(()).expect("request").into_parts().0
    }

    #[test]
    fn only_a_sessionless_initialize_post_counts() {
        let init =
            Bytes::from_static(br#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{}}"#);
        let list = Bytes::from_static(br#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#);
        assert_eq!(
            initialize_id(&parts(Method::POST, None), &init),
            Some(serde_json::json!(7))
        );
        assert_eq!(initialize_id(&parts(Method::POST, Some("s")), &init), None);
        assert_eq!(initialize_id(&parts(Method::GET, None), &init), None);
        assert_eq!(initialize_id(&parts(Method::POST, None), &list), None);
        assert_eq!(
            initialize_id(&parts(Method::POST, None), &Bytes::from_static(b"[1]")),
            None
        );
        assert_eq!(
            initialize_id(&parts(Method::POST, None), &Bytes::from_static(b"not json")),
            None
        );
    }
}
