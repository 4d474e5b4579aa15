//! Bearer-token authentication, compared in constant time so response timing reveals nothing
//! about how much of a guessed token was right.

use hyper::header::{HeaderMap, AUTHORIZATION};
use subtle::ConstantTimeEq;

/// Whether the request carries `Authorization: Bearer <token>` with exactly our token.
pub fn authorized(headers: &HeaderMap, token: &str) -> bool {
    let Some(value) = headers.get(AUTHORIZATION) else {
        return false;
    };
    let Some(presented) = bearer(value.as_bytes()) else {
        return false;
    };
    presented.ct_eq(token.as_bytes()).into()
}

/// The credentials after a case-insensitive `Bearer` scheme (RFC 7235 schemes are
/// case-insensitive), with surrounding spaces removed.
fn bearer(value: &[u8]) -> Option<&[u8]> {
    const SCHEME: &[u8] = b"bearer ";
    if value.len() < SCHEME.len() || !value[..SCHEME.len()].eq_ignore_ascii_case(SCHEME) {
        return None;
    }
    Some(value[SCHEME.len()..].trim_ascii())
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    fn with_auth(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(AUTHORIZATION, HeaderValue::from_str(value).unwrap());
        headers
    }

    #[test]
    fn accepts_only_the_exact_token() {
        let token = "ab".repeat(32);
        assert!(authorized(&with_auth(&format!("Bearer {token}")), &token));
        assert!(authorized(&with_auth(&format!("bearer  {token} ")), &token));
        assert!(!authorized(&with_auth(&format!("Bearer {token}0")), &token));
        assert!(!authorized(&with_auth(&format!("Basic {token}")), &token));
        assert!(!authorized(&with_auth("Bearer"), &token));
        assert!(!authorized(&with_auth("Bearer "), &token));
        assert!(!authorized(&HeaderMap::new(), &token));
    }
}
