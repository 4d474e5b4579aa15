//! The secret forms [`super::redact`] removes, after gitleaks' high-confidence rules. Each
//! pattern names its secret `s` (or `dq` / `sq` when quoted, so a quoted password with spaces
//! goes whole); what is around it in the match stays. `(?-u:\b)` is an ASCII word boundary:
//! the Unicode one would send the regex engine to its slow path on any non-ASCII output.

/// One secret form.
pub struct Rule {
    pub pattern: &'static str,
    /// Keeps the token's prefix (`ghp_…[REDACTED]`): the prefix says what leaked, not the secret.
    pub keeps_prefix: bool,
    /// A named setting: its value may be a placeholder (`$TOKEN`, `true`), left as it is.
    pub value_checked: bool,
    /// The secret must hold a digit: a generated key does, `sk-fading-circle` (a CSS class)
    /// does not.
    pub needs_digit: bool,
}

const fn token(pattern: &'static str) -> Rule {
    Rule {
        pattern,
        keeps_prefix: true,
        value_checked: false,
        needs_digit: false,
    }
}

const fn value(pattern: &'static str) -> Rule {
    Rule {
        pattern,
        keeps_prefix: false,
        value_checked: true,
        needs_digit: false,
    }
}

const fn block(pattern: &'static str) -> Rule {
    Rule {
        pattern,
        keeps_prefix: false,
        value_checked: false,
        needs_digit: false,
    }
}

