//! A view's `ui/message` as the text calyx sends (issue 17, "Send Message"): text blocks
//! joined by blank lines, each image replaced by the path it was saved to, a resource link by
//! its URI; audio is refused. Pure but for the `save` step the caller passes, so every rule is
//! tested without a file system.

use base64::Engine;
use serde_json::Value;

use crate::views::protocol::{codes, JsonRpcError};

/// The longest message sent into a pane (or copied), as UTF-8 bytes.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024;

/// One content block, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// Text as it goes into the message.
    Text(String),
    /// An image to save; its path goes into the message.
    Image { data: Vec<u8>, ext: &'static str },
}

fn refused(message: impl Into<String>) -> JsonRpcError {
    JsonRpcError::new(codes::SERVER_ERROR, message)
}

fn invalid(message: impl Into<String>) -> JsonRpcError {
    JsonRpcError::new(codes::INVALID_PARAMS, message)
}

/// The file extension for an image's MIME type (what the agent's tools recognise it by).
pub fn image_ext(mime: &str) -> &'static str {
    match mime.to_ascii_lowercase().as_str() {
        "image/png" => "png",
        "image/jpeg" | "image/jpg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/svg+xml" => "svg",
        "image/bmp" => "bmp",
        _ => "img",
    }
}

/// The blocks of `params` (`{role: "user", content: [...]}`; a single block is accepted as
/// well), checked: only the user role, no audio, images' data valid base64.
pub fn parts(params: &Value) -> Result<Vec<Part>, JsonRpcError> {
    match params.get("role").and_then(Value::as_str) {
        Some("user") => {}
        _ => return Err(invalid("ui/message: role must be \"user\"")),
    }
    let blocks: Vec<&Value> = match params.get("content") {
        Some(Value::Array(items)) => items.iter().collect(),
        Some(block @ Value::Object(_)) => vec![block],
        _ => {
            return Err(invalid(
                "ui/message: content must be a list of content blocks",
            ))
        }
    };
    blocks.into_iter().map(part).collect()
}

fn part(block: &Value) -> Result<Part, JsonRpcError> {
    let field = |k: &str| block.get(k).and_then(Value::as_str);
    match field("type") {
        Some("text") => field("text")
            .map(|t| Part::Text(t.to_string()))
            .ok_or_else(|| invalid("ui/message: a text block without text")),
        Some("image") => {
            let data = field("data").ok_or_else(|| invalid("ui/message: an image without data"))?;
            let data = base64::engine::general_purpose::STANDARD
                .decode(data.trim())
                .map_err(|_| invalid("ui/message: an image whose data is not base64"))?;
            Ok(Part::Image {
                data,
                ext: image_ext(field("mimeType").unwrap_or("")),
            })
        }
        Some("audio") => Err(refused("audio cannot be sent to the pane")),
        Some("resource_link") => field("uri")
            .map(|u| Part::Text(u.to_string()))
            .ok_or_else(|| invalid("ui/message: a resource link without a uri")),
        // An embedded resource: its text when it has one, else its URI.
        Some("resource") => {
            let resource = block.get("resource");
            let text = resource.and_then(|r| r.get("text")).and_then(Value::as_str);
            let uri = resource.and_then(|r| r.get("uri")).and_then(Value::as_str);
            text.or(uri)
                .map(|t| Part::Text(t.to_string()))
                .ok_or_else(|| invalid("ui/message: a resource without text or uri"))
        }
        _ => Err(invalid("ui/message: unknown content block type")),
    }
}

/// The message `params` asks to send: its blocks joined by blank lines, each image replaced by
/// what `save` returns for it (its path). At most [`MAX_MESSAGE_BYTES`], else `-32000`; an
/// empty message is refused too (there is nothing to send).
pub fn assemble(
    params: &Value,
    mut save: impl FnMut(&[u8], &'static str) -> Result<String, JsonRpcError>,
) -> Result<String, JsonRpcError> {
    let parts = parts(params)?;
    let mut texts = Vec::with_capacity(parts.len());
    for part in parts {
        texts.push(match part {
            Part::Text(t) => t,
            Part::Image { data, ext } => save(&data, ext)?,
        });
    }
    let text = texts.join("\n\n");
    if text.len() > MAX_MESSAGE_BYTES {
        return Err(refused(format!(
            "the message is longer than {} KiB",
            MAX_MESSAGE_BYTES / 1024
        )));
    }
    if text.trim().is_empty() {
        return Err(refused("the message is empty"));
    }
    Ok(text)
}
