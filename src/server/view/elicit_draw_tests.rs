use super::*;
use crate::hosted::elicit::form::FormKey;
use crate::hosted::elicit::Pending;
use crate::server::model::elicit_panel::merged;

fn text(buf: &Buffer) -> String {
    let area = buf.area;
    (0..area.height)
        .map(|y| {
            (0..area.width)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn panel(request: Request) -> ElicitPanel {
    let pending = Pending {
        id: 1,
        alias: "ev".into(),
        name: "Everything\x1b]0;owned\x07".into(),
        request,
        opened: false,
        surface: None,
    };
    merged(&[], &[pending], tokio::time::Instant::now(), &[]).remove(0)
}

fn form_request(properties: serde_json::Value) -> Request {
    Request::Form {
        message: "Please provide\x1b[2J inputs".into(),
        schema: serde_json::json!({"type": "object", "properties": properties, "required": ["name"]}),
        order: Vec::new(),
    }
}

#[test]
fn a_form_shows_title_heading_fields_and_buttons_with_server_text_made_safe() {
    let p = panel(form_request(serde_json::json!({
        "name": {"type": "string", "title": "Name\x1b[31m", "description": "Your full name"},
        "check": {"type": "boolean", "title": "Agree", "default": true},
        "pet": {"type": "string", "enum": ["a", "b"], "enumNames": ["Cats", "Dogs"], "default": "b"},
    })));
    let mut p = p;
    p.pane = Some("%3 (main:1)".into());
    let area = Rect::new(0, 0, 90, 30);
    let mut buf = Buffer::empty(area);
    draw(&p, area, &mut buf, None);
    let shown = text(&buf);
    assert!(
        shown.contains("during a call from pane %3 (main:1)"),
        "{shown}"
    );
    assert!(
        shown.contains("Everything\\x1b]0;owned\\x07 request"),
        "{shown}"
    );
    assert!(
        shown.contains("Everything\\x1b]0;owned\\x07 asks"),
        "{shown}"
    );
    assert!(shown.contains("Please provide\\x1b[2J inputs"), "{shown}");
    assert!(
        shown.contains("Name\\x1b[31m *"),
        "required marked: {shown}"
    );
    assert!(shown.contains("Your full name"), "{shown}");
    assert!(shown.contains("[x] yes"), "{shown}");
    assert!(shown.contains("◀ Dogs ▶"), "the default, titled: {shown}");
    assert!(
        shown.contains("[ Accept ]  [ Decline ]  [ Cancel ]"),
        "{shown}"
    );
    assert!(!shown.contains('\x1b'));
}

#[test]
fn a_tall_form_scrolls_to_the_focused_field_and_keeps_the_buttons() {
    let mut properties = serde_json::Map::new();
    for i in 0..20 {
        properties.insert(
            format!("f{i:02}"),
            serde_json::json!({"type": "string", "title": format!("Field {i:02}")}),
        );
    }
    let mut p = panel(form_request(serde_json::Value::Object(properties)));
    let area = Rect::new(0, 0, 80, 16);
    let mut buf = Buffer::empty(area);
    draw(&p, area, &mut buf, None);
    let shown = text(&buf);
    assert!(shown.contains("Field 00"), "{shown}");
    assert!(!shown.contains("Field 19"), "{shown}");
    assert!(shown.contains("[ Accept ]"), "{shown}");
    if let Some(form) = p.form.as_mut() {
        for _ in 0..19 {
            form.key(FormKey::Next);
        }
    }
    let mut buf = Buffer::empty(area);
    draw(&p, area, &mut buf, None);
    let shown = text(&buf);
    assert!(shown.contains("› Field 19"), "{shown}");
    assert!(!shown.contains("Field 00"), "{shown}");
    assert!(shown.contains("[ Accept ]"), "{shown}");
}

#[test]
fn a_url_shows_whole_and_linked_then_done_after_open() {
    let url = format!("https://example.com/verify?code={}", "x".repeat(120));
    let mut p = panel(Request::Url {
        message: "Open this link".into(),
        url: url.clone(),
        elicitation_id: "e-1".into(),
    });
    let area = Rect::new(0, 0, 80, 20);
    let mut buf = Buffer::empty(area);
    let mut links = calyx_tui::FrameLinks::new(80, 20);
    draw(&p, area, &mut buf, Some(&mut links));
    let shown = text(&buf);
    assert!(shown.contains("Open this link"), "{shown}");
    assert!(
        shown.contains("https://example.com/verify?code=xx"),
        "{shown}"
    );
    let joined: String = shown
        .chars()
        .filter(|c| !matches!(c, '│' | ' ' | '\n'))
        .collect();
    assert!(joined.contains(&url), "the whole URL: {shown}");
    assert!(
        shown.contains("[ Cancel ]  [ Decline ]  [ Open ]"),
        "{shown}"
    );
    let (x, y) = (0..80)
        .flat_map(|x| (0..20).map(move |y| (x, y)))
        .find(|&(x, y)| links.at(x, y).is_some())
        .expect("a linked cell");
    assert_eq!(links.at(x, y), Some(format!(";{url}").as_str()));

    p.pending.opened = true;
    p.opened_via = Some(OpenedVia::Shown);
    let mut buf = Buffer::empty(area);
    draw(&p, area, &mut buf, None);
    let shown = text(&buf);
    assert!(shown.contains("[ Done ]"), "{shown}");
    assert!(shown.contains("Ctrl-Y copies it"), "{shown}");
    assert!(!shown.contains("[ Open ]"), "{shown}");
}
