//! Reading a request body under a size limit and a deadline, so a huge or trickling body costs
//! the server a bounded amount of memory and time.

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use hyper::body::Body;
use hyper::header::{HeaderMap, CONTENT_LENGTH};

/// Why a body could not be read.
#[derive(Debug)]
pub enum BodyError {
    /// More than the limit arrived (or was announced): 413.
    TooLarge,
    /// The body did not arrive whole before the deadline: 408.
    Timeout,
    /// The connection failed or the framing was invalid.
    Read(String),
}

/// Whether `Content-Length` announces more than `limit` bytes, so the request can be refused
/// before a byte of its body is read.
pub fn announced_too_large(headers: &HeaderMap, limit: usize) -> bool {
    headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .is_some_and(|len| len > limit as u64)
}

/// Collects the body, failing once more than `limit` bytes have arrived or `timeout` has passed.
///
/// After the limit is crossed the rest is read and discarded (up to a few times the limit,
/// within the same deadline) so the client can read the 413 instead of having its connection
/// reset with unread data in the server's socket.
pub async fn read_limited<B>(
    mut body: B,
    limit: usize,
    timeout: Duration,
) -> Result<Bytes, BodyError>
where
    B: Body + Unpin,
    B::Data: AsRef<[u8]>,
    B::Error: std::fmt::Display,
{
    let deadline = tokio::time::Instant::now() + timeout;
    let drain_cap = limit.saturating_mul(4);
    let mut collected = BytesMut::new();
    let mut seen: usize = 0;
    loop {
        let frame = match tokio::time::timeout_at(deadline, body.frame()).await {
            Err(_) if seen > limit => return Err(BodyError::TooLarge),
            Err(_) => return Err(BodyError::Timeout),
            Ok(None) => break,
            Ok(Some(Err(_))) if seen > limit => return Err(BodyError::TooLarge),
            Ok(Some(Err(e))) => return Err(BodyError::Read(e.to_string())),
            Ok(Some(Ok(frame))) => frame,
        };
        let Ok(data) = frame.into_data() else {
            continue; // trailers carry nothing we use
        };
        let data = data.as_ref();
        seen = seen.saturating_add(data.len());
        if seen <= limit {
            collected.extend_from_slice(data);
        } else if seen > drain_cap {
            return Err(BodyError::TooLarge);
        }
    }
    if seen > limit {
        return Err(BodyError::TooLarge);
    }
    Ok(collected.freeze())
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::Full;
    use hyper::body::Frame;
    use hyper::header::HeaderValue;

    #[tokio::test]
    async fn collects_a_body_within_the_limit() {
        let body = Full::new(Bytes::from_static(b"{\"a\":1}"));
        let got = read_limited(body, 7, Duration::from_secs(1)).await.unwrap();
        assert_eq!(&got[..], b"{\"a\":1}");
    }

    #[tokio::test]
    async fn refuses_a_body_over_the_limit() {
        let body = Full::new(Bytes::from(vec![b'x'; 9]));
        let got = read_limited(body, 8, Duration::from_secs(1)).await;
        assert!(matches!(got, Err(BodyError::TooLarge)), "{got:?}");
    }

    #[tokio::test]
    async fn times_out_on_a_stalled_body() {
        let got = read_limited(stalled_body(), 8, Duration::from_millis(50)).await;
        assert!(matches!(got, Err(BodyError::Timeout)), "{got:?}");
    }

    /// One frame, then nothing ever again.
    fn stalled_body(
    ) -> impl hyper::body::Body<Data = Bytes, Error = std::convert::Infallible> + Unpin {
        struct Stalled(bool);
        impl hyper::body::Body for Stalled {
            type Data = Bytes;
            type Error = std::convert::Infallible;
            fn poll_frame(
                mut self: std::pin::Pin<&mut Self>,
                _: &mut std::task::Context<'_>,
            ) -> std::task::Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
                if self.0 {
                    std::task::Poll::Pending
                } else {
                    self.0 = true;
                    std::task::Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(b"{")))))
                }
            }
        }
        Stalled(false)
    }

    #[test]
    fn reads_the_announced_length() {
        let mut headers = HeaderMap::new();
        assert!(!announced_too_large(&headers, 10));
        headers.insert(CONTENT_LENGTH, HeaderValue::from_static("11"));
        assert!(announced_too_large(&headers, 10));
        headers.insert(CONTENT_LENGTH, HeaderValue::from_static("10"));
        assert!(!announced_too_large(&headers, 10));
    }
}
