//! The bearer token: 32 random bytes, hex encoded. Anything on the machine can reach a loopback
//! port, so the token (readable only by the user, in a 0600 file) is what keeps other users and
//! web pages from driving the agents.

/// Random bytes in a token; 256 bits cannot be guessed.
const TOKEN_BYTES: usize = 32;

/// A fresh token from the operating system's random source.
pub fn generate() -> Result<String, getrandom::Error> {
    random_hex::<TOKEN_BYTES>()
}

/// `N` bytes from the operating system's random source, as lowercase hex: the endpoint's
/// token and the MCP App views' URL tokens (`crate::views::token`) both come from here.
pub fn random_hex<const N: usize>() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes)?;
    Ok(hex(&bytes))
}

/// Whether `token` has the shape [`generate`] produces (64 lowercase hex digits). A token read
/// back from disk must pass this before it is reused or put into a header.
pub fn is_valid(token: &str) -> bool {
    token.len() == TOKEN_BYTES * 2
        && token
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_tokens_are_valid_and_distinct() {
        let a = generate().unwrap();
        let b = generate().unwrap();
        assert!(is_valid(&a), "{a}");
        assert_ne!(a, b);
    }

    #[test]
    fn validation_rejects_other_shapes() {
        assert!(!is_valid(""));
        assert!(!is_valid(&"A".repeat(64)));
        assert!(!is_valid(&"a".repeat(63)));
        assert!(!is_valid(&format!("{}\r\n", "a".repeat(62))));
        assert!(is_valid(&"0f".repeat(32)));
    }

    #[test]
    fn hex_encodes_every_nibble() {
        assert_eq!(hex(&[0x00, 0x9f, 0xa0, 0xff]), "009fa0ff");
    }
}
