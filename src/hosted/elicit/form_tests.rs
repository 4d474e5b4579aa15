use super::*;
use serde_json::json;

/// server-everything's `trigger-elicitation-request` schema (2026.8.31), every field kind.
fn everything() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"title": "String", "type": "string", "description": "Your full, legal name"},
            "check": {"title": "Boolean", "type": "boolean"},
            "firstLine": {"type": "string", "default": "It was a dark and stormy night."},
            "email": {"type": "string", "format": "email"},
            "homepage": {"type": "string", "format": "uri"},
            "birthdate": {"type": "string", "format": "date"},
            "integer": {"type": "integer", "minimum": 1, "maximum": 100, "default": 42},
            "number": {"type": "number", "minimum": 0, "maximum": 1000, "default": 2.5},
            "untitledSingleSelectEnum": {"type": "string", "enum": ["Monica", "Rachel", "Joey"], "default": "Monica"},
            "untitledMultipleSelectEnum": {
                "type": "array", "minItems": 1, "maxItems": 2,
                "items": {"type": "string", "enum": ["Guitar", "Piano", "Violin"]},
                "default": ["Guitar"]
            },
            "titledSingleSelectEnum": {
                "type": "string",
                "oneOf": [{"const": "hero-1", "title": "Superman"}, {"const": "hero-2", "title": "Green Lantern"}],
                "default": "hero-1"
            },
            "titledMultipleSelectEnum": {
                "type": "array",
                "items": {"anyOf": [{"const": "fish-1", "title": "Tuna"}, {"const": "fish-2", "title": "Salmon"}]},
                "default": ["fish-1"]
            },
            "legacyTitledEnum": {
                "type": "string", "enum": ["pet-1", "pet-2"], "enumNames": ["Cats", "Dogs"], "default": "pet-1"
            }
        },
        "required": ["name"]
    })
}

fn order() -> Vec<String> {
    [
        "name",
        "check",
        "firstLine",
        "email",
        "homepage",
        "birthdate",
        "integer",
        "number",
        "untitledSingleSelectEnum",
        "untitledMultipleSelectEnum",
        "titledSingleSelectEnum",
        "titledMultipleSelectEnum",
        "legacyTitledEnum",
    ]
    .map(String::from)
    .to_vec()
}

fn field<'a>(form: &'a Form, name: &str) -> &'a Field {
    form.fields
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no field {name}"))
}

fn focus_on(form: &mut Form, name: &str) {
    let i = form
        .fields
        .iter()
        .position(|f| f.name == name)
        .unwrap_or_else(|| panic!("no field {name}"));
    while form.focus() != Focus::Field(i) {
        assert_eq!(form.key(FormKey::Next), None);
    }
}

fn type_text(form: &mut Form, text: &str) {
    for c in text.chars() {
        let key = if c == ' ' {
            FormKey::Space
        } else {
            FormKey::Char(c)
        };
        assert_eq!(form.key(key), None);
    }
}

fn press(form: &mut Form, button: Button) -> Option<Outcome> {
    while form.focus() != Focus::Button(button) {
        form.key(FormKey::Next);
    }
    form.key(FormKey::Enter)
}

