use super::*;
use crate::layout::PaneId;
use crate::views::hub::ViewHub;
use crate::views::registry::NewView;
use crate::views::resource::ViewDocument;
use serde_json::json;

fn hub_with_view(tool: &str) -> (ViewHub, ViewId) {
    let hub = ViewHub::new();
    let origin = NewView {
        pane: Some(PaneId::try_from(1usize).expect("small")),
        alias: "vanilla".into(),
        published_tool: format!("vanilla-{tool}"),
        original_tool: tool.into(),
        agent: Some(calyx_integrations::AgentKind::ClaudeCode),
        conversation: None,
    };
    let id = hub
        .create(origin, json!({"name": tool}), json!({}))
        .expect("created")
        .id;
    (hub, id)
}

fn card(hub: &ViewHub, id: ViewId) -> Card {
    Card::from_snapshot(&hub.get(id).expect("view"), None, None)
}

#[test]
fn a_wide_pane_gets_a_side_dock_a_narrow_one_a_strip() {
    let inner = Rect::new(2, 1, 100, 30);
    assert_eq!(
        split(inner, 40),
        DockSplit::Side {
            pane: Rect::new(2, 1, 60, 30),
            dock: Rect::new(62, 1, 40, 30),
        }
    );
    // 60 columns at 40%: the pane would keep 36 < 40.
    assert_eq!(
        split(Rect::new(0, 0, 60, 10), 40),
        DockSplit::Strip {
            pane: Rect::new(0, 0, 60, 9),
            strip: Rect::new(0, 9, 60, 1),
        }
    );
    assert_eq!(
        split(Rect::new(0, 0, 60, 1), 40),
        DockSplit::None {
            pane: Rect::new(0, 0, 60, 1)
        }
    );
}

#[test]
fn the_width_moves_by_five_percent_within_bounds() {
    let mut dock = Dock::default();
    assert_eq!(dock.percent, 40);
    dock.widen(1);
    assert_eq!(dock.percent, 45);
    for _ in 0..20 {
        dock.widen(-1);
    }
    assert_eq!(dock.percent, 20);
    for _ in 0..20 {
        dock.widen(1);
    }
    assert_eq!(dock.percent, 80);
}

#[test]
fn a_card_follows_its_view_and_escapes_what_the_server_sent() {
    let (hub, id) = hub_with_view("get-time");
    let loading = card(&hub, id);
    assert_eq!(loading.title, "get-time · vanilla · claude-code");
    assert_eq!(loading.state, "Loading");
    assert!(loading.running);
    assert_eq!(loading.body[0].text, "Waiting for the result…");
    hub.resource_read(
        id,
        Ok(ViewDocument {
            html: "<p>x</p>".into(),
            ui_meta: Some(json!({"csp": {"connectDomains": ["*", "https://a.example"]}})),
        }),
    );
    hub.tool_result(
        id,
        json!({"content": [
            {"type": "text", "text": "12:00\n\u{1b}[31mred\u{1b}[0m"},
            {"type": "image", "mimeType": "image/png", "data": "A".repeat(1640)},
            {"type": "resource_link", "uri": "https://example.com/r", "name": "report"},
        ]}),
    );
    let done = card(&hub, id);
    assert_eq!(done.state, "Completed");
    assert!(!done.running);
    assert_eq!(done.ignored_csp.as_deref(), Some("Ignored CSP entries: *"));
    let texts: Vec<&str> = done.body.iter().map(|l| l.text.as_str()).collect();
    assert_eq!(texts[0], "12:00");
    assert!(
        !texts[1].contains('\u{1b}') && texts[1].contains("red"),
        "{texts:?}"
    );
    assert_eq!(texts[2], "[image image/png 1.2 KiB]");
    assert_eq!(texts[3], "report");
    assert_eq!(done.body[3].link.as_deref(), Some("https://example.com/r"));
}

#[test]
fn structured_content_is_shown_when_there_is_no_text() {
    let (hub, id) = hub_with_view("show-map");
    hub.tool_result(id, json!({"content": [], "structuredContent": {"lat": 1}}));
    let shown = card(&hub, id);
    let texts: Vec<&str> = shown.body.iter().map(|l| l.text.as_str()).collect();
    assert_eq!(texts, ["{", "  \"lat\": 1", "}"]);
    hub.resource_read(id, Err(crate::views::resource::Rejection::NoContents));
    assert_eq!(
        card(&hub, id).state,
        "Rejected: the resource has no contents"
    );
}

#[test]
fn unsafe_link_targets_are_plain_text() {
    assert_eq!(
        link_target("https://a.example/x"),
        Some("https://a.example/x".into())
    );
    assert_eq!(link_target("javascript:alert(1)"), None);
    assert_eq!(link_target("https://a.example/\u{1b}]8;;x"), None);
    assert_eq!(link_target("https://a b"), None);
}

#[test]
fn the_tunnel_line_forwards_both_ports_to_the_ssh_server_address() {
    assert_eq!(
        tunnel_line("10.0.0.2 50000 10.0.0.1 22", Some("ana"), (41880, 41881)),
        "ssh -L 41880:127.0.0.1:41880 -L 41881:127.0.0.1:41881 ana@10.0.0.1"
    );
    assert_eq!(size(512), "512 B");
    assert_eq!(size(3 << 20), "3.0 MiB");
}
