//! Secrets out of what calyx records and hands to agents: `pane_read`, the command history
//! (recorded already redacted), the approvals record and `calyx approvals`. All of them call
//! [`redact`], so one rule set decides. The rules ([`rules`]) follow gitleaks' high-confidence
//! ones: tokens with a known prefix, private key blocks, passwords in URLs, and assignments and
//! flags named like a secret. What a secret is replaced with keeps what it was
//! (`github_pat_…[REDACTED]`, `DB_PASSWORD=[REDACTED]`), so the text stays readable.
//!
//! Cost: one pass of a `RegexSet` over the text says which rules match; only those run again
//! to replace (most output, a build log, matches none).

mod rules;

use std::sync::OnceLock;

use regex::{Captures, Regex, RegexSet};

use rules::{Rule, RULES};

/// What a secret becomes.
pub const MARK: &str = "[REDACTED]";

struct Compiled {
    set: RegexSet,
    rules: Vec<(Regex, &'static Rule)>,
}

fn compiled() -> &'static Compiled {
    static COMPILED: OnceLock<Compiled> = OnceLock::new();
    COMPILED.get_or_init(|| {
        // A pattern that does not compile is left out (and fails the rule-table test), rather
        // than taking every other rule with it.
        let rules: Vec<(Regex, &'static Rule)> = RULES
            .iter()
            .filter_map(|r| Regex::new(r.pattern).ok().map(|re| (re, r)))
            .collect();
        let set = RegexSet::new(rules.iter().map(|(re, _)| re.as_str()))
            .unwrap_or_else(|_| RegexSet::empty());
        Compiled { set, rules }
    })
}

/// The text with secrets replaced by [`MARK`].
pub fn redact(text: &str) -> String {
    let compiled = compiled();
    let matched = compiled.set.matches(text);
    let mut out = text.to_string();
    for index in matched.iter() {
        let Some((re, rule)) = compiled.rules.get(index) else {
            continue;
        };
        // Only a match allocates.
        if let std::borrow::Cow::Owned(changed) = re.replace_all(&out, |c: &Captures| hide(c, rule))
        {
            out = changed;
        }
    }
    out
}

/// One match with its secret group replaced, or unchanged when the value is a placeholder.
fn hide(caps: &Captures, rule: &Rule) -> String {
    let Some(whole) = caps.get(0) else {
        return String::new();
    };
    let Some(secret) = ["s", "dq", "sq"].iter().find_map(|g| caps.name(g)) else {
        return whole.as_str().to_string();
    };
    if (rule.value_checked && is_placeholder(secret.as_str()))
        || (rule.needs_digit && !secret.as_str().bytes().any(|b| b.is_ascii_digit()))
    {
        return whole.as_str().to_string();
    }
    let before = &whole.as_str()[..secret.start() - whole.start()];
    let after = &whole.as_str()[secret.end() - whole.start()..];
    let ellipsis = if rule.keeps_prefix { "…" } else { "" };
    format!("{before}{ellipsis}{MARK}{after}")
}

/// Values of secret-named settings that are no secret: empty, a reference to one (`$VAR`,
/// `${VAR}`, `<your key>`, `{{ .token }}`), a literal (`true`, `null`), another flag, code
/// (`getToken()`), a comparison (`token == x`), a mask, or already redacted.
fn is_placeholder(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    value.is_empty()
        || value.starts_with(['$', '<', '-', '=', '%'])
        || value.starts_with("{{")
        || value.contains('(')
        || value.contains(MARK)
        || value.chars().all(|c| c == '*')
        || (value.len() >= 4 && value.chars().all(|c| c == 'x' || c == 'X'))
        || matches!(
            lower.as_str(),
            "true"
                | "false"
                | "null"
                | "none"
                | "nil"
                | "undefined"
                | "yes"
                | "no"
                | "required"
                | "optional"
                | "str"
                | "string"
        )
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
                "git push https://ghp_…[REDACTED]@github",
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

#[cfg(test)]
mod table_tests;
