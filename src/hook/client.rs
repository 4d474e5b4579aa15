//! A minimal blocking HTTP/1.1 client for `calyx hook`: one POST with `Content-Length` and
//! `Connection: close` over `std::net::TcpStream`. No runtime and no HTTP library, because the
//! hook runs once per agent event and its startup cost lands on the agent's turn.

use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// Largest response head or body the hook will read; a decision is a few hundred bytes.
const MAX_RESPONSE_BYTES: usize = 1024 * 1024;

/// A response: status code and (de-chunked) body.
#[derive(Debug, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    pub body: Vec<u8>,
}

/// POSTs `body` to `http://127.0.0.1:{port}{path}` with `headers`, all within `timeout`
/// (connect, write and read share one deadline).
pub fn post(
    port: u16,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    timeout: Duration,
) -> io::Result<Response> {
    let deadline = Instant::now() + timeout;
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let mut stream = TcpStream::connect_timeout(&addr, remaining(deadline)?)?;
    stream.set_nodelay(true)?;
    stream.set_write_timeout(Some(remaining(deadline)?))?;
    stream.write_all(&request(port, path, headers, body))?;
    read_response(&mut stream, deadline)
}

/// The request bytes, written with a single `write_all` so it leaves in as few packets as possible.
fn request(port: u16, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut head = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(name);
        head.push_str(": ");
        head.push_str(value);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

/// Whether `value` can go into a header as is (no CR, LF or other control bytes that would let
/// an environment variable smuggle extra headers).
pub fn header_safe(value: &str) -> bool {
    value
        .bytes()
        .all(|b| b == b'\t' || (b' '..=b'~').contains(&b))
}

fn remaining(deadline: Instant) -> io::Result<Duration> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "hook deadline passed",
        ));
    }
    Ok(left)
}

/// Reads the whole response: until the connection closes (we asked for `Connection: close`) or
/// `Content-Length` bytes of body have arrived.
fn read_response(stream: &mut TcpStream, deadline: Instant) -> io::Result<Response> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 8192];
    let mut parsed: Option<(Head, usize)> = None;
    loop {
        if let Some((head, body_start)) = &parsed {
            if let Some(len) = head.content_length {
                if buf.len() >= body_start.saturating_add(len) {
                    break;
                }
            }
            if head.no_body() {
                break;
            }
        }
        stream.set_read_timeout(Some(remaining(deadline)?))?;
        let n = match stream.read(&mut chunk) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
        if buf.len() > MAX_RESPONSE_BYTES {
            return Err(invalid("response too large"));
        }
        if parsed.is_none() {
            if let Some(end) = find(&buf, b"\r\n\r\n") {
                parsed = Some((Head::parse(&buf[..end])?, end + 4));
            }
        }
    }
    let (head, body_start) =
        parsed.ok_or_else(|| invalid("connection closed before the response head"))?;
    let raw = buf.get(body_start..).unwrap_or_default();
    let body = if head.no_body() {
        Vec::new()
    } else if head.chunked {
        dechunk(raw)?
    } else if let Some(len) = head.content_length {
        raw.get(..len)
            .ok_or_else(|| invalid("response body cut short"))?
            .to_vec()
    } else {
        raw.to_vec()
    };
    Ok(Response {
        status: head.status,
        body,
    })
}

/// The parts of a response head the hook needs.
#[derive(Debug)]
struct Head {
    status: u16,
    content_length: Option<usize>,
    chunked: bool,
}

impl Head {
    fn parse(head: &[u8]) -> io::Result<Self> {
        let text = std::str::from_utf8(head).map_err(|_| invalid("response head is not UTF-8"))?;
        let mut lines = text.split("\r\n");
        let status_line = lines.next().unwrap_or_default();
        let mut parts = status_line.splitn(3, ' ');
        let version = parts.next().unwrap_or_default();
        if !version.starts_with("HTTP/1.") {
            return Err(invalid("not an HTTP/1 response"));
        }
        let status = parts
            .next()
            .and_then(|s| s.parse::<u16>().ok())
            .filter(|s| (100..=999).contains(s))
            .ok_or_else(|| invalid("bad status line"))?;
        let mut head = Head {
            status,
            content_length: None,
            chunked: false,
        };
        for line in lines {
            let Some((name, value)) = line.split_once(':') else {
                continue;
            };
            let value = value.trim();
            if name.eq_ignore_ascii_case("content-length") {
                head.content_length =
                    Some(value.parse().map_err(|_| invalid("bad content-length"))?);
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                head.chunked = value.to_ascii_lowercase().contains("chunked");
            }
        }
        Ok(head)
    }

