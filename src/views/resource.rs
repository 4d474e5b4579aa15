//! What makes a `resources/read` result a view, and which tools have one (issue 17, "When a view
//! is created").
//!
//! A view's HTML comes from its server, so it is checked before anything is served: exactly one
//! content item, the MCP Apps MIME type, at most 16 MiB. A failure is a reason the card shows as
//! `Rejected: <reason>`, never a panic or a half-served page.

use base64::Engine;
use serde_json::Value;

/// The MCP Apps resource MIME type (`RESOURCE_MIME_TYPE`), compared exactly.
pub const VIEW_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The largest view document accepted, in bytes of HTML (after base64 decoding).
pub const MAX_HTML_BYTES: usize = 16 * 1024 * 1024;

/// Server-provided text quoted in a reason is cut to this many characters.
const QUOTE_CHARS: usize = 80;

/// A valid view document.
#[derive(Debug, Clone, PartialEq)]
pub struct ViewDocument {
    /// The HTML the sandbox writes into its inner frame.
    pub html: String,
    /// The content item's own `_meta.ui`, if it has one (see [`merge_ui_meta`]).
    pub ui_meta: Option<Value>,
}

/// Why a `resources/read` result is not a view. The `Display` text follows `Rejected: ` on the
/// card; quoted server text is escaped (`{:?}`), so it carries no control characters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Rejection {
    /// `contents` is missing, not an array, or empty.
    #[error("the resource has no contents")]
    NoContents,
    /// More than one content item: which one is the view is not defined.
    #[error("the resource has {0} contents, a view needs exactly one")]
    SeveralContents(usize),
    /// The item's `mimeType` is not [`VIEW_MIME_TYPE`] (`None`: it has none).
    #[error("wrong MIME type {}, expected {VIEW_MIME_TYPE:?}", quote(.0.as_deref()))]
    WrongMimeType(Option<String>),
    /// The item has neither `text` nor `blob`.
    #[error("the resource has neither text nor blob")]
    NoDocument,
    /// The document is larger than [`MAX_HTML_BYTES`] (the size, or a lower bound of it).
    #[error("too large: {0} bytes, at most {MAX_HTML_BYTES}")]
    TooLarge(usize),
    /// `blob` is not standard base64.
    #[error("bad base64 in blob")]
    BadBase64,
    /// The decoded `blob` is not UTF-8 text.
    #[error("the blob is not UTF-8 text")]
    NotUtf8,
    /// `resources/read` itself failed (the server's error or the connection's), as said.
    #[error("read error: {}", quote(Some(.0)))]
    ReadFailed(String),
}

/// `"text"` escaped and shortened for a reason line, or `none`.
fn quote(text: Option<&str>) -> String {
    match text {
        None => "none".to_string(),
        Some(text) => format!("{:?}", text.chars().take(QUOTE_CHARS).collect::<String>()),
    }
}

/// Checks a `resources/read` result (the JSON-RPC `result` object) for a view.
pub fn view_document(result: &Value) -> Result<ViewDocument, Rejection> {
    let contents = result
        .get("contents")
        .and_then(Value::as_array)
        .ok_or(Rejection::NoContents)?;
    let item = match contents.as_slice() {
        [] => return Err(Rejection::NoContents),
        [item] => item,
        several => return Err(Rejection::SeveralContents(several.len())),
    };
    let mime = item.get("mimeType").and_then(Value::as_str);
    if mime != Some(VIEW_MIME_TYPE) {
        let shown = match item.get("mimeType") {
            None | Some(Value::Null) => None,
            Some(Value::String(text)) => Some(text.clone()),
            Some(other) => Some(other.to_string()),
        };
        return Err(Rejection::WrongMimeType(shown));
    }
    let html = if let Some(text) = item.get("text").and_then(Value::as_str) {
        if text.len() > MAX_HTML_BYTES {
            return Err(Rejection::TooLarge(text.len()));
        }
        text.to_string()
    } else if let Some(blob) = item.get("blob").and_then(Value::as_str) {
        decode_blob(blob)?
    } else {
        return Err(Rejection::NoDocument);
    };
    let ui_meta = item.get("_meta").and_then(|meta| meta.get("ui")).cloned();
    Ok(ViewDocument { html, ui_meta })
}

/// Decodes a base64 `blob`, refusing one whose decoded size would pass the limit before
/// allocating for it.
fn decode_blob(blob: &str) -> Result<String, Rejection> {
    let lower_bound = blob.len() / 4 * 3;
    if lower_bound > MAX_HTML_BYTES + 2 {
        return Err(Rejection::TooLarge(lower_bound));
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(blob)
        .map_err(|_| Rejection::BadBase64)?;
    if bytes.len() > MAX_HTML_BYTES {
        return Err(Rejection::TooLarge(bytes.len()));
    }
    String::from_utf8(bytes).map_err(|_| Rejection::NotUtf8)
}

/// The `_meta.ui` a view uses: the content item's when it has one (an object), else the
/// `resources/list` entry's. The item's replaces the entry's as a whole, as the spec's
/// reference host does (`content._meta?.ui ?? listing._meta?.ui`), so a server never gets a CSP
/// that mixes two declarations.
pub fn merge_ui_meta(list_entry_ui: Option<&Value>, item_ui: Option<&Value>) -> Option<Value> {
    match item_ui {
        Some(ui @ Value::Object(_)) => Some(ui.clone()),
        _ => list_entry_ui.filter(|ui| ui.is_object()).cloned(),
    }
}

/// The `ui://` resource URI of a tool (a `tools/list` entry), if calling it creates a view.
///
/// `_meta.ui.resourceUri` decides when present; only without it does the deprecated
/// `_meta["ui/resourceUri"]` count (the spec's `uiMeta?.resourceUri ?? meta["ui/resourceUri"]`).
/// Either must be a string starting with `ui://` with something after it; anything else means
/// the tool is a plain tool.
pub fn tool_resource_uri(tool: &Value) -> Option<&str> {
    let meta = tool.get("_meta")?;
    let current = meta.get("ui").and_then(|ui| ui.get("resourceUri"));
    let uri = match current {
        Some(value) if !value.is_null() => value,
        _ => meta.get("ui/resourceUri")?,
    };
    uri.as_str().filter(|uri| {
        uri.strip_prefix("ui://")
            .is_some_and(|rest| !rest.is_empty())
    })
}

#[cfg(test)]
#[path = "resource_tests.rs"]
mod tests;
