//! A JSON parser that remembers where every value sits in the text, so an editor can replace
//! one value's bytes and leave the rest of the file alone. It accepts what the CLIs' own
//! loaders accept around strict JSON: `//` and `/* */` comments and trailing commas (OpenCode,
//! Gemini and VS Code-style settings files use them).

use super::EditError;

/// One value and the byte range `start..end` it occupies.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub start: usize,
    pub end: usize,
    pub kind: NodeKind,
}

/// What a [`Node`] is.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeKind {
    Object(Vec<Member>),
    Array(Vec<Node>),
    String(String),
    /// A number, `true`, `false` or `null` (editors never need to look inside).
    Scalar,
}

/// One `"key": value` pair; `key_start` is the offset of the key's opening quote.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    pub key: String,
    pub key_start: usize,
    pub value: Node,
}

impl Node {
    /// The member `key` of an object (the last one when a key repeats, as JSON.parse does).
    pub fn member(&self, key: &str) -> Option<&Member> {
        match &self.kind {
            NodeKind::Object(members) => members.iter().rev().find(|m| m.key == key),
            _ => None,
        }
    }

    /// The node at `path` (object keys only).
    pub fn get(&self, path: &[&str]) -> Option<&Node> {
        path.iter()
            .try_fold(self, |node, key| node.member(key).map(|m| &m.value))
    }
}

/// Parses `text` (without a BOM) into a node tree, or says where it stops making sense.
pub fn parse(text: &str) -> Result<Node, EditError> {
    let mut p = Parser {
        text,
        pos: 0,
        depth: 0,
    };
    p.skip_ws()?;
    let node = p.value()?;
    p.skip_ws()?;
    if p.pos != text.len() {
        return Err(p.error("unexpected text after the end of the JSON value"));
    }
    Ok(node)
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
    depth: usize,
}

/// Nesting beyond this is refused rather than risking the stack on a hostile file.
const MAX_DEPTH: usize = 256;

