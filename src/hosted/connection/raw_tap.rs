//! Seeing `tools/list` as JSON before rmcp types it. rmcp 3.11's `Tool` has no `execution`
//! field and drops unknown fields, so a tool declaring `execution.taskSupport: "required"`
//! looks like any other; calling it without task augmentation fails (-32601). The tap sits
//! between the server's stdout and rmcp's reader, passes every byte through unchanged, and
//! scans each line as it passes ([`super::line_scan`], which holds none of it), recording
//! which tools require tasks. Guarding, it also forgets the calls answered and fails the calls
//! in flight when a line exceeds the limit ([`super::in_flight`]).

use std::collections::HashSet;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

use super::in_flight::{fail_all, InFlight};
use super::line_scan::LineScan;

/// The names of tools whose `execution.taskSupport` is `"required"`, shared with the caller.
pub type TaskRequired = Arc<Mutex<HashSet<String>>>;

/// An `AsyncRead` that records task-required tools from the newline-delimited JSON it passes.
/// With [`RawTap::guarding`] it also keeps the in-flight set of [`super::in_flight`] and turns
/// an oversized line into errors for every call in flight, then the end of the stream.
pub struct RawTap<R> {
    inner: R,
    /// The current line's scan, and its length so far.
    scan: LineScan,
    line_len: usize,
    /// A line longer than `max_line` is not scanned (rmcp discards it too).
    max_line: usize,
    overflowed: bool,
    task_required: TaskRequired,
    in_flight: Option<InFlight>,
    /// Bytes to hand out before reading more (the error answers after an oversized line).
    pending: Vec<u8>,
    /// An oversized line was met while guarding: after `pending`, the stream ends.
    ended: bool,
}

impl<R> RawTap<R> {
    pub fn new(inner: R, max_line: usize, task_required: TaskRequired) -> Self {
        RawTap {
            inner,
            scan: LineScan::default(),
            line_len: 0,
            max_line,
            overflowed: false,
            task_required,
            in_flight: None,
            pending: Vec::new(),
            ended: false,
        }
    }

    /// Fails the requests in `in_flight` (recorded by a [`super::in_flight::WriteTap`]) with
    /// [`super::in_flight::OVERSIZED`] when a line exceeds the limit, and ends the stream there.
    pub fn guarding(mut self, in_flight: InFlight) -> Self {
        self.in_flight = Some(in_flight);
        self
    }

    /// Takes in the next bytes read; returns how many of them pass on (fewer only when a
    /// guarded stream met an oversized line).
    fn feed(&mut self, bytes: &[u8]) -> usize {
        let mut at = 0;
        while at < bytes.len() {
            let rest = &bytes[at..];
            let (segment, newline) = match memchr::memchr(b'\n', rest) {
                Some(end) => (&rest[..end], true),
                None => (rest, false),
            };
            self.append(segment);
            if let (true, Some(in_flight)) = (self.overflowed, &self.in_flight) {
                // End rmcp's partial line (it ignores unparsable input), answer every call in
                // flight, then end the stream.
                self.pending = b"\n".to_vec();
                self.pending.extend(fail_all(in_flight));
                self.ended = true;
                return at;
            }
            at += segment.len();
            if newline {
                at += 1;
                if !self.overflowed {
                    self.finish_line();
                }
                self.scan = LineScan::default();
                self.line_len = 0;
                self.overflowed = false;
            }
        }
        at
    }

    fn finish_line(&mut self) {
        let mut facts = self.scan.finish();
        remember(
            std::mem::take(&mut facts.task_required),
            &self.task_required,
        );
        let Some(Ok(mut set)) = self.in_flight.as_ref().map(|f| f.lock()) else {
            return;
        };
        if !set.is_empty() {
            if let Some(id) = facts.answered_id() {
                set.remove(&id);
            }
        }
    }

    fn append(&mut self, bytes: &[u8]) {
        if self.overflowed {
            return;
        }
        if self.line_len + bytes.len() > self.max_line {
            self.overflowed = true;
        } else {
            self.scan.feed(bytes);
            self.line_len += bytes.len();
        }
    }
}

/// Adds tools found to require tasks to the shared set.
fn remember(names: Vec<String>, task_required: &TaskRequired) {
    if names.is_empty() {
        return;
    }
    if let Ok(mut set) = task_required.lock() {
        set.extend(names);
    }
}

/// Records the task-required tools of one message, if it is a `tools/list` result (also used
/// on the messages the HTTP transports receive).
pub(super) fn record(line: &[u8], task_required: &TaskRequired) {
    // Most messages never mention it: one SIMD search, no scan.
    if memchr::memmem::find(line, b"taskSupport").is_none() {
        return;
    }
    let mut scan = LineScan::default();
    scan.feed(line);
    remember(scan.finish().task_required, task_required);
}

impl<R: AsyncRead + Unpin> AsyncRead for RawTap<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.ended {
            // Hand out the error answers; then end of stream.
            let n = self.pending.len().min(buf.remaining());
            buf.put_slice(&self.pending[..n]);
            self.pending.drain(..n);
            return Poll::Ready(Ok(()));
        }
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            let new = buf.filled()[before..].to_vec();
            let passed = self.feed(&new);
            if passed < new.len() {
                buf.set_filled(before + passed);
                let n = self.pending.len().min(buf.remaining());
                buf.put_slice(&self.pending[..n]);
                self.pending.drain(..n);
            }
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

    #[tokio::test]
    async fn guarding_an_oversized_line_fails_the_calls_in_flight_and_ends() {
        let in_flight = InFlight::default();
        in_flight
            .lock()
            .expect("lock")
            .extend(["1".to_string(), "2".to_string()]);
        let stream = format!(
            "{}\n{{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{{\"pad\":\"{}\"}}}}\n{}\n",
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            "p".repeat(200),
            r#"{"jsonrpc":"2.0","id":3,"result":{}}"#,
        );
        let mut tap = RawTap::new(stream.as_bytes(), 100, TaskRequired::default())
            .guarding(in_flight.clone());
        let mut out = Vec::new();
        let mut chunk = [0u8; 13];
        loop {
            let n = tap.read(&mut chunk).await.expect("read");
            if n == 0 {
                break;
            }
            out.extend_from_slice(&chunk[..n]);
        }
        let out = String::from_utf8(out).expect("utf-8");
        let lines: Vec<&str> = out.lines().collect();
        // The answered call passes; the oversized answer is cut (its start ends in a line
        // rmcp ignores), id 2 gets the error, and nothing after it is read.
        assert_eq!(lines[0], r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
        assert!(lines[1].starts_with(r#"{"jsonrpc":"2.0","id":2,"result""#));
        assert!(lines[1].len() <= 100);
        assert_eq!(
            lines[2],
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"the server sent a message over 64 MiB"}}"#
        );
        assert_eq!(lines.len(), 3, "{out}");
        assert!(in_flight.lock().expect("lock").is_empty());
    }
}
