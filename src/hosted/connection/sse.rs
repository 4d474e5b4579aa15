//! An incremental parser for `text/event-stream` (the WHATWG "interpreting an event stream"
//! rules), for both HTTP client transports (legacy HTTP+SSE and Streamable HTTP). The
//! Streamable one takes events as bytes ([`SseParser::push_raw`]) and types them in place.
//! Bytes arrive in arbitrary chunks: a line, a `\r\n` pair or a UTF-8 sequence may be split
//! anywhere, so the parser keeps the unfinished line and event between calls. One event may
//! be at most `max_event` bytes (64 MiB for hosted servers); a larger one is an error, after
//! which the stream is unusable.

use thiserror::Error;

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, `message` when the event named none.
    pub event: String,
    /// The `data:` lines joined with `\n`.
    pub data: String,
    /// The last `id:` seen so far on the stream, if any.
    pub id: Option<String>,
}

/// One dispatched event with its data as the bytes that arrived, for callers that parse it
/// straight into a typed message (no `String` copy of a payload that may be 64 MiB).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawEvent {
    /// The `event:` field, `message` when the event named none.
    pub event: String,
    /// The `data:` lines joined with `\n`.
    pub data: Vec<u8>,
    /// The last `id:` seen so far on the stream, if any.
    pub id: Option<String>,
}

impl From<RawEvent> for SseEvent {
    fn from(raw: RawEvent) -> Self {
        // Valid UTF-8 (always, for JSON) moves the bytes; only invalid input is copied.
        let data = String::from_utf8(raw.data)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        SseEvent {
            event: raw.event,
            data,
            id: raw.id,
        }
    }
}

/// An event grew past the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("the server sent an event over {} MiB", .limit >> 20)]
pub struct EventTooLarge {
    pub limit: usize,
}

/// The parser's state between chunks.
#[derive(Debug)]
pub struct SseParser {
    max_event: usize,
    /// The line being read (without its terminator).
    line: Vec<u8>,
    /// The previous chunk ended in `\r`: a `\n` starting the next one belongs to it.
    after_cr: bool,
    /// Still at the start of the stream (a UTF-8 BOM there is skipped).
    at_start: bool,
    event: Vec<u8>,
    data: Vec<u8>,
    /// Whether any `data:` line was seen for the current event.
    has_data: bool,
    last_id: Option<String>,
    /// The last valid `retry` field: how long the server asks a client to wait before it
    /// reconnects (the MCP transport spec says a client MUST respect it).
    retry: Option<std::time::Duration>,
}

impl SseParser {
    pub fn new(max_event: usize) -> Self {
        SseParser {
            max_event,
            line: Vec::new(),
            after_cr: false,
            at_start: true,
            event: Vec::new(),
            data: Vec::new(),
            has_data: false,
            last_id: None,
            retry: None,
        }
    }

    /// The reconnection time the stream asked for, if it did.
    pub fn retry(&self) -> Option<std::time::Duration> {
        self.retry
    }

    /// Feeds the next bytes; returns the events they complete.
    pub fn push(&mut self, chunk: &[u8]) -> Result<Vec<SseEvent>, EventTooLarge> {
        Ok(self
            .push_raw(chunk)?
            .into_iter()
            .map(SseEvent::from)
            .collect())
    }

    /// Feeds the next bytes; returns the events they complete, data as bytes.
    pub fn push_raw(&mut self, mut chunk: &[u8]) -> Result<Vec<RawEvent>, EventTooLarge> {
        let mut events = Vec::new();
        if self.after_cr && !chunk.is_empty() {
            self.after_cr = false;
            if chunk[0] == b'\n' {
                chunk = &chunk[1..];
            }
        }
        if self.at_start {
            let bom = b"\xEF\xBB\xBF";
            let seen = self.line.len() + chunk.len();
            let head: Vec<u8> = self.line.iter().chain(chunk).take(3).copied().collect();
            if seen < 3 && bom.starts_with(&head) {
                // Too short to tell: keep it as line bytes until more arrive.
                self.line.extend_from_slice(chunk);
                return Ok(events);
            }
            self.at_start = false;
            if head == bom {
                let from_line = self.line.len().min(3);
                self.line.drain(..from_line);
                chunk = &chunk[3 - from_line..];
            }
        }
        while let Some(at) = chunk.iter().position(|&b| b == b'\n' || b == b'\r') {
            self.extend_line(&chunk[..at])?;
            let terminator = chunk[at];
            chunk = &chunk[at + 1..];
            if terminator == b'\r' {
                match chunk.first() {
                    Some(b'\n') => chunk = &chunk[1..],
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
            let line = std::mem::take(&mut self.line);
            if let Some(event) = self.process_line(line)? {
                events.push(event);
            }
        }
        self.extend_line(chunk)?;
        Ok(events)
    }

    fn extend_line(&mut self, bytes: &[u8]) -> Result<(), EventTooLarge> {
        if self.line.len() + self.data.len() + bytes.len() > self.max_event {
            return Err(EventTooLarge {
                limit: self.max_event,
            });
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    fn process_line(&mut self, line: Vec<u8>) -> Result<Option<RawEvent>, EventTooLarge> {
        if line.is_empty() {
            return Ok(self.dispatch());
        }
        if line[0] == b':' {
            return Ok(None);
        }
        // Where the field name ends and its value starts (after the colon and one space).
        let (field_end, value_start) = match line.iter().position(|&b| b == b':') {
            Some(colon) if line.get(colon + 1) == Some(&b' ') => (colon, colon + 2),
            Some(colon) => (colon, colon + 1),
            None => (line.len(), line.len()),
        };
        let (field, value) = (&line[..field_end], &line[value_start..]);
        match field {
            b"event" => self.event = value.to_vec(),
            b"data" if !self.has_data => {
                // The event's first data line becomes its data buffer: the line's bytes are
                // moved, not copied (a large payload is held once while it arrives).
                let mut data = line;
                data.drain(..value_start);
                data.push(b'\n');
                self.data = data;
                self.has_data = true;
            }
            b"data" => {
                if self.data.len() + value.len() + 1 > self.max_event {
                    return Err(EventTooLarge {
                        limit: self.max_event,
                    });
                }
                self.data.extend_from_slice(value);
                self.data.push(b'\n');
                self.has_data = true;
            }
            b"id" if !value.contains(&0) => {
                self.last_id = Some(String::from_utf8_lossy(value).into_owned())
            }
            // Only ASCII digits count (the SSE rule); anything else is ignored.
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                if let Some(ms) = std::str::from_utf8(value)
                    .ok()
                    .and_then(|v| v.parse::<u64>().ok())
                {
                    self.retry = Some(std::time::Duration::from_millis(ms));
                }
            }
            _ => {}
        }
        Ok(None)
    }

    fn dispatch(&mut self) -> Option<RawEvent> {
        let event = std::mem::take(&mut self.event);
        let mut data = std::mem::take(&mut self.data);
        if !std::mem::take(&mut self.has_data) {
            return None;
        }
        data.pop();
        let event = if event.is_empty() {
            "message".to_string()
        } else {
            String::from_utf8_lossy(&event).into_owned()
        };
        Some(RawEvent {
            event,
            data,
            id: self.last_id.clone(),
        })
    }
}

#[cfg(test)]
#[path = "sse_tests.rs"]
mod tests;
