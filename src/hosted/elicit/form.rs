//! The form of a form-mode elicitation (issue 17, "Elicitation"): the fields a flat
//! `requestedSchema` declares, what the user typed or chose in each, and the `content` an
//! Accept sends, typed per schema. Pure (no screen, no keys of the terminal): the panel maps
//! its keys to [`FormKey`] and draws what [`Form`] holds, so every rule here is unit-tested.
//!
//! Field kinds: `string` (`minLength`/`maxLength`, `format` `email`, `uri`, `date`,
//! `date-time`), `number`/`integer` (`minimum`/`maximum`), `boolean`, single-select (`enum`,
//! `oneOf [{const, title}]`, legacy `enumNames`), multi-select (`type: "array"` with
//! `items.enum` or `items.anyOf [{const, title}]`, `minItems`/`maxItems`). A `default`
//! pre-fills its field (SEP-1034); `required` fields are marked and must be filled.

use serde_json::{Map, Number, Value};

use super::formats::{valid_date, valid_date_time, valid_email, valid_uri};

/// A `string` field's `format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Email,
    Uri,
    Date,
    DateTime,
}

/// One choice of a select: the value sent and the title shown.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    pub value: Value,
    pub title: String,
}

/// What a field holds and how it is checked.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Text {
        format: Option<Format>,
        min_len: Option<u64>,
        max_len: Option<u64>,
    },
    Number {
        integer: bool,
        min: Option<f64>,
        max: Option<f64>,
    },
    Boolean,
    Select {
        options: Vec<Choice>,
    },
    Multi {
        options: Vec<Choice>,
        min_items: Option<u64>,
        max_items: Option<u64>,
    },
}

/// One field of the form.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The property's name (the key in `content`).
    pub name: String,
    /// `title`, else the name (shown sanitised by the panel).
    pub title: String,
    pub description: Option<String>,
    pub required: bool,
    pub kind: Kind,
    /// What was typed (text and number fields).
    pub text: String,
    /// A boolean's state.
    pub checked: bool,
    /// A single-select's choice.
    pub selected: Option<usize>,
    /// A multi-select's ticked options, and the option `Space` toggles.
    pub picked: Vec<bool>,
    pub cursor: usize,
    /// Why the last Accept refused this field's value.
    pub error: Option<String>,
}

/// The three buttons under the fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Button {
    Accept,
    Decline,
    Cancel,
}

const BUTTONS: [Button; 3] = [Button::Accept, Button::Decline, Button::Cancel];

/// What has the focus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Field(usize),
    Button(Button),
}

/// The keys the form understands (the panel maps the terminal's keys to these).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormKey {
    /// `Tab`, `Down`.
    Next,
    /// `Shift-Tab`, `Up`.
    Prev,
    Char(char),
    Backspace,
    /// `Ctrl-U`.
    Clear,
    /// `Space`: toggles a boolean or a multi-select item, types a space in a text field.
    Space,
    Left,
    Right,
    Enter,
    Escape,
}

/// How the user answered.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Accept(Map<String, Value>),
    Decline,
    Cancel,
}

/// A form being filled.
#[derive(Debug, Clone, PartialEq)]
pub struct Form {
    pub fields: Vec<Field>,
    /// Index over the fields then the buttons.
    focus: usize,
}

