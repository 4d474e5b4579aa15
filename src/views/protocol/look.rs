//! The look calyx gives views (issue 17, "Theme from calyx"): from the terminal's default
//! colours (a client asks with OSC 10 / OSC 11 when it attaches) and `[mcp_apps]` settings, so
//! a view looks like the terminal the user is in.

use serde_json::{json, Map, Value};

/// The look calyx gives views: `hostContext.theme` and `styles`. The default is a dark
/// terminal's; [`HostLook::from_terminal`] builds it from the terminal's colours and
/// `[mcp_apps]` settings.
#[derive(Debug, Clone, PartialEq)]
pub struct HostLook {
    /// `"dark"` or `"light"`.
    pub theme: String,
    /// `styles.variables`: CSS custom properties (`--color-background-primary`, ...).
    pub variables: Map<String, Value>,
    /// `styles.css`, when calyx has any (fonts).
    pub css: Option<Value>,
}

impl Default for HostLook {
    /// A dark terminal's look with the default settings.
    fn default() -> Self {
        HostLook::from_terminal(None, None, &LookSettings::default())
    }
}

impl HostLook {
    /// `hostContext.styles`.
    pub fn styles(&self) -> Value {
        let mut styles = json!({ "variables": self.variables });
        if let Some(css) = &self.css {
            styles["css"] = css.clone();
        }
        styles
    }
}

/// A colour, 8 bits a channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rgb(pub u8, pub u8, pub u8);

impl Rgb {
    /// `#rrggbb`.
    pub fn hex(self) -> String {
        format!("#{:02x}{:02x}{:02x}", self.0, self.1, self.2)
    }

    /// Relative luminance (sRGB, WCAG), 0 (black) to 1 (white).
    pub fn luminance(self) -> f64 {
        let linear = |c: u8| {
            let c = f64::from(c) / 255.0;
            if c <= 0.04045 {
                c / 12.92
            } else {
                ((c + 0.055) / 1.055).powf(2.4)
            }
        };
        0.2126 * linear(self.0) + 0.7152 * linear(self.1) + 0.0722 * linear(self.2)
    }

    /// `self` moved `amount` (0 to 1) of the way to `other`.
    pub fn mix(self, other: Rgb, amount: f64) -> Rgb {
        let channel = |a: u8, b: u8| {
            let a = f64::from(a);
            (a + (f64::from(b) - a) * amount.clamp(0.0, 1.0)).round() as u8
        };
        Rgb(
            channel(self.0, other.0),
            channel(self.1, other.1),
            channel(self.2, other.2),
        )
    }
}

/// A terminal's answer to OSC 10 / 11, `rgb:RRRR/GGGG/BBBB` (1 to 4 hex digits a channel, as
/// xterm sends), or `#rrggbb`.
pub fn parse_terminal_colour(text: &str) -> Option<Rgb> {
    if let Some(hex) = text.strip_prefix('#') {
        if hex.len() != 6 || !hex.is_ascii() {
            return None;
        }
        let byte = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).ok();
        return Some(Rgb(byte(0)?, byte(2)?, byte(4)?));
    }
    let mut channels = text.strip_prefix("rgb:")?.split('/').map(|part| {
        if part.is_empty() || part.len() > 4 {
            return None;
        }
        let value = u32::from_str_radix(part, 16).ok()?;
        let max = (1u32 << (4 * part.len())) - 1;
        Some(((value * 255 + max / 2) / max) as u8)
    });
    let rgb = Rgb(channels.next()??, channels.next()??, channels.next()??);
    channels.next().is_none().then_some(rgb)
}

/// `[mcp_apps] theme`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ThemeSetting {
    /// From the terminal's background: dark below luminance 0.5.
    #[default]
    Auto,
    Light,
    Dark,
}

/// The `[mcp_apps]` settings that shape the look.
#[derive(Debug, Clone, PartialEq)]
pub struct LookSettings {
    pub theme: ThemeSetting,
    /// `[mcp_apps] accent`; `None`: the palette's blue.
    pub accent: Option<Rgb>,
    /// `[mcp_apps] font_size`, in CSS pixels.
    pub font_size: u16,
}

impl Default for LookSettings {
    fn default() -> Self {
        LookSettings {
            theme: ThemeSetting::Auto,
            accent: None,
            font_size: 14,
        }
    }
}

/// The accent when none is configured: the common palette's blue.
pub const DEFAULT_ACCENT: Rgb = Rgb(0x3b, 0x8e, 0xea);
const DARK_BACKGROUND: Rgb = Rgb(0x1e, 0x1e, 0x1e);
const DARK_FOREGROUND: Rgb = Rgb(0xd4, 0xd4, 0xd4);
const LIGHT_BACKGROUND: Rgb = Rgb(0xff, 0xff, 0xff);
const LIGHT_FOREGROUND: Rgb = Rgb(0x1f, 0x1f, 0x1f);

