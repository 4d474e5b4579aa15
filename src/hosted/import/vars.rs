//! `${VAR}`, `${VAR:-default}` and `${env:VAR}` in imported values, filled from the environment
//! of the process that imports. Agent CLIs write their configs this way so tokens stay out of
//! the file; calyx resolves them once, at import, and keeps the values in its secret store.

/// A string with its references filled in, and the names that could not be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expanded {
    pub text: String,
    pub unresolved: Vec<String>,
}

/// Fills the references in `text` from `lookup`. `${VAR:-default}` takes the default when VAR
/// is unset or empty (as a shell does). An unresolved reference stays in the text as written,
/// so the user sees what was meant. Anything else, `$VAR` without braces included, is literal.
pub fn expand(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Expanded {
    let mut out = String::with_capacity(text.len());
    let mut unresolved = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            rest = "";
            break;
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        let name = name.strip_prefix("env:").unwrap_or(name);
        if !is_var_name(name) {
            // `${not a var}` is text, not a reference.
            out.push_str(&rest[start..start + 2 + end + 1]);
        } else {
            match (lookup(name), default) {
                (Some(value), Some(default)) if value.is_empty() => out.push_str(default),
                (Some(value), _) => out.push_str(&value),
                (None, Some(default)) => out.push_str(default),
                (None, None) => {
                    out.push_str(&rest[start..start + 2 + end + 1]);
                    if !unresolved.iter().any(|u| u == name) {
                        unresolved.push(name.to_string());
                    }
                }
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Expanded {
        text: out,
        unresolved,
    }
}

fn is_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "TOKEN" => Some("t0k".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    fn text(s: &str) -> String {
        expand(s, &env).text
    }

    #[test]
    fn the_three_forms() {
        assert_eq!(text("Bearer ${TOKEN}"), "Bearer t0k");
        assert_eq!(text("${env:TOKEN}"), "t0k");
        assert_eq!(text("${MISSING:-fallback}/x"), "fallback/x");
        assert_eq!(text("${EMPTY:-fallback}"), "fallback");
        assert_eq!(text("${EMPTY}"), "");
        assert_eq!(text("${TOKEN:-unused}"), "t0k");
        assert_eq!(text("${env:MISSING:-d}"), "d");
    }

    #[test]
    fn unresolved_ones_are_listed_once_and_kept_as_written() {
        let got = expand("${GITHUB_TOKEN} ${env:GITHUB_TOKEN} ${OTHER}", &env);
        assert_eq!(got.text, "${GITHUB_TOKEN} ${env:GITHUB_TOKEN} ${OTHER}");
        assert_eq!(got.unresolved, ["GITHUB_TOKEN", "OTHER"]);
    }

    #[test]
    fn everything_else_is_literal() {
        assert_eq!(
            text("$TOKEN ${ not a var } ${unclosed"),
            "$TOKEN ${ not a var } ${unclosed"
        );
        assert_eq!(text("a}b$"), "a}b$");
    }

    proptest! {
        #[test]
        fn text_without_references_is_unchanged(s in "[^$]{0,40}") {
            prop_assert_eq!(text(&s), s);
        }

        #[test]
        fn never_panics(s in ".{0,40}") {
            let _ = expand(&s, &env);
        }
    }
}
