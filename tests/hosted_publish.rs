//! Republishing: a real server-everything connected through calyx's stdio connection, its
//! tools served by `HostedHandler` to a real rmcp client (over an in-memory pipe; the
//! `/mcp-hosted` HTTP route is not wired yet). The agent sees `ev-*` names, everything else as
//! upstream sent it, and calls come back as the server answered them.

use crate::hosted_support;

use calyx::hosted::connection::spawn::StdioLaunch;
use calyx::hosted::connection::{connect_stdio, INIT_TIMEOUT};
use calyx::hosted::publish::{HostedHandler, PublishedServer, Registry};
use hosted_support::server_everything;
use rmcp::model::{CallToolRequestParams, ErrorCode};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::ServiceExt;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_lists_and_calls_server_everything_through_the_handler() {
    let Some(index) = server_everything() else {
        return;
    };
    let launch = StdioLaunch {
        command: "node".into(),
        args: vec![index.display().to_string(), "stdio".into()],
        ..StdioLaunch::default()
    };
    let upstream = connect_stdio("ev", &launch, INIT_TIMEOUT)
        .await
        .expect("connects");
    let direct = upstream.service.peer().clone();
    let registry = Registry::default();
    registry.insert(PublishedServer {
        alias: "ev".into(),
        name: "Everything".into(),
        peer: direct.clone(),
        tools: upstream.tools.clone(),
        instructions: upstream.instructions.clone(),
        progress: upstream.service.service().progress(),
        resources: upstream.service.service().resources(),
    });

    let (agent_side, calyx_side) = tokio::io::duplex(1 << 20);
    let (calyx_read, calyx_write) = tokio::io::split(calyx_side);
    let server = tokio::spawn(async move {
        let running = HostedHandler::new(registry)
            .serve(AsyncRwTransport::new_server(calyx_read, calyx_write))
            .await
            .expect("serves");
        let _ = running.waiting().await;
    });
    let (agent_read, agent_write) = tokio::io::split(agent_side);
    let agent =
        ().serve(AsyncRwTransport::new_client(agent_read, agent_write))
            .await
            .expect("the agent connects");
    let info = agent.peer_info().expect("server info");
    let instructions = info.instructions.clone().unwrap_or_default();
    assert!(
        instructions.starts_with("calyx-mcp republishes"),
        "{instructions}"
    );

    // The published list is the upstream list renamed, minus the excluded ones.
    let listed = agent.list_all_tools().await.expect("tools/list");
    let upstream_tools = direct.list_all_tools().await.expect("direct tools/list");
    let mut expected: Vec<serde_json::Value> = upstream_tools
        .iter()
        .filter(|t| t.name != "simulate-research-query")
        .map(|t| {
            let mut v = serde_json::to_value(t).expect("json");
            v["name"] = format!("ev-{}", t.name).into();
            v
        })
        .collect();
    let mut got: Vec<serde_json::Value> = listed
        .iter()
        .map(|t| serde_json::to_value(t).expect("json"))
        .collect();
    let by_name = |v: &serde_json::Value| v["name"].as_str().unwrap_or("").to_string();
    expected.sort_by_key(by_name);
    got.sort_by_key(by_name);
    assert_eq!(got, expected);
    assert!(got.iter().any(|t| t["name"] == "ev-echo"));

    // A call comes back exactly as a direct call answers it.
    for (tool, args) in [
        ("echo", serde_json::json!({"message": "through calyx"})),
        ("get-sum", serde_json::json!({"a": 2, "b": 40})),
        (
            "get-structured-content",
            serde_json::json!({"location": "New York"}),
        ),
    ] {
        let args = args.as_object().cloned().expect("object");
        let through = agent
            .call_tool(
                CallToolRequestParams::new(format!("ev-{tool}")).with_arguments(args.clone()),
            )
            .await
            .expect("published call");
        let straight = direct
            .call_tool(CallToolRequestParams::new(tool).with_arguments(args))
            .await
            .expect("direct call");
        assert_eq!(
            serde_json::to_value(&through).expect("json"),
            serde_json::to_value(&straight).expect("json"),
            "{tool}"
        );
    }

    // An unknown published name is invalid params (-32602).
    let err = agent
        .call_tool(CallToolRequestParams::new("ev-nope"))
        .await
        .expect_err("unknown");
    match err {
        rmcp::ServiceError::McpError(data) => assert_eq!(data.code, ErrorCode::INVALID_PARAMS),
        other => panic!("expected -32602, got {other:?}"),
    }

    let _ = agent.cancel().await;
    server.abort();
    upstream.shutdown().await;
}
