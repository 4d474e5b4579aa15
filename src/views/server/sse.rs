//! The page's event stream (`GET .../events`): server-sent events carrying the JSON-RPC
//! messages for the view (`event: rpc`) and calyx's control events (`event: control`), with a
//! keep-alive comment every 15 s so proxies and SSH tunnels do not close an idle stream.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::{Body, Frame};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::time::{interval_at, Instant, Interval};

/// How often an idle stream gets a comment.
pub const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// Events a page may fall behind by before it is dropped (it reconnects and replays).
pub const BUFFER: usize = 1024;

/// One event for a page.
#[derive(Debug, Clone, PartialEq)]
pub enum PageEvent {
    /// A JSON-RPC message for the view.
    Rpc(Value),
    /// A control event for the host page.
    Control(Value),
}

impl PageEvent {
    /// The event as SSE text. JSON text has no raw newlines, so one `data:` line holds it.
    pub fn encode(&self) -> Bytes {
        let (name, value) = match self {
            PageEvent::Rpc(v) => ("rpc", v),
            PageEvent::Control(v) => ("control", v),
        };
        Bytes::from(format!("event: {name}\ndata: {value}\n\n"))
    }
}

/// Runs when the stream's body is dropped (the browser went away or was taken over).
pub struct OnDrop(Option<Box<dyn FnOnce() + Send + Sync>>);

impl OnDrop {
    pub fn new(f: impl FnOnce() + Send + Sync + 'static) -> Self {
        OnDrop(Some(Box::new(f)))
    }
}

impl Drop for OnDrop {
    fn drop(&mut self) {
        if let Some(f) = self.0.take() {
            f();
        }
    }
}

/// The response body of an event stream: ends when the page's sender is dropped.
pub struct SseBody {
    events: mpsc::Receiver<PageEvent>,
    keep_alive: Interval,
    _on_drop: OnDrop,
}

impl SseBody {
    pub fn new(events: mpsc::Receiver<PageEvent>, on_drop: OnDrop) -> Self {
        SseBody {
            events,
            keep_alive: interval_at(Instant::now() + KEEP_ALIVE, KEEP_ALIVE),
            _on_drop: on_drop,
        }
    }
}

impl Body for SseBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.events.poll_recv(cx) {
            Poll::Ready(Some(event)) => return Poll::Ready(Some(Ok(Frame::data(event.encode())))),
            Poll::Ready(None) => return Poll::Ready(None),
            Poll::Pending => {}
        }
        match self.keep_alive.poll_tick(cx) {
            Poll::Ready(_) => Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(
                b": keep-alive\n\n",
            ))))),
            Poll::Pending => Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_are_one_line_of_json_each() {
        let event = PageEvent::Rpc(json!({ "text": "two\nlines" }));
        assert_eq!(
            event.encode(),
            Bytes::from("event: rpc\ndata: {\"text\":\"two\\nlines\"}\n\n")
        );
        let control = PageEvent::Control(json!({ "type": "closed" }));
        assert!(control.encode().starts_with(b"event: control\n"));
    }
}