#[test]
fn every_field_kind_comes_from_the_schema_in_wire_order_with_its_kind_and_titles() {
    let form = Form::new(&everything(), &order());
    let names: Vec<&str> = form.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, order());
    let name = field(&form, "name");
    assert_eq!(
        (name.title.as_str(), name.required),
        ("String", true),
        "title and required"
    );
    assert_eq!(name.description.as_deref(), Some("Your full, legal name"));
    assert_eq!(
        field(&form, "firstLine").title,
        "firstLine",
        "no title: the name"
    );
    assert!(!field(&form, "check").required);
    assert_eq!(field(&form, "check").kind, Kind::Boolean);
    assert!(matches!(
        field(&form, "email").kind,
        Kind::Text {
            format: Some(Format::Email),
            ..
        }
    ));
    assert!(matches!(
        field(&form, "integer").kind,
        Kind::Number {
            integer: true,
            min: Some(_),
            max: Some(_)
        }
    ));
    let titles = |name: &str| -> Vec<String> {
        match &field(&form, name).kind {
            Kind::Select { options } | Kind::Multi { options, .. } => {
                options.iter().map(|c| c.title.clone()).collect()
            }
            other => panic!("{name} is {other:?}"),
        }
    };
    assert_eq!(
        titles("untitledSingleSelectEnum"),
        ["Monica", "Rachel", "Joey"]
    );
    assert_eq!(
        titles("titledSingleSelectEnum"),
        ["Superman", "Green Lantern"]
    );
    assert_eq!(titles("legacyTitledEnum"), ["Cats", "Dogs"], "enumNames");
    assert_eq!(
        titles("untitledMultipleSelectEnum"),
        ["Guitar", "Piano", "Violin"]
    );
    assert_eq!(titles("titledMultipleSelectEnum"), ["Tuna", "Salmon"]);
}

#[test]
fn defaults_are_prefilled_and_accepted_typed_per_schema() {
    let mut form = Form::new(&everything(), &order());
    assert_eq!(
        field(&form, "firstLine").text,
        "It was a dark and stormy night."
    );
    assert_eq!(field(&form, "integer").text, "42");
    focus_on(&mut form, "name");
    type_text(&mut form, "Ana Lima");
    let Some(Outcome::Accept(content)) = press(&mut form, Button::Accept) else {
        panic!(
            "refused: {:?}",
            form.fields
                .iter()
                .filter_map(|f| f.error.clone())
                .collect::<Vec<_>>()
        );
    };
    assert_eq!(
        Value::Object(content),
        json!({
            "name": "Ana Lima",
            "check": false,
            "firstLine": "It was a dark and stormy night.",
            "integer": 42,
            "number": 2.5,
            "untitledSingleSelectEnum": "Monica",
            "untitledMultipleSelectEnum": ["Guitar"],
            "titledSingleSelectEnum": "hero-1",
            "titledMultipleSelectEnum": ["fish-1"],
            "legacyTitledEnum": "pet-1"
        })
    );
}

#[test]
fn integers_go_out_as_json_integers_and_numbers_as_numbers() {
    let schema = json!({"type": "object", "properties": {
        "n": {"type": "integer"}, "x": {"type": "number"}
    }});
    let mut form = Form::new(&schema, &[]);
    focus_on(&mut form, "n");
    type_text(&mut form, "7");
    focus_on(&mut form, "x");
    type_text(&mut form, "2.5");
    let Some(Outcome::Accept(content)) = press(&mut form, Button::Accept) else {
        panic!("refused");
    };
    assert!(content["n"].is_i64(), "{content:?}");
    assert_eq!(content["n"], json!(7));
    assert_eq!(content["x"], json!(2.5));
}

