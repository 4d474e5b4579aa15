//! The few facts calyx needs from a JSON-RPC message a stdio server sends or is sent, read as
//! the bytes pass, without holding the message: whether it is a request (it has a `method`),
//! its `id`, and which tools of a `tools/list` result declare `execution.taskSupport:
//! "required"`. Buffering each line to parse it afterwards cost a second copy of every message
//! (a 32 MiB result held twice), and a server is free to put `"id"` after `"result"` (Node's
//! SDK does), so the id cannot be read from a short prefix either.
//!
//! The scan tracks only the nesting of objects and arrays and the key each value sits under;
//! the bulk of a large message, its strings, is skipped with `memchr`. It does not validate
//! JSON: rmcp does that. A line whose nesting does not add up yields no facts.

use memchr::memchr2;

/// Longest key compared (longer keys are none of the ones looked for).
const KEY_CAP: usize = 16;
/// Longest value captured (an id, a tool name, a `taskSupport` value).
const VALUE_CAP: usize = 4096;

/// What one line said.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Facts {
    /// The message's `id` as JSON text (`7`, `"a"`), when it has a non-null one.
    pub id: Option<String>,
    /// Whether it has a `method` (a request or notification, not an answer).
    pub has_method: bool,
    /// Tools in `result.tools` whose `execution.taskSupport` is `"required"`.
    pub task_required: Vec<String>,
}

impl Facts {
    /// The id of a request (a message with an id and a method).
    pub fn request_id(self) -> Option<String> {
        self.id.filter(|_| self.has_method)
    }

    /// The id an answer (a message with an id and no method) answers.
    pub fn answered_id(self) -> Option<String> {
        self.id.filter(|_| !self.has_method)
    }
}

/// The keys the scan knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Id,
    Method,
    Result,
    Tools,
    Name,
    Execution,
    TaskSupport,
    Other,
}

impl Key {
    fn of(bytes: &[u8]) -> Key {
        match bytes {
            b"id" => Key::Id,
            b"method" => Key::Method,
            b"result" => Key::Result,
            b"tools" => Key::Tools,
            b"name" => Key::Name,
            b"execution" => Key::Execution,
            b"taskSupport" => Key::TaskSupport,
            _ => Key::Other,
        }
    }
}

/// An open container: an object (with the key of the value being read) or an array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Frame {
    Object { key: Key, expecting_key: bool },
    Array,
}

/// What a value being read is, from where it sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Id,
    Method,
    Tool,
    ToolName,
    TaskSupport,
    Key,
    Other,
}

/// A bounded copy of the bytes of a string or scalar being read (`None`: not wanted, or too
/// long to be what is looked for).
#[derive(Debug, Default)]
struct Capture(Option<Vec<u8>>);

impl Capture {
    fn wanted(yes: bool) -> Self {
        Capture(yes.then(Vec::new))
    }

    fn push(&mut self, bytes: &[u8], cap: usize) {
        if let Some(held) = &mut self.0 {
            if held.len() + bytes.len() > cap {
                self.0 = None;
            } else {
                held.extend_from_slice(bytes);
            }
        }
    }
}

#[derive(Debug)]
enum Token {
    /// Between tokens.
    Between,
    /// Inside a string (after its opening quote).
    Str {
        role: Role,
        escaped: bool,
        capture: Capture,
    },
    /// Inside a number or literal.
    Scalar { role: Role, capture: Capture },
}

/// The scan of one line. Feed it the line's bytes in any pieces, then [`LineScan::finish`].
#[derive(Debug)]
pub struct LineScan {
    stack: Vec<Frame>,
    token: Token,
    /// The nesting broke (a close without an open, a second top-level value).
    broken: bool,
    /// A top-level object was opened and closed.
    complete: bool,
    facts: Facts,
    /// The tool object being read in `result.tools`: its name and whether it requires tasks.
    tool_name: Option<String>,
    tool_required: bool,
}

