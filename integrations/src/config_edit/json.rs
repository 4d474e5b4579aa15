//! The JSON splice editor: sets or removes one member, or calyx's own entries in one array,
//! by replacing only the bytes of what changes. Key order, whitespace, comments and unrelated
//! entries come back byte for byte; inserted text follows the file's indentation and line
//! endings. Inserting at the end of a container and removing from the end are exact inverses,
//! which is what makes uninstall-after-install give back the original bytes.

use serde_json::Value;

use super::json_parse::{self, Node, NodeKind};
use super::{line_ending, split_bom, EditError};

/// A JSON value with its key order fixed, for the entries calyx writes (serde_json's map
/// sorts keys unless a workspace-wide feature is turned on, and the order is part of what
/// users read in the diff).
#[derive(Debug, Clone, PartialEq)]
pub enum J {
    Obj(Vec<(String, J)>),
    Arr(Vec<J>),
    Str(String),
    Int(i64),
    Bool(bool),
}

impl J {
    /// An object from `(key, value)` pairs.
    pub fn obj<K: Into<String>>(pairs: impl IntoIterator<Item = (K, J)>) -> J {
        J::Obj(pairs.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }

    /// A string.
    pub fn s(v: impl Into<String>) -> J {
        J::Str(v.into())
    }

    /// The same value as serde_json's (for comparing meanings).
    pub fn to_value(&self) -> Value {
        match self {
            J::Obj(pairs) => Value::Object(
                pairs
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_value()))
                    .collect(),
            ),
            J::Arr(items) => Value::Array(items.iter().map(J::to_value).collect()),
            J::Str(s) => Value::String(s.clone()),
            J::Int(n) => Value::from(*n),
            J::Bool(b) => Value::Bool(*b),
        }
    }

    /// Renders the value; `unit` is one indentation step, `base` the indentation of the line
    /// the value starts on. An empty `unit` renders on one line.
    pub fn render(&self, unit: &str, base: &str, nl: &str) -> String {
        let mut out = String::new();
        self.render_into(&mut out, unit, base, nl);
        out
    }

    fn render_into(&self, out: &mut String, unit: &str, base: &str, nl: &str) {
        let inner = format!("{base}{unit}");
        let (open, close, items): (char, char, Vec<(Option<&str>, &J)>) = match self {
            J::Obj(pairs) => (
                '{',
                '}',
                pairs.iter().map(|(k, v)| (Some(k.as_str()), v)).collect(),
            ),
            J::Arr(items) => ('[', ']', items.iter().map(|v| (None, v)).collect()),
            J::Str(s) => return out.push_str(&Value::String(s.clone()).to_string()),
            J::Int(n) => return out.push_str(&n.to_string()),
            J::Bool(b) => return out.push_str(if *b { "true" } else { "false" }),
        };
        out.push(open);
        if items.is_empty() {
            out.push(close);
            return;
        }
        for (i, (key, value)) in items.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            if unit.is_empty() {
                if i > 0 {
                    out.push(' ');
                }
            } else {
                out.push_str(nl);
                out.push_str(&inner);
            }
            if let Some(k) = key {
                out.push_str(&Value::String((*k).to_string()).to_string());
                out.push_str(": ");
            }
            value.render_into(out, unit, &inner, nl);
        }
        if !unit.is_empty() {
            out.push_str(nl);
            out.push_str(base);
        }
        out.push(close);
    }
}

/// A JSON (or JSONC) document being edited. Every edit re-parses, so spans are always fresh.
#[derive(Debug, Clone)]
pub struct JsonDoc {
    bom: &'static str,
    text: String,
    root: Node,
    unit: String,
    nl: &'static str,
}

/// What [`JsonDoc::set_entries`] did with one array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntriesOutcome {
    /// Already exactly calyx's entries: nothing changed.
    Unchanged,
    /// calyx's entries were added or replaced.
    Changed,
    /// The value there is not an array: left alone.
    SkippedShape,
}

impl JsonDoc {
    /// Parses a file's text; an empty (or whitespace-only) file counts as `{}`.
    pub fn parse(text: &str) -> Result<Self, EditError> {
        let (bom, body) = split_bom(text);
        let body = if body.trim().is_empty() { "{}" } else { body };
        let root = json_parse::parse(body)?;
        if !matches!(root.kind, NodeKind::Object(_)) {
            return Err(EditError::at(
                body,
                root.start,
                "the top level is not a JSON object",
            ));
        }
        Ok(Self {
            bom: if bom.is_empty() { "" } else { "\u{feff}" },
            unit: detect_unit(body),
            nl: line_ending(body),
            text: body.to_string(),
            root,
        })
    }