#[test]
fn accept_is_refused_with_a_message_under_each_invalid_field() {
    let cases: Vec<(Value, &str, &str)> = vec![
        (json!({"type": "string"}), "", "required"),
        (
            json!({"type": "string", "minLength": 3}),
            "ab",
            "at least 3 characters",
        ),
        (
            json!({"type": "string", "maxLength": 2}),
            "abc",
            "at most 2 characters",
        ),
        (
            json!({"type": "string", "format": "email"}),
            "ana",
            "not an email address",
        ),
        (
            json!({"type": "string", "format": "uri"}),
            "nope",
            "not a URI, like https://example.com",
        ),
        (
            json!({"type": "string", "format": "date"}),
            "2026-02-30",
            "not a date, like 2026-01-31",
        ),
        (
            json!({"type": "string", "format": "date-time"}),
            "2026-02-03",
            "not a date and time, like 2026-01-31T09:30:00Z",
        ),
        (json!({"type": "integer"}), "4.5", "not a whole number"),
        (json!({"type": "integer", "minimum": 1}), "0", "at least 1"),
        (
            json!({"type": "number", "maximum": 2.5}),
            "3",
            "at most 2.5",
        ),
        (json!({"type": "number"}), "abc", "not a number"),
        (
            json!({"type": "string", "enum": ["a", "b"]}),
            "",
            "choose one",
        ),
        (
            json!({"type": "array", "items": {"enum": ["a", "b"]}}),
            "",
            "choose at least one",
        ),
    ];
    for (property, typed, message) in cases {
        let schema = json!({"type": "object", "properties": {"f": property}, "required": ["f"]});
        let mut form = Form::new(&schema, &[]);
        type_text(&mut form, typed);
        assert_eq!(
            press(&mut form, Button::Accept),
            None,
            "{property} {typed:?}"
        );
        assert_eq!(
            form.fields[0].error.as_deref(),
            Some(message),
            "{property} {typed:?}"
        );
        assert_eq!(
            form.focus(),
            Focus::Field(0),
            "the focus goes to the refused field"
        );
        // Editing clears the message.
        form.key(FormKey::Clear);
        form.key(FormKey::Char('x'));
        if matches!(form.fields[0].kind, Kind::Text { .. } | Kind::Number { .. }) {
            assert_eq!(form.fields[0].error, None);
        }
    }
}

#[test]
fn multi_select_bounds_and_toggles() {
    let schema = json!({"type": "object", "properties": {"m": {
        "type": "array", "minItems": 1, "maxItems": 2,
        "items": {"anyOf": [{"const": 1, "title": "one"}, {"const": 2, "title": "two"}, {"const": 3, "title": "three"}]}
    }}});
    let mut form = Form::new(&schema, &[]);
    assert_eq!(
        press(&mut form, Button::Accept),
        Some(Outcome::Accept(Map::new())),
        "optional and empty: left out, its bounds unchecked"
    );
    let schema = json!({"type": "object", "required": ["m"], "properties": {"m": {
        "type": "array", "minItems": 2, "maxItems": 2,
        "items": {"anyOf": [{"const": 1, "title": "one"}, {"const": 2, "title": "two"}, {"const": 3, "title": "three"}]}
    }}});
    let mut form = Form::new(&schema, &[]);
    form.key(FormKey::Space);
    assert_eq!(press(&mut form, Button::Accept), None);
    assert_eq!(form.fields[0].error.as_deref(), Some("choose at least 2"));
    form.key(FormKey::Space);
    // Space toggles the item under the cursor; Right moves the cursor.
    for key in [
        FormKey::Space,
        FormKey::Right,
        FormKey::Space,
        FormKey::Right,
        FormKey::Space,
    ] {
        form.key(key);
    }
    assert_eq!(form.fields[0].picked, [true, true, true]);
    assert_eq!(press(&mut form, Button::Accept), None);
    assert_eq!(form.fields[0].error.as_deref(), Some("choose at most 2"));
    form.key(FormKey::Left);
    form.key(FormKey::Space);
    let Some(Outcome::Accept(content)) = press(&mut form, Button::Accept) else {
        panic!("refused");
    };
    assert_eq!(content["m"], json!([1, 3]), "the consts, typed as declared");
}

#[test]
fn single_select_cycles_with_left_and_right_and_optional_ones_can_be_empty() {
    let schema = json!({"type": "object", "properties": {
        "req": {"type": "string", "enum": ["a", "b", "c"]},
        "opt": {"type": "string", "oneOf": [{"const": "x", "title": "X"}], "default": "x"}
    }, "required": ["req"]});
    let mut form = Form::new(&schema, &["req".into(), "opt".into()]);
    assert_eq!(form.fields[0].selected, None);
    form.key(FormKey::Right);
    assert_eq!(form.fields[0].selected, Some(0));
    form.key(FormKey::Left);
    assert_eq!(form.fields[0].selected, Some(2), "wraps backwards");
    form.key(FormKey::Right);
    assert_eq!(form.fields[0].selected, Some(0), "required: no empty stop");
    form.key(FormKey::Next);
    assert_eq!(form.fields[1].selected, Some(0), "the default");
    form.key(FormKey::Right);
    assert_eq!(form.fields[1].selected, None, "optional: an empty stop");
    let Some(Outcome::Accept(content)) = press(&mut form, Button::Accept) else {
        panic!("refused");
    };
    assert_eq!(Value::Object(content), json!({"req": "a"}));
}