impl Form {
    /// The form of `schema` (a `requestedSchema`), its fields in `order` (the wire order rmcp
    /// kept; names it lacks follow in the schema's order).
    pub fn new(schema: &Value, order: &[String]) -> Form {
        let empty = Map::new();
        let properties = schema
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut names: Vec<&String> = order
            .iter()
            .filter(|n| properties.contains_key(n.as_str()))
            .collect();
        for name in properties.keys() {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        let fields = names
            .into_iter()
            .filter_map(|name| {
                let property = properties.get(name)?;
                Some(field(name, property, required.contains(&name.as_str())))
            })
            .collect();
        Form { fields, focus: 0 }
    }

    pub fn focus(&self) -> Focus {
        match self.focus.checked_sub(self.fields.len()) {
            None => Focus::Field(self.focus),
            Some(i) => Focus::Button(BUTTONS[i.min(BUTTONS.len() - 1)]),
        }
    }

    fn stops(&self) -> usize {
        self.fields.len() + BUTTONS.len()
    }

    /// Applies `key`; the answer when it ends the form.
    pub fn key(&mut self, key: FormKey) -> Option<Outcome> {
        let stops = self.stops();
        match (key, self.focus()) {
            (FormKey::Escape, _) => return Some(Outcome::Cancel),
            (FormKey::Next, _) => self.focus = (self.focus + 1) % stops,
            (FormKey::Prev, _) => self.focus = (self.focus + stops - 1) % stops,
            (FormKey::Enter, Focus::Button(Button::Accept)) => {
                return self.accept().map(Outcome::Accept)
            }
            (FormKey::Enter, Focus::Button(Button::Decline)) => return Some(Outcome::Decline),
            (FormKey::Enter, Focus::Button(Button::Cancel)) => return Some(Outcome::Cancel),
            // Enter in a field moves on, towards the buttons.
            (FormKey::Enter, Focus::Field(_)) => self.focus += 1,
            (FormKey::Left | FormKey::Right, Focus::Button(_)) => {
                let first = self.fields.len();
                let i = self.focus - first;
                let n = BUTTONS.len();
                let i = if key == FormKey::Left {
                    (i + n - 1) % n
                } else {
                    (i + 1) % n
                };
                self.focus = first + i;
            }
            (key, Focus::Field(i)) => {
                if let Some(field) = self.fields.get_mut(i) {
                    field.edit(key);
                }
            }
            _ => {}
        }
        None
    }

    /// Every field's value, or (the errors set under the fields, the focus on the first
    /// refused one) None.
    pub fn accept(&mut self) -> Option<Map<String, Value>> {
        let mut content = Map::new();
        let mut first_bad = None;
        for (i, field) in self.fields.iter_mut().enumerate() {
            match field.value() {
                Ok(Some(value)) => {
                    content.insert(field.name.clone(), value);
                    field.error = None;
                }
                Ok(None) => field.error = None,
                Err(message) => {
                    field.error = Some(message);
                    first_bad.get_or_insert(i);
                }
            }
        }
        match first_bad {
            Some(i) => {
                self.focus = i;
                None
            }
            None => Some(content),
        }
    }
}

/// The field of property `name`.
fn field(name: &str, property: &Value, required: bool) -> Field {
    let str_of = |key: &str| property.get(key).and_then(Value::as_str).map(String::from);
    let u64_of = |key: &str| property.get(key).and_then(Value::as_u64);
    let f64_of = |key: &str| property.get(key).and_then(Value::as_f64);
    let ty = property.get("type").and_then(Value::as_str).unwrap_or("");
    let kind = match ty {
        "boolean" => Kind::Boolean,
        "number" | "integer" => Kind::Number {
            integer: ty == "integer",
            min: f64_of("minimum"),
            max: f64_of("maximum"),
        },
        "array" => Kind::Multi {
            options: property.get("items").map(choices).unwrap_or_default(),
            min_items: u64_of("minItems"),
            max_items: u64_of("maxItems"),
        },
        _ => {
            let options = choices(property);
            if options.is_empty() {
                Kind::Text {
                    format: match property.get("format").and_then(Value::as_str) {
                        Some("email") => Some(Format::Email),
                        Some("uri") => Some(Format::Uri),
                        Some("date") => Some(Format::Date),
                        Some("date-time") => Some(Format::DateTime),
                        _ => None,
                    },
                    min_len: u64_of("minLength"),
                    max_len: u64_of("maxLength"),
                }
            } else {
                Kind::Select { options }
            }
        }
    };
    let mut field = Field {
        name: name.to_string(),
        title: str_of("title").unwrap_or_else(|| name.to_string()),
        description: str_of("description"),
        required,
        text: String::new(),
        checked: false,
        selected: None,
        picked: Vec::new(),
        cursor: 0,
        error: None,
        kind,
    };
    if let Kind::Multi { options, .. } = &field.kind {
        field.picked = vec![false; options.len()];
    }
    if let Some(default) = property.get("default") {
        field.prefill(default);
    }
    field
}

/// The choices a schema (a property, or an array's `items`) offers: `enum` (titled by
/// `enumNames` when it has as many), else `oneOf`/`anyOf` of `{const, title}`.
fn choices(schema: &Value) -> Vec<Choice> {
    let title_of = |value: &Value| match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let names = schema
            .get("enumNames")
            .and_then(Value::as_array)
            .filter(|n| n.len() == values.len());
        return values
            .iter()
            .enumerate()
            .map(|(i, value)| Choice {
                value: value.clone(),
                title: names
                    .and_then(|n| n.get(i))
                    .and_then(Value::as_str)
                    .map_or_else(|| title_of(value), String::from),
            })
            .collect();
    }
    let listed = schema
        .get("oneOf")
        .or_else(|| schema.get("anyOf"))
        .and_then(Value::as_array);
    listed
        .into_iter()
        .flatten()
        .filter_map(|option| {
            let value = option.get("const")?.clone();
            let title = option
                .get("title")
                .and_then(Value::as_str)
                .map_or_else(|| title_of(&value), String::from);
            Some(Choice { value, title })
        })
        .collect()
}

