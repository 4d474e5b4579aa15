//! Answers to a server's form elicitation (`elicitation/create`, mode `form`). The content a
//! form starts from is every field's schema `default` (SEP-1034); the conformance client
//! accepts exactly that, and the views issue's form starts from it too.

use serde_json::{Map, Value};

/// The `default` of every property of a `requestedSchema` that declares one.
pub fn schema_defaults(schema: &Value) -> Map<String, Value> {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Map::new();
    };
    properties
        .iter()
        .filter_map(|(name, property)| Some((name.clone(), property.get("default")?.clone())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_declared_default_is_filled_in() {
        let schema = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "score": {"type": "number", "default": 95.5},
                "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
                "verified": {"type": "boolean", "default": true},
                "nickname": {"type": "string"}
            }
        });
        assert_eq!(
            Value::Object(schema_defaults(&schema)),
            json!({"name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": true})
        );
        assert!(schema_defaults(&json!({"type": "object"})).is_empty());
    }
}