#[test]
fn booleans_toggle_with_space_and_text_takes_spaces_backspace_and_ctrl_u() {
    let schema = json!({"type": "object", "properties": {
        "b": {"type": "boolean", "default": true}, "t": {"type": "string"}
    }});
    let mut form = Form::new(&schema, &["b".into(), "t".into()]);
    assert!(form.fields[0].checked, "default true");
    form.key(FormKey::Space);
    assert!(!form.fields[0].checked);
    form.key(FormKey::Next);
    type_text(&mut form, "a bc");
    form.key(FormKey::Backspace);
    assert_eq!(form.fields[1].text, "a b");
    form.key(FormKey::Clear);
    assert_eq!(form.fields[1].text, "");
    let Some(Outcome::Accept(content)) = press(&mut form, Button::Accept) else {
        panic!("refused");
    };
    assert_eq!(
        Value::Object(content),
        json!({"b": false}),
        "empty optional text left out"
    );
}

#[test]
fn focus_moves_over_fields_and_buttons_and_the_buttons_answer() {
    let schema = json!({"type": "object", "properties": {"t": {"type": "string"}}});
    let mut form = Form::new(&schema, &[]);
    assert_eq!(form.focus(), Focus::Field(0));
    form.key(FormKey::Prev);
    assert_eq!(
        form.focus(),
        Focus::Button(Button::Cancel),
        "wraps backwards"
    );
    form.key(FormKey::Left);
    assert_eq!(
        form.focus(),
        Focus::Button(Button::Decline),
        "Left between buttons"
    );
    form.key(FormKey::Next);
    assert_eq!(form.focus(), Focus::Button(Button::Cancel));
    form.key(FormKey::Next);
    assert_eq!(form.focus(), Focus::Field(0), "wraps forwards");
    form.key(FormKey::Enter);
    assert_eq!(
        form.focus(),
        Focus::Button(Button::Accept),
        "Enter in a field moves on"
    );
    assert_eq!(press(&mut form, Button::Decline), Some(Outcome::Decline));
    assert_eq!(press(&mut form, Button::Cancel), Some(Outcome::Cancel));
    assert_eq!(form.key(FormKey::Escape), Some(Outcome::Cancel));
}

#[test]
fn rmcp_keeps_every_keyword_the_form_reads_and_the_wire_order() {
    // The form is built from rmcp's typed schema turned back into JSON: what rmcp drops, the
    // form could not show. Everything server-everything sends must survive the round trip.
    let typed: rmcp::model::ElicitationSchema =
        serde_json::from_value(everything()).expect("rmcp reads the schema");
    let back = serde_json::to_value(&typed).expect("back to JSON");
    let by_name = |form: Form| {
        let mut fields = form.fields;
        fields.sort_by(|a, b| a.name.cmp(&b.name));
        fields
    };
    assert_eq!(
        by_name(Form::new(&back, &[])),
        by_name(Form::new(&everything(), &[]))
    );
    // The order comes from the wire text, which a JSON value (sorted) does not keep.
    let wire =
        r#"{"type": "object", "properties": {"b": {"type": "string"}, "a": {"type": "boolean"}}}"#;
    let typed: rmcp::model::ElicitationSchema = serde_json::from_str(wire).expect("parses");
    let order = typed.property_order.clone().unwrap_or_default();
    let back = serde_json::to_value(&typed).expect("back to JSON");
    let names: Vec<String> = Form::new(&back, &order)
        .fields
        .into_iter()
        .map(|f| f.name)
        .collect();
    assert_eq!(names, ["b", "a"]);
}
