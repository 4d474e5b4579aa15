//! A view's URL tokens (issue 17, "The view server"): 128 random bits each, hex in the URL.
//!
//! Anything on the machine can reach a loopback port, so the token in a view's URL is what
//! keeps other users and other web pages out of it. It is compared in constant time with
//! `subtle`, as the agent endpoint's bearer token is (`src/http/auth.rs`), so response timing
//! says nothing about how much of a guess was right.

use std::fmt;

use subtle::ConstantTimeEq;

/// Random bytes in a view token: 128 bits cannot be guessed.
const TOKEN_BYTES: usize = 16;

/// One token. `Debug` does not print it, so a logged view record does not leak its URL.
#[derive(Clone, PartialEq, Eq)]
pub struct ViewToken(String);

impl ViewToken {
    /// A fresh token from the operating system's random source.
    pub fn generate() -> Result<Self, getrandom::Error> {
        crate::http::token::random_hex::<TOKEN_BYTES>().map(Self)
    }

    /// The token as it goes into the URL (32 lowercase hex digits).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `presented` (from a request path) is this token, in constant time for
    /// presented tokens of the right length.
    pub fn matches(&self, presented: &str) -> bool {
        self.0.as_bytes().ct_eq(presented.as_bytes()).into()
    }
}

impl fmt::Debug for ViewToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ViewToken(..)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_128_bit_hex_and_distinct() {
        let a = ViewToken::generate().expect("random");
        let b = ViewToken::generate().expect("random");
        assert_eq!(a.as_str().len(), 32);
        assert!(a
            .as_str()
            .bytes()
            .all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')));
        assert_ne!(a, b);
    }

    #[test]
    fn only_the_exact_token_matches() {
        let token = ViewToken::generate().expect("random");
        assert!(token.matches(token.as_str()));
        assert!(!token.matches(""));
        assert!(!token.matches(&token.as_str()[..31]));
        assert!(!token.matches(&format!("{}0", token.as_str())));
        let mut other = token.as_str()[..31].to_string();
        other.push(if token.as_str().ends_with('0') {
            '1'
        } else {
            '0'
        });
        assert!(!token.matches(&other));
    }

    #[test]
    fn debug_hides_the_token() {
        let token = ViewToken::generate().expect("random");
        assert!(!format!("{token:?}").contains(token.as_str()));
    }
}
