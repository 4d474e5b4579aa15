//! Where the browser comes back: a one-shot listener on `http://127.0.0.1:<port>/callback`
//! (a random port, or 41890 when the entry asks for a fixed one or the sign-in goes through an
//! SSH port forward), and the same checks for a redirect address the user pastes instead. Only
//! `GET /callback` counts; it must carry the state calyx sent (and the issuer calyx expects,
//! when the authorization server names one, RFC 9207). The browser gets a short page saying
//! what happened; the listener closes after one answer, after 10 minutes, or when cancelled.

use std::time::Duration;

use rmcp::transport::auth::AuthorizationCallback;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::OAuthError;

/// The redirect port of a fixed-port entry and of a sign-in over an SSH port forward.
pub const FIXED_REDIRECT_PORT: u16 = 41890;
/// How long a sign-in waits for the browser.
pub const SIGN_IN_LIMIT: Duration = Duration::from_secs(600);
/// The most of a request the listener reads (the request line and headers).
const MAX_REQUEST: usize = 16 * 1024;

/// A bound, not yet answered redirect listener.
pub struct CallbackListener {
    listener: TcpListener,
    port: u16,
}

impl CallbackListener {
    /// Binds 127.0.0.1 on `port`, or on a random port when `None`.
    pub async fn bind(port: Option<u16>) -> Result<Self, OAuthError> {
        let wanted = port.unwrap_or(0);
        let listener = TcpListener::bind(("127.0.0.1", wanted))
            .await
            .map_err(|e| OAuthError::Listen {
                port: wanted,
                reason: e.to_string(),
            })?;
        let port = listener
            .local_addr()
            .map_err(|e| OAuthError::Listen {
                port: wanted,
                reason: e.to_string(),
            })?
            .port();
        Ok(CallbackListener { listener, port })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// `http://127.0.0.1:<port>/callback`.
    pub fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}/callback", self.port)
    }

    /// Waits for the browser's `GET /callback`, checks it and answers a page naming
    /// `server_name`. Other paths get a 404 and the listener keeps waiting.
    pub async fn wait(
        self,
        expected_state: &str,
        expected_issuer: Option<&str>,
        server_name: &str,
        limit: Duration,
        cancel: CancellationToken,
    ) -> Result<AuthorizationCallback, OAuthError> {
        let answered = async {
            loop {
                let Ok((mut socket, _)) = self.listener.accept().await else {
                    continue;
                };
                let Some(target) = read_request_target(&mut socket).await else {
                    let _ = respond(&mut socket, 400, "Bad request").await;
                    continue;
                };
                if !target.starts_with("/callback") {
                    let _ = respond(&mut socket, 404, "Not found").await;
                    continue;
                }
                let url = format!("http://127.0.0.1:{}{target}", self.port);
                let outcome = parse_and_check(&url, expected_state, expected_issuer);
                let page = match &outcome {
                    Ok(_) => (
                        200,
                        format!("Signed in to {server_name}; you can close this tab."),
                    ),
                    Err(e) => (400, format!("Sign-in to {server_name} failed: {e}")),
                };
                let _ = respond(&mut socket, page.0, &page.1).await;
                return outcome;
            }
        };
        tokio::select! {
            outcome = answered => outcome,
            _ = tokio::time::sleep(limit) => Err(OAuthError::TimedOut),
            _ = cancel.cancelled() => Err(OAuthError::Cancelled),
        }
    }
}

/// A pasted redirect address (or the listener's request): the authorization server's `error`
/// when it sent one, else `code` and `state`, checked against what calyx sent.
pub fn parse_and_check(
    url: &str,
    expected_state: &str,
    expected_issuer: Option<&str>,
) -> Result<AuthorizationCallback, OAuthError> {
    let trimmed = url.trim();
    let parsed = url::Url::parse(trimmed).map_err(|_| OAuthError::BadRedirect(trimmed.into()))?;
    let query = |name: &str| {
        parsed
            .query_pairs()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    };
    if let Some(error) = query("error") {
        let description = query("error_description")
            .map(|d| format!(" ({d})"))
            .unwrap_or_default();
        return Err(OAuthError::Refused(format!("{error}{description}")));
    }
    let callback = AuthorizationCallback::from_redirect_url(trimmed)
        .map_err(|_| OAuthError::BadRedirect(trimmed.into()))?;
    check_callback(&callback, expected_state, expected_issuer)?;
    Ok(callback)
}

/// The state must be the one calyx sent; an `iss` the server sends must be the issuer calyx
/// discovered (RFC 9207).
pub fn check_callback(
    callback: &AuthorizationCallback,
    expected_state: &str,
    expected_issuer: Option<&str>,
) -> Result<(), OAuthError> {
    if callback.csrf_token != expected_state {
        return Err(OAuthError::StateMismatch);
    }
    if let (Some(received), Some(expected)) = (callback.issuer.as_deref(), expected_issuer) {
        if received.trim_end_matches('/') != expected.trim_end_matches('/') {
            return Err(OAuthError::IssuerMismatch {
                expected: expected.into(),
                received: received.into(),
            });
        }
    }
    Ok(())
}

/// The request target of a `GET` (`None` for anything else or a malformed request).
async fn read_request_target(socket: &mut tokio::net::TcpStream) -> Option<String> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    let read = async {
        while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < MAX_REQUEST {
            let n = socket.read(&mut chunk).await.ok()?;
            if n == 0 {
                break;
            }
            buf.extend_from_slice(&chunk[..n]);
        }
        Some(())
    };
    tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .ok()??;
    let head = String::from_utf8_lossy(&buf);
    let line = head.lines().next()?;
    let mut parts = line.split(' ');
    (parts.next()? == "GET").then_some(())?;
    parts.next().map(str::to_string)
}

