//! Secrets out of what calyx records (approval summaries, `pane_read`, the command history):
//! tokens, API keys, Authorization headers, passwords in environment assignments and flags.

use std::sync::OnceLock;

use regex::Regex;

fn patterns() -> &'static [(Regex, &'static str)] {
    static PATTERNS: OnceLock<Vec<(Regex, &'static str)>> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        let table: &[(&str, &str)] = &[
            // JSON fields (a tool input shown as compact JSON): `"password":"..."`.
            (r#"(?i)("(?:password|passwd|secret|token|api[-_]?key|access[-_]?key|authorization)"\s*:\s*")[^"]*"#, "${1}[REDACTED]"),
            (r"(?i)(authorization\s*:\s*(?:bearer|basic|token)\s+)[^\s'\x22]+", "${1}[REDACTED]"),
            // Flags and assignments, the value bare or quoted.
            (r"(?i)(--?(?:password|passwd|pass|token|secret|api[-_]?key|access[-_]?key)(?:=|\s+)['\x22]?)[^\s'\x22]+", "${1}[REDACTED]"),
            (r"(?i)\b([A-Z0-9_]*(?:PASSWORD|PASSWD|SECRET|TOKEN|API_?KEY|ACCESS_?KEY)[A-Z0-9_]*=['\x22]?)[^\s'\x22]+", "${1}[REDACTED]"),
            (r"\b(sk-(?:ant-)?[A-Za-z0-9_-]{16,})", "[REDACTED]"),
            (r"\b(gh[pousr]_[A-Za-z0-9]{20,})", "[REDACTED]"),
            (r"\b(AKIA[0-9A-Z]{16})\b", "[REDACTED]"),
            (r"\b(xox[abprs]-[A-Za-z0-9-]{10,})", "[REDACTED]"),
        ];
        table.iter().filter_map(|(p, r)| Regex::new(p).ok().map(|re| (re, *r))).collect()
    })
}

/// The text with secrets replaced by `[REDACTED]`.
pub fn redact(text: &str) -> String {
    let mut out = text.to_string();
    for (re, replacement) in patterns() {
        // Only a match allocates: most text (a command's whole output) has none.
        if let std::borrow::Cow::Owned(changed) = re.replace_all(&out, *replacement) {
            out = changed;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn secrets_are_removed() {
        let cases = [
            (
                "mysql --password hunter2 db",
                "mysql --password [REDACTED] db",
            ),
            ("login --token=abc123", "login --token=[REDACTED]"),
            (
                "API_KEY=xyz OPENAI_API_KEY=sk-abcdefghijklmnopqrstu run",
                "API_KEY=[REDACTED] OPENAI_API_KEY=[REDACTED] run",
            ),
            (
                "curl -H 'Authorization: Bearer eyJhbGci' x",
                "curl -H 'Authorization: Bearer [REDACTED]' x",
            ),
            (
                "git push https://ghp_abcdefghijklmnopqrstuvwx@github",
                "git push https://[REDACTED]@github",
            ),
            (
                "mysql --password \"hunter2\" db",
                "mysql --password \"[REDACTED]\" db",
            ),
            ("API_KEY='xyz' run", "API_KEY='[REDACTED]' run"),
            (
                r#"{"password":"hunter2","user":"me"}"#,
                r#"{"password":"[REDACTED]","user":"me"}"#,
            ),
            (
                r#"{"headers":{"Authorization":"Bearer eyJhbGci"}}"#,
                r#"{"headers":{"Authorization":"[REDACTED]"}}"#,
            ),
            ("echo hi > marker.txt", "echo hi > marker.txt"),
        ];
        for (input, want) in cases {
            assert_eq!(redact(input), want, "{input}");
        }
    }
}
