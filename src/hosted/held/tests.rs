//! Held tools on tokio's paused clock: kept listed, calls wait 10 s for the server (and run
//! when it comes back meanwhile), withdrawn after 60 s; a real rmcp peer over an in-memory
//! pipe stands for the server's connection.

use std::collections::HashSet;

use rmcp::service::RunningService;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::{RoleClient, ServerHandler, ServiceExt};
use tokio::time::Instant;

use super::*;
use crate::hosted::connection::filter::classify;
use crate::hosted::publish::{PublishedServer, Registry};

/// An upstream server with nothing to say: only its connection matters here.
struct Upstream;
impl ServerHandler for Upstream {}

/// A connected client peer (kept open while the returned service lives).
async fn connection() -> RunningService<RoleClient, ()> {
    let (client_side, server_side) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_side);
    tokio::spawn(async move {
        if let Ok(running) = Upstream
            .serve(AsyncRwTransport::new_server(server_read, server_write))
            .await
        {
            let _ = running.waiting().await;
        }
    });
    let (client_read, client_write) = tokio::io::split(client_side);
    ().serve(AsyncRwTransport::new_client(client_read, client_write))
        .await
        .expect("connects")
}

fn live(peer: &RunningService<RoleClient, ()>) -> PublishedServer {
    let tool: rmcp::model::Tool = serde_json::from_value(
        serde_json::json!({"name": "echo", "inputSchema": {"type": "object"}}),
    )
    .expect("a tool");
    PublishedServer {
        alias: "ev".into(),
        name: "Everything".into(),
        peer: peer.peer().clone(),
        tools: classify("ev", vec![tool], &HashSet::new()),
        instructions: None,
        progress: Default::default(),
        resources: Default::default(),
    }
}

fn listed(registry: &Registry) -> Vec<String> {
    registry
        .tools()
        .iter()
        .map(|t| t.name.to_string())
        .collect()
}

fn held_after_drop(registry: &Registry) {
    assert!(registry.hold_live("ev", |server| server
        .held_while_reconnecting("the server's connection ended")));
}

#[tokio::test(start_paused = true)]
async fn held_tools_stay_listed_and_a_call_gets_the_sentence_after_10_s() {
    let registry = Registry::default();
    let connection = connection().await;
    registry.insert(live(&connection));
    let mut changes = registry.watch_changes();
    changes.mark_unchanged();
    held_after_drop(&registry);
    assert_eq!(listed(&registry), ["ev-echo"]);
    assert!(
        !changes.has_changed().expect("registry alive"),
        "the same tools, held: nothing for agents to hear"
    );

    let asked = Instant::now();
    let answer = registry.callable("ev-echo").await;
    assert_eq!(
        answer.err(),
        Some(Unavailable::NotReady(
            "server `ev` is reconnecting: the server's connection ended".into()
        ))
    );
    assert_eq!(asked.elapsed().as_secs(), RECONNECT_WAIT.as_secs());

    // A later failed attempt says more.
    registry.set_held_sentence("ev", reconnecting_sentence("ev", "cannot reach it"));
    let answer = registry.callable("ev-echo").await;
    assert_eq!(
        answer.err(),
        Some(Unavailable::NotReady(
            "server `ev` is reconnecting: cannot reach it".into()
        ))
    );
    assert_eq!(
        registry.callable("ev-nosuch").await.err(),
        Some(Unavailable::Unknown)
    );
    assert_eq!(
        registry.callable("zz-echo").await.err(),
        Some(Unavailable::Unknown)
    );
}

#[tokio::test(start_paused = true)]
async fn a_call_waiting_on_a_held_server_runs_when_it_is_back() {
    let registry = Registry::default();
    let first = connection().await;
    registry.insert(live(&first));
    held_after_drop(&registry);
    let second = connection().await;
    let back = live(&second);
    let reconnecting = registry.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(3)).await;
        reconnecting.insert(back);
    });
    let asked = Instant::now();
    let (server, original) = registry.callable("ev-echo").await.expect("back in time");
    assert_eq!(asked.elapsed().as_secs(), 3);
    assert_eq!(original, "echo");
    assert!(!server.peer.is_transport_closed());
}

