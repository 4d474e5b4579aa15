//! End to end: long tool calls through `/mcp-hosted` of a real calyx server. The upstream's
//! progress reaches the agent with the agent's own token (server-everything's
//! `trigger-long-running-operation`), and the agent cancelling a call makes calyx cancel it
//! upstream (the project's fixture server, examples/mcp_fixture, records the
//! `notifications/cancelled`); a server that adds a tool is re-listed and the agent hears
//! `tools/list_changed`.

use crate::e2e_mcp_hosted::{calyx_ok, connect, eventually, published, row_when, world, Listener};
use crate::hosted_support::fixture::mcp_fixture;
use crate::hosted_support::server_everything;

use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest, ServerResult};
use rmcp::service::PeerRequestOptions;
use serde_json::json;

fn call(name: &str, args: serde_json::Value) -> ClientRequest {
    let mut params = CallToolRequestParams::new(name.to_string());
    params.arguments = args.as_object().cloned();
    ClientRequest::CallToolRequest(CallToolRequest::new(params))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_carries_the_agents_token_and_cancel_reaches_the_server() {
    let Some(index) = server_everything() else {
        return;
    };
    let fixture = mcp_fixture();
    let env = world("");
    let record = env.path().join("cancel-record.txt");
    calyx_ok(
        &env,
        &[
            "mcp",
            "add",
            "ev",
            "--",
            "node",
            &index.display().to_string(),
            "stdio",
        ],
    )
    .await;
    calyx_ok(
        &env,
        &[
            "mcp",
            "add",
            "rec",
            "--env",
            &format!("CALYX_FIXTURE_CANCEL_RECORD={}", record.display()),
            "--",
            &fixture.display().to_string(),
        ],
    )
    .await;
    row_when(&env, "ev", |r| r["state"] == "ready").await;
    row_when(&env, "rec", |r| r["state"] == "ready").await;
    let listener = Listener::default();
    let progress = listener.progress.clone();
    let client = connect(&env, listener).await;

    // Five steps upstream: five notifications, in order, with the token this client sent.
    let handle = client
        .peer()
        .send_cancellable_request(
            call(
                "ev-trigger-long-running-operation",
                json!({"duration": 1, "steps": 5}),
            ),
            PeerRequestOptions::no_options(),
        )
        .await
        .expect("sent");
    let token = handle.progress_token.clone();
    let answer = handle.await_response().await.expect("answered");
    let ServerResult::CallToolResult(result) = answer else {
        panic!("not a tool result: {answer:?}");
    };
    assert!(
        format!("{:?}", result.content).contains("Long running operation completed"),
        "{result:?}"
    );
    // The last step may reach the agent just after the answer (they travel apart).
    let seen = eventually("five progress notifications", || {
        let progress = progress.clone();
        let token = token.clone();
        async move {
            let all = progress.lock().unwrap_or_else(|e| e.into_inner());
            let seen: Vec<(f64, Option<f64>)> = all
                .iter()
                .filter(|p| p.progress_token == token)
                .map(|p| (p.progress, p.total))
                .collect();
            (seen.len() >= 5).then_some(seen)
        }
    })
    .await;
    assert_eq!(
        seen,
        (1..=5)
            .map(|i| (f64::from(i), Some(5.0)))
            .collect::<Vec<_>>(),
        "every step, in order, with the agent's token"
    );

    // Cancelling a running call cancels it upstream.
    let handle = client
        .peer()
        .send_cancellable_request(
            call("rec-slow", json!({})),
            PeerRequestOptions::no_options(),
        )
        .await
        .expect("sent");
    let token = handle.progress_token.clone();
    eventually("the slow call running upstream", || {
        let progress = progress.clone();
        let token = token.clone();
        async move {
            let all = progress.lock().unwrap_or_else(|e| e.into_inner());
            all.iter().any(|p| p.progress_token == token).then_some(())
        }
    })
    .await;
    handle
        .cancel(Some("the test cancels".into()))
        .await
        .expect("cancel sent");
    let recorded = eventually("the upstream cancel recorded", || {
        let record = record.clone();
        async move {
            std::fs::read_to_string(&record)
                .ok()
                .filter(|t| t.contains("cancelled"))
        }
    })
    .await;
    assert_eq!(recorded.lines().count(), 1, "{recorded}");
    let _ = client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_adds_a_tool_is_relisted_and_agents_are_told() {
    let fixture = mcp_fixture();
    let env = world("");
    calyx_ok(
        &env,
        &["mcp", "add", "rec", "--", &fixture.display().to_string()],
    )
    .await;
    let before = row_when(&env, "rec", |r| r["state"] == "ready").await;
    let listener = Listener::default();
    let heard = listener.list_changed.clone();
    let client = connect(&env, listener).await;
    assert!(!published(&client).await.iter().any(|n| n == "rec-added-1"));

    let told = heard.load(std::sync::atomic::Ordering::SeqCst);
    let grown = client
        .peer()
        .call_tool(CallToolRequestParams::new("rec-add_tool"))
        .await
        .expect("rec-add_tool");
    assert!(format!("{grown:?}").contains("added-1"), "{grown:?}");
    eventually(
        "tools/list_changed after the server added a tool",
        || async { (heard.load(std::sync::atomic::Ordering::SeqCst) > told).then_some(()) },
    )
    .await;
    eventually("rec-added-1 published", || async {
        published(&client)
            .await
            .iter()
            .any(|n| n == "rec-added-1")
            .then_some(())
    })
    .await;
    let count = before["tools"].as_u64().unwrap_or(0);
    row_when(&env, "rec", |r| r["tools"].as_u64() == Some(count + 1)).await;
    let answer = client
        .peer()
        .call_tool(CallToolRequestParams::new("rec-added-1"))
        .await
        .expect("rec-added-1");
    assert!(format!("{answer:?}").contains("added-1"), "{answer:?}");
    let _ = client.cancel().await;
}
