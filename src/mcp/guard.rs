//! DNS-rebinding protection for `/mcp`: a web page the user visits could point its own domain
//! at 127.0.0.1 and reach the endpoint from the browser, so only loopback Host names are served,
//! and a browser Origin, when present, must be loopback too.
//!
//! The Host port is not pinned to ours: the attack lives in the host *name*, and loopback
//! reverse proxies (the conformance suite's auth proxy, a developer's tunnel) forward the Host
//! they were called with, which carries their own port.

use hyper::header::{HeaderMap, HOST, ORIGIN};
use hyper::http::uri::Authority;

const LOOPBACK: [&str; 3] = ["127.0.0.1", "localhost", "[::1]"];

/// `Err(reason)` when the request must be refused with 403.
pub fn check(headers: &HeaderMap) -> Result<(), &'static str> {
    let host = headers
        .get(HOST)
        .and_then(|v| v.to_str().ok())
        .ok_or("missing or unreadable Host header")?;
    if !loopback_authority(host) {
        return Err("Host is not a loopback name");
    }
    if let Some(origin) = headers.get(ORIGIN) {
        let origin = origin.to_str().map_err(|_| "unreadable Origin header")?;
        let rest = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"))
            .ok_or("Origin is not a loopback http(s) origin")?;
        if !loopback_authority(rest) {
            return Err("Origin is not loopback");
        }
    }
    Ok(())
}

/// `127.0.0.1`, `localhost` or `[::1]`, with any port, and nothing else (no userinfo, no path).
fn loopback_authority(value: &str) -> bool {
    value
        .parse::<Authority>()
        .is_ok_and(|a| a.as_str() == value && !value.contains('@') && is_loopback_host(a.host()))
}

fn is_loopback_host(host: &str) -> bool {
    LOOPBACK.iter().any(|h| h.eq_ignore_ascii_case(host))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    fn headers(host: &str, origin: Option<&str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(HOST, HeaderValue::from_str(host).unwrap());
        if let Some(o) = origin {
            h.insert(ORIGIN, HeaderValue::from_str(o).unwrap());
        }
        h
    }

    #[test]
    fn loopback_hosts_with_our_port_pass() {
        for host in [
            "127.0.0.1:4000",
            "localhost:4000",
            "[::1]:4000",
            "LOCALHOST:4000",
        ] {
            assert_eq!(check(&headers(host, None)), Ok(()), "{host}");
        }
        let ok = headers("127.0.0.1:4000", Some("http://127.0.0.1:4000"));
        assert_eq!(check(&ok), Ok(()));
        let other_port = headers("127.0.0.1:4000", Some("http://localhost:6274"));
        assert_eq!(check(&other_port), Ok(()));
    }

    #[test]
    fn foreign_hosts_and_origins_fail() {
        for host in [
            "evil.example.com",
            "evil.example.com:4000",
            "127.0.0.1.evil.com:4000",
            "user@127.0.0.1:4000",
            "127.0.0.2:4000",
        ] {
            assert!(check(&headers(host, None)).is_err(), "{host}");
        }
        for origin in [
            "http://evil.example.com",
            "null",
            "file://",
            "http://127.0.0.1.evil:4000",
        ] {
            let h = headers("127.0.0.1:4000", Some(origin));
            assert!(check(&h).is_err(), "{origin}");
        }
        assert!(check(&HeaderMap::new()).is_err());
    }
}