impl Field {
    /// Starts the field at the schema's `default`.
    fn prefill(&mut self, default: &Value) {
        match &self.kind {
            Kind::Text { .. } => {
                if let Some(s) = default.as_str() {
                    self.text = s.to_string();
                }
            }
            Kind::Number { .. } => {
                if default.is_number() {
                    self.text = default.to_string();
                }
            }
            Kind::Boolean => self.checked = default.as_bool().unwrap_or(false),
            Kind::Select { options } => {
                self.selected = options.iter().position(|c| &c.value == default);
            }
            Kind::Multi { options, .. } => {
                for value in default.as_array().into_iter().flatten() {
                    if let Some(i) = options.iter().position(|c| &c.value == value) {
                        self.picked[i] = true;
                    }
                }
            }
        }
    }

    /// A key while this field has the focus; an edit clears the field's error.
    fn edit(&mut self, key: FormKey) {
        let before = (
            self.text.clone(),
            self.checked,
            self.selected,
            self.picked.clone(),
        );
        match (&self.kind, key) {
            (Kind::Text { .. } | Kind::Number { .. }, FormKey::Char(c)) => self.text.push(c),
            (Kind::Text { .. } | Kind::Number { .. }, FormKey::Space) => self.text.push(' '),
            (Kind::Text { .. } | Kind::Number { .. }, FormKey::Backspace) => {
                self.text.pop();
            }
            (Kind::Text { .. } | Kind::Number { .. }, FormKey::Clear) => self.text.clear(),
            (Kind::Boolean, FormKey::Space | FormKey::Left | FormKey::Right) => {
                self.checked = !self.checked
            }
            (Kind::Select { options }, FormKey::Left | FormKey::Right | FormKey::Space) => {
                self.selected = cycle(
                    self.selected,
                    options.len(),
                    !self.required,
                    key == FormKey::Left,
                );
            }
            (Kind::Select { .. }, FormKey::Clear | FormKey::Backspace) if !self.required => {
                self.selected = None
            }
            (Kind::Multi { options, .. }, FormKey::Left) if !options.is_empty() => {
                self.cursor = (self.cursor + options.len() - 1) % options.len();
            }
            (Kind::Multi { options, .. }, FormKey::Right) if !options.is_empty() => {
                self.cursor = (self.cursor + 1) % options.len();
            }
            (Kind::Multi { .. }, FormKey::Space) => {
                if let Some(p) = self.picked.get_mut(self.cursor) {
                    *p = !*p;
                }
            }
            (Kind::Multi { .. }, FormKey::Clear) => self.picked.fill(false),
            _ => {}
        }
        let after = (
            self.text.clone(),
            self.checked,
            self.selected,
            self.picked.clone(),
        );
        if before != after {
            self.error = None;
        }
    }