async fn respond(
    socket: &mut tokio::net::TcpStream,
    status: u16,
    text: &str,
) -> std::io::Result<()> {
    let reason = match status {
        200 => "OK",
        404 => "Not Found",
        _ => "Bad Request",
    };
    let body = format!(
        "<!doctype html><meta charset=\"utf-8\"><title>calyx</title><p>{}</p>\n",
        html_escape(text)
    );
    let response = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    socket.write_all(response.as_bytes()).await?;
    socket.shutdown().await
}

fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn get(port: u16, target: &str) -> String {
        let mut socket = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .expect("connect");
        socket
            .write_all(format!("GET {target} HTTP/1.1\r\nhost: x\r\n\r\n").as_bytes())
            .await
            .expect("write");
        let mut answer = String::new();
        socket.read_to_string(&mut answer).await.expect("read");
        answer
    }

    #[tokio::test]
    async fn the_listener_takes_the_callback_with_the_expected_state() {
        let listener = CallbackListener::bind(None).await.expect("bind");
        let port = listener.port();
        assert_eq!(
            listener.redirect_uri(),
            format!("http://127.0.0.1:{port}/callback")
        );
        let waiting = tokio::spawn(listener.wait(
            "s1",
            Some("https://as.example"),
            "Linear",
            SIGN_IN_LIMIT,
            CancellationToken::new(),
        ));
        let other = get(port, "/favicon.ico").await;
        assert!(other.starts_with("HTTP/1.1 404"), "{other}");
        let page = get(
            port,
            "/callback?code=c1&state=s1&iss=https%3A%2F%2Fas.example",
        )
        .await;
        assert!(page.starts_with("HTTP/1.1 200"), "{page}");
        assert!(
            page.contains("Signed in to Linear; you can close this tab."),
            "{page}"
        );
        let callback = waiting.await.expect("joined").expect("accepted");
        assert_eq!(callback.code, "c1");
    }

    #[tokio::test]
    async fn a_wrong_state_is_refused_with_its_sentence() {
        let listener = CallbackListener::bind(None).await.expect("bind");
        let port = listener.port();
        let waiting = tokio::spawn(listener.wait(
            "expected",
            None,
            "Linear",
            SIGN_IN_LIMIT,
            CancellationToken::new(),
        ));
        let page = get(port, "/callback?code=c1&state=forged").await;
        assert!(page.starts_with("HTTP/1.1 400"), "{page}");
        let error = waiting.await.expect("joined").expect_err("refused");
        assert_eq!(error, OAuthError::StateMismatch);
        assert_eq!(
            error.to_string(),
            "the sign-in answer's state does not match the sign-in calyx started (a stale or forged redirect): start the sign-in again"
        );
    }

    #[tokio::test]
    async fn the_servers_error_is_shown() {
        let listener = CallbackListener::bind(None).await.expect("bind");
        let port = listener.port();
        let waiting = tokio::spawn(listener.wait(
            "s",
            None,
            "Linear",
            SIGN_IN_LIMIT,
            CancellationToken::new(),
        ));
        let page = get(
            port,
            "/callback?error=access_denied&error_description=no+thanks",
        )
        .await;
        assert!(page.contains("access_denied (no thanks)"), "{page}");
        let error = waiting.await.expect("joined").expect_err("refused");
        assert!(matches!(error, OAuthError::Refused(_)), "{error}");
    }

    #[tokio::test]
    async fn cancelling_closes_the_listener() {
        let listener = CallbackListener::bind(None).await.expect("bind");
        let cancel = CancellationToken::new();
        let waiting = tokio::spawn(listener.wait("s", None, "x", SIGN_IN_LIMIT, cancel.clone()));
        cancel.cancel();
        assert_eq!(
            waiting.await.expect("joined").expect_err("cancelled"),
            OAuthError::Cancelled
        );
    }

    #[tokio::test(start_paused = true)]
    async fn ten_minutes_without_an_answer_time_out() {
        let listener = CallbackListener::bind(None).await.expect("bind");
        let outcome = listener
            .wait("s", None, "x", SIGN_IN_LIMIT, CancellationToken::new())
            .await;
        assert_eq!(outcome.expect_err("timed out"), OAuthError::TimedOut);
    }

    #[test]
    fn a_pasted_address_gets_the_same_checks() {
        let ok = parse_and_check(
            " http://127.0.0.1:41890/callback?code=abc&state=s1\n",
            "s1",
            None,
        )
        .expect("accepted");
        assert_eq!(ok.code, "abc");
        assert_eq!(
            parse_and_check("http://127.0.0.1:1/callback?code=abc&state=s2", "s1", None),
            Err(OAuthError::StateMismatch)
        );
        let wrong_issuer = parse_and_check(
            "http://127.0.0.1:1/callback?code=abc&state=s1&iss=https://evil.example",
            "s1",
            Some("https://as.example"),
        );
        assert!(matches!(
            wrong_issuer,
            Err(OAuthError::IssuerMismatch { .. })
        ));
        assert!(matches!(
            parse_and_check("not a url", "s1", None),
            Err(OAuthError::BadRedirect(_))
        ));
    }
}
