//! Building responses without fallible builders, so no handler has an error path of its own.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{HeaderValue, CONNECTION, CONTENT_TYPE};
use hyper::{Response, StatusCode};
use serde_json::{json, Value};

/// Response bodies: complete JSON on the hook routes, a stream for MCP's SSE responses.
pub type ResponseBody = crate::mcp::McpBody;

/// A response with no body.
pub fn empty(status: StatusCode) -> Response<ResponseBody> {
    let mut response = Response::new(Full::new(Bytes::new()).boxed());
    *response.status_mut() = status;
    response
}

/// A JSON response.
pub fn json(status: StatusCode, value: &Value) -> Response<ResponseBody> {
    let mut response = Response::new(Full::new(Bytes::from(value.to_string())).boxed());
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// `{"error": message}` with this status: every failure the endpoint reports looks the same.
pub fn error(status: StatusCode, message: &str) -> Response<ResponseBody> {
    json(status, &json!({ "error": message }))
}

/// An error after which the connection must not be reused (its request was not fully read).
pub fn error_and_close(status: StatusCode, message: &str) -> Response<ResponseBody> {
    let mut response = error(status, message);
    response
        .headers_mut()
        .insert(CONNECTION, HeaderValue::from_static("close"));
    response
}
