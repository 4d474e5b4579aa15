//! Accepting connections on the two listeners and answering their requests.
//!
//! Host listener: `GET /v/<id>/<token>/` the host page, `GET .../host.js` its script,
//! `GET .../events` the page's event stream, `POST .../rpc` what the page sends.
//! Sandbox listener: `GET /s/<id>/<sandbox-token>/` the sandbox page, with the view's CSP as
//! its header. Every response says `no-store` and `no-referrer` and carries no CORS header;
//! a `Host` that is not a loopback name with the listener's port gets 403 (DNS rebinding),
//! a wrong token 404, a removed view's token 410.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{combinators::BoxBody, BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{HeaderMap, HeaderValue, CACHE_CONTROL, CONTENT_TYPE, HOST, ORIGIN};
use hyper::http::uri::Authority;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::pages::Pages;
use crate::accept_backoff::AcceptBackoff;
use crate::views::hub::Access;
use crate::views::registry::{Page, ViewId};

pub type Body = BoxBody<Bytes, Infallible>;

/// Connections one listener serves at once (a page holds two or three).
const MAX_CONNECTIONS: usize = 128;
/// Time to send a request's head.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest post: a view's download offer may carry a file as base64.
const MAX_POST_BYTES: usize = 24 * 1024 * 1024;
/// Time to send a post's body.
const POST_TIMEOUT: Duration = Duration::from_secs(30);
/// The header that names the page (its generation) on posts.
pub const PAGE_HEADER: &str = "x-calyx-page";

const HOST_HTML: &str = include_str!("../assets/host.html");
const HOST_JS: &str = include_str!("../assets/host.js");
const SANDBOX_HTML: &str = include_str!("../assets/sandbox.html");

const LOOPBACK: [&str; 3] = ["127.0.0.1", "localhost", "[::1]"];

/// Which of the two listeners a connection came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listener {
    Host,
    Sandbox,
}

