//! Aliases: the short prefix a server's tools are published under (`ev` → `ev-echo`). Short
//! because every character of it is taken from the 48 a published tool name may have; fixed
//! once saved because agents and the user's prompts refer to the published names.

/// The longest alias.
pub const MAX_ALIAS_LEN: usize = 10;

/// The rule as the user reads it in an error.
pub const ALIAS_RULE: &str =
    "a lowercase letter followed by up to 9 lowercase letters or digits (^[a-z][a-z0-9]{0,9}$)";

/// Whether `alias` matches `^[a-z][a-z0-9]{0,9}$`.
pub fn is_valid_alias(alias: &str) -> bool {
    let bytes = alias.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= MAX_ALIAS_LEN
        && bytes[0].is_ascii_lowercase()
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}

/// The alias a name gives while the user has not typed one: lowercased, everything but ASCII
/// letters and digits dropped, leading digits dropped, cut to 10. `None` when nothing is left
/// (a name like `123` or `Ωμέγα`): the user must type one.
pub fn derive_alias(name: &str) -> Option<String> {
    let kept: String = name
        .chars()
        .flat_map(char::to_lowercase)
        .filter(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        .skip_while(|c| c.is_ascii_digit())
        .take(MAX_ALIAS_LEN)
        .collect();
    (!kept.is_empty()).then_some(kept)
}

/// A valid alias close to what the user typed, for the error message; `None` when none can be
/// made from it.
pub fn suggest_alias(typed: &str) -> Option<String> {
    derive_alias(typed)
}

/// `base` made unique against `taken` by appending a digit (2, 3, ...) within the 10-character
/// limit (`github` → `github2`; `abcdefghij` → `abcdefghi2`). `None` when every candidate up to
/// 9999 is taken.
pub fn unique_alias(base: &str, taken: &dyn Fn(&str) -> bool) -> Option<String> {
    if !taken(base) {
        return Some(base.to_string());
    }
    (2u32..10_000).find_map(|n| {
        let suffix = n.to_string();
        let keep = MAX_ALIAS_LEN.saturating_sub(suffix.len()).min(base.len());
        let candidate = format!("{}{suffix}", &base[..keep]);
        (is_valid_alias(&candidate) && !taken(&candidate)).then_some(candidate)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_rule() {
        for good in ["a", "ev", "linear", "a123456789", "github2"] {
            assert!(is_valid_alias(good), "{good}");
        }
        for bad in ["", "1ev", "Ev", "e-v", "e_v", "abcdefghijk", "é", "ev "] {
            assert!(!is_valid_alias(bad), "{bad}");
        }
    }

    #[test]
    fn derivation_from_the_name() {
        assert_eq!(derive_alias("Everything").as_deref(), Some("everything"));
        assert_eq!(derive_alias("GitHub MCP").as_deref(), Some("githubmcp"));
        assert_eq!(derive_alias("Linear (work)").as_deref(), Some("linearwork"));
        assert_eq!(derive_alias("3D Printer").as_deref(), Some("dprinter"));
        assert_eq!(
            derive_alias("Basic MCP App Server").as_deref(),
            Some("basicmcpap")
        );
        assert_eq!(derive_alias("Café 2").as_deref(), Some("caf2"));
        assert_eq!(derive_alias("123"), None);
        assert_eq!(derive_alias("—"), None);
    }

    #[test]
    fn unique_appends_a_digit_within_the_limit() {
        let taken = |a: &str| ["github", "github2", "abcdefghij"].contains(&a);
        assert_eq!(unique_alias("linear", &taken).as_deref(), Some("linear"));
        assert_eq!(unique_alias("github", &taken).as_deref(), Some("github3"));
        assert_eq!(
            unique_alias("abcdefghij", &taken).as_deref(),
            Some("abcdefghi2")
        );
    }

    proptest! {
        #[test]
        fn a_derived_alias_is_always_valid(name in ".{0,80}") {
            if let Some(alias) = derive_alias(&name) {
                prop_assert!(is_valid_alias(&alias), "{alias:?} from {name:?}");
            }
        }

        #[test]
        fn a_unique_alias_is_valid_and_free(base in "[a-z][a-z0-9]{0,9}", n in 0usize..30) {
            let taken: Vec<String> = std::iter::once(base.clone())
                .chain((2..n + 2).map(|d| {
                    let s = d.to_string();
                    let keep = (10 - s.len()).min(base.len());
                    format!("{}{s}", &base[..keep])
                }))
                .collect();
            let is_taken = |a: &str| taken.iter().any(|t| t == a);
            let alias = unique_alias(&base, &is_taken).expect("a free alias");
            prop_assert!(is_valid_alias(&alias));
            prop_assert!(!is_taken(&alias));
        }
    }
}
