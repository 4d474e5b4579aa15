use base64::Engine;
use serde_json::{json, Value};

use super::*;

fn read_result(item: Value) -> Value {
    json!({"contents": [item]})
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[test]
fn one_html_text_item_is_a_view() {
    let result = read_result(json!({
        "uri": "ui://get-time/app.html",
        "mimeType": VIEW_MIME_TYPE,
        "text": "<!doctype html><p>hi</p>",
        "_meta": {"ui": {"prefersBorder": true}},
    }));
    let doc = view_document(&result).expect("valid");
    assert_eq!(doc.html, "<!doctype html><p>hi</p>");
    assert_eq!(doc.ui_meta, Some(json!({"prefersBorder": true})));
}

#[test]
fn a_base64_blob_is_decoded() {
    let result = read_result(json!({"mimeType": VIEW_MIME_TYPE, "blob": b64(b"<p>blob</p>")}));
    let doc = view_document(&result).expect("valid");
    assert_eq!(doc.html, "<p>blob</p>");
    assert_eq!(doc.ui_meta, None);
}

#[test]
fn the_mime_type_must_match_exactly_and_is_named() {
    for mime in [
        "text/html",
        "text/html; profile=mcp-app",
        "TEXT/HTML;PROFILE=MCP-APP",
    ] {
        let result = read_result(json!({"mimeType": mime, "text": "<p></p>"}));
        let err = view_document(&result).expect_err(mime);
        assert_eq!(err, Rejection::WrongMimeType(Some(mime.to_string())));
        assert!(err.to_string().contains(&format!("{mime:?}")), "{err}");
    }
    let err = view_document(&read_result(json!({"text": "<p></p>"}))).expect_err("no mime");
    assert_eq!(
        err.to_string(),
        format!("wrong MIME type none, expected {VIEW_MIME_TYPE:?}")
    );
}

#[test]
fn a_mime_type_with_escapes_is_shown_escaped() {
    let result = read_result(json!({"mimeType": "text/html\u{1b}[2J", "text": ""}));
    let shown = view_document(&result).expect_err("wrong").to_string();
    assert!(!shown.contains('\u{1b}'), "{shown:?}");
    assert!(shown.contains("\\u{1b}[2J"), "{shown:?}");
}

#[test]
fn contents_must_hold_exactly_one_item() {
    let item = json!({"mimeType": VIEW_MIME_TYPE, "text": "<p></p>"});
    assert_eq!(
        view_document(&json!({"contents": []})),
        Err(Rejection::NoContents)
    );
    assert_eq!(view_document(&json!({})), Err(Rejection::NoContents));
    assert_eq!(
        view_document(&json!({"contents": "x"})),
        Err(Rejection::NoContents)
    );
    assert_eq!(
        view_document(&json!({"contents": [item.clone(), item]})),
        Err(Rejection::SeveralContents(2))
    );
}

#[test]
fn an_item_without_text_or_blob_is_rejected() {
    let result = read_result(json!({"mimeType": VIEW_MIME_TYPE}));
    assert_eq!(view_document(&result), Err(Rejection::NoDocument));
}

#[test]
fn documents_over_16_mib_are_rejected() {
    let exact = "a".repeat(MAX_HTML_BYTES);
    let ok = read_result(json!({"mimeType": VIEW_MIME_TYPE, "text": exact}));
    assert_eq!(view_document(&ok).map(|d| d.html.len()), Ok(MAX_HTML_BYTES));
    let over =
        read_result(json!({"mimeType": VIEW_MIME_TYPE, "text": "a".repeat(MAX_HTML_BYTES + 1)}));
    assert_eq!(
        view_document(&over),
        Err(Rejection::TooLarge(MAX_HTML_BYTES + 1))
    );
    let blob = read_result(
        json!({"mimeType": VIEW_MIME_TYPE, "blob": b64(&vec![b'a'; MAX_HTML_BYTES + 1])}),
    );
    assert!(matches!(view_document(&blob), Err(Rejection::TooLarge(n)) if n > MAX_HTML_BYTES));
}

#[test]
fn bad_base64_and_binary_blobs_are_rejected() {
    let bad = read_result(json!({"mimeType": VIEW_MIME_TYPE, "blob": "not base64!"}));
    assert_eq!(view_document(&bad), Err(Rejection::BadBase64));
    let binary = read_result(json!({"mimeType": VIEW_MIME_TYPE, "blob": b64(&[0xff, 0xfe])}));
    assert_eq!(view_document(&binary), Err(Rejection::NotUtf8));
}

#[test]
fn the_items_ui_meta_wins_over_the_list_entrys() {
    let list = json!({"csp": {"connectDomains": ["https://a.example.com"]}});
    let item = json!({"csp": {"resourceDomains": ["https://b.example.com"]}});
    assert_eq!(merge_ui_meta(Some(&list), Some(&item)), Some(item.clone()));
    assert_eq!(merge_ui_meta(Some(&list), None), Some(list.clone()));
    assert_eq!(merge_ui_meta(Some(&list), Some(&json!("junk"))), Some(list));
    assert_eq!(merge_ui_meta(None, Some(&item)), Some(item));
    assert_eq!(merge_ui_meta(Some(&json!(3)), None), None);
    assert_eq!(merge_ui_meta(None, None), None);
}

#[test]
fn a_tools_resource_uri_comes_from_meta_ui_then_the_deprecated_key() {
    let both = json!({"name": "t", "_meta": {"ui": {"resourceUri": "ui://a/new"}, "ui/resourceUri": "ui://a/old"}});
    assert_eq!(tool_resource_uri(&both), Some("ui://a/new"));
    let old = json!({"name": "t", "_meta": {"ui/resourceUri": "ui://a/old"}});
    assert_eq!(tool_resource_uri(&old), Some("ui://a/old"));
    let null_new = json!({"_meta": {"ui": {"resourceUri": null}, "ui/resourceUri": "ui://a/old"}});
    assert_eq!(tool_resource_uri(&null_new), Some("ui://a/old"));
    let visibility_only = json!({"_meta": {"ui": {"visibility": ["app"]}}});
    assert_eq!(tool_resource_uri(&visibility_only), None);
    assert_eq!(tool_resource_uri(&json!({"name": "plain"})), None);
}

#[test]
fn only_ui_uris_count() {
    for uri in [
        json!("https://example.com/app.html"),
        json!("ui://"),
        json!("UI://x"),
        json!(5),
    ] {
        let tool = json!({"_meta": {"ui": {"resourceUri": uri}, "ui/resourceUri": "ui://a/old"}});
        assert_eq!(tool_resource_uri(&tool), None, "{tool}");
        let old = json!({"_meta": {"ui/resourceUri": uri}});
        assert_eq!(tool_resource_uri(&old), None, "{old}");
    }
}
