//! End to end with the project's fixture server (examples/mcp_fixture) hosted by a real calyx
//! server, seen by rmcp's client on `/mcp-hosted`: results of 1 and 32 MiB pass byte for byte
//! and one of 65 MiB fails with the 64 MiB sentence, after which the server answers again
//! (over HTTP only that call fails, over stdio every call in flight); a tool name with a `.`
//! and one that would publish as 59 characters come out valid and identical after a calyx
//! restart; a tool with `execution.taskSupport: "required"` is excluded with its reason; a
//! server that exits mid-call fails that call naming the server and is reconnected.

use crate::common::{wait_until, Env};
use crate::e2e_mcp_hosted::{
    calyx_ok, connect, connect_allowing, eventually, published, row_when, world, Listener,
};
use crate::hosted_support::fixture::{big_text, mcp_fixture, HttpFixture, LONG};

use std::collections::BTreeMap;

use calyx::hosted::connection::in_flight::OVERSIZED;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest, ServerResult,
};
use rmcp::service::{PeerRequestOptions, RequestHandle, RunningService};
use rmcp::RoleClient;
use serde_json::{json, Value};

type Client = RunningService<RoleClient, Listener>;

fn params(name: &str, args: Value) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new(name.to_string());
    params.arguments = args.as_object().cloned();
    params
}

