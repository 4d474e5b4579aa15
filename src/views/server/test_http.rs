//! A tiny HTTP/1.1 client for the view server's tests: raw requests (so a test can send any
//! `Host`), whole responses, and an event-stream reader that undoes chunked encoding.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// How long any one read may take before the test fails.
pub const WAIT: Duration = Duration::from_secs(10);

pub struct Reply {
    pub status: u16,
    /// Header names lower-case.
    pub headers: HashMap<String, String>,
    pub body: String,
}

fn head(method: &str, path: &str, host: &str, extra: &[(&str, &str)], body: &str) -> String {
    let mut text = format!("{method} {path} HTTP/1.1\r\nHost: {host}\r\n");
    for (name, value) in extra {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    if !body.is_empty() || method == "POST" {
        text.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    text.push_str("\r\n");
    text.push_str(body);
    text
}

/// One request on its own connection (`Connection: close`), read whole.
pub async fn request(
    port: u16,
    method: &str,
    path: &str,
    host: &str,
    extra: &[(&str, &str)],
    body: &str,
) -> Reply {
    let mut headers = extra.to_vec();
    headers.push(("Connection", "close"));
    let mut stream = TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("connect");
    stream
        .write_all(head(method, path, host, &headers, body).as_bytes())
        .await
        .expect("write");
    let mut raw = Vec::new();
    tokio::time::timeout(WAIT, stream.read_to_end(&mut raw))
        .await
        .expect("response in time")
        .expect("read");
    let text = String::from_utf8_lossy(&raw).to_string();
    let (head, body) = text.split_once("\r\n\r\n").expect("a response head");
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Reply {
        status,
        headers,
        body: body.to_string(),
    }
}

/// An open event stream.
pub struct Events {
    reader: BufReader<TcpStream>,
    pub status: u16,
    decoded: String,
}

impl Events {
    pub async fn open(port: u16, path: &str) -> Events {
        let mut stream = TcpStream::connect(("127.0.0.1", port))
            .await
            .expect("connect");
        let host = format!("127.0.0.1:{port}");
        stream
            .write_all(head("GET", path, &host, &[], "").as_bytes())
            .await
            .expect("write");
        let mut reader = BufReader::new(stream);
        let mut status = 0;
        loop {
            let mut line = String::new();
            let n = tokio::time::timeout(WAIT, reader.read_line(&mut line))
                .await
                .expect("head in time")
                .expect("read");
            assert!(n > 0, "the stream closed in its head");
            if status == 0 {
                status = line
                    .split(' ')
                    .nth(1)
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0);
            }
            if line == "\r\n" {
                break;
            }
        }
        Events {
            reader,
            status,
            decoded: String::new(),
        }
    }

    /// Reads one chunk of the chunked body into `decoded`; false at the end of the stream.
    async fn chunk(&mut self) -> bool {
        let mut size = String::new();
        let n = tokio::time::timeout(WAIT, self.reader.read_line(&mut size))
            .await
            .expect("an event in time")
            .expect("read");
        if n == 0 {
            return false;
        }
        let size = usize::from_str_radix(size.trim(), 16).expect("a chunk size");
        if size == 0 {
            return false;
        }
        let mut data = vec![0; size + 2];
        tokio::time::timeout(WAIT, self.reader.read_exact(&mut data))
            .await
            .expect("a chunk in time")
            .expect("read");
        self.decoded
            .push_str(&String::from_utf8_lossy(&data[..size]));
        true
    }

    /// The next event as `(name, data)`, skipping comments; `None` when the stream ended.
    pub async fn next(&mut self) -> Option<(String, Value)> {
        loop {
            if let Some(end) = self.decoded.find("\n\n") {
                let block: String = self.decoded.drain(..end + 2).collect();
                let mut name = String::new();
                let mut data = None;
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("event: ") {
                        name = v.to_string();
                    } else if let Some(v) = line.strip_prefix("data: ") {
                        data = serde_json::from_str(v).ok();
                    }
                }
                if let Some(data) = data {
                    return Some((name, data));
                }
                continue;
            }
            if !self.chunk().await {
                return None;
            }
        }
    }

    /// Events until one `matches`, which is returned; panics if the stream ends first.
    pub async fn until(&mut self, matches: impl Fn(&str, &Value) -> bool) -> Value {
        loop {
            match self.next().await {
                Some((name, data)) if matches(&name, &data) => return data,
                Some(_) => {}
                None => panic!("the stream ended before the awaited event"),
            }
        }
    }
}
