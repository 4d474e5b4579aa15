use calyx_integrations::AgentKind;

use super::*;

fn new_view(pane: Option<PaneId>, alias: &str) -> NewView {
    NewView {
        pane,
        alias: alias.to_string(),
        published_tool: format!("{alias}-get-time"),
        original_tool: "get-time".to_string(),
        agent: Some(AgentKind::ClaudeCode),
        conversation: Some("conv-1".to_string()),
    }
}

fn create(reg: &mut Registry, pane: Option<PaneId>, alias: &str) -> Created {
    reg.create(new_view(pane, alias)).expect("random source")
}

fn state(reg: &Registry, id: ViewId) -> Option<ViewState> {
    reg.get(id).map(|v| v.state.clone())
}

fn ids(views: &[View]) -> Vec<ViewId> {
    views.iter().map(|v| v.id).collect()
}

#[test]
fn a_new_view_is_loading_with_what_it_was_created_from() {
    let mut reg = Registry::new();
    let created = create(&mut reg, Some(3), "ev");
    assert!(created.removed.is_empty());
    let view = reg.get(created.id).expect("recorded");
    assert_eq!(view.state, ViewState::Loading);
    assert_eq!(view.origin, new_view(Some(3), "ev"));
    assert_ne!(view.page_token, view.sandbox_token);
    let other = create(&mut reg, None, "ev");
    assert_ne!(other.id, created.id);
    assert_eq!(reg.in_pane(3).count(), 1, "a standalone view is in no pane");
}

#[test]
fn tokens_authorize_only_their_own_page_and_view() {
    let mut reg = Registry::new();
    let a = create(&mut reg, Some(1), "ev").id;
    let b = create(&mut reg, Some(1), "ev").id;
    let view = reg.get(a).expect("a").clone();
    assert!(reg
        .authorize(a, Page::Host, view.page_token.as_str())
        .is_some());
    assert!(reg
        .authorize(a, Page::Sandbox, view.sandbox_token.as_str())
        .is_some());
    assert!(reg
        .authorize(a, Page::Host, view.sandbox_token.as_str())
        .is_none());
    assert!(reg
        .authorize(b, Page::Host, view.page_token.as_str())
        .is_none());
    assert!(reg.authorize(a, Page::Host, "").is_none());
    reg.remove(a);
    assert!(
        reg.authorize(a, Page::Host, view.page_token.as_str())
            .is_none(),
        "revoked"
    );
}

#[test]
fn a_new_view_in_a_pane_removes_its_finished_views_and_keeps_running_ones() {
    let mut reg = Registry::new();
    let done = create(&mut reg, Some(1), "ev").id;
    let cancelled = create(&mut reg, Some(1), "ev").id;
    let rejected = create(&mut reg, Some(1), "ev").id;
    let running = create(&mut reg, Some(1), "ev").id;
    let elsewhere = create(&mut reg, Some(2), "ev").id;
    reg.set_state(done, ViewState::Completed);
    reg.set_state(cancelled, ViewState::Cancelled);
    reg.set_state(rejected, ViewState::Rejected("wrong MIME type".into()));
    reg.set_state(running, ViewState::Running);
    reg.set_state(elsewhere, ViewState::Completed);
    let created = create(&mut reg, Some(1), "ev");
    assert_eq!(ids(&created.removed), [done, cancelled, rejected]);
    let left: Vec<ViewId> = ids(reg.all());
    assert_eq!(left, [running, elsewhere, created.id]);
}

#[test]
fn a_ninth_running_view_in_a_pane_is_rejected() {
    let mut reg = Registry::new();
    for _ in 0..PER_PANE {
        let id = create(&mut reg, Some(1), "ev").id;
        reg.set_state(id, ViewState::Running);
    }
    let ninth = create(&mut reg, Some(1), "ev");
    assert!(ninth.removed.is_empty(), "running views are never dropped");
    assert_eq!(
        state(&reg, ninth.id),
        Some(ViewState::Rejected(TOO_MANY.into()))
    );
    // The rejected record is finished: the pane's next view replaces it.
    let tenth = create(&mut reg, Some(1), "ev");
    assert_eq!(ids(&tenth.removed), [ninth.id]);
    assert_eq!(reg.in_pane(1).count(), PER_PANE + 1);
    // Another pane is not limited by this one.
    let other = create(&mut reg, Some(2), "ev").id;
    assert_eq!(state(&reg, other), Some(ViewState::Loading));
}