    /// Statuses that never carry a body.
    fn no_body(&self) -> bool {
        self.status == 204 || self.status == 304 || (100..200).contains(&self.status)
    }
}

/// Decodes a chunked body (extensions and trailers ignored).
fn dechunk(mut raw: &[u8]) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = find(raw, b"\r\n").ok_or_else(|| invalid("chunk size line cut short"))?;
        let size_text =
            std::str::from_utf8(&raw[..line_end]).map_err(|_| invalid("bad chunk size"))?;
        let size_text = size_text.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_text, 16).map_err(|_| invalid("bad chunk size"))?;
        raw = &raw[line_end + 2..];
        if size == 0 {
            return Ok(out);
        }
        let data = raw.get(..size).ok_or_else(|| invalid("chunk cut short"))?;
        out.extend_from_slice(data);
        raw = raw
            .get(size + 2..)
            .ok_or_else(|| invalid("chunk cut short"))?;
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn invalid(message: &'static str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// A one-shot server thread answering `reply` and returning the request it got.
    fn serve_once(reply: &'static [u8]) -> (u16, std::thread::JoinHandle<Vec<u8>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let thread = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut got = Vec::new();
            let mut chunk = [0u8; 4096];
            while find(&got, b"\r\n\r\n").is_none() || !got.ends_with(b"}") {
                let n = stream.read(&mut chunk).unwrap();
                if n == 0 {
                    break;
                }
                got.extend_from_slice(&chunk[..n]);
            }
            stream.write_all(reply).unwrap();
            got
        });
        (port, thread)
    }

    #[test]
    fn posts_and_reads_a_content_length_body() {
        let (port, server) = serve_once(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
        let got = post(port, "/x", &[("X-A", "1")], b"{}", Duration::from_secs(5)).unwrap();
        assert_eq!(
            got,
            Response {
                status: 200,
                body: b"hello".to_vec()
            }
        );
        let request = String::from_utf8(server.join().unwrap()).unwrap();
        assert!(request.starts_with("POST /x HTTP/1.1\r\n"), "{request}");
        assert!(request.contains("\r\nContent-Length: 2\r\n"), "{request}");
        assert!(request.contains("\r\nX-A: 1\r\n"), "{request}");
        assert!(request.ends_with("\r\n\r\n{}"), "{request}");
    }

    #[test]
    fn reads_chunked_and_close_delimited_bodies() {
        let (port, _s) = serve_once(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n");
        let got = post(port, "/", &[], b"{}", Duration::from_secs(5)).unwrap();
        assert_eq!(got.body, b"abcde");
        let (port, _s) = serve_once(b"HTTP/1.1 200 OK\r\n\r\nuntil close");
        let got = post(port, "/", &[], b"{}", Duration::from_secs(5)).unwrap();
        assert_eq!(got.body, b"until close");
        let (port, _s) = serve_once(b"HTTP/1.1 204 No Content\r\n\r\n");
        let got = post(port, "/", &[], b"{}", Duration::from_secs(5)).unwrap();
        assert_eq!(
            got,
            Response {
                status: 204,
                body: Vec::new()
            }
        );
    }

    #[test]
    fn rejects_garbage() {
        let (port, _s) = serve_once(b"SSH-2.0-x\r\n\r\n");
        assert!(post(port, "/", &[], b"{}", Duration::from_secs(5)).is_err());
        assert!(dechunk(b"zz\r\n").is_err());
        assert!(dechunk(b"5\r\nab").is_err());
    }

    #[test]
    fn header_values_with_control_bytes_are_unsafe() {
        assert!(header_safe("abc-123 x\t"));
        assert!(!header_safe("a\r\nX-Evil: 1"));
        assert!(!header_safe("\u{7f}"));
        assert!(!header_safe("é"));
    }
}
