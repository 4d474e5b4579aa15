use proptest::prelude::*;
use serde_json::json;

use super::*;

/// The spec's default policy plus the directives calyx always sets.
const DEFAULT: &str = "default-src 'none'; script-src 'self' 'unsafe-inline'; \
    style-src 'self' 'unsafe-inline'; img-src 'self' data:; media-src 'self' data:; \
    connect-src 'none'; frame-src 'none'; base-uri 'self'; object-src 'none'; \
    form-action 'none'";

fn directive<'a>(header: &'a str, name: &str) -> Option<&'a str> {
    header
        .split("; ")
        .find_map(|d| d.strip_prefix(name).and_then(|rest| rest.strip_prefix(' ')))
}

#[test]
fn no_csp_gives_the_spec_default() {
    let csp = sandbox_csp(None);
    assert_eq!(csp.header, DEFAULT);
    assert!(csp.ignored.is_empty());
    assert_eq!(csp.allowed, AllowedDomains::default());
    assert_eq!(sandbox_csp(Some(&json!({}))).header, DEFAULT);
    assert_eq!(sandbox_csp(Some(&json!("nonsense"))).header, DEFAULT);
}

#[test]
fn connect_domains_go_to_connect_src_only() {
    let csp = sandbox_csp(Some(
        &json!({"connectDomains": ["https://api.example.com"]}),
    ));
    assert_eq!(
        directive(&csp.header, "connect-src"),
        Some("https://api.example.com")
    );
    assert_eq!(
        directive(&csp.header, "script-src"),
        Some("'self' 'unsafe-inline'")
    );
    assert_eq!(directive(&csp.header, "font-src"), None);
    assert_eq!(csp.allowed.connect, ["https://api.example.com"]);
}

#[test]
fn resource_domains_go_to_every_resource_directive() {
    let csp = sandbox_csp(Some(
        &json!({"resourceDomains": ["https://cdn.example.com"]}),
    ));
    let h = &csp.header;
    let cdn = "https://cdn.example.com";
    assert_eq!(
        directive(h, "script-src"),
        Some(&*format!("'self' 'unsafe-inline' {cdn}"))
    );
    assert_eq!(
        directive(h, "style-src"),
        Some(&*format!("'self' 'unsafe-inline' {cdn}"))
    );
    assert_eq!(
        directive(h, "img-src"),
        Some(&*format!("'self' data: {cdn}"))
    );
    assert_eq!(
        directive(h, "media-src"),
        Some(&*format!("'self' data: {cdn}"))
    );
    assert_eq!(directive(h, "font-src"), Some(&*format!("'self' {cdn}")));
    assert_eq!(directive(h, "connect-src"), Some("'none'"));
}

#[test]
fn frame_and_base_uri_domains_replace_their_defaults() {
    let csp = sandbox_csp(Some(&json!({
        "frameDomains": ["https://www.youtube.com"],
        "baseUriDomains": ["https://base.example.com"],
    })));
    assert_eq!(
        directive(&csp.header, "frame-src"),
        Some("https://www.youtube.com")
    );
    assert_eq!(
        directive(&csp.header, "base-uri"),
        Some("https://base.example.com")
    );
    assert_eq!(directive(&csp.header, "object-src"), Some("'none'"));
    assert_eq!(directive(&csp.header, "form-action"), Some("'none'"));
}

#[test]
fn accepted_forms_are_normalised() {
    assert_eq!(
        accept_source("https://a.example.com").as_deref(),
        Some("https://a.example.com")
    );
    assert_eq!(
        accept_source("HTTPS://A.Example.COM:8443/").as_deref(),
        Some("https://a.example.com:8443")
    );
    assert_eq!(
        accept_source("wss://ws.example.com:443").as_deref(),
        Some("wss://ws.example.com:443")
    );
    assert_eq!(
        accept_source("https://*.example.com").as_deref(),
        Some("https://*.example.com")
    );
    assert_eq!(
        accept_source("http://127.0.0.1:3001").as_deref(),
        Some("http://127.0.0.1:3001")
    );
    assert_eq!(
        accept_source("http://localhost").as_deref(),
        Some("http://localhost")
    );
    assert_eq!(
        accept_source("ws://[::1]:9000").as_deref(),
        Some("ws://[::1]:9000")
    );
    assert_eq!(
        accept_source("https://[::1]").as_deref(),
        Some("https://[::1]")
    );
}

