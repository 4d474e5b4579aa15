//! Seeing `tools/list` as JSON before rmcp types it. rmcp 3.11's `Tool` has no `execution`
//! field and drops unknown fields, so a tool declaring `execution.taskSupport: "required"`
//! looks like any other; calling it without task augmentation fails (-32601). The tap sits
//! between the server's stdout and rmcp's reader, passes every byte through unchanged, and
//! parses only the lines that mention `taskSupport`, recording which tools require tasks.

use std::collections::HashSet;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

/// The names of tools whose `execution.taskSupport` is `"required"`, shared with the caller.
pub type TaskRequired = Arc<Mutex<HashSet<String>>>;

/// An `AsyncRead` that records task-required tools from the newline-delimited JSON it passes.
pub struct RawTap<R> {
    inner: R,
    line: Vec<u8>,
    /// A line longer than `max_line` is not buffered (rmcp discards it too).
    max_line: usize,
    overflowed: bool,
    task_required: TaskRequired,
}

impl<R> RawTap<R> {
    pub fn new(inner: R, max_line: usize, task_required: TaskRequired) -> Self {
        RawTap {
            inner,
            line: Vec::new(),
            max_line,
            overflowed: false,
            task_required,
        }
    }

    fn feed(&mut self, mut bytes: &[u8]) {
        while let Some(at) = bytes.iter().position(|&b| b == b'\n') {
            self.append(&bytes[..at]);
            if !self.overflowed {
                record(&self.line, &self.task_required);
            }
            self.line.clear();
            self.overflowed = false;
            bytes = &bytes[at + 1..];
        }
        self.append(bytes);
    }

    fn append(&mut self, bytes: &[u8]) {
        if self.overflowed {
            return;
        }
        if self.line.len() + bytes.len() > self.max_line {
            self.overflowed = true;
            self.line = Vec::new();
        } else {
            self.line.extend_from_slice(bytes);
        }
    }
}

/// Records the task-required tools of one message, if it is a `tools/list` result (also used
/// on the messages the HTTP transports receive).
pub(super) fn record(line: &[u8], task_required: &TaskRequired) {
    const NEEDLE: &[u8] = b"taskSupport";
    if !line.windows(NEEDLE.len()).any(|w| w == NEEDLE) {
        return;
    }
    let Ok(message) = serde_json::from_slice::<serde_json::Value>(line) else {
        return;
    };
    let Some(tools) = message.pointer("/result/tools").and_then(|t| t.as_array()) else {
        return;
    };
    let Ok(mut set) = task_required.lock() else {
        return;
    };
    for tool in tools {
        let required = tool
            .pointer("/execution/taskSupport")
            .and_then(|v| v.as_str())
            == Some("required");
        if let (true, Some(name)) = (required, tool.get("name").and_then(|n| n.as_str())) {
            set.insert(name.to_string());
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for RawTap<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            let new = buf.filled()[before..].to_vec();
            self.feed(&new);
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn passes_bytes_through_and_records_task_required_tools() {
        let stream = concat!(
            r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}},"#,
            r#"{"name":"simulate-research-query","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}},"#,
            r#"{"name":"maybe","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}}]}}"#,
            "\n",
        );
        let set = TaskRequired::default();
        // Read in small pieces so lines span reads.
        let mut tap = RawTap::new(stream.as_bytes(), 1 << 20, set.clone());
        let mut out = Vec::new();
        let mut chunk = [0u8; 7];
        loop {
            let n = tap.read(&mut chunk).await.expect("read");
            if n == 0 {
                break;
            }
            out.extend_from_slice(&chunk[..n]);
        }
        assert_eq!(out, stream.as_bytes());
        let set = set.lock().expect("lock").clone();
        assert_eq!(set, HashSet::from(["simulate-research-query".to_string()]));
    }

    #[tokio::test]
    async fn an_oversized_line_is_skipped_not_buffered() {
        let big = format!(
            "{{\"result\":{{\"tools\":[{{\"name\":\"x\",\"execution\":{{\"taskSupport\":\"required\"}},\"pad\":\"{}\"}}]}}}}\n",
            "p".repeat(200)
        );
        let set = TaskRequired::default();
        let mut tap = RawTap::new(big.as_bytes(), 100, set.clone());
        let mut out = Vec::new();
        tap.read_to_end(&mut out).await.expect("read");
        assert_eq!(out.len(), big.len());
        assert!(set.lock().expect("lock").is_empty());
    }
}
