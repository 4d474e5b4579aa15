//! YAML editing by text splice, for Hermes' config.yaml: no YAML library re-serialises the
//! user's file. calyx touches two top-level keys: a `calyx-ipc:` child under `mcp_servers:`,
//! and its own `- command:` items under `hooks: <event>:`. When a key is missing, a block with
//! its own parent is appended; when present, only calyx's lines are inserted, right after the
//! parent line, indented like their siblings. Removal takes exactly those lines back out.
//!
//! Refused rather than guessed: a flow-style value where calyx must insert (`mcp_servers: {}`),
//! tab indentation, and control characters (which could hide content from a reader).

use super::{line_ending, split_bom, EditError};

/// One line of a block calyx inserts: nesting depth (in indentation units) and text.
pub type Line = (usize, String);

/// Refuses files this splicer cannot edit safely.
pub fn check(text: &str) -> Result<(), EditError> {
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let content = line.trim_end_matches(['\n', '\r']);
        if content.starts_with([' ', '\t'])
            && content[..content.len() - content.trim_start().len()].contains('\t')
        {
            return Err(EditError {
                line: Some(i + 1),
                message: "tab in indentation: calyx edits only space-indented YAML".into(),
            });
        }
        if content
            .chars()
            .any(|c| (c.is_control() && c != '\t') || c == '\u{7f}')
        {
            return Err(EditError {
                line: Some(i + 1),
                message: "control character in the text: refusing to edit".into(),
            });
        }
    }
    Ok(())
}

struct Doc {
    bom: &'static str,
    lines: Vec<String>,
    nl: &'static str,
}

impl Doc {
    fn new(text: &str) -> Result<Self, EditError> {
        check(text)?;
        let (bom, body) = split_bom(text);
        Ok(Self {
            bom: if bom.is_empty() { "" } else { "\u{feff}" },
            nl: line_ending(body),
            lines: body.split_inclusive('\n').map(str::to_string).collect(),
        })
    }

    fn text(&self) -> String {
        format!("{}{}", self.bom, self.lines.concat())
    }

    /// The `(index, value-after-colon)` of the line `key:` at exactly `indent`, searched in
    /// `range`.
    fn find_key(
        &self,
        range: std::ops::Range<usize>,
        indent: usize,
        key: &str,
    ) -> Option<(usize, String)> {
        range.into_iter().find_map(|i| {
            let l = self.lines[i].trim_end_matches(['\n', '\r']);
            if indent_of(l) != indent {
                return None;
            }
            let rest = l[indent..].strip_prefix(key).or_else(|| {
                l[indent..]
                    .strip_prefix(&format!("\"{key}\""))
                    .or_else(|| l[indent..].strip_prefix(&format!("'{key}'")))
            })?;
            let value = rest.strip_prefix(':')?;
            (value.is_empty() || value.starts_with(' ')).then(|| (i, value.trim().to_string()))
        })
    }

    /// The lines after `key_line` that belong to it: up to the last line indented deeper than
    /// `indent` before a line that is not (blank lines in between included, trailing ones not).
    fn children(&self, key_line: usize, indent: usize) -> std::ops::Range<usize> {
        let mut end = key_line + 1;
        for i in key_line + 1..self.lines.len() {
            let l = self.lines[i].trim_end_matches(['\n', '\r']);
            if l.trim().is_empty() {
                continue;
            }
            let deeper = indent_of(l) > indent
                || (indent_of(l) == indent
                    && l[indent..].starts_with("- ")
                    && !self.lines[key_line].trim_start().starts_with("- "));
            if !deeper {
                break;
            }
            end = i + 1;
        }
        key_line + 1..end
    }

    /// The indentation of the first non-blank, non-comment line in `range`.
    fn first_indent(&self, range: std::ops::Range<usize>) -> Option<usize> {
        range
            .into_iter()
            .map(|i| self.lines[i].trim_end_matches(['\n', '\r']))
            .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
            .map(indent_of)
    }

    /// The file's indentation unit (first indented line; 2 when there is none).
    fn unit(&self) -> usize {
        self.lines
            .iter()
            .map(|l| indent_of(l))
            .find(|&n| n > 0)
            .unwrap_or(2)
    }

    fn render(&self, base: usize, unit: usize, lines: &[Line]) -> Vec<String> {
        lines
            .iter()
            .map(|(depth, text)| format!("{}{text}{}", " ".repeat(base + depth * unit), self.nl))
            .collect()
    }

    fn insert(&mut self, at: usize, new: Vec<String>) {
        // A last line without a line ending would swallow what follows it.
        if at > 0 && at == self.lines.len() && !self.lines[at - 1].ends_with('\n') {
            self.lines[at - 1].push_str(self.nl);
        }
        self.lines.splice(at..at, new);
    }

    /// Appends a new top-level block, separated by one line ending (taken back on removal).
    fn append_block(&mut self, new: Vec<String>) {
        if self.lines.is_empty() {
            self.lines = new;
            return;
        }
        let nl = self.nl;
        if let Some(last) = self.lines.last_mut() {
            last.push_str(nl);
        }
        self.lines.extend(new);
    }

