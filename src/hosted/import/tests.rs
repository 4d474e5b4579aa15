//! Import over real-shaped configs of the agent CLIs (shapes from their documentation).

use super::*;
use crate::hosted::entry::{ServerEntry, StdioTarget, Transport};
use crate::hosted::server_list::ServerList;

fn env(name: &str) -> Option<String> {
    match name {
        "LINEAR_KEY" => Some("lin_123".into()),
        "HOME" => Some("/home/u".into()),
        _ => None,
    }
}

fn read(text: &str) -> Vec<Candidate> {
    parse(text, &env).expect("parses")
}

fn by_key<'a>(candidates: &'a [Candidate], key: &str) -> &'a Candidate {
    candidates
        .iter()
        .find(|c| c.key == key)
        .unwrap_or_else(|| panic!("no {key}"))
}

const CLAUDE_CODE: &str = r#"{
  "mcpServers": {
    "github": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_TOKEN}"}
    },
    "linear": {
      "type": "http",
      "url": "https://mcp.linear.app/mcp",
      "headers": {"Authorization": "Bearer ${LINEAR_KEY}"}
    },
    "sentry": {"type": "sse", "url": "https://mcp.sentry.dev/sse", "alwaysAllow": ["x"]}
  }
}"#;

#[test]
fn claude_code_mcp_servers() {
    let got = read(CLAUDE_CODE);
    assert_eq!(got.len(), 3);
    let github = by_key(&got, "github");
    assert_eq!(github.entry.alias, "github");
    assert_eq!(github.entry.name, "github");
    assert_eq!(
        github.entry.transport,
        Transport::Stdio(StdioTarget {
            command: "npx".into(),
            args: vec!["-y".into(), "@modelcontextprotocol/server-github".into()],
            cwd: None,
            env: vec!["GITHUB_PERSONAL_ACCESS_TOKEN".into()],
        })
    );
    assert_eq!(github.unresolved, ["GITHUB_TOKEN"]);
    assert!(!github.entry.enabled, "unresolved: imported disabled");
    let linear = by_key(&got, "linear");
    assert!(linear.entry.enabled);
    assert_eq!(
        linear.secrets,
        [(
            "header/Authorization".to_string(),
            "Bearer lin_123".to_string()
        )]
    );
    let Transport::Http(http) = &linear.entry.transport else {
        panic!("http")
    };
    assert_eq!(http.headers, ["Authorization"]);
    assert!(!http.legacy_sse);
    let Transport::Http(sentry) = &by_key(&got, "sentry").entry.transport else {
        panic!("http")
    };
    assert!(sentry.legacy_sse, "type sse is the legacy transport");
    assert_eq!(by_key(&got, "sentry").ignored, ["alwaysAllow"]);
}

