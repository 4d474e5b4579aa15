use super::*;
use crate::hosted::entry::{HttpTarget, OAuthSettings, StdioTarget};

fn stdio(alias: &str) -> ServerEntry {
    ServerEntry {
        alias: alias.into(),
        name: "Everything".into(),
        enabled: true,
        transport: Transport::Stdio(StdioTarget {
            command: "node".into(),
            args: vec!["index.js".into(), "stdio".into()],
            cwd: None,
            env: vec!["API_KEY".into()],
        }),
        note: None,
    }
}

fn http(url: &str) -> ServerEntry {
    ServerEntry {
        transport: Transport::Http(HttpTarget {
            url: url.into(),
            legacy_sse: false,
            headers: vec!["X-Team".into()],
            oauth: OAuthSettings::default(),
        }),
        ..stdio("linear")
    }
}

fn error(entry: &ServerEntry) -> String {
    check_entry(entry).expect_err("refused").to_string()
}

#[test]
fn a_good_entry_passes_without_warnings() {
    assert_eq!(check_entry(&stdio("ev")), Ok(vec![]));
    assert_eq!(check_entry(&http("https://mcp.linear.app/mcp")), Ok(vec![]));
    assert_eq!(check_entry(&http("http://127.0.0.1:3101/mcp")), Ok(vec![]));
    assert_eq!(check_entry(&http("http://localhost:3101/mcp")), Ok(vec![]));
    assert_eq!(check_entry(&http("http://[::1]:3101/mcp")), Ok(vec![]));
}

#[test]
fn an_invalid_alias_shows_the_rule_and_a_suggestion() {
    assert_eq!(
        error(&stdio("My-Server")),
        "invalid alias `My-Server`: an alias is a lowercase letter followed by up to 9 lowercase \
         letters or digits (^[a-z][a-z0-9]{0,9}$); try `myserver`"
    );
    assert_eq!(
        error(&stdio("42")),
        "invalid alias `42`: an alias is a lowercase letter followed by up to 9 lowercase \
         letters or digits (^[a-z][a-z0-9]{0,9}$)"
    );
}

#[test]
fn names_are_one_to_64_characters() {
    let mut entry = stdio("ev");
    entry.name = "é".repeat(64);
    assert!(check_entry(&entry).is_ok(), "64 characters, 128 bytes");
    entry.name = "x".repeat(65);
    assert_eq!(
        error(&entry),
        "the name of `ev` has 65 characters: shorten it to 64 at most"
    );
    entry.name = " ".into();
    assert_eq!(
        error(&entry),
        "the name of `ev` is empty: give it a name of 1 to 64 characters"
    );
}

#[test]
fn urls_must_be_http_or_https() {
    for bad in [
        "ftp://host/mcp",
        "mcp.linear.app/mcp",
        "file:///tmp/x",
        "https://",
    ] {
        assert_eq!(
            error(&http(bad)),
            format!("the URL `{bad}` of `linear` is not an http:// or https:// URL: enter one like https://host/mcp")
        );
    }
}

#[test]
fn plain_http_to_another_host_is_a_warning() {
    let warnings = check_entry(&http("http://mcp.example.com/mcp")).expect("accepted");
    assert_eq!(
        warnings,
        vec![Warning(
            "`linear` uses plain http to mcp.example.com: tokens and header values travel in \
             clear; use https if the server offers it"
                .into()
        )]
    );
}

#[test]
fn header_names_are_tokens_and_values_one_line() {
    let mut entry = http("https://h/mcp");
    if let Transport::Http(h) = &mut entry.transport {
        h.headers = vec!["X Team".into()];
    }
    assert_eq!(
        error(&entry),
        "the header name `X Team` of `linear` is invalid: use letters, digits and !#$%&'*+-.^_`|~ only"
    );
    assert!(check_header_name("a", "X-Api_Key.v2~").is_ok());
    assert!(check_header_name("a", "").is_err());
    assert!(check_header_name("a", "X:Y").is_err());
    assert_eq!(
        check_header_value("linear", "X-Team", "a\r\nInjected: 1")
            .expect_err("refused")
            .to_string(),
        "the value of header `X-Team` of `linear` contains a line break: enter it on one line"
    );
    assert!(check_header_value("linear", "X-Team", "a b\tc").is_ok());
}

#[test]
fn env_names() {
    let mut entry = stdio("ev");
    if let Transport::Stdio(s) = &mut entry.transport {
        s.env = vec!["1KEY".into()];
    }
    assert_eq!(
        error(&entry),
        "the environment variable name `1KEY` of `ev` is invalid: use letters, digits and _ and do not start with a digit"
    );
    assert!(check_env_name("ev", "_API_KEY2").is_ok());
    assert!(check_env_name("ev", "A-B").is_err());
    assert!(check_env_value("ev", "K", "a\0b").is_err());
}

#[test]
fn the_working_directory_must_exist() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut entry = stdio("ev");
    if let Transport::Stdio(s) = &mut entry.transport {
        s.cwd = Some(dir.path().display().to_string());
    }
    assert!(check_entry(&entry).is_ok());
    let missing = dir.path().join("missing").display().to_string();
    if let Transport::Stdio(s) = &mut entry.transport {
        s.cwd = Some(missing.clone());
    }
    assert_eq!(
        error(&entry),
        format!(
            "the working directory `{missing}` of `ev` does not exist: create it or choose another"
        )
    );
}

#[test]
fn an_empty_command_is_refused() {
    let mut entry = stdio("ev");
    if let Transport::Stdio(s) = &mut entry.transport {
        s.command = " ".into();
    }
    assert_eq!(
        error(&entry),
        "the command of `ev` is empty: give the program to run"
    );
}