    /// The document's full text, BOM included.
    pub fn text(&self) -> String {
        format!("{}{}", self.bom, self.text)
    }

    /// The parsed tree (offsets are into the text without the BOM).
    pub fn root(&self) -> &Node {
        &self.root
    }

    /// The value at `path` as serde_json sees it (comments and trailing commas dropped).
    pub fn value_at(&self, path: &[&str]) -> Option<Value> {
        let node = self.root.get(path)?;
        node_value(&self.text, node)
    }

    fn splice(&mut self, start: usize, end: usize, with: &str) -> Result<(), EditError> {
        let mut text = String::with_capacity(self.text.len() + with.len());
        text.push_str(&self.text[..start]);
        text.push_str(with);
        text.push_str(&self.text[end..]);
        let root = json_parse::parse(&text).map_err(|e| {
            EditError::new(format!("internal error: edit produced invalid JSON ({e})"))
        })?;
        self.text = text;
        self.root = root;
        Ok(())
    }

    /// Sets `path` to `value`, creating missing parent objects. Returns whether anything changed
    /// (a value equal in meaning is left as it is, formatting and all). Fails when a parent on
    /// the way is not an object.
    pub fn set(&mut self, path: &[&str], value: &J) -> Result<bool, EditError> {
        let Some((_, parents)) = path.split_last() else {
            return Err(EditError::new("empty path"));
        };
        let mut depth = 0;
        let mut node = &self.root;
        while depth < parents.len() {
            match node.member(parents[depth]) {
                Some(m) => {
                    node = &m.value;
                    depth += 1;
                }
                None => break,
            }
        }
        if !matches!(node.kind, NodeKind::Object(_)) {
            return Err(EditError::at(
                &self.text,
                node.start,
                format!("\"{}\" is not an object", parents[..depth].join(".")),
            ));
        }
        // Wrap the value in the objects that are missing.
        let mut wrapped = value.clone();
        for key in path[depth + 1..].iter().rev() {
            wrapped = J::obj([(key.to_string(), wrapped)]);
        }
        let key = path[depth];
        if let Some(m) = node.member(key) {
            let (start, end) = (m.value.start, m.value.end);
            if node_value(&self.text, &m.value).as_ref() == Some(&wrapped.to_value()) {
                return Ok(false);
            }
            let base = line_indent(&self.text, m.key_start).to_string();
            let rendered = wrapped.render(&self.unit, &base, self.nl);
            self.splice(start, end, &rendered)?;
            return Ok(true);
        }
        let (at, insert) = self.insertion(node, Some(key), &wrapped);
        self.splice(at, at, &insert)?;
        Ok(true)
    }

    /// Where and what to insert to add `value` (under `key` for an object) at the end of
    /// `container`.
    fn insertion(&self, container: &Node, key: Option<&str>, value: &J) -> (usize, String) {
        let key_text = key
            .map(|k| format!("{}: ", Value::String(k.to_string())))
            .unwrap_or_default();
        let last = match &container.kind {
            NodeKind::Object(m) => m.last().map(|m| (m.key_start, m.value.end)),
            NodeKind::Array(items) => items.last().map(|n| (n.start, n.end)),
            _ => None,
        };
        let open_indent = line_indent(&self.text, container.start).to_string();
        match last {
            Some((item_start, item_end)) => {
                let same_line = !self.text[container.start..item_start].contains('\n');
                if same_line {
                    let rendered = value.render("", "", self.nl);
                    (item_end, format!(", {key_text}{rendered}"))
                } else {
                    let base = line_indent(&self.text, item_start).to_string();
                    let rendered = value.render(&self.unit, &base, self.nl);
                    (item_end, format!(",{}{base}{key_text}{rendered}", self.nl))
                }
            }
            None => {
                let inner = &self.text[container.start + 1..container.end - 1];
                let base = format!("{open_indent}{}", self.unit);
                let rendered = value.render(&self.unit, &base, self.nl);
                if inner.trim().is_empty() {
                    // `{}` (or `{ }`): write the member on its own lines.
                    let text = format!(
                        "{nl}{base}{key_text}{rendered}{nl}{open_indent}",
                        nl = self.nl
                    );
                    (container.start + 1, text)
                } else {
                    (
                        container.start + 1,
                        format!("{}{base}{key_text}{rendered}", self.nl),
                    )
                }
            }
        }
    }