#[test]
fn loose_and_dangerous_entries_are_dropped() {
    for entry in [
        "*",
        "https:",
        "https://",
        "http:",
        "data:",
        "blob:",
        "'unsafe-eval'",
        "'self'",
        "unsafe-inline",
        "http://example.com",
        "ws://example.com",
        "http://127.0.0.2",
        "https://*.com",
        "https://*",
        "wss://*.example.com",
        "https://example.com/path",
        "https://example.com:*",
        "https://example.com:0",
        "https://example.com:65536",
        "https://user@example.com",
        "https://a.example.com; script-src *",
        "https://a.example.com,https://b.example.com",
        "https://a.example.com 'unsafe-eval'",
        "https://a.example.com\t",
        "https://'a'.example.com",
        "https://\"a\".example.com",
        "https://-a.example.com",
        "ftp://example.com",
        "javascript://x",
        "https://[2001:db8::1]",
        "",
    ] {
        assert_eq!(accept_source(entry), None, "{entry:?} must be dropped");
    }
}

#[test]
fn dropped_entries_are_listed_and_accepted_ones_deduplicated() {
    let csp = sandbox_csp(Some(&json!({
        "connectDomains": ["https://a.example.com", "*", "HTTPS://A.EXAMPLE.COM", 7],
        "resourceDomains": "'unsafe-eval'",
        "frameDomains": null,
    })));
    assert_eq!(csp.allowed.connect, ["https://a.example.com"]);
    assert_eq!(csp.ignored, ["*", "7", "'unsafe-eval'"]);
    assert_eq!(
        directive(&csp.header, "script-src"),
        Some("'self' 'unsafe-inline'")
    );
    assert_eq!(directive(&csp.header, "frame-src"), Some("'none'"));
}

#[test]
fn allowed_domains_serialise_in_the_spec_shape() {
    let csp = sandbox_csp(Some(&json!({"frameDomains": ["https://f.example.com"]})));
    assert_eq!(
        csp.allowed.to_json(),
        json!({"connectDomains": [], "resourceDomains": [], "frameDomains": ["https://f.example.com"], "baseUriDomains": []})
    );
}

/// The directive names the header may contain, each at most once.
const NAMES: [&str; 11] = [
    "default-src",
    "script-src",
    "style-src",
    "img-src",
    "media-src",
    "font-src",
    "connect-src",
    "frame-src",
    "base-uri",
    "object-src",
    "form-action",
];

/// Entries mixing valid forms with separators, keywords and whitespace.
fn entry() -> impl Strategy<Value = String> {
    prop_oneof![
        "(https|wss|http|ws|HTTPS)://[a-z*.\\[\\]:0-9-]{0,20}(:[0-9*]{1,6})?/?",
        "[a-z:/*.' ;,\"\t\n-]{0,30}",
        ".{0,30}",
        Just("https://a.example.com; script-src 'unsafe-eval'".to_string()),
        Just("https://a.example.com, https://b.example.com".to_string()),
    ]
}

proptest! {
    #[test]
    fn no_entry_can_inject_a_directive_or_keyword(
        connect in proptest::collection::vec(entry(), 0..5),
        resource in proptest::collection::vec(entry(), 0..5),
        frame in proptest::collection::vec(entry(), 0..5),
        base in proptest::collection::vec(entry(), 0..5),
    ) {
        let csp = sandbox_csp(Some(&json!({
            "connectDomains": connect, "resourceDomains": resource,
            "frameDomains": frame, "baseUriDomains": base,
        })));
        let header = &csp.header;
        prop_assert!(!header.contains(','), "{header}");
        prop_assert!(header.bytes().all(|b| b == b' ' || b.is_ascii_graphic()), "{header:?}");
        let keywords = ["'none'", "'self'", "'unsafe-inline'", "data:"];
        let mut seen = Vec::new();
        for part in header.split("; ") {
            let mut tokens = part.split(' ');
            let name = tokens.next().unwrap_or_default();
            prop_assert!(NAMES.contains(&name), "unknown directive {name:?} in {header}");
            prop_assert!(!seen.contains(&name), "{name} twice in {header}");
            seen.push(name);
            for token in tokens {
                prop_assert!(
                    keywords.contains(&token) || accept_source(token).as_deref() == Some(token),
                    "token {token:?} of {name} in {header}"
                );
            }
        }
        prop_assert_eq!(seen.len(), 10 + usize::from(!csp.allowed.resource.is_empty()));
        // Every entry is accounted for: accepted (deduplicated) or ignored.
        let accepted = csp.allowed.connect.len() + csp.allowed.resource.len()
            + csp.allowed.frame.len() + csp.allowed.base_uri.len();
        prop_assert!(accepted + csp.ignored.len() <= connect.len() + resource.len() + frame.len() + base.len());
    }
}
