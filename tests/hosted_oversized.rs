//! A stdio server that answers with a line over 64 MiB: rmcp would drop the line and leave
//! the call waiting for ever; calyx fails every call in flight with the 64 MiB sentence and
//! the session ends (the supervisor then reconnects, as after any drop). The server is the
//! project's fixture (examples/mcp_fixture): `big {mib: 65}` answers with a 65 MiB line,
//! `slow` does not answer until cancelled, `echo` answers at once.

use std::time::Duration;

use calyx::hosted::connection::in_flight::OVERSIZED;
use calyx::hosted::connection::spawn::StdioLaunch;
use calyx::hosted::connection::{connect_stdio, Connected, INIT_TIMEOUT};
use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest};
use rmcp::service::PeerRequestOptions;
use serde_json::json;

use crate::hosted_support::fixture::mcp_fixture;

/// Deadline for each step; writing and reading 65 MiB on a loaded machine is slow.
const DEADLINE: Duration = Duration::from_secs(120);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_over_64_mib_fails_every_call_in_flight_and_ends_the_session() {
    let launch = StdioLaunch {
        command: mcp_fixture().display().to_string(),
        ..StdioLaunch::default()
    };
    let connected = connect_stdio("big", &launch, INIT_TIMEOUT)
        .await
        .expect("connects");
    let peer = connected.service.peer().clone();
    let mut small = CallToolRequestParams::new("echo");
    small.arguments = json!({"message": "small"}).as_object().cloned();
    let small = peer.call_tool(small).await.expect("a small answer passes");
    assert_eq!(
        serde_json::to_value(&small).expect("json")["content"][0]["text"],
        "small"
    );

    // `hang` (the fixture's `slow`) is queued before `big` is sent (one writer, in order), so both are in flight.
    let hang = peer
        .send_cancellable_request(
            ClientRequest::CallToolRequest(CallToolRequest::new(CallToolRequestParams::new(
                "slow",
            ))),
            PeerRequestOptions::no_options(),
        )
        .await
        .expect("hang is sent");
    let hang = tokio::spawn(hang.await_response());
    let mut big = CallToolRequestParams::new("big");
    big.arguments = json!({"mib": 65}).as_object().cloned();
    let big = tokio::time::timeout(DEADLINE, peer.call_tool(big))
        .await
        .expect("big ends instead of waiting for ever");
    let big = big.expect_err("big fails").to_string();
    assert!(big.contains(OVERSIZED), "{big}");
    let hang = tokio::time::timeout(DEADLINE, hang)
        .await
        .expect("hang ends too")
        .expect("task");
    let hang = hang.expect_err("hang fails").to_string();
    assert!(hang.contains(OVERSIZED), "{hang}");

    // The stream ended there: the session closes, which is what makes the supervisor
    // reconnect.
    let Connected { service, .. } = connected;
    let closed = tokio::time::timeout(DEADLINE, service.waiting()).await;
    assert!(
        closed.is_ok(),
        "the session ends after the oversized message"
    );
}
