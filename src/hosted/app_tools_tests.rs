use super::*;
use serde_json::json;

use crate::views::registry::NewView;

fn tools(names: &[&str]) -> Vec<Value> {
    names
        .iter()
        .map(|n| json!({ "name": n, "inputSchema": { "type": "object" } }))
        .collect()
}

fn published(list: &[PaneTool]) -> Vec<(&str, u64, &str)> {
    list.iter()
        .map(|t| (t.published.as_str(), t.view.0, t.name.as_str()))
        .collect()
}

#[test]
fn a_panes_tools_are_named_per_view_and_only_that_pane_sees_them() {
    let apps = AppTools::default();
    apps.set(ViewId(1), Some(3), "budget", tools(&["get-allocations"]));
    apps.set(ViewId(2), Some(4), "budget", tools(&["set-total-budget"]));
    apps.set(ViewId(5), None, "budget", tools(&["standalone"]));
    let none = |_: &str| false;
    assert_eq!(
        published(&apps.in_pane(3, none)),
        vec![("budget-app_get-allocations", 1, "get-allocations")]
    );
    assert_eq!(
        published(&apps.in_pane(4, none)),
        vec![("budget-app_set-total-budget", 2, "set-total-budget")]
    );
    assert!(apps.in_pane(7, none).is_empty(), "a pane without views");
    assert_eq!(
        apps.of_view(ViewId(5)).map(|v| v.pane),
        Some(None),
        "a standalone view's tools are kept, for no pane"
    );
    let listed = apps.in_pane(3, none);
    assert_eq!(listed[0].tool["inputSchema"], json!({ "type": "object" }));
}

#[test]
fn a_servers_own_tool_and_a_newer_view_keep_the_plain_name() {
    let apps = AppTools::default();
    apps.set(ViewId(1), Some(3), "budget", tools(&["get", "other"]));
    apps.set(ViewId(2), Some(3), "budget", tools(&["get"]));
    let list = apps.in_pane(3, |n| n == "budget-app_other");
    let by_view = |view: u64, name: &str| {
        list.iter()
            .find(|t| t.view.0 == view && t.name == name)
            .map(|t| t.published.clone())
            .expect("listed")
    };
    assert_eq!(by_view(2, "get"), "budget-app_get", "the newer view's");
    let older = by_view(1, "get");
    assert!(older.starts_with("budget-app_get_"), "{older}");
    let other = by_view(1, "other");
    assert!(
        other.starts_with("budget-app_other_"),
        "the server's tool keeps the name: {other}"
    );
    assert_eq!(list.len(), 3);
    let mut names: Vec<&String> = list.iter().map(|t| &t.published).collect();
    names.dedup();
    assert_eq!(names.len(), 3, "unique");
    // The same table names them the same way again (a call resolves what a list showed).
    assert_eq!(apps.in_pane(3, |n| n == "budget-app_other"), list);
}

#[test]
fn an_empty_list_or_a_removal_withdraws_a_views_tools() {
    let apps = AppTools::default();
    apps.set(ViewId(1), Some(3), "budget", tools(&["a"]));
    apps.set(ViewId(2), Some(3), "budget", tools(&["b"]));
    apps.set(ViewId(1), Some(3), "budget", Vec::new());
    assert_eq!(
        published(&apps.in_pane(3, |_| false)),
        vec![("budget-app_b", 2, "b")]
    );
    apps.remove(ViewId(2));
    assert!(apps.in_pane(3, |_| false).is_empty());
    assert_eq!(apps.of_view(ViewId(2)), None);
}

#[tokio::test]
async fn a_removed_view_of_the_hub_takes_its_tools_along() {
    let hub = ViewHub::new();
    let apps = AppTools::default();
    tokio::spawn(apps.clone().follow(hub.clone()));
    tokio::task::yield_now().await;
    let origin = NewView {
        pane: Some(3),
        alias: "budget".to_string(),
        published_tool: "budget-show".to_string(),
        original_tool: "show".to_string(),
        agent: None,
        conversation: None,
    };
    let id = hub
        .create(origin, json!({ "name": "show" }), json!({}))
        .expect("created")
        .id;
    apps.set(id, Some(3), "budget", tools(&["get-allocations"]));
    assert_eq!(apps.in_pane(3, |_| false).len(), 1);
    hub.remove(id);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while apps.of_view(id).is_some() {
        assert!(
            std::time::Instant::now() < deadline,
            "tools never withdrawn"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(apps.in_pane(3, |_| false).is_empty());
}