    /// Removes the member at `path`; then removes each of the `prune` nearest parents that the
    /// removal left empty (containers calyx itself creates, like `mcpServers`). Returns whether
    /// anything changed.
    pub fn remove(&mut self, path: &[&str], prune: usize) -> Result<bool, EditError> {
        let Some((key, parents)) = path.split_last() else {
            return Ok(false);
        };
        let Some(parent) = self.root.get(parents) else {
            return Ok(false);
        };
        let NodeKind::Object(members) = &parent.kind else {
            return Ok(false);
        };
        let Some(i) = members.iter().rposition(|m| m.key == *key) else {
            return Ok(false);
        };
        let spans: Vec<(usize, usize)> =
            members.iter().map(|m| (m.key_start, m.value.end)).collect();
        let (start, end) = removal_span(&self.text, parent, &spans, i);
        if spans.len() == 1 && prune > 0 && !parents.is_empty() {
            return self.remove(parents, prune - 1);
        }
        self.splice(start, end, "")?;
        Ok(true)
    }

    /// Makes calyx's entries in the array at `path` exactly `desired`, in order, at the end:
    /// entries `is_ours` recognises are removed, the desired ones appended. Anything else in
    /// the array is untouched. A missing array is created; a value that is not an array is
    /// skipped, never overwritten.
    pub fn set_entries(
        &mut self,
        path: &[&str],
        desired: &[J],
        is_ours: &dyn Fn(&Value) -> bool,
    ) -> Result<EntriesOutcome, EditError> {
        match self.root.get(path) {
            None => {
                self.set(path, &J::Arr(desired.to_vec()))?;
                return Ok(EntriesOutcome::Changed);
            }
            Some(node) if !matches!(node.kind, NodeKind::Array(_)) => {
                return Ok(EntriesOutcome::SkippedShape)
            }
            Some(_) => {}
        }
        let ours: Vec<Value> = self
            .entries(path)
            .into_iter()
            .filter(|v| is_ours(v))
            .collect();
        let want: Vec<Value> = desired.iter().map(J::to_value).collect();
        let all = self.entries(path);
        let tail_is_ours = all.len() >= want.len() && all[all.len() - want.len()..] == want[..];
        if ours == want && tail_is_ours {
            return Ok(EntriesOutcome::Unchanged);
        }
        self.remove_entries(path, is_ours, 0)?;
        for entry in desired {
            let node = self
                .root
                .get(path)
                .cloned()
                .ok_or_else(|| EditError::new("array vanished"))?;
            let (at, text) = self.insertion(&node, None, entry);
            self.splice(at, at, &text)?;
        }
        Ok(EntriesOutcome::Changed)
    }

