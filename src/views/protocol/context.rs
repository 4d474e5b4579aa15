//! `hostCapabilities` and `hostContext` (issue 17, "Host protocol"): what calyx offers a view
//! and what it tells the view about where it is shown.
//!
//! The look (theme, CSS variables) is calyx's, from the terminal's colours and `[mcp_apps]`;
//! what only the browser knows (locale, time zone, pointer, the page's sizes) comes from the
//! host page's `hello` control message.

use serde_json::{json, Map, Value};

use super::HostLook;

/// A width and height in CSS pixels, as the page measured them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ContainerSizes {
    /// The inline column's width.
    pub inline_width: f64,
    /// The most height the inline frame may take.
    pub inline_max_height: f64,
    /// The browser tab's viewport (fullscreen).
    pub viewport_width: f64,
    pub viewport_height: f64,
}

impl ContainerSizes {
    /// From the page's `{inline: {width, maxHeight}, viewport: {width, height}}`.
    pub fn from_json(value: &Value) -> Self {
        let number = |v: &Value, a: &str, b: &str| v[a][b].as_f64().unwrap_or(0.0).max(0.0);
        ContainerSizes {
            inline_width: number(value, "inline", "width"),
            inline_max_height: number(value, "inline", "maxHeight"),
            viewport_width: number(value, "viewport", "width"),
            viewport_height: number(value, "viewport", "height"),
        }
    }

    /// `hostContext.containerDimensions` in display mode `mode`.
    pub fn dimensions(&self, mode: &str) -> Value {
        match mode {
            "fullscreen" => json!({ "width": self.viewport_width, "height": self.viewport_height }),
            "pip" => json!({ "width": 400, "height": 300 }),
            _ => json!({ "width": self.inline_width, "maxHeight": self.inline_max_height }),
        }
    }
}

/// What the host page reports about the browser.
#[derive(Debug, Clone, PartialEq)]
pub struct PageInfo {
    pub locale: String,
    pub time_zone: String,
    pub touch: bool,
    pub hover: bool,
    pub sizes: ContainerSizes,
}

impl Default for PageInfo {
    fn default() -> Self {
        PageInfo {
            locale: "en-US".to_string(),
            time_zone: "UTC".to_string(),
            touch: false,
            hover: true,
            sizes: ContainerSizes::default(),
        }
    }
}

impl PageInfo {
    /// From the page's `hello` control message; missing or odd fields keep their defaults,
    /// and text fields are capped so a page cannot grow the context without bound.
    pub fn from_hello(hello: &Value) -> Self {
        let text = |key: &str, default: String| {
            hello[key]
                .as_str()
                .filter(|s| !s.is_empty() && s.len() <= 64)
                .map_or(default, str::to_string)
        };
        let defaults = PageInfo::default();
        PageInfo {
            locale: text("locale", defaults.locale),
            time_zone: text("timeZone", defaults.time_zone),
            touch: hello["deviceCapabilities"]["touch"]
                .as_bool()
                .unwrap_or(false),
            hover: hello["deviceCapabilities"]["hover"]
                .as_bool()
                .unwrap_or(true),
            sizes: ContainerSizes::from_json(&hello["sizes"]),
        }
    }
}

/// The display modes a calyx page can show.
pub const DISPLAY_MODES: [&str; 3] = ["inline", "fullscreen", "pip"];

/// `hostCapabilities`, with the domains the sandbox's CSP actually allows.
pub fn host_capabilities(csp_allowed: &Value) -> Value {
    json!({
        "openLinks": {},
        "downloadFile": {},
        "serverTools": { "listChanged": true },
        "serverResources": { "listChanged": true },
        "logging": {},
        "message": { "text": {}, "image": {}, "resourceLink": {} },
        "updateModelContext": { "text": {}, "image": {}, "structuredContent": {} },
        "sandbox": {
            "permissions": { "clipboardWrite": {} },
            "csp": csp_allowed,
        },
    })
}

/// The whole `hostContext`.
pub fn host_context(
    tool_id: Option<&Value>,
    tool: &Value,
    look: &HostLook,
    mode: &str,
    page: &PageInfo,
) -> Value {
    json!({
        "toolInfo": { "id": tool_id.cloned().unwrap_or(Value::Null), "tool": tool },
        "theme": look.theme,
        "styles": look.styles(),
        "displayMode": mode,
        "availableDisplayModes": DISPLAY_MODES,
        "containerDimensions": page.sizes.dimensions(mode),
        "locale": page.locale,
        "timeZone": page.time_zone,
        "deviceCapabilities": { "touch": page.touch, "hover": page.hover },
        "userAgent": concat!("calyx/", env!("CARGO_PKG_VERSION")),
        "platform": "web",
        "safeAreaInsets": { "top": 0, "right": 0, "bottom": 0, "left": 0 },
    })
}

/// The fields of `after` that differ from `before` (for `host-context-changed`), or `None`.
pub fn changed_fields(before: &Value, after: &Value) -> Option<Value> {
    let (Value::Object(before), Value::Object(after)) = (before, after) else {
        return None;
    };
    let changed: Map<String, Value> = after
        .iter()
        .filter(|(k, v)| before.get(*k) != Some(*v))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    (!changed.is_empty()).then_some(Value::Object(changed))
}