#[test]
fn cursor_gemini_and_copilot_shapes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cursor = r#"{"mcpServers": {
        "postgres": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-postgres", "postgresql://localhost/db"]},
        "remote": {"url": "http://localhost:3000/mcp", "headers": {"X-Team": "core"}}}}"#;
    let got = read(cursor);
    assert_eq!(by_key(&got, "postgres").entry.transport_name(), "stdio");
    assert_eq!(by_key(&got, "remote").entry.transport_name(), "http");
    assert!(got.iter().all(|c| c.problem.is_none()));

    let gemini = format!(
        r#"{{"theme": "Default", "mcpServers": {{
        "pythonTools": {{"command": "python", "args": ["-m", "my_server"], "cwd": "{}",
                         "env": {{"API_KEY": "${{env:HOME}}/key"}}, "timeout": 30000, "trust": false,
                         "includeTools": ["a"], "excludeTools": ["b"]}},
        "httpServer": {{"httpUrl": "https://example.com/mcp", "timeout": 5000}},
        "missingDir": {{"command": "x", "cwd": "{}/nope"}}}}}}"#,
        dir.path().display(),
        dir.path().display()
    );
    let got = read(&gemini);
    let python = by_key(&got, "pythonTools");
    assert_eq!(python.entry.alias, "pythontool");
    assert_eq!(
        python.secrets,
        [("env/API_KEY".to_string(), "/home/u/key".to_string())]
    );
    assert_eq!(
        python.ignored,
        ["excludeTools", "includeTools", "timeout", "trust"]
    );
    assert_eq!(
        by_key(&got, "httpServer").entry.target(),
        "https://example.com/mcp"
    );
    let problem = by_key(&got, "missingDir").problem.clone().expect("problem");
    assert!(problem.contains("does not exist"), "{problem}");

    let copilot = r#"{"mcpServers": {
        "playwright": {"type": "local", "command": "npx", "args": ["@playwright/mcp@latest"], "env": {}, "tools": ["*"]},
        "context7": {"type": "http", "url": "https://mcp.context7.com/mcp",
                     "headers": {"CONTEXT7_API_KEY": "${COPILOT_MCP_CONTEXT7}"}, "tools": ["*"]}}}"#;
    let got = read(copilot);
    assert_eq!(by_key(&got, "playwright").entry.transport_name(), "stdio");
    assert_eq!(by_key(&got, "playwright").ignored, ["tools"]);
    assert_eq!(
        by_key(&got, "context7").unresolved,
        ["COPILOT_MCP_CONTEXT7"]
    );
}

#[test]
fn opencode_mcp_with_array_commands() {
    let opencode = r#"{"$schema": "https://opencode.ai/config.json", "mcp": {
        "my-local": {"type": "local", "command": ["npx", "-y", "my-mcp-command"], "enabled": true,
                     "environment": {"MY_ENV_VAR": "value"}},
        "my-remote": {"type": "remote", "url": "https://my-mcp-server.com", "enabled": false,
                      "headers": {"Authorization": "Bearer MY_API_KEY"}}}}"#;
    let got = read(opencode);
    let local = by_key(&got, "my-local");
    assert_eq!(local.entry.alias, "mylocal");
    assert_eq!(local.entry.target(), "npx -y my-mcp-command");
    assert_eq!(
        local.secrets,
        [("env/MY_ENV_VAR".to_string(), "value".to_string())]
    );
    let remote = by_key(&got, "my-remote");
    assert_eq!(remote.entry.transport_name(), "http");
    assert!(!remote.entry.enabled, "enabled: false is kept");
    assert!(remote.unresolved.is_empty());
}

