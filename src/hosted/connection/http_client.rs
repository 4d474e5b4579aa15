//! The HTTP client both HTTP transports share: reqwest over rustls with the `ring` provider
//! (installed as the process default once, because reqwest built without aws-lc has no
//! provider of its own), the configured headers, and what a failure to reach the server says.

use std::error::Error as StdError;
use std::sync::Once;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

/// Makes `ring` the process's rustls provider unless one is installed already. Every reqwest
/// client in the process needs it (reqwest panics building a client without one), so the
/// binary calls it at start and [`http_client`] before building.
pub fn install_tls_provider() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        // Err means another provider was installed first, which serves as well.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// A client for one hosted server.
pub fn http_client() -> Result<reqwest::Client, String> {
    install_tls_provider();
    reqwest::Client::builder()
        .build()
        .map_err(|e| format!("cannot set up HTTP: {}", deepest(&e)))
}

/// The configured headers (values from the secret store) as a header map; a name or value
/// HTTP cannot carry is named (the value never is: it is a secret).
pub fn header_map(headers: &[(String, String)]) -> Result<HeaderMap, String> {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        let header = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("header `{name}` is not a valid header name: fix it in Edit"))?;
        let mut value = HeaderValue::from_str(value).map_err(|_| {
            format!("the stored value of header `{name}` cannot be sent: retype it in Edit")
        })?;
        value.set_sensitive(true);
        map.insert(header, value);
    }
    Ok(map)
}

/// Why `host` could not be reached, when `error` is a failure to connect (refused, DNS, TLS,
/// timeout) rather than an answer from the server; `None` otherwise.
pub fn unreachable_reason(error: &(dyn StdError + 'static)) -> Option<String> {
    let mut connect = false;
    let mut current = Some(error);
    while let Some(e) = current {
        if let Some(r) = e.downcast_ref::<reqwest::Error>() {
            connect |= r.is_connect() || r.is_timeout();
        }
        let io = e.downcast_ref::<std::io::Error>();
        if io.is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused) {
            return Some("connection refused (is the server running?)".into());
        }
        if let Some(tls) = e.downcast_ref::<rustls::Error>() {
            return Some(format!("TLS failed: {tls}"));
        }
        let text = e.to_string();
        if text.starts_with("dns error") || text.contains("failed to lookup address") {
            return Some(format!("the name does not resolve ({})", deepest(e)));
        }
        // An io::Error's source skips the error it wraps (a rustls one, say): step into it.
        current = match io.and_then(|io| io.get_ref()) {
            Some(inner) => Some(inner as &(dyn StdError + 'static)),
            None => e.source(),
        };
    }
    connect.then(|| format!("cannot connect ({})", deepest(error)))
}

/// The innermost message of an error chain (reqwest's top level says only "error sending
/// request").
pub fn deepest(error: &(dyn StdError + 'static)) -> String {
    let mut current = error;
    while let Some(next) = current.source() {
        current = next;
    }
    current.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values_are_checked_without_showing_them() {
        let map = header_map(&[("X-Team".into(), "calyx".into())]).expect("valid");
        assert_eq!(map.get("x-team").map(|v| v.is_sensitive()), Some(true));
        let bad = header_map(&[("X-Team".into(), "a\nsecret".into())]).expect_err("newline");
        assert!(bad.contains("X-Team") && !bad.contains("secret"), "{bad}");
        let bad = header_map(&[("X Team".into(), "v".into())]).expect_err("space");
        assert!(bad.contains("not a valid header name"), "{bad}");
    }

    #[tokio::test]
    async fn a_refused_connection_is_named() {
        // A port that was just free: bind, note it, close.
        let port = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
            listener.local_addr().expect("addr").port()
        };
        let client = http_client().expect("client");
        let error = client
            .get(format!("http://127.0.0.1:{port}/mcp"))
            .send()
            .await
            .expect_err("nothing listens");
        let reason = unreachable_reason(&error).expect("a connection failure");
        assert!(reason.contains("connection refused"), "{reason}");
    }

    #[tokio::test]
    async fn tls_to_a_plain_http_port_is_a_tls_failure() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("addr").port();
        // Answers whatever arrives with plain HTTP, which is not a TLS handshake.
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                use tokio::io::{AsyncReadExt, AsyncWriteExt};
                let mut buf = [0u8; 1024];
                let _ = socket.read(&mut buf).await;
                let _ = socket
                    .write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
                    .await;
            }
        });
        let client = http_client().expect("client");
        let error = client
            .get(format!("https://127.0.0.1:{port}/mcp"))
            .send()
            .await
            .expect_err("not TLS");
        let reason = unreachable_reason(&error).expect("a connection failure");
        assert!(reason.contains("TLS"), "{reason}");
    }
}
