use super::*;
use serde_json::json;

fn origin(pane: Option<usize>) -> NewView {
    NewView {
        pane: pane.map(|p| PaneId::try_from(p).expect("small")),
        alias: "vanilla".to_string(),
        published_tool: "vanilla-get-time".to_string(),
        original_tool: "get-time".to_string(),
        agent: None,
        conversation: None,
    }
}

fn document() -> ViewDocument {
    ViewDocument {
        html: "<p>hi</p>".to_string(),
        ui_meta: Some(json!({"csp": {"connectDomains": ["http://127.0.0.1:9", "*"]}})),
    }
}

fn state_of(hub: &ViewHub, id: ViewId) -> ViewState {
    hub.get(id).expect("view").view.state
}

#[test]
fn a_view_goes_loading_running_completed_and_keeps_the_call() {
    let hub = ViewHub::new();
    let mut events = hub.subscribe();
    let id = hub
        .create(
            origin(Some(1)),
            json!({"name": "get-time"}),
            json!({"tz": "UTC"}),
        )
        .expect("created")
        .id;
    assert_eq!(events.try_recv().ok(), Some(HubEvent::Created(id)));
    assert_eq!(state_of(&hub, id), ViewState::Loading);
    assert!(hub.set_upstream_id(id, json!(7)));
    assert!(hub.resource_read(id, Ok(document())));
    assert_eq!(state_of(&hub, id), ViewState::Running);
    let result = json!({"content": [{"type": "text", "text": "12:00"}], "isError": false});
    assert!(hub.tool_result(id, result.clone()));
    let found = hub.get(id).expect("view");
    assert_eq!(found.view.state, ViewState::Completed);
    assert_eq!(found.call.result, Some(result));
    assert_eq!(found.call.upstream_id, Some(json!(7)));
    assert_eq!(found.call.arguments, json!({"tz": "UTC"}));
    let csp = found.call.csp.expect("csp");
    assert!(
        csp.header.contains("connect-src http://127.0.0.1:9"),
        "{}",
        csp.header
    );
    assert_eq!(csp.ignored, vec!["*".to_string()]);
    assert_eq!(events.try_recv().ok(), Some(HubEvent::Changed(id)));
}

#[test]
fn a_result_before_the_read_completes_the_view_when_the_document_arrives() {
    let hub = ViewHub::new();
    let id = hub
        .create(origin(None), json!({}), json!({}))
        .expect("created")
        .id;
    hub.tool_result(id, json!({"content": []}));
    assert_eq!(state_of(&hub, id), ViewState::Loading);
    hub.resource_read(id, Ok(document()));
    assert_eq!(state_of(&hub, id), ViewState::Completed);
}

#[test]
fn a_rejected_read_is_final_and_a_cancel_is_recorded() {
    let hub = ViewHub::new();
    let id = hub
        .create(origin(Some(2)), json!({}), json!({}))
        .expect("created")
        .id;
    hub.resource_read(id, Err(Rejection::ReadFailed("boom\x1b[2J".to_string())));
    hub.tool_result(id, json!({"content": []}));
    match state_of(&hub, id) {
        ViewState::Rejected(reason) => {
            assert!(reason.starts_with("read error: "), "{reason}");
            assert!(!reason.contains('\x1b'), "{reason:?}");
        }
        other => panic!("{other:?}"),
    }
    let other = hub
        .create(origin(Some(3)), json!({}), json!({}))
        .expect("created")
        .id;
    hub.resource_read(other, Ok(document()));
    hub.tool_cancelled(other, "the agent cancelled");
    let found = hub.get(other).expect("view");
    assert_eq!(found.view.state, ViewState::Cancelled);
    assert_eq!(found.call.cancelled.as_deref(), Some("the agent cancelled"));
}

#[test]
fn tokens_open_pages_and_removed_views_are_gone_not_unknown() {
    let hub = ViewHub::new();
    let id = hub
        .create(origin(Some(1)), json!({}), json!({}))
        .expect("created")
        .id;
    let view = hub.get(id).expect("view").view;
    let page = view.page_token.as_str().to_string();
    let sandbox = view.sandbox_token.as_str().to_string();
    assert!(matches!(
        hub.authorize(id, Page::Host, &page),
        Access::Granted(_)
    ));
    assert!(matches!(
        hub.authorize(id, Page::Sandbox, &sandbox),
        Access::Granted(_)
    ));
    assert!(matches!(
        hub.authorize(id, Page::Host, &sandbox),
        Access::Denied
    ));
    assert!(matches!(
        hub.authorize(ViewId(99), Page::Host, &page),
        Access::Denied
    ));
    let mut events = hub.subscribe();
    assert_eq!(
        hub.pane_closed(PaneId::try_from(1usize).expect("small"))
            .len(),
        1
    );
    assert_eq!(events.try_recv().ok(), Some(HubEvent::Removed(id)));
    assert!(matches!(hub.authorize(id, Page::Host, &page), Access::Gone));
    assert!(hub.get(id).is_none());
    assert!(!hub.tool_result(id, json!({})));
}

#[test]
fn views_removed_to_make_room_are_announced() {
    let hub = ViewHub::new();
    let first = hub
        .create(origin(Some(4)), json!({}), json!({}))
        .expect("created")
        .id;
    hub.resource_read(first, Ok(document()));
    hub.tool_result(first, json!({}));
    let mut events = hub.subscribe();
    let second = hub
        .create(origin(Some(4)), json!({}), json!({}))
        .expect("created");
    assert_eq!(second.removed.len(), 1);
    assert_eq!(events.try_recv().ok(), Some(HubEvent::Removed(first)));
    assert_eq!(events.try_recv().ok(), Some(HubEvent::Created(second.id)));
    assert_eq!(
        hub.in_pane(PaneId::try_from(4usize).expect("small")).len(),
        1
    );
    assert_eq!(hub.all().len(), 1);
}

#[test]
fn page_urls_need_the_ports_and_carry_the_page_token() {
    let hub = ViewHub::new();
    let id = hub
        .create(origin(Some(1)), json!({}), json!({}))
        .expect("created")
        .id;
    assert_eq!(hub.page_url(id), None);
    hub.set_ports(ViewPorts {
        host: 41880,
        sandbox: 41881,
    });
    let token = hub
        .get(id)
        .expect("view")
        .view
        .page_token
        .as_str()
        .to_string();
    assert_eq!(
        hub.page_url(id),
        Some(format!("http://127.0.0.1:41880/v/{id}/{token}/"))
    );
    assert!(hub.set_page_open(id, true));
    assert!(hub.get(id).expect("view").call.page_open);
}