#[test]
fn the_server_wide_limit_drops_the_oldest_finished_view_first() {
    let mut reg = Registry::new();
    let mut first = Vec::new();
    for i in 0..IN_ALL {
        let pane = PaneId::try_from(i / PER_PANE).expect("small");
        first.push(create(&mut reg, Some(pane), "ev").id);
    }
    reg.set_state(first[10], ViewState::Completed);
    reg.set_state(first[5], ViewState::Cancelled);
    let standalone = create(&mut reg, None, "ev");
    assert_eq!(
        ids(&standalone.removed),
        [first[5]],
        "the oldest finished one"
    );
    assert_eq!(state(&reg, standalone.id), Some(ViewState::Loading));
    assert_eq!(reg.all().len(), IN_ALL);
}

#[test]
fn with_nothing_finished_the_server_wide_limit_rejects_the_new_view() {
    let mut reg = Registry::new();
    for i in 0..IN_ALL {
        let pane = PaneId::try_from(i / PER_PANE).expect("small");
        create(&mut reg, Some(pane), "ev");
    }
    let over = create(&mut reg, None, "ev");
    assert!(over.removed.is_empty());
    assert_eq!(
        state(&reg, over.id),
        Some(ViewState::Rejected(TOO_MANY.into()))
    );
    // The next one replaces that rejected record, so the registry stays bounded.
    let again = create(&mut reg, Some(100), "ev");
    assert_eq!(ids(&again.removed), [over.id]);
    assert_eq!(reg.all().len(), IN_ALL + 1);
}

#[test]
fn closing_a_pane_removes_only_its_views() {
    let mut reg = Registry::new();
    let a = create(&mut reg, Some(1), "ev").id;
    let b = create(&mut reg, Some(2), "ev").id;
    let s = create(&mut reg, None, "ev").id;
    assert_eq!(ids(&reg.pane_closed(1)), [a]);
    assert_eq!(ids(reg.all()), [b, s]);
}

#[test]
fn a_server_disabled_or_removed_takes_its_views() {
    let mut reg = Registry::new();
    let a = create(&mut reg, Some(1), "ev").id;
    let b = create(&mut reg, Some(1), "maps").id;
    let s = create(&mut reg, None, "ev").id;
    assert_eq!(ids(&reg.alias_gone("ev")), [a, s]);
    assert_eq!(ids(reg.all()), [b]);
}

#[test]
fn a_conversation_ending_removes_the_panes_views() {
    let mut reg = Registry::new();
    let a = create(&mut reg, Some(1), "ev").id;
    let b = create(&mut reg, Some(2), "ev").id;
    assert_eq!(ids(&reg.conversation_ended(1)), [a]);
    assert_eq!(ids(reg.all()), [b]);
}

#[test]
fn a_new_conversation_removes_views_of_the_old_one() {
    let mut reg = Registry::new();
    let old = create(&mut reg, Some(1), "ev").id;
    let mut current = new_view(Some(1), "ev");
    current.conversation = Some("conv-2".into());
    let current = reg.create(current).expect("random").id;
    let mut unknown = new_view(Some(1), "ev");
    unknown.conversation = None;
    let unknown = reg.create(unknown).expect("random").id;
    let other_pane = create(&mut reg, Some(2), "ev").id;
    assert_eq!(ids(&reg.conversation_started(1, "conv-2")), [old]);
    assert_eq!(ids(reg.all()), [current, unknown, other_pane]);
    assert!(
        reg.conversation_started(1, "conv-2").is_empty(),
        "a resumed conversation keeps them"
    );
}

#[test]
fn state_changes_need_the_view() {
    let mut reg = Registry::new();
    let id = create(&mut reg, None, "ev").id;
    assert!(reg.set_state(id, ViewState::Running));
    assert!(!ViewState::Running.is_finished());
    assert!(!ViewState::Loading.is_finished());
    assert!(reg.remove(id).is_some());
    assert!(!reg.set_state(id, ViewState::Completed));
    assert!(reg.remove(id).is_none());
}