#[test]
fn a_bare_map_and_a_single_server() {
    let got = read(r#"{"ev": {"command": "node", "args": ["index.js", "stdio"]}}"#);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].entry.alias, "ev");
    let got = read(r#"{"command": "node", "args": ["index.js"], "env": {"K": "${MISSING:-d}"}}"#);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].key, "server");
    assert_eq!(got[0].secrets, [("env/K".to_string(), "d".to_string())]);
    let got = read(
        r#"{"name": "Everything", "type": "streamableHttp", "url": "http://127.0.0.1:3101/mcp"}"#,
    );
    assert_eq!(got[0].entry.alias, "everything");
    assert_eq!(got[0].entry.name, "Everything");
}

#[test]
fn errors_name_the_position_or_the_server_and_key() {
    let err = parse("{\n  \"mcpServers\": {\n    \"a\": {,}\n  }\n}", &env).expect_err("bad");
    assert_eq!(
        err.to_string(),
        "the import JSON does not parse at line 3, column 11: key must be a string"
    );
    let err = parse(r#"{"mcpServers": {"x": {"type": "http", "url": 5}}}"#, &env).expect_err("bad");
    assert_eq!(err.to_string(), r#"server 'x': "url" must be a string"#);
    let err = parse(
        r#"{"mcpServers": {"x": {"command": "a", "args": "b c"}}}"#,
        &env,
    )
    .expect_err("bad");
    assert_eq!(
        err.to_string(),
        r#"server 'x': "args" must be an array of strings"#
    );
    let err = parse(r#"{"mcpServers": {"x": {"type": "ws", "url": "u"}}}"#, &env).expect_err("bad");
    assert!(err
        .to_string()
        .starts_with(r#"server 'x': "type" must be one of stdio"#));
    let err = parse(r#"{"mcpServers": {"x": {"env": {}}}}"#, &env).expect_err("bad");
    assert_eq!(
        err.to_string(),
        r#"server 'x': it has neither "command" nor "url"; give one of them"#
    );
    assert_eq!(parse("[]", &env), Err(ImportError::NotAnObject));
    assert_eq!(
        parse(r#"{"mcpServers": {}}"#, &env),
        Err(ImportError::Empty)
    );
}

fn existing(aliases: &[&str]) -> ServerList {
    let mut list = ServerList::default();
    for alias in aliases {
        list.add(ServerEntry {
            alias: alias.to_string(),
            name: alias.to_string(),
            enabled: true,
            transport: Transport::Stdio(StdioTarget {
                command: "old".into(),
                args: vec![],
                cwd: None,
                env: vec![],
            }),
            note: None,
        })
        .expect("added");
    }
    list
}

#[test]
fn a_taken_alias_under_each_policy() {
    let list = existing(&["github"]);
    let renamed = plan(read(CLAUDE_CODE), &list, ConflictPolicy::Rename);
    let github = renamed
        .iter()
        .find(|p| p.candidate.key == "github")
        .expect("github");
    assert_eq!(github.candidate.entry.alias, "github2");
    assert_eq!(
        github.action,
        Action::Rename {
            from: "github".into()
        }
    );
    assert_eq!(
        github.candidate.entry.note.as_deref(),
        Some("imported disabled: GITHUB_TOKEN was not set at import; set it with `calyx mcp edit github2`, then enable it")
    );
    let preview = render(&renamed);
    assert!(preview.contains("github2  'github'  stdio  npx -y @modelcontextprotocol/server-github\n    add as `github2` (`github` is taken)\n    unresolved: GITHUB_TOKEN (imported disabled)\n"), "{preview}");
    assert!(
        preview.contains("    ignored keys: alwaysAllow\n"),
        "{preview}"
    );
    assert!(!preview.contains("lin_123"), "no secret in the preview");

    let mut after = list.clone();
    let done = apply(&renamed, &mut after);
    assert_eq!(done.len(), 3);
    assert_eq!(
        after.get("github").map(|e| e.target()).as_deref(),
        Some("old")
    );
    assert!(!after.get("github2").expect("github2").enabled);

    let replaced = plan(read(CLAUDE_CODE), &list, ConflictPolicy::Replace);
    let mut after = list.clone();
    apply(&replaced, &mut after);
    assert_eq!(after.servers.len(), 3);
    assert_eq!(
        after.get("github").map(|e| e.target()).as_deref(),
        Some("npx -y @modelcontextprotocol/server-github")
    );

    let skipped = plan(read(CLAUDE_CODE), &list, ConflictPolicy::Skip);
    assert!(render(&skipped).contains("    skip (`github` is taken)\n"));
    let mut after = list.clone();
    assert_eq!(apply(&skipped, &mut after).len(), 2);
    assert_eq!(
        after.get("github").map(|e| e.target()).as_deref(),
        Some("old")
    );
}

#[test]
fn two_imported_servers_with_one_alias_both_come_in() {
    let text = r#"{"mcpServers": {"git-hub": {"command": "a"}, "gitHub": {"command": "b"}}}"#;
    let planned = plan(read(text), &ServerList::default(), ConflictPolicy::Skip);
    let aliases: Vec<&str> = planned
        .iter()
        .map(|p| p.candidate.entry.alias.as_str())
        .collect();
    assert_eq!(aliases, ["github", "github2"]);
}

#[test]
fn policies_parse() {
    assert_eq!("rename".parse(), Ok(ConflictPolicy::Rename));
    assert_eq!("replace".parse(), Ok(ConflictPolicy::Replace));
    assert_eq!("skip".parse(), Ok(ConflictPolicy::Skip));
    assert!("merge".parse::<ConflictPolicy>().is_err());
}