/// In order: a later rule sees what earlier ones redacted (and leaves a value holding
/// `[REDACTED]` alone), so specific forms run before the generic ones.
pub const RULES: &[Rule] = &[
    // Private key blocks (PEM, OpenSSH, PGP), whole.
    block(
        r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----(?P<s>(?s:.*?))-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----",
    ),
    // One whose end is not in the text (a screen showing only its start): its base64 and
    // header lines. Lines end in a newline, or in `↵` in an approval's one-line headline.
    block(
        r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----(?P<s>(?:(?:\r?\n|↵)(?:[A-Za-z0-9+/=]{16,}|[A-Za-z-]+:[^\n↵]*|[ \t]*))+)",
    ),
    // JSON fields named like a secret (a tool input shown as compact JSON).
    value(
        r#"(?i)"[A-Za-z0-9_.-]*(?:password|passwd|secret|token|api[-_]?key|apikey|access[-_]?key|private[-_]?key|authorization)"\s*:\s*"(?P<s>[^"]+)"#,
    ),
    // Tokens with a known prefix.
    token(r"(?-u:\b)gh[pousr]_(?P<s>[A-Za-z0-9]{20,})"),
    token(r"(?-u:\b)github_pat_(?P<s>[A-Za-z0-9_]{20,})"),
    token(
        r"(?-u:\b)(?:glpat|gldt|glptt|glrt|glcbt|glft|glsoat|glimt|glagent)-(?P<s>[A-Za-z0-9_-]{20,})",
    ),
    token(r"(?-u:\b)GR1348941(?P<s>[A-Za-z0-9_-]{20,})"),
    token(r"(?-u:\b)xox[abposre]-(?P<s>[A-Za-z0-9-]{10,})"),
    token(r"(?-u:\b)xapp-(?P<s>[0-9]-[A-Za-z0-9]+-[0-9]+-[A-Za-z0-9]+)"),
    token(r"https://hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9+/_-]{20,})"),
    token(r"(?-u:\b)(?:sk|rk)_(?:live|test|prod)_(?P<s>[A-Za-z0-9]{10,})"),
    token(r"(?-u:\b)AIza(?P<s>[0-9A-Za-z_-]{35})"),
    token(r"(?-u:\b)GOCSPX-(?P<s>[A-Za-z0-9_-]{28})"),
    token(r"(?-u:\b)sk-ant-(?P<s>[A-Za-z0-9_-]{20,})"),
    Rule {
        needs_digit: true,
        ..token(r"(?-u:\b)sk-(?:proj-|svcacct-|admin-)?(?P<s>[A-Za-z0-9_-]{16,})")
    },
    token(r"(?-u:\b)npm_(?P<s>[A-Za-z0-9]{36})(?-u:\b)"),
    token(r"(?-u:\b)pypi-(?P<s>AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,})"),
    token(r"(?-u:\b)hf_(?P<s>[A-Za-z0-9]{30,})(?-u:\b)"),
    token(r"(?-u:\b)SK(?P<s>[0-9a-fA-F]{32})(?-u:\b)"),
    token(r"(?-u:\b)SG\.(?P<s>[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})"),
    token(r"(?-u:\b)(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])(?P<s>[A-Z0-9]{16})(?-u:\b)"),
    token(r"(?-u:\b)shp(?:at|ss|ca|pa)_(?P<s>[a-fA-F0-9]{32})"),
    token(r"(?-u:\b)do[por]_v1_(?P<s>[a-f0-9]{64})"),
    token(r"(?-u:\b)lin_api_(?P<s>[A-Za-z0-9]{40})"),
    token(r"(?-u:\b)PMAK-(?P<s>[a-fA-F0-9]{24}-[a-fA-F0-9]{34})"),
    token(r"(?-u:\b)glsa_(?P<s>[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})"),
    token(r"(?-u:\b)NRAK-(?P<s>[A-Z0-9]{27})"),
    token(r"(?-u:\b)dapi(?P<s>[a-f0-9]{32})"),
    // A JWT: header, payload and signature.
    token(r"(?-u:\b)eyJ(?P<s>[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,})"),
    // A password in a URL, any scheme: `postgres://user:pass@host`.
    value(r#"(?-u:\b)[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@'"]*:(?P<s>[^\s@/'"]+)@"#),
    // Authorization headers.
    value(r#"(?i)authorization[ \t]*:[ \t]*(?:bearer|basic|token)[ \t]+(?P<s>[^\s'"]+)"#),
    // `mysql -pSECRET` (a bare `-p` asks for it instead).
    value(
        r"(?-u:\b)(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)(?-u:\b)[^\n|;&]*?[ \t]-p(?P<s>[^\s'\x22]+)",
    ),
    // `curl -u user:pass`.
    value(
        r#"(?-u:\b)curl(?-u:\b)[^\n|;&]*?[ \t](?:-u|--user)(?:[ \t]+|=)?['"]?[^\s:'"]*:(?P<s>[^\s'"]+)"#,
    ),
    // Flags named like a secret: `--password X`, `--db-password=X`, `--token "X"`.
    value(
        r#"(?i)(?:^|[ \t])--?(?:[a-z0-9]+-)*(?:password|passwd|pass|token|secret|api[-_]?key|access[-_]?key)(?:=|[ \t]+)(?:"(?P<dq>[^"\n]+)"|'(?P<sq>[^'\n]+)'|(?P<s>[^\s'"]+))"#,
    ),
    // Assignments to names that end like a secret: `DB_PASSWORD=X`, `password: X`,
    // `aws_secret_access_key = X`, `X-Api-Key: X`.
    value(
        r#"(?i)(?-u:\b)[A-Za-z0-9_.-]*(?:password|passwd|secret|token|api[-_]?key|apikey|access[-_]?key|private[-_]?key|auth[-_]?key|credentials?)[ \t]*[:=][ \t]*(?:"(?P<dq>[^"\n]+)"|'(?P<sq>[^'\n]+)'|(?P<s>[^\s'"]+))"#,
    ),
    // Environment names ending in _KEY, _PASS, _PWD (upper case only: `sort_key=` is no secret).
    value(
        r#"(?-u:\b)[A-Z][A-Z0-9_]*_(?:KEY|PASS|PWD)[ \t]*[:=][ \t]*(?:"(?P<dq>[^"\n]+)"|'(?P<sq>[^'\n]+)'|(?P<s>[^\s'"]+))"#,
    ),
];