    /// The array at `path` as values (unparseable elements come back as `null`).
    fn entries(&self, path: &[&str]) -> Vec<Value> {
        match self.root.get(path).map(|n| &n.kind) {
            Some(NodeKind::Array(items)) => items
                .iter()
                .map(|n| node_value(&self.text, n).unwrap_or(Value::Null))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Removes every element of the array at `path` that `is_ours` recognises; an array left
    /// empty is removed with up to `prune` emptied parents (`prune` 0 keeps even the array).
    pub fn remove_entries(
        &mut self,
        path: &[&str],
        is_ours: &dyn Fn(&Value) -> bool,
        prune: usize,
    ) -> Result<bool, EditError> {
        let mut changed = false;
        loop {
            let Some(node) = self.root.get(path) else {
                return Ok(changed);
            };
            let NodeKind::Array(items) = &node.kind else {
                return Ok(changed);
            };
            let Some(i) = items
                .iter()
                .rposition(|n| node_value(&self.text, n).is_some_and(|v| is_ours(&v)))
            else {
                return Ok(changed);
            };
            if items.len() == 1 && prune > 0 {
                self.remove(path, prune - 1)?;
                return Ok(true);
            }
            let spans: Vec<(usize, usize)> = items.iter().map(|n| (n.start, n.end)).collect();
            let (start, end) = removal_span(&self.text, &node.clone(), &spans, i);
            self.splice(start, end, "")?;
            changed = true;
        }
    }
}

/// The byte range to delete to remove item `i` (given as `(start, end)` spans) of `container`:
/// the last item takes the separator before it (undoing an append), any other item the
/// separator after it, a lone item everything between the brackets.
fn removal_span(
    text: &str,
    container: &Node,
    spans: &[(usize, usize)],
    i: usize,
) -> (usize, usize) {
    if spans.len() == 1 {
        let before = &text[container.start + 1..spans[0].0];
        let after = &text[spans[0].1..container.end - 1];
        let commented = |s: &str| s.contains("//") || s.contains("/*");
        if commented(before) || commented(after) {
            return (spans[0].0, spans[0].1);
        }
        return (container.start + 1, container.end - 1);
    }
    if i + 1 == spans.len() {
        (spans[i - 1].1, spans[i].1)
    } else {
        (spans[i].0, spans[i + 1].0)
    }
}

/// What `node` means, through serde_json (after dropping comments and trailing commas).
fn node_value(text: &str, node: &Node) -> Option<Value> {
    let raw = &text[node.start..node.end];
    serde_json::from_str(raw)
        .ok()
        .or_else(|| serde_json::from_str(&json_parse::strip_jsonc(raw)).ok())
}

/// The whitespace at the start of the line holding byte `pos`.
fn line_indent(text: &str, pos: usize) -> &str {
    let line_start = text[..pos].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[line_start..];
    let len = line.len() - line.trim_start_matches([' ', '\t']).len();
    &line[..len]
}

/// The file's indentation step: the leading whitespace of the first indented line (two
/// spaces when the file has none).
fn detect_unit(text: &str) -> String {
    text.lines()
        .skip(1)
        .map(|l| {
            let len = l.len() - l.trim_start_matches([' ', '\t']).len();
            &l[..len]
        })
        .find(|ws| !ws.is_empty())
        .unwrap_or("  ")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(cmd: &str) -> J {
        J::obj([("command", J::s(cmd))])
    }

    fn ours(v: &Value) -> bool {
        v.get("command")
            .and_then(Value::as_str)
            .is_some_and(|c| c.starts_with("calyx"))
    }

    #[test]
    fn set_then_remove_round_trips() {
        for original in [
            "{}",
            "{\n  \"a\": 1\n}\n",
            "{\"a\": 1}",
            "{\r\n\t\"a\": {\r\n\t\t\"b\": 2\r\n\t}\r\n}\r\n",
            "\u{feff}{\n    \"mcpServers\": {\n        \"x\": {}\n    }\n}",
        ] {
            let mut doc = JsonDoc::parse(original).unwrap();
            let v = J::obj([("url", J::s("http://x")), ("n", J::Int(1))]);
            assert!(doc.set(&["mcpServers", "calyx-ipc"], &v).unwrap());
            let once = doc.text();
            assert!(!doc.set(&["mcpServers", "calyx-ipc"], &v).unwrap());
            assert_eq!(doc.text(), once);
            serde_json::from_str::<Value>(split_bom(&once).1).unwrap();
            assert!(doc.remove(&["mcpServers", "calyx-ipc"], 1).unwrap());
            assert_eq!(doc.text(), original, "from {once}");
        }
    }

    #[test]
    fn entries_keep_foreign_ones() {
        let original = "{\"hooks\": {\"Stop\": [\n  {\"command\": \"mine\"}\n]}}";
        let mut doc = JsonDoc::parse(original).unwrap();
        let want = [entry("calyx a"), entry("calyx b")];
        assert_eq!(
            doc.set_entries(&["hooks", "Stop"], &want, &ours).unwrap(),
            EntriesOutcome::Changed
        );
        let once = doc.text();
        assert_eq!(
            doc.set_entries(&["hooks", "Stop"], &want, &ours).unwrap(),
            EntriesOutcome::Unchanged
        );
        assert!(once.contains("mine"));
        doc.remove_entries(&["hooks", "Stop"], &ours, 2).unwrap();
        assert_eq!(doc.text(), original);
        let mut doc = JsonDoc::parse("{\"hooks\": {\"Stop\": 3}}").unwrap();
        assert_eq!(
            doc.set_entries(&["hooks", "Stop"], &want, &ours).unwrap(),
            EntriesOutcome::SkippedShape
        );
    }
}
