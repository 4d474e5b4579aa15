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