    /// Removes the line range; when that empties the rest of the file, also the line ending
    /// [`Doc::append_block`] added before it.
    fn remove(&mut self, range: std::ops::Range<usize>) {
        let at_end = range.end == self.lines.len();
        let start = range.start;
        self.lines.drain(range);
        if at_end && start > 0 {
            let last = &mut self.lines[start - 1];
            if let Some(s) = last
                .strip_suffix("\r\n")
                .or_else(|| last.strip_suffix('\n'))
            {
                *last = s.to_string();
            }
            if self.lines[start - 1].is_empty() {
                self.lines.pop();
            }
        }
    }

    /// The top-level `key:` line, refusing a value on the same line (flow style or scalar).
    fn top(&self, key: &str) -> Result<Option<usize>, EditError> {
        match self.find_key(0..self.lines.len(), 0, key) {
            Some((i, value)) if !value.is_empty() && !value.starts_with('#') => Err(EditError {
                line: Some(i + 1),
                message: format!("`{key}: {value}` is not a block mapping; calyx only edits `{key}:` followed by indented entries"),
            }),
            Some((i, _)) => Ok(Some(i)),
            None => Ok(None),
        }
    }

    /// Removes `key_line` when it has no children left.
    fn prune(&mut self, key_line: usize, indent: usize) {
        if self.children(key_line, indent).is_empty() {
            let end = if key_line + 1 == self.lines.len()
                || self.lines[key_line + 1..]
                    .iter()
                    .all(|l| l.trim().is_empty())
            {
                self.lines.len()
            } else {
                key_line + 1
            };
            self.remove(key_line..end);
        }
    }
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// Adds `child` (its first line is `name:`) under the top-level `parent:`, appending
/// `parent:` when missing. Any existing `name:` child is replaced.
pub fn set_child(
    text: &str,
    parent: &str,
    name: &str,
    child: &[Line],
) -> Result<String, EditError> {
    let text = remove_child(text, parent, name)?;
    let mut doc = Doc::new(&text)?;
    let unit = doc.unit();
    match doc.top(parent)? {
        Some(i) => {
            let indent = doc.first_indent(doc.children(i, 0)).unwrap_or(unit);
            let new = doc.render(indent, unit, child);
            doc.insert(i + 1, new);
        }
        None => {
            let mut new = vec![format!("{parent}:{}", doc.nl)];
            new.extend(doc.render(unit, unit, child));
            doc.append_block(new);
        }
    }
    Ok(doc.text())
}

/// Removes the `name:` child of the top-level `parent:` (and `parent:` if nothing is left).
pub fn remove_child(text: &str, parent: &str, name: &str) -> Result<String, EditError> {
    let mut doc = Doc::new(text)?;
    let Some(p) = doc.top(parent)? else {
        return Ok(text.to_string());
    };
    let kids = doc.children(p, 0);
    let Some(indent) = doc.first_indent(kids.clone()) else {
        return Ok(text.to_string());
    };
    let Some((c, _)) = doc.find_key(kids, indent, name) else {
        return Ok(text.to_string());
    };
    let range = c..doc.children(c, indent).end;
    doc.remove(range);
    doc.prune(p, 0);
    Ok(doc.text())
}

/// Puts calyx's sequence `items` first under `parent: <event>:` for each `(event, items)`,
/// after removing the items `is_ours` recognises (by the item's first line, without `- `).
/// Events whose value is not a block sequence are skipped and returned.
pub fn set_items(
    text: &str,
    parent: &str,
    events: &[(String, Vec<Vec<Line>>)],
    is_ours: &dyn Fn(&str) -> bool,
) -> Result<(String, Vec<String>), EditError> {
    let text = remove_items(text, parent, is_ours)?;
    let mut doc = Doc::new(&text)?;
    let unit = doc.unit();
    let mut skipped = Vec::new();
    let p = match doc.top(parent)? {
        Some(p) => p,
        None => {
            doc.append_block(vec![format!("{parent}:{}", doc.nl)]);
            doc.lines.len() - 1
        }
    };
    for (event, items) in events.iter().rev() {
        let kids = doc.children(p, 0);
        let indent = doc.first_indent(kids.clone()).unwrap_or(unit);
        let rendered_items = |doc: &Doc, dash: usize| -> Vec<String> {
            items
                .iter()
                .flat_map(|item| {
                    item.iter()
                        .enumerate()
                        .map(|(j, (depth, t))| {
                            let pad = dash + if j == 0 { 0 } else { 2 + depth * unit };
                            let lead = if j == 0 { "- " } else { "" };
                            format!("{}{lead}{t}{}", " ".repeat(pad), doc.nl)
                        })
                        .collect::<Vec<_>>()
                })
                .collect()
        };
        match doc.find_key(kids, indent, event) {
            Some((e, value)) if value.is_empty() || value.starts_with('#') => {
                let ek = doc.children(e, indent);
                let dash = doc
                    .first_indent(ek.clone())
                    .filter(|_| !ek.is_empty())
                    .unwrap_or(indent + unit);
                let new = rendered_items(&doc, dash);
                doc.insert(e + 1, new);
            }
            Some(_) => skipped.push(event.clone()),
            None => {
                let mut new = vec![format!("{}{event}:{}", " ".repeat(indent), doc.nl)];
                new.extend(rendered_items(&doc, indent + unit));
                doc.insert(p + 1, new);
            }
        }
    }
    Ok((doc.text(), skipped))
}

/// Removes calyx's items from every event under the top-level `parent:`, then events left
/// empty, then `parent:` itself if empty.
pub fn remove_items(
    text: &str,
    parent: &str,
    is_ours: &dyn Fn(&str) -> bool,
) -> Result<String, EditError> {
    let mut doc = Doc::new(text)?;
    let Some(p) = doc.top(parent)? else {
        return Ok(text.to_string());
    };
    let mut changed = false;
    loop {
        let kids = doc.children(p, 0);
        let Some(indent) = doc.first_indent(kids.clone()) else {
            break;
        };
        let mut hit = None;
        for e in kids.clone() {
            let l = doc.lines[e].trim_end_matches(['\n', '\r']).to_string();
            if indent_of(&l) != indent || l.trim_start().starts_with('#') || l.trim().is_empty() {
                continue;
            }
            for i in doc.children(e, indent) {
                let item = doc.lines[i].trim_end_matches(['\n', '\r']).to_string();
                let dash = indent_of(&item);
                if let Some(first) = item[dash..].strip_prefix("- ") {
                    if is_ours(first) {
                        let mut end = i + 1;
                        while end < doc.lines.len()
                            && indent_of(&doc.lines[end]) > dash
                            && !doc.lines[end].trim().is_empty()
                        {
                            end += 1;
                        }
                        hit = Some((e, indent, i..end));
                        break;
                    }
                }
            }
            if hit.is_some() {
                break;
            }
        }
        let Some((e, indent, range)) = hit else { break };
        doc.remove(range);
        doc.prune(e, indent);
        changed = true;
    }
    if !changed {
        return Ok(text.to_string());
    }
    doc.prune(p, 0);
    Ok(doc.text())
}

/// Quotes a scalar for YAML: single quotes, with `'` doubled (no escapes to get wrong).
pub fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn child() -> Vec<Line> {
        vec![
            (0, "calyx-ipc:".into()),
            (1, "url: 'http://x'".into()),
            (1, "headers:".into()),
            (2, "A: 'b'".into()),
        ]
    }

