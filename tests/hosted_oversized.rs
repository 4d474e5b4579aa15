//! A stdio server that answers with a line over 64 MiB: rmcp would drop the line and leave
//! the call waiting for ever; calyx fails every call in flight with the 64 MiB sentence and
//! the session ends (the supervisor then reconnects, as after any drop).

use std::process::Command;
use std::time::Duration;

use calyx::hosted::connection::in_flight::OVERSIZED;
use calyx::hosted::connection::spawn::StdioLaunch;
use calyx::hosted::connection::{connect_stdio, Connected, INIT_TIMEOUT};
use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest};
use rmcp::service::PeerRequestOptions;

/// A minimal MCP server in node: `big` answers with 65 MiB of text, `hang` never answers,
/// anything else answers `small`.
const SERVER: &str = r#"
const rl = require('readline').createInterface({ input: process.stdin });
const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
rl.on('line', (line) => {
  const m = JSON.parse(line);
  if (m.id === undefined) return;
  let result = {};
  if (m.method === 'initialize') {
    result = { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} },
               serverInfo: { name: 'oversized', version: '1' } };
  } else if (m.method === 'tools/list') {
    result = { tools: ['big', 'hang', 'small'].map((name) => ({ name, inputSchema: { type: 'object' } })) };
  } else if (m.method === 'tools/call') {
    if (m.params.name === 'hang') return;
    const text = m.params.name === 'big' ? 'x'.repeat(65 * 1024 * 1024) : 'small';
    result = { content: [{ type: 'text', text }] };
  }
  send({ jsonrpc: '2.0', id: m.id, result });
});
"#;

/// Deadline for each step; node writing 65 MiB on a loaded machine is slow.
const DEADLINE: Duration = Duration::from_secs(120);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_over_64_mib_fails_every_call_in_flight_and_ends_the_session() {
    if Command::new("node").arg("--version").output().is_err() {
        assert!(
            std::env::var_os("CALYX_REQUIRE_NODE").is_none(),
            "CALYX_REQUIRE_NODE is set and node is missing"
        );
        println!("SKIP: node is not installed");
        return;
    }
    let launch = StdioLaunch {
        command: "node".into(),
        args: vec!["-e".into(), SERVER.into()],
        ..StdioLaunch::default()
    };
    let connected = connect_stdio("big", &launch, INIT_TIMEOUT)
        .await
        .expect("connects");
    let peer = connected.service.peer().clone();
    let small = peer
        .call_tool(CallToolRequestParams::new("small"))
        .await
        .expect("a small answer passes");
    assert_eq!(
        serde_json::to_value(&small).expect("json")["content"][0]["text"],
        "small"
    );

    // `hang` is queued before `big` is sent (one writer, in order), so both are in flight.
    let hang = peer
        .send_cancellable_request(
            ClientRequest::CallToolRequest(CallToolRequest::new(CallToolRequestParams::new(
                "hang",
            ))),
            PeerRequestOptions::no_options(),
        )
        .await
        .expect("hang is sent");
    let hang = tokio::spawn(hang.await_response());
    let big = tokio::time::timeout(DEADLINE, peer.call_tool(CallToolRequestParams::new("big")))
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
