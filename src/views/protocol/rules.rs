//! What a view may ask for (the app-visibility rule on `tools/call`, the link policy of
//! `ui/open-link`) and the JSON-RPC messages the session builds, apart from the session's
//! state so each rule reads on its own.

use serde_json::{json, Value};

use super::{codes, JsonRpcError, MAX_LINK_BYTES};

/// The visibility rule: a view may call only tools of its server whose `_meta.ui.visibility`
/// includes `"app"` (absent visibility means `["model", "app"]`).
pub fn check_app_tool(
    params: &Value,
    app_tool: &dyn Fn(&str) -> Option<Value>,
) -> Result<(), JsonRpcError> {
    let Some(name) = params["name"].as_str() else {
        return Err(JsonRpcError::new(
            codes::INVALID_PARAMS,
            "tools/call needs a tool name",
        ));
    };
    let unavailable = || {
        JsonRpcError::new(
            codes::INVALID_PARAMS,
            format!("tool {} is not available to apps", truncate(name, 100)),
        )
    };
    let tool = app_tool(name).ok_or_else(unavailable)?;
    match tool.pointer("/_meta/ui/visibility") {
        None | Some(Value::Null) => Ok(()),
        Some(Value::Array(list)) if list.iter().any(|v| v == "app") => Ok(()),
        Some(_) => Err(unavailable()),
    }
}

/// `ui/open-link`'s policy: `http`, `https` and `mailto` URLs of at most [`MAX_LINK_BYTES`].
pub fn check_link(params: &Value) -> Result<String, JsonRpcError> {
    let policy = || {
        JsonRpcError::new(
            codes::SERVER_ERROR,
            "Policy violation: only http, https and mailto links",
        )
    };
    let url = params["url"].as_str().ok_or_else(policy)?;
    if url.len() > MAX_LINK_BYTES || url.chars().any(char::is_control) {
        return Err(policy());
    }
    // `http:` and `https:` need an authority (`http:evil` is not a web link); `mailto:` none.
    let allowed = match url.split_once(':') {
        Some((scheme, rest)) => match scheme.to_ascii_lowercase().as_str() {
            "http" | "https" => rest.starts_with("//") && rest.len() > 2,
            "mailto" => true,
            _ => false,
        },
        None => false,
    };
    if allowed {
        Ok(url.to_string())
    } else {
        Err(policy())
    }
}

/// A JSON-RPC notification.
pub fn notification(method: &str, params: Option<Value>) -> Value {
    let mut message = json!({ "jsonrpc": "2.0", "method": method });
    if let Some(params) = params {
        message["params"] = params;
    }
    message
}

/// A JSON-RPC response: the result, or the error.
pub fn response(id: Value, result: Result<Value, JsonRpcError>) -> Value {
    match result {
        Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
        Err(error) => json!({ "jsonrpc": "2.0", "id": id, "error": error.to_json() }),
    }
}

/// At most `max` bytes of server- or page-provided text in an error message.
pub fn truncate(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}