pub async fn accept_loop(
    listener: TcpListener,
    which: Listener,
    pages: Arc<Pages>,
    mut stopped: watch::Receiver<bool>,
) {
    let mut connections = JoinSet::new();
    let mut backoff = AcceptBackoff::default();
    loop {
        tokio::select! {
            _ = stopped.changed() => break,
            accepted = listener.accept(), if connections.len() < MAX_CONNECTIONS => match accepted {
                Ok((stream, _)) => {
                    backoff.reset();
                    connections.spawn(serve(stream, which, pages.clone(), stopped.clone()));
                }
                Err(e) => backoff.wait(&e, "views").await,
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    // Event streams never end on their own: stopping drops them.
    connections.shutdown().await;
}

async fn serve(
    stream: TcpStream,
    which: Listener,
    pages: Arc<Pages>,
    mut stopped: watch::Receiver<bool>,
) {
    let _ = stream.set_nodelay(true);
    let service = service_fn(move |req| {
        let pages = pages.clone();
        async move { Ok::<_, Infallible>(handle(req, which, &pages).await) }
    });
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(HEAD_TIMEOUT);
    let connection = http.serve_connection(TokioIo::new(stream), service);
    tokio::select! {
        result = connection => {
            if let Err(e) = result {
                tracing::debug!(error = %e, "views: connection ended with an error");
            }
        }
        _ = stopped.changed() => {}
    }
}

async fn handle(req: Request<Incoming>, which: Listener, pages: &Arc<Pages>) -> Response<Body> {
    let ports = pages.ports();
    let port = match which {
        Listener::Host => ports.host,
        Listener::Sandbox => ports.sandbox,
    };
    let Some(name) = loopback_name(req.headers().get(HOST), port) else {
        return text(
            StatusCode::FORBIDDEN,
            "Host must be a loopback name with this port",
        );
    };
    let prefix = match which {
        Listener::Host => "/v/",
        Listener::Sandbox => "/s/",
    };
    let path = req.uri().path().to_string();
    let Some((id, token, tail)) = split_path(&path, prefix) else {
        return text(StatusCode::NOT_FOUND, "no such page");
    };
    let page = match which {
        Listener::Host => Page::Host,
        Listener::Sandbox => Page::Sandbox,
    };
    let snapshot = match pages.hub().authorize(id, page, token) {
        Access::Granted(snapshot) => snapshot,
        // The removed view's own page may still answer its `ui/resource-teardown` (the
        // session takes only that while it tears down; once its page is closed, nothing).
        Access::Gone
            if matches!(
                (which, tail, req.method()),
                (Listener::Host, "rpc", &Method::POST)
            ) =>
        {
            return rpc(req, id, ports.host, pages).await;
        }
        Access::Gone => return text(StatusCode::GONE, "this view was closed"),
        Access::Denied => return text(StatusCode::NOT_FOUND, "no such page"),
    };
    match (which, tail, req.method()) {
        (Listener::Host, "", &Method::GET) => host_page(ports.sandbox),
        (Listener::Host, "host.js", &Method::GET) => {
            with_type(ok(HOST_JS), "text/javascript; charset=utf-8")
        }
        (Listener::Host, "events", &Method::GET) => {
            let body = pages.connect(&snapshot);
            let mut response = Response::new(body.boxed());
            headers(&mut response);
            with_type(response, "text/event-stream")
        }
        (Listener::Host, "rpc", &Method::POST) => rpc(req, id, ports.host, pages).await,
        (Listener::Sandbox, "", &Method::GET) => {
            let Some(csp) = snapshot.call.csp.as_ref() else {
                return text(StatusCode::CONFLICT, "the view's document is not ready");
            };
            let others_open = pages
                .hub()
                .all()
                .iter()
                .any(|v| v.view.id != id && v.call.page_open);
            sandbox_page(name, ports.host, &csp.header, !others_open)
        }
        (_, "" | "host.js" | "events" | "rpc", _) => {
            text(StatusCode::METHOD_NOT_ALLOWED, "method not allowed")
        }
        _ => text(StatusCode::NOT_FOUND, "no such page"),
    }
}

/// `/v/<id>/<token>/<tail>` → `(id, token, tail)`; the slash after the token is required.
fn split_path<'a>(path: &'a str, prefix: &str) -> Option<(ViewId, &'a str, &'a str)> {
    let rest = path.strip_prefix(prefix)?;
    let mut parts = rest.splitn(3, '/');
    let id = parts.next()?.parse::<u64>().ok()?;
    let token = parts.next()?;
    let tail = parts.next()?;
    Some((ViewId(id), token, tail))
}

/// The loopback name of a `Host` (or an `Origin`'s authority) with exactly `port`, lower-case,
/// or `None`.
fn loopback_name(value: Option<&HeaderValue>, port: u16) -> Option<&'static str> {
    let value = value?.to_str().ok()?;
    authority_name(value, port)
}

fn authority_name(value: &str, port: u16) -> Option<&'static str> {
    let authority = value.parse::<Authority>().ok()?;
    if authority.as_str() != value || value.contains('@') || authority.port_u16() != Some(port) {
        return None;
    }
    LOOPBACK
        .into_iter()
        .find(|h| h.eq_ignore_ascii_case(authority.host()))
}

/// A browser's `Origin`, when sent, must be the host page's own.
fn origin_allowed(headers: &HeaderMap, host_port: u16) -> bool {
    match headers.get(ORIGIN) {
        None => true,
        Some(origin) => origin
            .to_str()
            .ok()
            .and_then(|o| o.strip_prefix("http://"))
            .and_then(|o| authority_name(o, host_port))
            .is_some(),
    }
}