#[tokio::test(start_paused = true)]
async fn a_ready_server_whose_connection_closed_is_waited_for_too() {
    let registry = Registry::default();
    let connection = connection().await;
    registry.insert(live(&connection));
    let peer = connection.peer().clone();
    drop(connection);
    let deadline = Instant::now() + Duration::from_secs(5);
    while !peer.is_transport_closed() {
        assert!(Instant::now() < deadline, "the connection never closed");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let asked = Instant::now();
    assert_eq!(
        registry.callable("ev-echo").await.err(),
        Some(Unavailable::NotReady(
            "server `ev` is reconnecting: the server's connection ended".into()
        ))
    );
    assert_eq!(asked.elapsed().as_secs(), RECONNECT_WAIT.as_secs());
}

#[tokio::test(start_paused = true)]
async fn held_tools_are_withdrawn_after_60_s_unless_the_timer_is_dropped() {
    let registry = Registry::default();
    let connection = connection().await;
    registry.insert(live(&connection));
    held_after_drop(&registry);
    let mut changes = registry.watch_changes();
    changes.mark_unchanged();
    let _timer = registry.withdraw_held_after("ev", RETAIN_FOR);
    tokio::time::sleep(RETAIN_FOR - Duration::from_secs(1)).await;
    assert_eq!(listed(&registry), ["ev-echo"], "still held at 59 s");
    assert!(!changes.has_changed().expect("registry alive"));
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(listed(&registry).is_empty(), "withdrawn at 60 s");
    assert!(
        changes.has_changed().expect("registry alive"),
        "agents hear it"
    );

    // Dropped (the server came back): nothing is withdrawn.
    registry.insert(live(&connection));
    held_after_drop(&registry);
    let timer = registry.withdraw_held_after("ev", RETAIN_FOR);
    drop(timer);
    tokio::time::sleep(RETAIN_FOR * 2).await;
    assert_eq!(listed(&registry), ["ev-echo"]);

    // A ready server is never withdrawn by a stale timer.
    registry.insert(live(&connection));
    let _stale = registry.withdraw_held_after("ev", Duration::from_secs(1));
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(registry.get("ev").is_some());
}

#[tokio::test(start_paused = true)]
async fn a_call_held_for_sign_in_raises_the_prompt_and_esc_answers_it_at_once() {
    let registry = Registry::default();
    let connection = connection().await;
    registry.insert(live(&connection));
    assert!(registry.hold_live("ev", |server| server.held_needing_sign_in("Everything")));
    let prompts = registry.sign_in_prompts().clone();
    let calling = registry.clone();
    let call = tokio::spawn(async move { calling.callable("ev-echo").await.err() });
    while prompts.waiting().is_empty() {
        tokio::task::yield_now().await;
    }
    assert_eq!(
        prompts.waiting(),
        [("ev".to_string(), "Everything".to_string(), 1)]
    );
    let started = Instant::now();
    assert!(prompts.cancel("ev"));
    let answer = call.await.expect("the call ends");
    assert_eq!(started.elapsed(), std::time::Duration::ZERO, "at once");
    assert_eq!(
        answer,
        Some(Unavailable::NotReady(
            "`Everything` requires sign-in: run `calyx mcp login ev` or sign in from prefix M"
                .into()
        ))
    );
    assert!(prompts.waiting().is_empty(), "the prompt went");
}

#[tokio::test(start_paused = true)]
async fn a_call_held_for_sign_in_runs_once_signed_in_and_the_prompt_goes() {
    let registry = Registry::default();
    let connection = connection().await;
    registry.insert(live(&connection));
    assert!(registry.hold_live("ev", |server| server.held_needing_sign_in("Everything")));
    let prompts = registry.sign_in_prompts().clone();
    let calling = registry.clone();
    let call = tokio::spawn(async move { calling.callable("ev-echo").await.map(|(_, o)| o) });
    // Signed in after 100 s (within the 120 s wait): the live server is back.
    tokio::time::sleep(std::time::Duration::from_secs(100)).await;
    assert_eq!(prompts.waiting().len(), 1, "still waiting at 100 s");
    registry.insert(live(&connection));
    assert_eq!(call.await.expect("the call ends"), Ok("echo".to_string()));
    assert!(prompts.waiting().is_empty(), "the prompt went");
}

#[tokio::test(start_paused = true)]
async fn a_call_held_for_sign_in_ends_when_its_server_is_removed() {
    let registry = Registry::default();
    let connection = connection().await;
    registry.insert(live(&connection));
    assert!(registry.hold_live("ev", |server| server.held_needing_sign_in("Everything")));
    let prompts = registry.sign_in_prompts().clone();
    let calling = registry.clone();
    let call = tokio::spawn(async move { calling.callable("ev-echo").await.err() });
    while prompts.waiting().is_empty() {
        tokio::task::yield_now().await;
    }
    let started = Instant::now();
    registry.remove("ev");
    let answer = call.await.expect("the call ends");
    assert_eq!(started.elapsed(), std::time::Duration::ZERO, "at once");
    assert!(
        matches!(answer, Some(Unavailable::NotReady(ref s)) if s.contains("requires sign-in")),
        "{answer:?}"
    );
    assert!(prompts.waiting().is_empty(), "the prompt went");
}
