//! Starting the MCP App view server with the calyx server: its two loopback ports from
//! `[mcp_apps] view_port`, its way to the hosted servers, and the pages' look from
//! `[mcp_apps]` (theme, accent, font size).

use std::sync::Arc;

use serde_json::{json, Value};

use crate::config::mcp_apps::{McpApps, Theme};
use crate::hosted::app_tools::AppTools;
use crate::hosted::view_upstream::{ActionAnswer, HostedUpstream};
use crate::views::app_requests::AppRequests;
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

/// What a view asks of calyx: Open Link and Send Message go to the user through the approval
/// panel ([`AppRequests::ask`], answered `{}` or the refusal); the rest (log lines, model
/// context, a download offered, app tools) is only logged here. A view removed before its ask
/// arrives gets the refusal.
pub fn app_actions(hub: ViewHub, apps: AppRequests) -> ActionAnswer {
    Arc::new(move |view, action| {
        let (hub, apps) = (hub.clone(), apps.clone());
        Box::pin(async move {
            let refusal = match &action {
                HostAction::OpenLink { .. } => "Link opening denied by user",
                HostAction::SendMessage { .. } => "Message sending denied",
                other => {
                    tracing::debug!(%view, "MCP App view: {}", describe(other));
                    return Ok(json!({}));
                }
            };
            match hub.get(view) {
                Some(snapshot) => apps.ask(snapshot, action).await,
                None => Err(JsonRpcError::new(codes::SERVER_ERROR, refusal)),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::approvals::app::{AppKind, AppMsg};
    use crate::approvals::{Decision, Outcome};
    use crate::server::Msg;
    use crate::views::registry::NewView;
    use tokio::sync::mpsc;

    #[tokio::test]
    async fn a_views_asks_reach_the_owner_as_app_requests_and_notes_do_not() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let hub = ViewHub::new();
        let created = hub
            .create(
                NewView {
                    pane: Some(2),
                    alias: "Everything".into(),
                    published_tool: "Everything-show".into(),
                    original_tool: "show".into(),
                    agent: None,
                    conversation: None,
                },
                json!({}),
                json!({}),
            )
            .expect("created");
        let actions = app_actions(hub.clone(), AppRequests::new(tx));
        let asking = tokio::spawn(actions(
            created.id,
            HostAction::OpenLink {
                url: "https://example.com".into(),
            },
        ));
        let Some(Msg::App(AppMsg::Ask(ask))) = rx.recv().await else {
            panic!("the owner hears the request");
        };
        assert_eq!(ask.target.kind, AppKind::OpenLink);
        assert_eq!(ask.target.text, "https://example.com");
        assert_eq!(ask.server, "Everything");
        let _ = ask.answer.send(Outcome::Decided(Decision::Allow));
        assert_eq!(asking.await.ok(), Some(Ok(json!({}))));
        // A note is only logged: nothing for the owner.
        let note = actions(created.id, HostAction::Log { params: json!({}) }).await;
        assert_eq!(note, Ok(json!({})));
        assert!(rx.try_recv().is_err());
        // A view gone before its ask arrived: refused without asking.
        hub.remove(created.id);
        let late = actions(
            created.id,
            HostAction::SendMessage {
                params: json!({"role": "user", "content": [{"type": "text", "text": "x"}]}),
            },
        )
        .await;
        assert_eq!(
            late,
            Err(JsonRpcError::new(-32000, "Message sending denied"))
        );
        assert!(rx.try_recv().is_err());
    }
}