async fn rpc(
    req: Request<Incoming>,
    id: ViewId,
    host_port: u16,
    pages: &Arc<Pages>,
) -> Response<Body> {
    if !origin_allowed(req.headers(), host_port) {
        return text(StatusCode::FORBIDDEN, "Origin is not this view's page");
    }
    let Some(generation) = req
        .headers()
        .get(PAGE_HEADER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
    else {
        return text(StatusCode::BAD_REQUEST, "missing page header");
    };
    let limited = Limited::new(req.into_body(), MAX_POST_BYTES);
    let bytes = match tokio::time::timeout(POST_TIMEOUT, limited.collect()).await {
        Ok(Ok(collected)) => collected.to_bytes(),
        Ok(Err(_)) => {
            return text(
                StatusCode::PAYLOAD_TOO_LARGE,
                "body too large or unreadable",
            )
        }
        Err(_) => return text(StatusCode::REQUEST_TIMEOUT, "body timed out"),
    };
    let message: serde_json::Value = match serde_json::from_slice(&bytes) {
        Ok(value @ serde_json::Value::Object(_)) => value,
        _ => return text(StatusCode::BAD_REQUEST, "expected one JSON object"),
    };
    match pages.post(id, generation, message) {
        Ok(()) => text(StatusCode::ACCEPTED, ""),
        Err(_) => text(
            StatusCode::CONFLICT,
            "this page is not the view's open page",
        ),
    }
}

fn host_page(sandbox_port: u16) -> Response<Body> {
    // CSP host sources cannot be IPv6 literals (Chromium drops `http://[::1]:N` with a
    // warning), and the listeners are on 127.0.0.1 anyway.
    let frames: Vec<String> = LOOPBACK
        .iter()
        .filter(|h| !h.starts_with('['))
        .map(|h| format!("http://{h}:{sandbox_port}"))
        .collect();
    let csp = format!(
        "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
         img-src 'self' data:; connect-src 'self'; frame-src {}; base-uri 'none'; \
         form-action 'none'; frame-ancestors 'none'",
        frames.join(" ")
    );
    let mut response = with_type(ok(HOST_HTML), "text/html; charset=utf-8");
    if let Ok(value) = HeaderValue::from_str(&csp) {
        response
            .headers_mut()
            .insert("content-security-policy", value);
    }
    response
}

/// The sandbox page: the view's CSP as its header, the host page's origin (from the request's
/// own loopback name, never from the query) for its message checks.
fn sandbox_page(name: &str, host_port: u16, csp: &str, clear: bool) -> Response<Body> {
    let html = SANDBOX_HTML.replace(
        "__CALYX_HOST_ORIGIN__",
        &format!("http://{name}:{host_port}"),
    );
    let mut response = with_type(ok(html), "text/html; charset=utf-8");
    let Ok(csp) = HeaderValue::from_str(csp) else {
        return text(StatusCode::INTERNAL_SERVER_ERROR, "unusable CSP");
    };
    response
        .headers_mut()
        .insert("content-security-policy", csp);
    if clear {
        response
            .headers_mut()
            .insert("clear-site-data", HeaderValue::from_static("\"storage\""));
    }
    response
}

fn headers(response: &mut Response<Body>) {
    let h = response.headers_mut();
    h.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
    h.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
}

fn ok(body: impl Into<Bytes>) -> Response<Body> {
    let mut response = Response::new(Full::new(body.into()).boxed());
    headers(&mut response);
    response
}

fn with_type(mut response: Response<Body>, content_type: &'static str) -> Response<Body> {
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

fn text(status: StatusCode, message: &'static str) -> Response<Body> {
    let mut response = with_type(ok(message), "text/plain; charset=utf-8");
    *response.status_mut() = status;
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_need_an_id_a_token_and_the_slash() {
        assert_eq!(split_path("/v/3/abc/", "/v/"), Some((ViewId(3), "abc", "")));
        assert_eq!(
            split_path("/v/3/abc/events", "/v/"),
            Some((ViewId(3), "abc", "events"))
        );
        assert_eq!(split_path("/v/3/abc", "/v/"), None);
        assert_eq!(split_path("/v/x/abc/", "/v/"), None);
        assert_eq!(split_path("/s/3/abc/", "/v/"), None);
    }

    #[test]
    fn only_loopback_names_with_our_port() {
        assert_eq!(authority_name("127.0.0.1:41880", 41880), Some("127.0.0.1"));
        assert_eq!(authority_name("LOCALHOST:41880", 41880), Some("localhost"));
        assert_eq!(authority_name("[::1]:41880", 41880), Some("[::1]"));
        for bad in [
            "127.0.0.1:41881",
            "127.0.0.1",
            "evil.example:41880",
            "user@127.0.0.1:41880",
            "127.0.0.1:41880/x",
        ] {
            assert_eq!(authority_name(bad, 41880), None, "{bad}");
        }
    }
}
