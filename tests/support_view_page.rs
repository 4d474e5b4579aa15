//! A view's page played without a browser: the view server's channel is plain HTTP (`GET
//! .../events`, server-sent events, and `POST .../rpc`), so a test can open a view's URL and
//! be its app, speaking the MCP Apps JSON-RPC as the page would relay it.

use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// How long any one read may take before the test fails.
const WAIT: Duration = Duration::from_secs(15);

/// An open page of one view: its event stream and its page number.
pub(crate) struct Page {
    port: u16,
    /// `/v/<id>/<token>/`.
    path: String,
    page: u64,
    reader: BufReader<TcpStream>,
    decoded: String,
}

impl Page {
    /// Opens the event stream of the view at `url` (`http://127.0.0.1:<port>/v/<id>/<token>/`)
    /// and waits for the server's `ready`.
    pub(crate) async fn open(url: &str) -> Page {
        let rest = url
            .strip_prefix("http://127.0.0.1:")
            .unwrap_or_else(|| panic!("not a view URL: {url}"));
        let (port, path) = rest.split_once('/').expect("a path");
        let port: u16 = port.parse().expect("a port");
        let path = format!("/{path}");
        let mut stream = TcpStream::connect(("127.0.0.1", port))
            .await
            .expect("connect");
        let head = format!("GET {path}events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n");
        stream.write_all(head.as_bytes()).await.expect("write");
        let mut reader = BufReader::new(stream);
        let mut status = String::new();
        loop {
            let mut line = String::new();
            let n = tokio::time::timeout(WAIT, reader.read_line(&mut line))
                .await
                .expect("the head in time")
                .expect("read");
            assert!(n > 0, "the stream closed in its head");
            if status.is_empty() {
                status = line.clone();
            }
            if line == "\r\n" {
                break;
            }
        }
        assert!(status.contains(" 200 "), "events: {status}");
        let mut page = Page {
            port,
            path,
            page: 0,
            reader,
            decoded: String::new(),
        };
        let ready = page
            .until(|name, data| name == "control" && data["type"] == "ready")
            .await;
        page.page = ready["page"].as_u64().expect("a page number");
        page
    }

    /// Posts `message` as the view (the page relays it verbatim).
    pub(crate) async fn post(&self, message: Value) {
        let body = message.to_string();
        let host = format!("127.0.0.1:{}", self.port);
        let head = format!(
            "POST {}rpc HTTP/1.1\r\nHost: {host}\r\nOrigin: http://{host}\r\nx-calyx-page: {}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            self.path,
            self.page,
            body.len()
        );
        let mut stream = TcpStream::connect(("127.0.0.1", self.port))
            .await
            .expect("connect");
        stream
            .write_all(format!("{head}{body}").as_bytes())
            .await
            .expect("write");
        let mut raw = Vec::new();
        tokio::time::timeout(WAIT, stream.read_to_end(&mut raw))
            .await
            .expect("an answer in time")
            .expect("read");
        let text = String::from_utf8_lossy(&raw);
        assert!(text.starts_with("HTTP/1.1 202"), "rpc post: {text}");
    }

    /// `ui/initialize` (with `capabilities`) and `initialized`, as an app starts.
    pub(crate) async fn initialize(&mut self, capabilities: Value) {
        self.post(
            json!({ "jsonrpc": "2.0", "id": "init", "method": "ui/initialize",
                          "params": { "protocolVersion": "2026-01-26",
                                      "appCapabilities": capabilities } }),
        )
        .await;
        self.until(|name, data| name == "rpc" && data["id"] == "init")
            .await;
        self.post(json!({ "jsonrpc": "2.0", "method": "ui/notifications/initialized" }))
            .await;
    }

    /// The next JSON-RPC message calyx sends the view with `method`.
    pub(crate) async fn request(&mut self, method: &str) -> Value {
        self.until(|name, data| name == "rpc" && data["method"] == method)
            .await
    }

    /// Answers calyx's request `request` with `result`.
    pub(crate) async fn answer(&self, request: &Value, result: Value) {
        self.post(json!({ "jsonrpc": "2.0", "id": request["id"], "result": result }))
            .await;
    }

    /// Reads one chunk of the chunked body; false at the end of the stream.
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

    /// Events until one `matches`, which is returned; panics if the stream ends first.
    pub(crate) async fn until(&mut self, matches: impl Fn(&str, &Value) -> bool) -> Value {
        loop {
            if let Some(end) = self.decoded.find("\n\n") {
                let block: String = self.decoded.drain(..end + 2).collect();
                let mut name = String::new();
                let mut data = None;
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("event: ") {
                        name = v.to_string();
                    } else if let Some(v) = line.strip_prefix("data: ") {
                        data = serde_json::from_str::<Value>(v).ok();
                    }
                }
                match data {
                    Some(data) if matches(&name, &data) => return data,
                    _ => continue,
                }
            }
            assert!(
                self.chunk().await,
                "the stream ended before the awaited event"
            );
        }
    }
}
