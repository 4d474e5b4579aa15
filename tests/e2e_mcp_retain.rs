//! End to end: a hosted stdio server killed under a real calyx server keeps its tools
//! published while it reconnects (every `tools/list` an agent makes meanwhile still has them),
//! a call made while its row says `reconnecting` either runs once the server is back or
//! answers `isError` "server `ev` is reconnecting: ...", and the server comes back by itself.
//! The published list is in the tools cache file. The 60 s and 10 s
//! timings are checked on tokio's paused clock in `src/hosted/held/tests.rs`.

use crate::e2e_mcp_hosted::{
    calyx_ok, connect, eventually, published, row_when, world, world_processes, Listener,
};
use crate::hosted_support::server_everything;

use std::time::Duration;

use rmcp::model::CallToolRequestParams;
use serde_json::json;

/// Generous: a loaded 2-core machine restarts node slowly.
const DEADLINE: Duration = Duration::from_secs(90);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_servers_tools_stay_listed_and_a_call_meanwhile_is_answered() {
    let Some(index) = server_everything() else {
        return;
    };
    let index = index.display().to_string();
    let env = world("");
    calyx_ok(&env, &["mcp", "add", "ev", "--", "node", &index, "stdio"]).await;
    row_when(&env, "ev", |r| r["state"] == "ready").await;
    let client = connect(&env, Listener::default()).await;
    assert!(published(&client).await.iter().any(|n| n == "ev-echo"));

    // The published list went to the tools cache (0600), for the next run.
    let cache = env.path().join("state/calyx/mcp-tools-cache.json");
    let cached: serde_json::Value = eventually("the tools cache file", || async {
        let text = std::fs::read_to_string(&cache).ok()?;
        serde_json::from_str(&text).ok()
    })
    .await;
    let tools = cached["servers"]["ev"]["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(tools.iter().any(|t| t["name"] == "echo"), "{cached}");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&cache)
        .expect("cache")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);

    let before = world_processes(&env, &index);
    assert!(!before.is_empty(), "server-everything runs");
    for pid in &before {
        let pid = nix::unistd::Pid::from_raw(*pid as i32);
        if let Ok(group) = nix::unistd::getpgid(Some(pid)) {
            let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
        }
    }
    // Right after the kill the tools are still there.
    assert!(
        published(&client).await.iter().any(|n| n == "ev-echo"),
        "listed right after the kill"
    );

    // Until it is ready again with a new process, every listing still has the tools; once
    // calyx has seen the drop (`reconnecting`, which lasts at least the 1 s backoff), a call
    // waits for the server or says why it cannot. (A call racing the kill itself may be in
    // flight when the connection drops: it gets "failed the call", as the issue says.)
    let deadline = tokio::time::Instant::now() + DEADLINE;
    let mut called = false;
    loop {
        let names = published(&client).await;
        assert!(
            names.iter().any(|n| n == "ev-echo"),
            "withdrawn while reconnecting: {names:?}"
        );
        let rows = calyx_ok(&env, &["mcp", "list", "--json"]).await;
        let rows: serde_json::Value = serde_json::from_str(&rows).expect("rows");
        if rows[0]["state"] == "reconnecting" && !called {
            called = true;
            let mut call = CallToolRequestParams::new("ev-echo");
            call.arguments = json!({"message": "while reconnecting"})
                .as_object()
                .cloned();
            let answer = client
                .peer()
                .call_tool(call)
                .await
                .expect("a tool result, not a protocol error");
            let text = serde_json::to_string(&answer).unwrap_or_default();
            let ran = answer.is_error != Some(true) && text.contains("while reconnecting");
            let explained =
                answer.is_error == Some(true) && text.contains("server `ev` is reconnecting: ");
            assert!(ran || explained, "{text}");
        }
        let now = world_processes(&env, &index);
        let ready = rows[0]["state"] == "ready";
        if ready && !now.is_empty() && now.iter().all(|p| !before.contains(p)) {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "`ev` did not come back: {rows}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    if !called {
        println!("NOTE: the reconnecting state passed between two looks; no call was made in it");
    }
    let mut call = CallToolRequestParams::new("ev-echo");
    call.arguments = json!({"message": "back again"}).as_object().cloned();
    let answer = client.peer().call_tool(call).await.expect("ev-echo");
    assert!(
        serde_json::to_string(&answer)
            .unwrap_or_default()
            .contains("back again"),
        "{answer:?}"
    );
    let _ = client.cancel().await;
}