    fn ours(first: &str) -> bool {
        first.contains("calyx")
    }

    #[test]
    fn child_round_trips() {
        for original in [
            "",
            "a: 1",
            "a: 1\n",
            "mcp_servers:\n    other:\n        url: x\nb: 2\n",
            "x: 1\r\nmcp_servers:\r\n  o: {}\r\n",
        ] {
            let once = set_child(original, "mcp_servers", "calyx-ipc", &child()).unwrap();
            assert_eq!(
                set_child(&once, "mcp_servers", "calyx-ipc", &child()).unwrap(),
                once
            );
            assert!(once.contains("calyx-ipc:"));
            assert_eq!(
                remove_child(&once, "mcp_servers", "calyx-ipc").unwrap(),
                original,
                "{once:?}"
            );
        }
    }

    #[test]
    fn items_round_trip() {
        let events = vec![
            (
                "on_session_start".to_string(),
                vec![vec![
                    (0, "command: 'calyx hook'".to_string()),
                    (0, "timeout: 5".to_string()),
                ]],
            ),
            (
                "stop".to_string(),
                vec![vec![(0, "command: 'calyx x'".to_string())]],
            ),
        ];
        for original in [
            "",
            "a: 1\n",
            "hooks:\n  on_session_start:\n    - command: mine\n      timeout: 3\nz: 1\n",
            "hooks:\n  stop:\n  - command: mine\n",
        ] {
            let (once, skipped) = set_items(original, "hooks", &events, &ours).unwrap();
            assert!(skipped.is_empty());
            assert_eq!(set_items(&once, "hooks", &events, &ours).unwrap().0, once);
            assert_eq!(
                remove_items(&once, "hooks", &ours).unwrap(),
                original,
                "{once}"
            );
        }
    }

    #[test]
    fn refuses_what_it_cannot_splice() {
        assert_eq!(
            set_child(
                "a: 1\nmcp_servers: {}\n",
                "mcp_servers",
                "calyx-ipc",
                &child()
            )
            .unwrap_err()
            .line,
            Some(2)
        );
        assert_eq!(check("a:\n\tb: 1\n").unwrap_err().line, Some(2));
        assert!(check("a: \u{1b}[31m\n").is_err());
    }
}