impl HostLook {
    /// The look for a terminal with these default colours (either unknown when the terminal
    /// did not answer) and settings. A forced theme whose colours the terminal did not give
    /// uses that theme's defaults; a forced theme against the terminal's own colours keeps the
    /// colours (the user chose the label, the terminal the paint).
    pub fn from_terminal(fg: Option<Rgb>, bg: Option<Rgb>, settings: &LookSettings) -> HostLook {
        let dark = match settings.theme {
            ThemeSetting::Dark => true,
            ThemeSetting::Light => false,
            ThemeSetting::Auto => bg.is_none_or(|bg| bg.luminance() < 0.5),
        };
        let (default_bg, default_fg) = if dark {
            (DARK_BACKGROUND, DARK_FOREGROUND)
        } else {
            (LIGHT_BACKGROUND, LIGHT_FOREGROUND)
        };
        let bg = bg.unwrap_or(default_bg);
        let fg = fg.unwrap_or(default_fg);
        let accent = settings.accent.unwrap_or(DEFAULT_ACCENT);
        let mut variables = Map::new();
        let mut set = |name: &str, value: String| {
            variables.insert(name.to_string(), Value::String(value));
        };
        set("--color-background-primary", bg.hex());
        set("--color-background-secondary", bg.mix(fg, 0.06).hex());
        set("--color-text-primary", fg.hex());
        set("--color-text-secondary", fg.mix(bg, 0.35).hex());
        set("--color-border-primary", bg.mix(fg, 0.2).hex());
        set("--color-ring-primary", accent.hex());
        set("--font-mono", "ui-monospace, monospace".to_string());
        set("--font-sans", "system-ui, sans-serif".to_string());
        set("--font-text-md-size", format!("{}px", settings.font_size));
        HostLook {
            theme: if dark { "dark" } else { "light" }.to_string(),
            variables,
            css: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_answers_parse_at_any_width() {
        assert_eq!(
            parse_terminal_colour("rgb:ffff/0000/8080"),
            Some(Rgb(255, 0, 128))
        );
        assert_eq!(parse_terminal_colour("rgb:f/0/8"), Some(Rgb(255, 0, 136)));
        assert_eq!(parse_terminal_colour("rgb:1e/1e/1e"), Some(Rgb(30, 30, 30)));
        assert_eq!(parse_terminal_colour("#1e1e1e"), Some(Rgb(30, 30, 30)));
        for bad in [
            "rgb:ff/ff",
            "rgb:ff/ff/ff/ff",
            "rgb:fffff/0/0",
            "rgb:gg/0/0",
            "#12345",
            "red",
        ] {
            assert_eq!(parse_terminal_colour(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_theme_follows_the_background_unless_forced() {
        let auto = LookSettings::default();
        let black = Some(Rgb(0, 0, 0));
        let white = Some(Rgb(255, 255, 255));
        assert_eq!(HostLook::from_terminal(white, black, &auto).theme, "dark");
        assert_eq!(HostLook::from_terminal(black, white, &auto).theme, "light");
        // Mid grey (luminance about 0.22) is dark; a light grey (about 0.6) is light.
        assert_eq!(
            HostLook::from_terminal(None, Some(Rgb(128, 128, 128)), &auto).theme,
            "dark"
        );
        assert_eq!(
            HostLook::from_terminal(None, Some(Rgb(205, 205, 205)), &auto).theme,
            "light"
        );
        let light = LookSettings {
            theme: ThemeSetting::Light,
            ..LookSettings::default()
        };
        let look = HostLook::from_terminal(None, None, &light);
        assert_eq!(look.theme, "light");
        assert_eq!(look.variables["--color-background-primary"], "#ffffff");
    }

    #[test]
    fn variables_carry_the_terminal_colours_accent_and_size() {
        let settings = LookSettings {
            theme: ThemeSetting::Auto,
            accent: Some(Rgb(0xff, 0x88, 0x00)),
            font_size: 16,
        };
        let look = HostLook::from_terminal(
            Some(Rgb(0xee, 0xee, 0xee)),
            Some(Rgb(0x10, 0x20, 0x30)),
            &settings,
        );
        let v = &look.variables;
        assert_eq!(v["--color-background-primary"], "#102030");
        assert_eq!(v["--color-text-primary"], "#eeeeee");
        assert_eq!(v["--color-ring-primary"], "#ff8800");
        assert_eq!(v["--font-text-md-size"], "16px");
        for name in [
            "--color-background-secondary",
            "--color-text-secondary",
            "--color-border-primary",
            "--font-mono",
            "--font-sans",
        ] {
            assert!(v[name].is_string(), "{name}");
        }
        assert_ne!(
            v["--color-background-secondary"],
            v["--color-background-primary"]
        );
    }
}