impl Default for LineScan {
    fn default() -> Self {
        LineScan {
            stack: Vec::new(),
            token: Token::Between,
            broken: false,
            complete: false,
            facts: Facts::default(),
            tool_name: None,
            tool_required: false,
        }
    }
}

fn is_tool_path(stack: &[Frame]) -> bool {
    matches!(
        stack,
        [
            Frame::Object {
                key: Key::Result,
                ..
            },
            Frame::Object {
                key: Key::Tools,
                ..
            },
            Frame::Array
        ]
    )
}

impl LineScan {
    /// Takes in the next bytes of the line (no newline).
    pub fn feed(&mut self, bytes: &[u8]) {
        let mut at = 0;
        while at < bytes.len() {
            match &mut self.token {
                Token::Str {
                    escaped, capture, ..
                } => {
                    if *escaped {
                        capture.push(&bytes[at..at + 1], VALUE_CAP);
                        *escaped = false;
                        at += 1;
                        continue;
                    }
                    let rest = &bytes[at..];
                    match memchr2(b'"', b'\\', rest) {
                        None => {
                            capture.push(rest, VALUE_CAP);
                            at = bytes.len();
                        }
                        Some(end) => {
                            capture.push(&rest[..end], VALUE_CAP);
                            at += end + 1;
                            if rest[end] == b'\\' {
                                capture.push(b"\\", VALUE_CAP);
                                *escaped = true;
                            } else {
                                self.end_string();
                            }
                        }
                    }
                }
                Token::Scalar { capture, .. } => {
                    let byte = bytes[at];
                    if matches!(byte, b',' | b'}' | b']' | b' ' | b'\t' | b'\r') {
                        self.end_scalar();
                    } else {
                        capture.push(&bytes[at..at + 1], VALUE_CAP);
                        at += 1;
                    }
                }
                Token::Between => {
                    let byte = bytes[at];
                    at += 1;
                    self.structural(byte);
                }
            }
        }
    }

    /// The facts of the line fed, and a fresh scan for the next one.
    pub fn finish(&mut self) -> Facts {
        if matches!(self.token, Token::Scalar { .. }) {
            self.end_scalar();
        }
        let done = std::mem::take(self);
        if done.broken || !done.complete || !done.stack.is_empty() {
            return Facts::default();
        }
        done.facts
    }

    fn role_of_value(&self) -> Role {
        match self.stack.as_slice() {
            [Frame::Object { key: Key::Id, .. }] => Role::Id,
            [Frame::Object {
                key: Key::Method, ..
            }] => Role::Method,
            stack if is_tool_path(stack) => Role::Tool,
            [a, b, c, Frame::Object { key: Key::Name, .. }] if is_tool_path(&[*a, *b, *c]) => {
                Role::ToolName
            }
            [a, b, c, Frame::Object {
                key: Key::Execution,
                ..
            }, Frame::Object {
                key: Key::TaskSupport,
                ..
            }] if is_tool_path(&[*a, *b, *c]) => Role::TaskSupport,
            _ => Role::Other,
        }
    }

    /// A value starts here: checks it may, and says what it is.
    fn begin_value(&mut self) -> Role {
        match self.stack.last() {
            None if self.complete => self.broken = true,
            Some(Frame::Object {
                expecting_key: true,
                ..
            }) => self.broken = true,
            _ => {}
        }
        let role = self.role_of_value();
        if role == Role::Method {
            self.facts.has_method = true;
        }
        role
    }

    /// A value ended: the enclosing object now waits for a comma and its next key.
    fn end_value(&mut self) {
        match self.stack.last_mut() {
            None => self.complete = true,
            Some(Frame::Object { expecting_key, .. }) => *expecting_key = true,
            Some(Frame::Array) => {}
        }
    }

