//! Which requests calyx has sent a stdio server and not yet seen answered, so that a message
//! over 64 MiB fails them instead of leaving them waiting for ever: rmcp silently discards an
//! oversized line, and with it the answer a caller waits for. [`WriteTap`] records the id of
//! every request written to the server's stdin; the read tap ([`super::raw_tap::RawTap`])
//! forgets an id when its answer passes and, on an oversized line, answers every id left with
//! [`OVERSIZED`] and ends the stream, so the session closes and the supervisor reconnects.

use std::collections::HashSet;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use tokio::io::AsyncWrite;

/// What every call in flight gets when the server sends a message over the limit.
pub const OVERSIZED: &str = "the server sent a message over 64 MiB";

/// The ids (as JSON text: `7`, `"a"`) of requests sent and not yet answered.
pub type InFlight = Arc<Mutex<HashSet<String>>>;

/// What a whole message says of itself (the scan the stdio taps run as bytes pass).
fn facts(message: &[u8]) -> super::line_scan::Facts {
    let mut scan = super::line_scan::LineScan::default();
    scan.feed(message);
    scan.finish()
}

/// The id of a request (a message with an id and a method).
pub fn request_id(line: &[u8]) -> Option<String> {
    facts(line).request_id()
}

/// The id a response or error answers (a message with an id and no method).
pub fn answered_id(line: &[u8]) -> Option<String> {
    facts(line).answered_id()
}

/// The error answers for every id in flight, one JSON-RPC line each; empties the set.
pub fn fail_all(in_flight: &InFlight) -> Vec<u8> {
    let ids: Vec<String> = match in_flight.lock() {
        Ok(mut set) => set.drain().collect(),
        Err(_) => Vec::new(),
    };
    let mut out = Vec::new();
    for id in ids {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32603,"message":"{OVERSIZED}"}}}}"#
        );
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
    }
    out
}

/// An `AsyncWrite` (the server's stdin) that records the ids of the requests written through
/// it. Lines longer than `max_line` are passed on without being read.
pub struct WriteTap<W> {
    inner: W,
    /// The current line's scan (nothing of the line is held), and its length so far.
    scan: super::line_scan::LineScan,
    line_len: usize,
    max_line: usize,
    overflowed: bool,
    in_flight: InFlight,
}

impl<W> WriteTap<W> {
    pub fn new(inner: W, max_line: usize, in_flight: InFlight) -> Self {
        WriteTap {
            inner,
            scan: Default::default(),
            line_len: 0,
            max_line,
            overflowed: false,
            in_flight,
        }
    }

    fn feed(&mut self, mut bytes: &[u8]) {
        while let Some(at) = memchr::memchr(b'\n', bytes) {
            self.append(&bytes[..at]);
            let facts = self.scan.finish();
            if !self.overflowed {
                if let (Some(id), Ok(mut set)) = (facts.request_id(), self.in_flight.lock()) {
                    set.insert(id);
                }
            }
            self.line_len = 0;
            self.overflowed = false;
            bytes = &bytes[at + 1..];
        }
        self.append(bytes);
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

impl<W: AsyncWrite + Unpin> AsyncWrite for WriteTap<W> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let written = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = written {
            self.feed(&buf[..n]);
        }
        written
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    #[test]
    fn requests_and_answers_are_told_apart() {
        assert_eq!(
            request_id(br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{}}"#),
            Some("7".into())
        );
        assert_eq!(
            request_id(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            None
        );
        assert_eq!(
            answered_id(br#"{"result":{"content":[]},"jsonrpc":"2.0","id":"a"}"#),
            Some(r#""a""#.into())
        );
        assert_eq!(
            answered_id(br#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#),
            None
        );
        assert_eq!(answered_id(b"not json"), None);
    }

    #[tokio::test]
    async fn written_requests_are_recorded_and_failed_together() {
        let in_flight = InFlight::default();
        let mut tap = WriteTap::new(Vec::new(), 1 << 10, in_flight.clone());
        let stream = concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{}}"#,
            "\n",
        );
        for piece in stream.as_bytes().chunks(5) {
            tap.write_all(piece).await.expect("write");
        }
        assert_eq!(tap.inner, stream.as_bytes());
        let mut failed: Vec<serde_json::Value> = String::from_utf8(fail_all(&in_flight))
            .expect("utf-8")
            .lines()
            .map(|l| serde_json::from_str(l).expect("json"))
            .collect();
        failed.sort_by_key(|v| v["id"].to_string());
        assert_eq!(
            failed,
            [
                serde_json::json!({"jsonrpc":"2.0","id":"x","error":{"code":-32603,"message":OVERSIZED}}),
                serde_json::json!({"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":OVERSIZED}}),
            ]
        );
        assert!(in_flight.lock().expect("lock").is_empty());
    }
}
