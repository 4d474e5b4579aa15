//! Values on the remote bridge's command line (`calyx remote-bridge --tty -t SESSION ...`):
//! ssh hands that line to the remote user's login shell (sh, bash, fish, csh ...), which must
//! not read anything in a session name or a variable as its own syntax. A plain word (letters,
//! digits and `._,/@%+=-`) travels as it is; anything else as `hex:` and its UTF-8 bytes in
//! hexadecimal, which no shell reads specially. A plain word never holds `:`, so the two
//! cannot be confused. Control characters are refused on both sides: a value is text the far
//! side may show or put in a pane's environment.

use anyhow::bail;

/// The prefix of an encoded value.
const HEX: &str = "hex:";

fn plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || "._,/@%+=-".contains(c)
}

/// `value` as one word the remote shell passes through untouched. Err on a control character.
pub fn encode(value: &str) -> anyhow::Result<String> {
    if value.chars().any(char::is_control) {
        bail!("{value:?} holds a control character");
    }
    if !value.is_empty() && value.chars().all(plain) {
        return Ok(value.to_string());
    }
    let hex: String = value.bytes().map(|b| format!("{b:02x}")).collect();
    Ok(format!("{HEX}{hex}"))
}

/// The value [`encode`] made. Err on bad hex, bad UTF-8 or a control character.
pub fn decode(word: &str) -> anyhow::Result<String> {
    let Some(hex) = word.strip_prefix(HEX) else {
        if word.chars().any(char::is_control) {
            bail!("{word:?} holds a control character");
        }
        return Ok(word.to_string());
    };
    if hex.len() % 2 != 0 {
        bail!("{word:?}: odd hex");
    }
    let bytes = (0..hex.len())
        .step_by(2)
        .map(|i| {
            hex.get(i..i + 2)
                .and_then(|pair| u8::from_str_radix(pair, 16).ok())
        })
        .collect::<Option<Vec<u8>>>();
    let Some(bytes) = bytes else {
        bail!("{word:?}: not hex");
    };
    let text = String::from_utf8(bytes)?;
    if text.chars().any(char::is_control) {
        bail!("{text:?} holds a control character");
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_words_travel_as_they_are_and_the_rest_as_hex() {
        assert_eq!(encode("main").unwrap(), "main");
        assert_eq!(encode("LANG=en_US.UTF-8").unwrap(), "LANG=en_US.UTF-8");
        for tricky in [
            "my session",
            "a'b",
            "$(rm -rf ~)",
            "`id`",
            "x;y",
            "hex:41",
            "",
            "naïve",
            "!!",
        ] {
            let word = encode(tricky).unwrap();
            assert!(word.starts_with("hex:"), "{tricky:?} -> {word}");
            assert!(word[4..].chars().all(|c| c.is_ascii_hexdigit()), "{word}");
            assert_eq!(decode(&word).unwrap(), tricky);
        }
    }

    #[test]
    fn control_characters_are_refused_both_ways() {
        assert!(encode("a\u{1b}]52;c;x\u{7}").is_err());
        assert!(encode("a\nb").is_err());
        assert!(decode("hex:1b5b").is_err());
        assert!(decode("hex:zz").is_err());
        assert!(decode("hex:4").is_err());
        assert!(decode("hex:ff").is_err());
    }
}
