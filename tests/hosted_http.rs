//! Hosted servers at a URL, against the real server-everything in its `streamableHttp` and
//! `sse` modes on a free loopback port: both transports reach ready with the same tools as
//! stdio (task-required tools excluded, seen through the raw tap), `echo` and `get-sum` answer
//! identically, the supervisor connects with a configured header from the secret store, the
//! legacy URL with the switch off names the switch, and an unreachable server (refused, or a
//! name that does not resolve) names host and reason.

use crate::hosted_support;

use std::sync::Arc;
use std::time::Duration;

use calyx::hosted::connection::spawn::StdioLaunch;
use calyx::hosted::connection::state::ServerState;
use calyx::hosted::connection::{
    connect_http, connect_stdio, ConnectError, Connected, HttpLaunch, INIT_TIMEOUT,
};
use calyx::hosted::entry::{HttpTarget, ServerEntry, Transport};
use calyx::hosted::publish::Registry;
use calyx::hosted::secrets::{header_account, FileStore, SecretStore};
use calyx::hosted::supervisor::Supervisor;
use hosted_support::{server_everything, HttpEverything};
use rmcp::model::CallToolRequestParams;
use serde_json::{json, Value};

/// What a session shows of server-everything: published names, excluded names, and the
/// answers of `echo` and `get-sum`.
async fn observe(connected: &Connected) -> (Vec<String>, Vec<String>, Value, Value) {
    let mut published: Vec<String> = connected
        .tools
        .published
        .iter()
        .map(|(n, _)| n.clone())
        .collect();
    published.sort();
    let mut excluded: Vec<String> = connected
        .tools
        .excluded
        .iter()
        .map(|(n, _)| n.clone())
        .collect();
    excluded.sort();
    let call = |name: &'static str, args: Value| async move {
        let result = connected
            .service
            .peer()
            .call_tool(
                CallToolRequestParams::new(name)
                    .with_arguments(args.as_object().cloned().expect("object")),
            )
            .await
            .unwrap_or_else(|e| panic!("{name} answers: {e}"));
        serde_json::to_value(&result).expect("json")
    };
    let echo = call("echo", json!({"message": "over http"})).await;
    let sum = call("get-sum", json!({"a": 20, "b": 22})).await;
    (published, excluded, echo, sum)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_http_transports_match_stdio() {
    let Some(index) = server_everything() else {
        return;
    };
    let stdio = StdioLaunch {
        command: "node".into(),
        args: vec![index.display().to_string(), "stdio".into()],
        ..StdioLaunch::default()
    };
    let direct = connect_stdio("ev", &stdio, INIT_TIMEOUT)
        .await
        .expect("stdio connects");
    let expected = observe(&direct).await;
    direct.shutdown().await;
    assert!(
        expected.1.iter().any(|n| n == "simulate-research-query"),
        "{:?}",
        expected.1
    );
    assert_eq!(
        expected.2["content"],
        json!([{"type": "text", "text": "Echo: over http"}])
    );

    for (mode, path, legacy_sse) in [("streamableHttp", "/mcp", false), ("sse", "/sse", true)] {
        let server = HttpEverything::start(&index, mode);
        let launch = HttpLaunch {
            url: server.url(path),
            legacy_sse,
            headers: vec![("X-Calyx-Test".into(), "configured".into())],
        };
        let connected = connect_http("ev", &launch, INIT_TIMEOUT)
            .await
            .unwrap_or_else(|e| panic!("{mode} connects: {e}"));
        assert!(connected.pgid().is_none());
        assert!(!connected.protocol_version.is_empty());
        let seen = observe(&connected).await;
        assert_eq!(seen, expected, "{mode} shows what stdio shows");
        connected.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_url_with_the_switch_off_names_the_switch() {
    let Some(index) = server_everything() else {
        return;
    };
    let server = HttpEverything::start(&index, "sse");
    let launch = HttpLaunch {
        url: server.url("/sse"),
        ..HttpLaunch::default()
    };
    let err = connect_http("ev", &launch, INIT_TIMEOUT)
        .await
        .err()
        .expect("not a Streamable HTTP endpoint");
    assert!(matches!(err, ConnectError::LegacyServer), "{err:?}");
    assert_eq!(
        err.to_string(),
        "this is a legacy HTTP+SSE server: turn on Legacy HTTP+SSE in Edit"
    );
}

#[tokio::test]
async fn an_unreachable_server_names_host_and_reason() {
    let port = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        probe.local_addr().expect("addr").port()
    };
    for legacy_sse in [false, true] {
        let launch = HttpLaunch {
            url: format!("http://127.0.0.1:{port}/mcp"),
            legacy_sse,
            headers: Vec::new(),
        };
        let err = connect_http("ev", &launch, INIT_TIMEOUT)
            .await
            .err()
            .expect("nothing listens");
        let sentence = err.to_string();
        assert!(
            sentence.starts_with("cannot reach 127.0.0.1: connection refused"),
            "legacy {legacy_sse}: {sentence}"
        );
    }
}

#[tokio::test]
async fn a_name_that_does_not_resolve_is_named() {
    // `.invalid` never resolves (RFC 2606).
    let launch = HttpLaunch {
        url: "http://calyx-no-such-host.invalid/mcp".into(),
        ..HttpLaunch::default()
    };
    let err = connect_http("ev", &launch, INIT_TIMEOUT)
        .await
        .err()
        .expect("no such host");
    let sentence = err.to_string();
    assert!(
        sentence
            .starts_with("cannot reach calyx-no-such-host.invalid: the name does not resolve ("),
        "{sentence}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_supervisor_connects_an_http_entry_with_its_stored_header() {
    let Some(index) = server_everything() else {
        return;
    };
    let server = HttpEverything::start(&index, "streamableHttp");
    let dir = tempfile::tempdir().expect("tempdir");
    let secrets = FileStore::new(dir.path().join("mcp-secrets.json"));
    secrets
        .set(&header_account("evh", "X-Team"), "calyx")
        .expect("store");
    let registry = Registry::default();
    let supervisor = Supervisor::new(registry.clone(), Arc::new(secrets));
    let mut changes = supervisor.subscribe();
    let entry = |alias: &str, headers: Vec<String>| ServerEntry {
        alias: alias.into(),
        name: "Everything over HTTP".into(),
        enabled: true,
        transport: Transport::Http(HttpTarget {
            url: server.url("/mcp"),
            legacy_sse: false,
            headers,
            oauth: Default::default(),
        }),
        note: None,
    };
    supervisor.start(entry("evh", vec!["X-Team".into()]));
    // A header with no stored value fails at once, naming it.
    supervisor.start(entry("nohdr", vec!["X-Missing".into()]));
    let deadline = Duration::from_secs(90);
    let mut ready = None;
    let mut missing = None;
    let settled = tokio::time::timeout(deadline, async {
        while ready.is_none() || missing.is_none() {
            match changes.recv().await {
                Ok((alias, state @ ServerState::Ready { .. })) if alias == "evh" => {
                    ready = Some(state)
                }
                Ok((alias, ServerState::Failed { sentence })) if alias == "evh" => {
                    panic!("evh failed: {sentence}")
                }
                Ok((alias, ServerState::Failed { sentence })) if alias == "nohdr" => {
                    missing = Some(sentence)
                }
                Ok(_) => {}
                Err(e) => panic!("changes: {e}"),
            }
        }
    })
    .await;
    assert!(settled.is_ok(), "no ready/failed within {deadline:?}");
    assert!(
        matches!(ready, Some(ServerState::Ready { tools, .. }) if tools > 5),
        "{ready:?}"
    );
    assert!(registry.tools().iter().any(|t| t.name == "evh-get-sum"));
    let missing = missing.unwrap_or_default();
    assert!(
        missing.contains("header X-Missing") && missing.contains("calyx mcp edit nohdr"),
        "{missing}"
    );
    supervisor.stop("evh");
}

#[tokio::test]
async fn an_https_url_to_a_plain_http_port_names_host_and_tls() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    // Answers whatever arrives with plain HTTP, which is not a TLS handshake.
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let mut buf = [0u8; 1024];
            let _ = socket.read(&mut buf).await;
            let _ = socket
                .write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
                .await;
        }
    });
    calyx::hosted::connection::http_client::install_tls_provider();
    let launch = HttpLaunch {
        url: format!("https://127.0.0.1:{port}/mcp"),
        ..HttpLaunch::default()
    };
    let err = connect_http("ev", &launch, INIT_TIMEOUT)
        .await
        .err()
        .expect("not TLS");
    let sentence = err.to_string();
    assert!(
        sentence.starts_with("cannot reach 127.0.0.1: TLS failed: "),
        "{sentence}"
    );
}
