//! Hosted stdio servers through the real connection code: calyx's spawn (own process group,
//! stderr ring), rmcp's client, the raw tap and the tool filter, against the real
//! `@modelcontextprotocol/server-everything` from npm, plus the failures a user must be able
//! to act on (command not found, exit before initialize, no answer).

use crate::hosted_support;

use std::time::Duration;

use calyx::hosted::connection::filter::Exclusion;
use calyx::hosted::connection::spawn::StdioLaunch;
use calyx::hosted::connection::{connect_stdio, ConnectError, INIT_TIMEOUT};
use hosted_support::server_everything;
use rmcp::model::CallToolRequestParams;

fn node(index: &std::path::Path) -> StdioLaunch {
    StdioLaunch {
        command: "node".into(),
        args: vec![index.display().to_string(), "stdio".into()],
        cwd: None,
        env: vec![],
    }
}

fn group_alive(pgid: i32) -> bool {
    nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pgid), None).is_ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_over_stdio_lists_filters_and_calls() {
    let Some(index) = server_everything() else {
        return;
    };
    let connected = connect_stdio("ev", &node(&index), INIT_TIMEOUT)
        .await
        .expect("connects");
    assert_eq!(connected.protocol_version, "2025-11-25");
    assert!(connected.server_name.is_some());
    let published: Vec<&str> = connected
        .tools
        .published
        .iter()
        .map(|(name, _)| name.as_str())
        .collect();
    for name in [
        "ev-echo",
        "ev-get-sum",
        "ev-get-tiny-image",
        "ev-get-structured-content",
    ] {
        assert!(published.contains(&name), "{name} in {published:?}");
    }
    assert!(
        connected.tools.excluded.contains(&(
            "simulate-research-query".to_string(),
            Exclusion::TaskRequired
        )),
        "{:?}",
        connected.tools.excluded
    );
    assert!(!published
        .iter()
        .any(|n| n.contains("simulate-research-query")));
    // The published tool keeps everything rmcp keeps, only the name is ours.
    let (_, echo) = connected
        .tools
        .published
        .iter()
        .find(|(n, _)| n == "ev-echo")
        .expect("echo");
    assert_eq!(echo.name, "echo");
    assert_eq!(echo.title.as_deref(), Some("Echo Tool"));

    let args = serde_json::json!({"message": "hello from calyx"});
    let result = connected
        .service
        .peer()
        .call_tool(
            CallToolRequestParams::new("echo")
                .with_arguments(args.as_object().cloned().expect("object")),
        )
        .await
        .expect("echo answers");
    let result = serde_json::to_value(&result).expect("json");
    assert_eq!(
        result["content"],
        serde_json::json!([{"type": "text", "text": "Echo: hello from calyx"}])
    );

    let pgid = connected.pgid().expect("a process group");
    assert!(group_alive(pgid));
    connected.shutdown().await;
    assert!(!group_alive(pgid), "the whole group is gone after shutdown");
}

#[tokio::test]
async fn a_missing_command_names_path() {
    let launch = StdioLaunch {
        command: "calyx-no-such-mcp-server".into(),
        ..StdioLaunch::default()
    };
    let err = connect_stdio("x", &launch, INIT_TIMEOUT)
        .await
        .err()
        .expect("fails");
    assert!(
        matches!(err, ConnectError::CommandNotFound { .. }),
        "{err:?}"
    );
    let sentence = err.to_string();
    assert!(
        sentence.starts_with("`calyx-no-such-mcp-server` was not found in PATH ("),
        "{sentence}"
    );
    assert!(sentence.ends_with("): install it or give its full path in Edit"));
}

#[tokio::test]
async fn a_server_that_exits_before_initialize_shows_status_and_stderr() {
    let launch = StdioLaunch {
        command: "sh".into(),
        args: vec![
            "-c".into(),
            "echo 'Error: cannot find module x' >&2; exit 3".into(),
        ],
        ..StdioLaunch::default()
    };
    let err = connect_stdio("x", &launch, INIT_TIMEOUT)
        .await
        .err()
        .expect("fails");
    assert_eq!(
        err.to_string(),
        "the server exited before answering initialize (exit status: 3); its stderr ends with:\nError: cannot find module x"
    );
}

#[tokio::test]
async fn a_server_that_never_answers_times_out() {
    let launch = StdioLaunch {
        command: "sh".into(),
        args: vec!["-c".into(), "echo waiting >&2; exec sleep 600".into()],
        ..StdioLaunch::default()
    };
    let err = connect_stdio("x", &launch, Duration::from_millis(500))
        .await
        .err()
        .expect("fails");
    assert!(matches!(err, ConnectError::InitTimeout { .. }), "{err:?}");
    // Whether "waiting" reached the ring within 0.5 s depends on the machine's load.
    assert!(
        err.to_string()
            .starts_with("the server did not answer initialize within 0.5 s"),
        "{err}"
    );
}

#[tokio::test]
async fn a_server_answering_an_unknown_protocol_version_is_refused() {
    // Answers `initialize` (whatever its id) with a version no MCP revision has.
    let script = r#"read -r line
id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"1999-01-01","capabilities":{},"serverInfo":{"name":"old","version":"1"}}}\n' "$id"
exec sleep 600"#;
    let launch = StdioLaunch {
        command: "sh".into(),
        args: vec!["-c".into(), script.into()],
        ..StdioLaunch::default()
    };
    let err = connect_stdio("old", &launch, INIT_TIMEOUT)
        .await
        .err()
        .expect("refused");
    assert!(
        matches!(err, ConnectError::UnsupportedProtocol { .. }),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "the server answered initialize with protocol version `1999-01-01`, which calyx cannot speak (it speaks 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28): update the server to a current MCP version"
    );
}
