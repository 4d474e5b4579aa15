//! Starting the MCP App view server with the calyx server: its two loopback ports from
//! `[mcp_apps] view_port`, its way to the hosted servers, and the pages' look from
//! `[mcp_apps]` (theme, accent, font size).

use std::sync::Arc;

use serde_json::{json, Value};

use crate::config::mcp_apps::{McpApps, Theme};
use crate::hosted::app_tools::AppTools;
use crate::hosted::view_upstream::{ActionAnswer, HostedUpstream};
use crate::views::hub::ViewHub;
use crate::views::protocol::{codes, HostAction, HostLook, JsonRpcError};
use crate::views::protocol::{parse_terminal_colour, LookSettings, Rgb, ThemeSetting};
use crate::views::server::ViewServerHandle;

/// The default colours a client's terminal reported (None: not asked yet, or no answer).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TerminalColours {
    pub foreground: Option<Rgb>,
    pub background: Option<Rgb>,
}

/// The pages' look from `[mcp_apps]` and the terminal's colours (`theme = "auto"`: dark when
/// the background's luminance is below 0.5, or when the terminal has not said).
pub fn look(settings: &McpApps, terminal: TerminalColours) -> HostLook {
    let theme = match settings.theme {
        Theme::Auto => ThemeSetting::Auto,
        Theme::Light => ThemeSetting::Light,
        Theme::Dark => ThemeSetting::Dark,
    };
    let look = LookSettings {
        theme,
        accent: accent(&settings.accent),
        font_size: settings.font_size,
    };
    HostLook::from_terminal(terminal.foreground, terminal.background, &look)
}

/// `#rgb` or `#rrggbb` (config has checked the form).
fn accent(text: &str) -> Option<Rgb> {
    match text.strip_prefix('#') {
        Some(short) if short.len() == 3 => {
            let long: String = short.chars().flat_map(|c| [c, c]).collect();
            parse_terminal_colour(&format!("#{long}"))
        }
        _ => parse_terminal_colour(text),
    }
}

/// Until app requests reach the approval panel, a view's asks are refused (the spec's
/// answer to a user who said no) and its notes logged.
pub fn refuse_actions() -> ActionAnswer {
    Arc::new(|view, action| {
        Box::pin(async move {
            match action {
                HostAction::OpenLink { url } => {
                    tracing::info!(%view, "MCP App view asked to open {url:?}: refused");
                    Err(JsonRpcError::new(
                        codes::SERVER_ERROR,
                        "Link opening denied by user",
                    ))
                }
                HostAction::SendMessage { .. } => Err(JsonRpcError::new(
                    codes::SERVER_ERROR,
                    "Message sending denied",
                )),
                other => {
                    tracing::debug!(%view, "MCP App view: {}", describe(&other));
                    Ok(json!({}))
                }
            }
        })
    })
}

/// `next`, with app-registered tools reported to `apps` first (issue 17, "App context and
/// app-registered tools"): the view's pane and alias come from the hub, and an empty list
/// withdraws them. Every action then goes on to `next` (which logs what it does not answer).
/// The model context needs no arm here: the view server keeps it with the view's notes
/// ([`crate::views::server::Apps::notes`]), where `app_context` reads it.
pub fn with_app_tools(apps: AppTools, hub: ViewHub, next: ActionAnswer) -> ActionAnswer {
    Arc::new(move |view, action| {
        if let HostAction::AppTools { tools } = &action {
            match hub.get(view) {
                Some(found) => apps.set(
                    view,
                    found.view.origin.pane,
                    &found.view.origin.alias,
                    tools.clone(),
                ),
                // Removed meanwhile: nothing to publish, and whatever it had goes.
                None => apps.remove(view),
            }
        }
        next(view, action)
    })
}

fn describe(action: &HostAction) -> Value {
    match action {
        HostAction::Log { params } => json!({"log": params}),
        HostAction::DownloadOffered { .. } => json!("download offered"),
        HostAction::ModelContext { .. } => json!("model context updated"),
        HostAction::AppTools { tools } => json!({"app tools": tools.len()}),
        HostAction::TeardownRequested => json!("teardown requested"),
        HostAction::OpenLink { .. } | HostAction::SendMessage { .. } => json!("ask"),
    }
}

/// Starts the view server for `hub` on the port pair from `settings.view_port`.
pub async fn start(
    hub: ViewHub,
    registry: crate::hosted::publish::Registry,
    actions: ActionAnswer,
    settings: &McpApps,
) -> anyhow::Result<ViewServerHandle> {
    let upstream = Arc::new(HostedUpstream::new(registry, actions));
    let handle = crate::views::server::start(hub, upstream, settings.view_port).await?;
    handle.set_look(look(settings, TerminalColours::default()));
    Ok(handle)
}