    fn structural(&mut self, byte: u8) {
        match byte {
            b'{' => {
                let role = self.begin_value();
                if role == Role::Tool {
                    self.tool_name = None;
                    self.tool_required = false;
                }
                self.stack.push(Frame::Object {
                    key: Key::Other,
                    expecting_key: true,
                });
            }
            b'[' => {
                self.begin_value();
                self.stack.push(Frame::Array);
            }
            b'}' => {
                if !matches!(self.stack.pop(), Some(Frame::Object { .. })) {
                    self.broken = true;
                    return;
                }
                if is_tool_path(&self.stack) {
                    if let (true, Some(name)) = (self.tool_required, self.tool_name.take()) {
                        self.facts.task_required.push(name);
                    }
                }
                self.end_value();
            }
            b']' => {
                if self.stack.pop() != Some(Frame::Array) {
                    self.broken = true;
                    return;
                }
                self.end_value();
            }
            b'"' => {
                let role = match self.stack.last() {
                    Some(Frame::Object {
                        expecting_key: true,
                        ..
                    }) => Role::Key,
                    _ => self.begin_value(),
                };
                let wanted = !matches!(role, Role::Other | Role::Method | Role::Tool);
                self.token = Token::Str {
                    role,
                    escaped: false,
                    capture: Capture::wanted(wanted),
                };
            }
            b':' => match self.stack.last_mut() {
                Some(Frame::Object { expecting_key, .. }) if *expecting_key => {
                    // The key was read: from here its value.
                    *expecting_key = false;
                }
                _ => self.broken = true,
            },
            b',' | b' ' | b'\t' | b'\r' | b'\n' => {}
            first => {
                let role = self.begin_value();
                let mut capture = Capture::wanted(role == Role::Id);
                capture.push(&[first], VALUE_CAP);
                self.token = Token::Scalar { role, capture };
            }
        }
    }

    fn end_string(&mut self) {
        let Token::Str { role, capture, .. } = std::mem::replace(&mut self.token, Token::Between)
        else {
            return;
        };
        let text = capture.0;
        match role {
            Role::Key => {
                let key = match &text {
                    Some(bytes) if bytes.len() <= KEY_CAP => Key::of(bytes),
                    _ => Key::Other,
                };
                if let Some(Frame::Object { key: slot, .. }) = self.stack.last_mut() {
                    *slot = key;
                }
                // The colon turns `expecting_key` off; the value's end turns it back on.
                return;
            }
            Role::Id => self.facts.id = text.and_then(|raw| id_text(&[b"\"", &raw[..], b"\""])),
            Role::ToolName => self.tool_name = text.and_then(|raw| unescape(&raw)),
            Role::TaskSupport => {
                self.tool_required = text.as_deref() == Some(b"required".as_slice())
            }
            Role::Method | Role::Tool | Role::Other => {}
        }
        self.end_value();
    }

    fn end_scalar(&mut self) {
        let Token::Scalar { role, capture } = std::mem::replace(&mut self.token, Token::Between)
        else {
            return;
        };
        if role == Role::Id {
            self.facts.id = capture.0.and_then(|raw| id_text(&[&raw[..]]));
        }
        self.end_value();
    }
}

/// The id as `serde_json::Value::to_string` writes it (how the request side records ids), or
/// `None` for `null` and anything that is not a JSON scalar.
fn id_text(parts: &[&[u8]]) -> Option<String> {
    let raw = parts.concat();
    match serde_json::from_slice::<serde_json::Value>(&raw).ok()? {
        serde_json::Value::Null => None,
        value @ (serde_json::Value::Number(_) | serde_json::Value::String(_)) => {
            Some(value.to_string())
        }
        _ => None,
    }
}

/// A string's raw inner bytes as text, escapes resolved.
fn unescape(raw: &[u8]) -> Option<String> {
    serde_json::from_slice(&[b"\"", raw, b"\""].concat()).ok()
}

#[cfg(test)]
#[path = "line_scan_tests.rs"]
mod tests;
