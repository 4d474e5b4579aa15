use super::*;

fn pane_tool(tool: Value) -> PaneTool {
    PaneTool {
        published: "budget-app_get-allocations".to_string(),
        view: ViewId(1),
        name: "get-allocations".to_string(),
        tool,
    }
}

#[test]
fn an_app_tool_is_published_as_the_view_listed_it_renamed() {
    let tool = published_tool(&pane_tool(json!({
        "name": "get-allocations",
        "description": "Current allocations",
        "inputSchema": { "type": "object", "properties": { "year": { "type": "integer" } } },
        "annotations": { "readOnlyHint": true },
    })))
    .expect("a tool");
    let value = serde_json::to_value(&tool).expect("json");
    assert_eq!(value["name"], "budget-app_get-allocations");
    assert_eq!(value["description"], "Current allocations");
    assert_eq!(
        value["inputSchema"]["properties"]["year"]["type"],
        "integer"
    );
    assert_eq!(value["annotations"]["readOnlyHint"], true);

    // No schema, or an odd field: still listed, with an object schema.
    let bare = published_tool(&pane_tool(json!({ "name": "get-allocations" }))).expect("a tool");
    assert_eq!(bare.input_schema.get("type"), Some(&json!("object")));
    let odd = published_tool(&pane_tool(json!({
        "name": "x", "description": "d", "annotations": "not an object",
    })))
    .expect("a tool");
    assert_eq!(odd.name, "budget-app_get-allocations");
    assert_eq!(odd.description.as_deref(), Some("d"));
}

#[test]
fn app_context_takes_an_optional_view_id() {
    let tool = app_context_tool();
    assert_eq!(tool.name, APP_CONTEXT);
    assert_eq!(
        tool.input_schema["properties"]["view_id"]["type"],
        json!("integer")
    );
    assert!(
        tool.input_schema.get("required").is_none(),
        "view_id is optional"
    );
}

#[test]
fn the_context_text_names_each_view_and_what_it_said() {
    let views = vec![
        json!({ "view_id": 1, "alias": "fx", "tool": "show_time", "state": "completed",
                "updated_at": 5, "content": [{ "type": "text", "text": "picked 3 rows" }],
                "structuredContent": { "rows": 3 } }),
        json!({ "view_id": 2, "alias": "fx", "tool": "show_wait", "state": "running",
                "updated_at": null, "content": null, "structuredContent": null }),
    ];
    let text = render(&views);
    assert!(
        text.starts_with("view 1 · fx · show_time · completed\npicked 3 rows\n{"),
        "{text}"
    );
    assert!(text.contains("\"rows\": 3"), "{text}");
    assert!(
        text.ends_with("view 2 · fx · show_wait · running\n(no context yet)"),
        "{text}"
    );
    assert_eq!(render(&[]), "No MCP App views in this pane.");
}

/// Callers whose surface is `s<N>` are in pane N.
struct Surfaces;

#[async_trait::async_trait]
impl super::super::views::PaneLookup for Surfaces {
    async fn caller_pane(&self, caller: Caller) -> super::super::views::CallerPane {
        super::super::views::CallerPane {
            pane: caller
                .surface
                .as_deref()
                .and_then(|s| s.strip_prefix('s'))
                .and_then(|n| n.parse().ok()),
            ..Default::default()
        }
    }
}

fn in_pane(pane: PaneId) -> Option<Caller> {
    Some(Caller {
        surface: Some(format!("s{pane}")),
        ..Default::default()
    })
}

/// Pane tools over a hub with one view in pane 3 that registered `get-allocations`, and no
/// view server.
fn pane_tools() -> (PaneTools, ViewId) {
    let views = ViewWire::new(true, Some(Arc::new(Surfaces)));
    let origin = crate::views::registry::NewView {
        pane: Some(3),
        alias: "budget".to_string(),
        published_tool: "budget-show".to_string(),
        original_tool: "show".to_string(),
        agent: None,
        conversation: None,
    };
    let id = views
        .hub
        .create(origin, json!({ "name": "show" }), json!({}))
        .expect("created")
        .id;
    let apps = AppTools::default();
    apps.set(
        id,
        Some(3),
        "budget",
        vec![json!({ "name": "get-allocations" })],
    );
    let tools = PaneTools {
        apps,
        views,
        registry: Registry::default(),
    };
    (tools, id)
}

#[tokio::test]
async fn only_the_views_pane_lists_its_tools_and_app_context() {
    let (tools, _) = pane_tools();
    let names = |list: Vec<Tool>| {
        list.into_iter()
            .map(|t| t.name.to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        names(tools.list_for(in_pane(3)).await),
        vec!["app_context", "budget-app_get-allocations"]
    );
    assert_eq!(names(tools.list_for(in_pane(4)).await), vec!["app_context"]);
    assert!(tools.list_for(None).await.is_empty(), "no pane, nothing");
    assert!(
        tools
            .call_for(in_pane(4), "budget-app_get-allocations", None)
            .await
            .is_none(),
        "not a tool of pane 4"
    );
    assert!(tools
        .call_for(in_pane(3), "budget-echo", None)
        .await
        .is_none());
}

#[tokio::test]
async fn a_call_with_no_page_open_says_how_to_open_it() {
    let (tools, _) = pane_tools();
    let result = tools
        .call_for(in_pane(3), "budget-app_get-allocations", None)
        .await
        .expect("a tool of pane 3");
    assert_eq!(result.is_error, Some(true));
    let text = serde_json::to_value(&result).expect("json")["content"][0]["text"].clone();
    assert_eq!(text, NOT_OPEN);
}

#[tokio::test]
async fn app_context_answers_the_callers_pane_only() {
    let (tools, id) = pane_tools();
    let call = |caller, arguments: Value| {
        let tools = tools.clone();
        async move {
            let result = tools
                .call_for(caller, APP_CONTEXT, arguments.as_object().cloned())
                .await
                .expect("app_context is a pane tool");
            serde_json::to_value(&result).expect("json")
        }
    };
    let mine = call(in_pane(3), json!({})).await;
    assert_eq!(mine["isError"], false, "{mine}");
    let view = &mine["structuredContent"]["views"][0];
    assert_eq!(view["view_id"], id.0);
    assert_eq!(view["alias"], "budget");
    assert_eq!(view["tool"], "show");
    assert_eq!(view["state"], "loading");
    assert_eq!(view["updated_at"], Value::Null, "no context yet");
    let by_id = call(in_pane(3), json!({ "view_id": id.0.to_string() })).await;
    assert_eq!(by_id["structuredContent"], mine["structuredContent"]);

    let theirs = call(in_pane(4), json!({})).await;
    assert_eq!(theirs["structuredContent"]["views"], json!([]));
    let not_theirs = call(in_pane(4), json!({ "view_id": id.0 })).await;
    assert_eq!(not_theirs["isError"], true, "{not_theirs}");
    let bad = call(in_pane(3), json!({ "view_id": "x" })).await;
    assert_eq!(bad["isError"], true, "{bad}");
    let nobody = call(None, json!({})).await;
    assert_eq!(nobody["isError"], true, "{nobody}");
    assert_eq!(nobody["content"][0]["text"], NO_PANE);
}