    /// The value `content` gets for this field: None when left empty (and allowed to be),
    /// else the typed value, or why it is refused.
    pub fn value(&self) -> Result<Option<Value>, String> {
        match &self.kind {
            Kind::Text {
                format,
                min_len,
                max_len,
            } => {
                if self.text.is_empty() {
                    return self.empty();
                }
                let len = self.text.chars().count() as u64;
                if let Some(min) = min_len.filter(|&m| len < m) {
                    return Err(format!("at least {min} characters"));
                }
                if let Some(max) = max_len.filter(|&m| len > m) {
                    return Err(format!("at most {max} characters"));
                }
                let (ok, wanted) = match format {
                    None => (true, ""),
                    Some(Format::Email) => (valid_email(&self.text), "an email address"),
                    Some(Format::Uri) => (valid_uri(&self.text), "a URI, like https://example.com"),
                    Some(Format::Date) => (valid_date(&self.text), "a date, like 2026-01-31"),
                    Some(Format::DateTime) => (
                        valid_date_time(&self.text),
                        "a date and time, like 2026-01-31T09:30:00Z",
                    ),
                };
                if !ok {
                    return Err(format!("not {wanted}"));
                }
                Ok(Some(Value::String(self.text.clone())))
            }
            Kind::Number { integer, min, max } => {
                let text = self.text.trim();
                if text.is_empty() {
                    return self.empty();
                }
                let (value, as_f64) = if *integer {
                    let n: i64 = text.parse().map_err(|_| "not a whole number".to_string())?;
                    (Value::from(n), n as f64)
                } else {
                    let n: f64 = text
                        .parse()
                        .ok()
                        .filter(|n: &f64| n.is_finite())
                        .ok_or_else(|| "not a number".to_string())?;
                    let value = Number::from_f64(n).map(Value::Number);
                    (value.ok_or_else(|| "not a number".to_string())?, n)
                };
                if let Some(min) = min.filter(|&m| as_f64 < m) {
                    return Err(format!("at least {}", number_text(min)));
                }
                if let Some(max) = max.filter(|&m| as_f64 > m) {
                    return Err(format!("at most {}", number_text(max)));
                }
                Ok(Some(value))
            }
            Kind::Boolean => Ok(Some(Value::Bool(self.checked))),
            Kind::Select { options } => match self.selected.and_then(|i| options.get(i)) {
                Some(choice) => Ok(Some(choice.value.clone())),
                None if self.required => Err("choose one".into()),
                None => Ok(None),
            },
            Kind::Multi {
                options,
                min_items,
                max_items,
            } => {
                let chosen: Vec<Value> = options
                    .iter()
                    .zip(&self.picked)
                    .filter(|(_, &p)| p)
                    .map(|(c, _)| c.value.clone())
                    .collect();
                let n = chosen.len() as u64;
                // Left out, an optional array is not checked against its bounds.
                if chosen.is_empty() && !self.required {
                    return Ok(None);
                }
                if chosen.is_empty() && self.required {
                    return Err("choose at least one".into());
                }
                if let Some(min) = min_items.filter(|&m| n < m) {
                    return Err(format!("choose at least {min}"));
                }
                if let Some(max) = max_items.filter(|&m| n > m) {
                    return Err(format!("choose at most {max}"));
                }
                Ok(Some(Value::Array(chosen)))
            }
        }
    }

    fn empty(&self) -> Result<Option<Value>, String> {
        if self.required {
            Err("required".into())
        } else {
            Ok(None)
        }
    }
}

/// `3` for 3.0, `3.14` otherwise.
fn number_text(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        n.to_string()
    }
}

/// The next choice of a single-select with `n` options (`none` allowed: one more stop, no
/// choice), backwards when `back`.
fn cycle(current: Option<usize>, n: usize, none: bool, back: bool) -> Option<usize> {
    if n == 0 {
        return None;
    }
    let Some(at) = current else {
        return Some(if back { n - 1 } else { 0 });
    };
    // Stops: 0..n the options, n the empty choice when allowed.
    let stops = if none { n + 1 } else { n };
    let next = if back {
        (at + stops - 1) % stops
    } else {
        (at + 1) % stops
    };
    (next < n).then_some(next)
}

#[cfg(test)]
#[path = "form_tests.rs"]
mod tests;
