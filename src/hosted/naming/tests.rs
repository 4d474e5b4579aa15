use proptest::prelude::*;

use super::*;

#[test]
fn valid_short_names_are_unchanged() {
    assert_eq!(published_name("ev", "echo"), "ev-echo");
    assert_eq!(published_name("ev", "get-sum"), "ev-get-sum");
    assert_eq!(published_name("gh", "create_issue"), "gh-create_issue");
    let exactly_48 = format!("ev-{}", "a".repeat(45));
    assert_eq!(published_name("ev", &"a".repeat(45)), exactly_48);
}

#[test]
fn a_dot_or_slash_is_replaced_and_hashed() {
    let name = published_name("gh", "repos.list");
    assert!(name.starts_with("gh-repos_list_"), "{name}");
    assert_eq!(name.len(), "gh-repos_list_".len() + 6);
    assert_ne!(
        published_name("gh", "repos/list"),
        name,
        "the hash tells them apart"
    );
    assert!(is_publishable(&name));
    // Each character, not each byte, becomes one `_`.
    assert!(published_name("gh", "é").starts_with("gh-__"));
}

#[test]
fn the_sha256_suffix_is_over_alias_nul_original() {
    // `printf 'ev\0a.b' | sha256sum` = 065bee5e6a9a...
    let name = published_name("ev", "a.b");
    assert_eq!(name, "ev-a_b_065bee");
    // The collision form takes 10 digits of the same hash.
    let names = name_tools("ev", ["a.b", "a_b_065bee"]);
    assert_eq!(names.published["a.b"], "ev-a_b_065bee5e6a");
}

#[test]
fn a_59_character_name_comes_out_at_48() {
    let tool = "x".repeat(56); // ev- + 56 = 59
    let name = published_name("ev", &tool);
    assert_eq!(name.len(), 48);
    assert!(
        name.starts_with(&format!("ev-{}_", "x".repeat(38))),
        "{name}"
    );
}

#[test]
fn collisions_move_to_ten_digits_and_the_valid_name_keeps_its_own() {
    // Two long names sharing their first 41 characters and (forced here) colliding: simulate
    // by a valid name equal to another tool's rewritten one.
    let rewritten = published_name("ev", "a.b");
    let clash = rewritten.trim_start_matches("ev-").to_string();
    let names = name_tools("ev", ["a.b", clash.as_str()]);
    assert_eq!(names.published[&clash], rewritten, "valid as it is, kept");
    let moved = &names.published["a.b"];
    assert_eq!(moved.len(), "ev-a_b_".len() + 10, "{moved}");
    assert!(moved.starts_with("ev-a_b_"));
    assert!(names.unnamed.is_empty());
    assert_eq!(names.original[moved], "a.b");
}

#[test]
fn the_reverse_map_and_the_alias() {
    let names = name_tools("ev", ["echo", "get.sum", "echo"]);
    assert_eq!(names.published.len(), 2, "duplicates named once");
    for (original, published) in &names.published {
        assert_eq!(&names.original[published], original);
        assert_eq!(alias_of(published), Some("ev"));
    }
}

proptest! {
    #[test]
    fn names_are_valid_deterministic_and_unique(
        alias in "[a-z][a-z0-9]{0,9}",
        tools in proptest::collection::vec("[A-Za-z0-9_./é -]{1,70}", 1..20),
    ) {
        let names = name_tools(&alias, tools.iter().map(String::as_str));
        let mut reversed = tools.clone();
        reversed.reverse();
        let again = name_tools(&alias, reversed.iter().map(String::as_str));
        prop_assert_eq!(&names, &again, "independent of list order");
        let valid = regex::Regex::new("^[A-Za-z0-9_-]{1,48}$").expect("regex");
        let mut seen = std::collections::HashSet::new();
        for (original, published) in &names.published {
            prop_assert!(valid.is_match(published), "{published:?}");
            prop_assert!(seen.insert(published.clone()), "unique: {published}");
            prop_assert_eq!(alias_of(published), Some(alias.as_str()));
            prop_assert_eq!(&names.original[published], original);
            let plain = format!("{alias}-{original}");
            if valid.is_match(&plain) {
                prop_assert_eq!(published, &plain, "a valid short name is unchanged");
            }
        }
        prop_assert!(names.unnamed.is_empty());
    }
}

#[test]
fn app_tools_are_named_alias_app_name_and_yield_to_server_tools() {
    let none = |_: &str| false;
    assert_eq!(
        app_tool_name("budget", "get-allocations", none).as_deref(),
        Some("budget-app_get-allocations")
    );
    // A server tool literally named `app_get` keeps `budget-app_get`; the app tool moves.
    let server = name_tools("budget", ["app_get"]);
    let taken = |n: &str| server.original.contains_key(n);
    let moved = app_tool_name("budget", "get", taken).expect("a name");
    assert_ne!(moved, "budget-app_get");
    assert!(moved.starts_with("budget-app_get_"), "{moved}");
    assert_eq!(moved.len(), "budget-app_get_".len() + 6, "{moved}");
    assert_eq!(alias_of(&moved), Some("budget"));
    // Stable, and not the suffix a server tool of that name would get.
    assert_eq!(app_tool_name("budget", "get", taken), Some(moved.clone()));
    assert_ne!(moved, hashed("budget", "app_get", 41, 6));
    // Names outside the allowed set are rewritten like server tools' names.
    let odd = app_tool_name("ev", "a.b", none).expect("a name");
    assert!(
        is_publishable(&odd) && odd.starts_with("ev-app_a_b_"),
        "{odd}"
    );
    // Both suffixes taken: no name.
    let short = app_tool_name("ev", "x", |n: &str| n == "ev-app_x").expect("a name");
    let long = app_tool_name("ev", "x", |n: &str| n == "ev-app_x" || n == short).expect("a name");
    assert_eq!(long.len(), "ev-app_x_".len() + 10, "{long}");
    assert_eq!(app_tool_name("ev", "x", |_: &str| true), None);
}

proptest! {
    #[test]
    fn app_tool_names_are_valid(alias in "[a-z][a-z0-9]{0,9}", name in "[A-Za-z0-9_./é -]{1,70}") {
        let valid = regex::Regex::new("^[A-Za-z0-9_-]{1,48}$").expect("regex");
        let named = app_tool_name(&alias, &name, |_: &str| false).expect("a name");
        prop_assert!(valid.is_match(&named), "{named:?}");
        prop_assert_eq!(alias_of(&named), Some(alias.as_str()));
        prop_assert!(named.starts_with(&format!("{alias}-app_")), "{named}");
    }
}