/// The text of a tool result's first content block.
fn text_of(result: &CallToolResult) -> String {
    serde_json::to_value(result).unwrap_or_default()["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// A client on `/mcp-hosted` that accepts messages up to 64 MiB, once `fx` is ready.
async fn ready_client(env: &Env) -> (Client, Listener) {
    row_when(env, "fx", |r| r["state"] == "ready").await;
    let listener = Listener::default();
    let client = connect_allowing(env, listener.clone(), Some(64 << 20)).await;
    (client, listener)
}

/// `fx-big` of 1 and 32 MiB arrives exactly as the fixture made it.
async fn large_results_pass_unchanged(client: &Client) {
    for mib in [1, 32] {
        let answer = client
            .peer()
            .call_tool(params("fx-big", json!({"mib": mib})))
            .await
            .expect("fx-big");
        let text = text_of(&answer);
        assert!(
            answer.is_error != Some(true) && text == big_text(mib),
            "{mib} MiB arrived as {} bytes, not byte-identical: {:.200}",
            text.len(),
            text
        );
    }
}

/// `fx-big` of 65 MiB answers the agent with an error naming the 64 MiB limit.
async fn over_64_mib_is_refused(client: &Client) {
    let big = client
        .peer()
        .call_tool(params("fx-big", json!({"mib": 65})))
        .await
        .expect("an answer, not a lost call");
    assert_eq!(big.is_error, Some(true), "{:.300}", text_of(&big));
    assert!(text_of(&big).contains("64 MiB"), "{}", text_of(&big));
}

/// `fx-slow` sent as a cancellable request, once the fixture runs it (its progress arrived).
async fn slow_in_flight(client: &Client, listener: &Listener) -> RequestHandle<RoleClient> {
    let handle = client
        .peer()
        .send_cancellable_request(
            ClientRequest::CallToolRequest(CallToolRequest::new(params("fx-slow", json!({})))),
            PeerRequestOptions::no_options(),
        )
        .await
        .expect("fx-slow sent");
    let token = handle.progress_token.clone();
    let seen = listener.progress.clone();
    eventually("fx-slow running upstream", || {
        let seen = seen.clone();
        let token = token.clone();
        async move {
            let all = seen.lock().unwrap_or_else(|e| e.into_inner());
            all.iter().any(|p| p.progress_token == token).then_some(())
        }
    })
    .await;
    handle
}

/// Until `fx-echo` answers (a reconnecting server makes calls wait, then fail).
async fn answers_again(client: &Client) {
    eventually("fx-echo answering again", || async {
        let answer = client
            .peer()
            .call_tool(params("fx-echo", json!({"message": "back"})))
            .await
            .ok()?;
        (answer.is_error != Some(true) && text_of(&answer) == "back").then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_stdio_65_mib_fails_the_calls_in_flight_and_the_server_comes_back() {
    let env = world("");
    let fixture = mcp_fixture().display().to_string();
    calyx_ok(&env, &["mcp", "add", "fx", "--", &fixture]).await;
    let (client, listener) = ready_client(&env).await;
    large_results_pass_unchanged(&client).await;

    let slow = slow_in_flight(&client, &listener).await;
    over_64_mib_is_refused(&client).await;
    // The oversized line ends the stdio session: the other call in flight fails with it.
    let slow = slow.await_response().await.expect("fx-slow is answered");
    let ServerResult::CallToolResult(slow) = slow else {
        panic!("not a tool result: {slow:?}");
    };
    assert_eq!(slow.is_error, Some(true), "{slow:?}");
    assert!(text_of(&slow).contains(OVERSIZED), "{}", text_of(&slow));
    answers_again(&client).await;
    let _ = client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_65_mib_fails_that_call_only() {
    let env = world("");
    let record = env.path().join("cancel-record.txt");
    let server = HttpFixture::start(&record);
    calyx_ok(&env, &["mcp", "add", "fx", "--url", &server.url]).await;
    let (client, listener) = ready_client(&env).await;
    large_results_pass_unchanged(&client).await;

    let slow = slow_in_flight(&client, &listener).await;
    over_64_mib_is_refused(&client).await;
    answers_again(&client).await;
    // The other call is still running upstream: cancelling it reaches the fixture.
    slow.cancel(Some("the test cancels".into()))
        .await
        .expect("cancel sent");
    eventually("the upstream cancel recorded", || async {
        std::fs::read_to_string(&record)
            .ok()
            .filter(|t| t.contains("cancelled"))
    })
    .await;
    let _ = client.cancel().await;
}

/// Published name by original name, for the fixture's tools, from `calyx mcp details fx`.
async fn published_names(env: &Env) -> (BTreeMap<String, String>, Value) {
    let details: Value =
        serde_json::from_str(&calyx_ok(env, &["mcp", "details", "fx", "--json"]).await)
            .expect("details json");
    let names = details["published"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter_map(|t| {
            Some((
                t["original"].as_str()?.to_string(),
                t["name"].as_str()?.to_string(),
            ))
        })
        .collect();
    (names, details)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn odd_names_publish_valid_and_stay_the_same_after_a_restart() {
    let env = world("");
    let fixture = mcp_fixture().display().to_string();
    calyx_ok(&env, &["mcp", "add", "fx", "--", &fixture]).await;
    row_when(&env, "fx", |r| r["state"] == "ready").await;
    let (before, details) = published_names(&env).await;
    assert_eq!(format!("fx-{LONG}").len(), 59);
    let valid = regex::Regex::new("^[A-Za-z0-9_-]{1,48}$").expect("regex");
    for original in ["dotted.name", LONG] {
        let name = before
            .get(original)
            .unwrap_or_else(|| panic!("{original} is not published: {details}"));
        assert!(valid.is_match(name), "{original} -> {name}");
    }
    assert_eq!(before.get("echo").map(String::as_str), Some("fx-echo"));
    // The task-only tool is excluded, with its reason.
    let excluded = details["excluded"].as_array().cloned().unwrap_or_default();
    assert!(
        excluded.iter().any(|e| e["name"] == "needs_task"
            && e["reason"]
                .as_str()
                .is_some_and(|r| r.contains("needs task support"))),
        "{details}"
    );
    assert!(!before.contains_key("needs_task"), "{details}");
    // Agents see exactly those names.
    let client = connect(&env, Listener::default()).await;
    let mut listed = published(&client).await;
    listed.sort();
    let mut expected: Vec<String> = before.values().cloned().collect();
    expected.sort();
    assert_eq!(listed, expected);
    let _ = client.cancel().await;

    // A new calyx server publishes the same names.
    let pid = env.server_pid();
    calyx_ok(&env, &["kill-server"]).await;
    let socket = env.path().join("run/calyx/server.sock");
    wait_until("the first server gone", || {
        let gone = std::fs::read_to_string(format!("/proc/{pid}/status"))
            .map_or(true, |s| s.contains("State:\tZ"));
        (gone && std::os::unix::net::UnixStream::connect(&socket).is_err()).then_some(())
    });
    env.ok(&["new", "-d", "-s", "again"]);
    row_when(&env, "fx", |r| r["state"] == "ready").await;
    let (after, _) = published_names(&env).await;
    assert_eq!(after, before, "names after a restart");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_exits_fails_that_call_naming_it_and_comes_back() {
    let env = world("");
    let fixture = mcp_fixture().display().to_string();
    calyx_ok(&env, &["mcp", "add", "fx", "--", &fixture]).await;
    let (client, _listener) = ready_client(&env).await;
    // The fixture exits without answering: the agent's call ends with an error naming the
    // server, not a wait for ever.
    let answer = client
        .peer()
        .call_tool(params("fx-exit", json!({"code": 3})))
        .await
        .expect("an answer");
    assert_eq!(answer.is_error, Some(true), "{answer:?}");
    assert!(
        text_of(&answer).contains("server `fx`"),
        "{}",
        text_of(&answer)
    );
    answers_again(&client).await;
    let _ = client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_a_session_the_server_forgot_is_opened_again() {
    let env = world("");
    let server = HttpFixture::start(&env.path().join("cancel-record.txt"));
    calyx_ok(&env, &["mcp", "add", "fx", "--url", &server.url]).await;
    let (client, _listener) = ready_client(&env).await;
    answers_again(&client).await;
    // The server forgets every session (as a restarted one would): calyx's next message to
    // it gets 404, which ends that session; the supervisor opens a new one.
    let forgot = client
        .peer()
        .call_tool(params("fx-forget_sessions", json!({})))
        .await
        .expect("forget_sessions");
    assert_eq!(text_of(&forgot), "forgetting");
    let expired = client
        .peer()
        .call_tool(params("fx-echo", json!({"message": "into the void"})))
        .await
        .expect("an answer");
    assert_eq!(expired.is_error, Some(true), "{expired:?}");
    assert!(
        text_of(&expired).contains("no longer knows this session"),
        "{}",
        text_of(&expired)
    );
    answers_again(&client).await;
    let _ = client.cancel().await;
}