impl Parser<'_> {
    fn error(&self, message: &str) -> EditError {
        EditError::at(self.text, self.pos, format!("invalid JSON: {message}"))
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn skip_ws(&mut self) -> Result<(), EditError> {
        let bytes = self.text.as_bytes();
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\r' | b'\n') => self.pos += 1,
                Some(b'/') if bytes.get(self.pos + 1) == Some(&b'/') => {
                    while !matches!(self.peek(), None | Some(b'\n')) {
                        self.pos += 1;
                    }
                }
                Some(b'/') if bytes.get(self.pos + 1) == Some(&b'*') => {
                    match self.text[self.pos + 2..].find("*/") {
                        Some(i) => self.pos += i + 4,
                        None => return Err(self.error("unterminated /* comment")),
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn value(&mut self) -> Result<Node, EditError> {
        let start = self.pos;
        let kind = match self.peek() {
            Some(b'{') => self.nested(Self::object)?,
            Some(b'[') => self.nested(Self::array)?,
            Some(b'"') => NodeKind::String(self.string()?),
            Some(b'-' | b'0'..=b'9') => {
                self.number()?;
                NodeKind::Scalar
            }
            Some(b't') => self.literal("true")?,
            Some(b'f') => self.literal("false")?,
            Some(b'n') => self.literal("null")?,
            Some(_) => return Err(self.error("expected a value")),
            None => return Err(self.error("unexpected end of file")),
        };
        Ok(Node {
            start,
            end: self.pos,
            kind,
        })
    }

    fn nested(
        &mut self,
        f: fn(&mut Self) -> Result<NodeKind, EditError>,
    ) -> Result<NodeKind, EditError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error("nested too deeply"));
        }
        let kind = f(self)?;
        self.depth -= 1;
        Ok(kind)
    }

    fn literal(&mut self, word: &str) -> Result<NodeKind, EditError> {
        if self.text[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(NodeKind::Scalar)
        } else {
            Err(self.error("expected a value"))
        }
    }

    fn number(&mut self) -> Result<(), EditError> {
        let start = self.pos;
        while matches!(
            self.peek(),
            Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
        ) {
            self.pos += 1;
        }
        let text = &self.text[start..self.pos];
        if serde_json::from_str::<serde_json::Number>(text).is_err() {
            self.pos = start;
            return Err(self.error("malformed number"));
        }
        Ok(())
    }

    fn string(&mut self) -> Result<String, EditError> {
        let start = self.pos;
        self.pos += 1;
        let bytes = self.text.as_bytes();
        loop {
            match self.peek() {
                None => {
                    self.pos = start;
                    return Err(self.error("unterminated string"));
                }
                Some(b'"') => break,
                Some(b'\\') => self.pos += 2,
                Some(b) if b < 0x20 => return Err(self.error("control character in a string")),
                Some(_) => self.pos += 1,
            }
        }
        self.pos += 1;
        let raw = &self.text[start..self.pos.min(bytes.len())];
        serde_json::from_str::<String>(raw).map_err(|_| {
            let mut at = Self {
                text: self.text,
                pos: start,
                depth: 0,
            };
            at.pos = start;
            at.error("malformed escape in a string")
        })
    }

    fn object(&mut self) -> Result<NodeKind, EditError> {
        self.pos += 1;
        let mut members = Vec::new();
        loop {
            self.skip_ws()?;
            match self.peek() {
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(NodeKind::Object(members));
                }
                Some(b'"') => {}
                _ => return Err(self.error("expected a \"key\" or '}'")),
            }
            let key_start = self.pos;
            let key = self.string()?;
            self.skip_ws()?;
            if self.peek() != Some(b':') {
                return Err(self.error("expected ':' after the key"));
            }
            self.pos += 1;
            self.skip_ws()?;
            let value = self.value()?;
            members.push(Member {
                key,
                key_start,
                value,
            });
            self.skip_ws()?;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {}
                _ => return Err(self.error("expected ',' or '}'")),
            }
        }
    }

    fn array(&mut self) -> Result<NodeKind, EditError> {
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            self.skip_ws()?;
            if self.peek() == Some(b']') {
                self.pos += 1;
                return Ok(NodeKind::Array(items));
            }
            items.push(self.value()?);
            self.skip_ws()?;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {}
                _ => return Err(self.error("expected ',' or ']'")),
            }
        }
    }
}

/// The text with comments removed and trailing commas dropped, for handing to serde_json (to
/// compare meanings). Offsets are not kept.
pub fn strip_jsonc(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut pending_comma = false;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'"' {
            if pending_comma {
                out.push(',');
                pending_comma = false;
            }
            let start = i;
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(bytes.len());
            out.push_str(&text[start..i]);
        } else if b == b'/' && bytes.get(i + 1) == Some(&b'/') {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
        } else if b == b'/' && bytes.get(i + 1) == Some(&b'*') {
            i = text[i + 2..]
                .find("*/")
                .map_or(bytes.len(), |j| i + 2 + j + 2);
        } else if b == b',' {
            pending_comma = true;
            i += 1;
        } else if b.is_ascii_whitespace() {
            i += 1;
        } else {
            if pending_comma && b != b'}' && b != b']' {
                out.push(',');
            }
            pending_comma = false;
            let ch = text[i..].chars().next().unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_and_members() {
        let text = r#"{ "a": [1, {"b": "x"}], // c
  "c": null, }"#;
        let root = parse(text).unwrap();
        let b = root.get(&["a"]).unwrap();
        assert_eq!(&text[b.start..b.end], r#"[1, {"b": "x"}]"#);
        assert!(root.member("c").is_some());
        assert_eq!(strip_jsonc(text), r#"{"a":[1,{"b":"x"}],"c":null}"#);
    }

    #[test]
    fn errors_name_the_line() {
        let err = parse("{\n  \"a\": 1,\n  \"b\" 2\n}").unwrap_err();
        assert_eq!(err.line, Some(3));
        assert!(parse("[1,").is_err());
        assert!(parse("\"abc").is_err());
        assert!(parse("{} x").is_err());
    }
}
