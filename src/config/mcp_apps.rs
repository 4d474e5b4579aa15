//! `[mcp_apps]`: MCP App views (issue 17): whether tool calls create views, when a browser
//! opens for them, the view server's port and the look the pages get from calyx.

/// When a view's page is opened in a browser without the user asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenBrowser {
    /// Never: the card waits for `o` (the default, so an agent cannot pop windows up).
    Never,
    /// When a view is created, in the browser of each local client (not one attached over SSH).
    Local,
}

/// The pages' colour scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Theme {
    /// From the terminal's background (dark when its luminance is below 0.5).
    Auto,
    Light,
    Dark,
}

impl Theme {
    /// The word the config file uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Theme::Auto => "auto",
            Theme::Light => "light",
            Theme::Dark => "dark",
        }
    }
}

/// The default accent: the blue of the xterm-compatible 16-colour palette calyx draws with
/// (`Color::Blue`, palette entry 4 as most terminals render it).
pub const DEFAULT_ACCENT: &str = "#2472c8";

/// The default view server port (the host page; the sandbox takes the next one).
pub const DEFAULT_VIEW_PORT: u16 = 41880;

/// The default page font size in CSS pixels.
pub const DEFAULT_FONT_SIZE: u16 = 14;

/// The `[mcp_apps]` settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpApps {
    /// Tools with a `ui://` resource create views (false: they are plain tools).
    pub views: bool,
    pub open_browser: OpenBrowser,
    /// The host page's port; the sandbox uses `view_port + 1`.
    pub view_port: u16,
    pub theme: Theme,
    /// `--color-ring-primary` on the pages: a CSS colour `#rgb` or `#rrggbb`.
    pub accent: String,
    /// `--font-text-md-size` on the pages, in pixels.
    pub font_size: u16,
}

impl Default for McpApps {
    fn default() -> Self {
        Self {
            views: true,
            open_browser: OpenBrowser::Never,
            view_port: DEFAULT_VIEW_PORT,
            theme: Theme::Auto,
            accent: DEFAULT_ACCENT.to_string(),
            font_size: DEFAULT_FONT_SIZE,
        }
    }
}

/// The keys `[mcp_apps]` takes.
pub const KEYS: &[&str] = &[
    "views",
    "open_browser",
    "view_port",
    "theme",
    "accent",
    "font_size",
];

/// Whether `text` is an accent colour calyx accepts: `#` and 3 or 6 hex digits. Only these,
/// because the value goes into the pages' CSS, where anything else could end the declaration.
pub fn valid_accent(text: &str) -> bool {
    text.strip_prefix('#')
        .is_some_and(|hex| matches!(hex.len(), 3 | 6) && hex.chars().all(|c| c.is_ascii_hexdigit()))
}

/// The smallest and largest font sizes accepted.
pub const FONT_SIZES: std::ops::RangeInclusive<u16> = 8..=48;
