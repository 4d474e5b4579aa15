use super::*;
use proptest::prelude::*;
use serde_json::{json, Value};

fn scan_in_pieces(line: &[u8], piece: usize) -> Facts {
    let mut scan = LineScan::default();
    for chunk in line.chunks(piece.max(1)) {
        scan.feed(chunk);
    }
    scan.finish()
}

fn scan(line: &str) -> Facts {
    scan_in_pieces(line.as_bytes(), line.len())
}

#[test]
fn requests_answers_and_notifications_are_told_apart() {
    let request = scan(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"id":9}}"#);
    assert_eq!(request.request_id(), Some("7".to_string()));
    let answer = scan(r#"{"result":{"id":3,"method":"x"},"jsonrpc":"2.0","id":"a\"b"}"#);
    assert_eq!(answer.answered_id(), Some(r#""a\"b""#.to_string()));
    let notification = scan(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    assert!(notification.has_method);
    assert_eq!(notification.id, None);
    assert_eq!(scan(r#"{"jsonrpc":"2.0","id":null,"error":{}}"#).id, None);
}

#[test]
fn task_required_tools_are_found_whatever_the_key_order() {
    let line = json!({
        "jsonrpc": "2.0",
        "result": {"tools": [
            {"name": "echo", "inputSchema": {"type": "object"}},
            {"execution": {"taskSupport": "required"}, "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}}, "name": "simulate-research-query"},
            {"name": "maybe", "execution": {"taskSupport": "optional"}},
            {"name": "t\u{e9}l\u{e9}", "execution": {"taskSupport": "required"}}
        ]},
        "id": 2
    })
    .to_string();
    let facts = scan_in_pieces(line.as_bytes(), 5);
    assert_eq!(
        facts.task_required,
        vec!["simulate-research-query".to_string(), "télé".to_string()]
    );
    assert_eq!(facts.answered_id(), Some("2".to_string()));
}

#[test]
fn nested_tools_lists_and_broken_lines_say_nothing_wrong() {
    // A `tools` array that is not the result's: not a tools/list.
    let nested = r#"{"id":1,"result":{"content":[{"tools":[{"name":"x","execution":{"taskSupport":"required"}}]}]}}"#;
    assert!(scan(nested).task_required.is_empty());
    assert_eq!(scan(r#"{"id":1,"result":{}"#), Facts::default());
    assert_eq!(scan(r#"{"id":1}}"#), Facts::default());
    assert_eq!(scan(r#"{"id":1} {"id":2}"#), Facts::default());
    assert_eq!(scan("not json"), Facts::default());
}

#[test]
fn a_large_string_is_skipped_without_being_held() {
    let big = "x\\\"".repeat(1 << 16);
    let line = format!(
        r#"{{"result":{{"content":[{{"type":"text","text":"{big}"}}]}},"jsonrpc":"2.0","id":41}}"#
    );
    let facts = scan_in_pieces(line.as_bytes(), 4093);
    assert_eq!(facts.answered_id(), Some("41".to_string()));
}

/// A JSON value of bounded size, with keys the scan looks for among the others.
fn value() -> impl Strategy<Value = Value> {
    let key = prop_oneof![
        Just("id".to_string()),
        Just("method".to_string()),
        Just("name".to_string()),
        Just("result".to_string()),
        "[a-z\\\\\"é]{0,6}",
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        // Exact binary fractions: serde's float parsing rounds the last digit of others.
        (-4000i32..4000).prop_map(|n| json!(f64::from(n) / 4.0)),
        "[ -~é\\n\\t]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((key.clone(), inner), 0..5)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

proptest! {
    /// The scan agrees with serde on every message's id and method, in any chunking.
    #[test]
    fn agrees_with_serde(message in value(), piece in 1usize..40, spaced in any::<bool>()) {
        let line = if spaced {
            serde_json::to_string_pretty(&message).expect("json").replace('\n', " ")
        } else {
            message.to_string()
        };
        let facts = scan_in_pieces(line.as_bytes(), piece);
        let (id, has_method) = match &message {
            Value::Object(map) => (
                // JSON-RPC ids are numbers or strings; the scan reads only those.
                map.get("id").filter(|id| id.is_number() || id.is_string()).map(Value::to_string),
                map.contains_key("method"),
            ),
            _ => (None, false),
        };
        prop_assert_eq!(facts.id, id);
        prop_assert_eq!(facts.has_method, has_method);
    }
}
