//! The supervisor keeps a real server-everything connected: it reaches `ready` with its tools
//! published and its configured variable (from the secret store) in its environment, comes back
//! on its own after its process group is killed, and a missing command fails at once with the
//! PATH sentence and no retry.

use crate::hosted_support;

use std::sync::Arc;
use std::time::Duration;

use calyx::hosted::connection::state::ServerState;
use calyx::hosted::entry::{ServerEntry, StdioTarget, Transport};
use calyx::hosted::publish::Registry;
use calyx::hosted::secrets::{env_account, FileStore, SecretStore};
use calyx::hosted::supervisor::Supervisor;
use hosted_support::server_everything;
use rmcp::model::CallToolRequestParams;
use tokio::sync::broadcast;

/// Generous: a loaded 2-core machine starts node slowly.
const DEADLINE: Duration = Duration::from_secs(90);

fn entry(alias: &str, command: &str, args: Vec<String>, env: Vec<String>) -> ServerEntry {
    ServerEntry {
        alias: alias.into(),
        name: "Everything".into(),
        enabled: true,
        transport: Transport::Stdio(StdioTarget {
            command: command.into(),
            args,
            cwd: None,
            env,
        }),
        note: None,
    }
}

/// Waits for the next state of `alias` that `wanted` accepts; returns every state seen.
async fn wait_for(
    changes: &mut broadcast::Receiver<(String, ServerState)>,
    alias: &str,
    wanted: impl Fn(&ServerState) -> bool,
) -> Vec<ServerState> {
    let mut seen = Vec::new();
    let found = tokio::time::timeout(DEADLINE, async {
        loop {
            match changes.recv().await {
                Ok((a, state)) if a == alias => {
                    seen.push(state.clone());
                    if wanted(&state) {
                        return;
                    }
                }
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => panic!("supervisor gone"),
            }
        }
    })
    .await;
    assert!(
        found.is_ok(),
        "no such state within {DEADLINE:?}; saw {seen:?}"
    );
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_server_reconnects_by_itself() {
    let Some(index) = server_everything() else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let secrets = FileStore::new(dir.path().join("mcp-secrets.json"));
    secrets
        .set(
            &env_account("ev", "CALYX_TEST_GREETING"),
            "hello-from-the-store",
        )
        .expect("store");
    let registry = Registry::default();
    let supervisor = Supervisor::new(registry.clone(), Arc::new(secrets));
    let mut changes = supervisor.subscribe();
    supervisor.start(entry(
        "ev",
        "node",
        vec![index.display().to_string(), "stdio".into()],
        vec!["CALYX_TEST_GREETING".into()],
    ));
    let seen = wait_for(&mut changes, "ev", |s| {
        matches!(s, ServerState::Ready { .. })
    })
    .await;
    assert_eq!(seen[0], ServerState::Connecting);
    let Some(ServerState::Ready { tools, .. }) = supervisor.state("ev") else {
        panic!("ready")
    };
    assert!(tools > 5, "{tools}");
    assert!(registry.tools().iter().any(|t| t.name == "ev-echo"));

    // The stored variable reached the server's environment.
    let (server, original) = registry.resolve("ev-get-env").expect("published");
    let env = server
        .peer
        .call_tool(CallToolRequestParams::new(original))
        .await
        .expect("get-env");
    let env = serde_json::to_string(&env).expect("json");
    assert!(env.contains("hello-from-the-store"), "{env}");

    // Kill the whole group: the row goes to reconnecting and back to ready without help.
    let pgid = supervisor.process_group("ev").expect("a process group");
    nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(pgid),
        nix::sys::signal::Signal::SIGKILL,
    )
    .expect("kill");
    let seen = wait_for(&mut changes, "ev", |s| {
        matches!(s, ServerState::Ready { .. })
    })
    .await;
    assert_eq!(
        seen[0].status_line(),
        "Disconnected (reconnecting)",
        "{seen:?}"
    );
    assert!(registry.tools().iter().any(|t| t.name == "ev-echo"));
    let new_pgid = supervisor.process_group("ev").expect("a new process group");
    assert_ne!(new_pgid, pgid);

    supervisor.stop("ev");
    assert!(registry.tools().is_empty(), "stopping withdraws the tools");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_command_fails_once_and_stays_failed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let supervisor = Supervisor::new(
        Registry::default(),
        Arc::new(FileStore::new(dir.path().join("s.json"))),
    );
    let mut changes = supervisor.subscribe();
    supervisor.start(entry("nope", "calyx-no-such-mcp-server", vec![], vec![]));
    let seen = wait_for(&mut changes, "nope", |s| {
        matches!(s, ServerState::Failed { .. })
    })
    .await;
    assert_eq!(seen.len(), 2, "connecting, then failed: {seen:?}");
    let line = supervisor.state("nope").expect("state").status_line();
    assert!(
        line.starts_with("`calyx-no-such-mcp-server` was not found in PATH ("),
        "{line}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_secret_fails_with_what_to_do() {
    let dir = tempfile::tempdir().expect("tempdir");
    let supervisor = Supervisor::new(
        Registry::default(),
        Arc::new(FileStore::new(dir.path().join("s.json"))),
    );
    let mut changes = supervisor.subscribe();
    supervisor.start(entry("ev", "node", vec![], vec!["API_KEY".into()]));
    wait_for(&mut changes, "ev", |s| {
        matches!(s, ServerState::Failed { .. })
    })
    .await;
    assert_eq!(
        supervisor.state("ev").expect("state").status_line(),
        "`ev` needs API_KEY, which has no stored value: set it with `calyx mcp edit ev`"
    );
    let mut disabled = entry("ev", "node", vec![], vec![]);
    disabled.enabled = false;
    supervisor.start(disabled);
    assert_eq!(supervisor.state("ev"), Some(ServerState::Disabled));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_the_unusable_secret_service_holds_is_named_not_missing() {
    use calyx::hosted::secrets::{choose, KeyringStore, SecretError, SecretStoreSetting};
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("mcp-secrets.json");
    // A run with a working Secret Service stored the value there.
    let with_keyring = choose(
        SecretStoreSetting::Auto,
        || {
            Ok(KeyringStore::over(
                keyring_core::mock::Store::new().expect("mock store"),
            ))
        },
        FileStore::new(path.clone()),
    )
    .expect("chosen");
    with_keyring
        .store
        .set(&env_account("ev", "API_KEY"), "k")
        .expect("set");
    // This run has none: the secrets file is used, and the miss says where the value is.
    let without = choose(
        SecretStoreSetting::Auto,
        || {
            Err(SecretError::KeyringUnavailable {
                reason: "no session bus".into(),
            })
        },
        FileStore::new(path),
    )
    .expect("chosen");
    let supervisor = Supervisor::new(Registry::default(), without.store);
    let mut changes = supervisor.subscribe();
    supervisor.start(entry("ev", "node", vec![], vec!["API_KEY".into()]));
    wait_for(&mut changes, "ev", |s| {
        matches!(s, ServerState::Failed { .. })
    })
    .await;
    assert_eq!(
        supervisor.state("ev").expect("state").status_line(),
        "`ev` needs API_KEY: stored in the Secret Service, which is unavailable now (no session bus)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_list_changes_reach_whoever_follows_them_for_its_views() {
    let dir = tempfile::tempdir().expect("tempdir");
    let registry = Registry::default();
    let supervisor = Supervisor::new(
        registry.clone(),
        Arc::new(FileStore::new(dir.path().join("mcp-secrets.json"))),
    );
    let mut changes = supervisor.subscribe();
    let mut lists = registry.upstream_changes();
    let fixture = hosted_support::fixture::mcp_fixture();
    supervisor.start(entry("fx", &fixture.display().to_string(), vec![], vec![]));
    wait_for(&mut changes, "fx", |s| {
        matches!(s, ServerState::Ready { .. })
    })
    .await;
    let server = registry.get("fx").expect("ready");
    server
        .peer
        .call_tool(CallToolRequestParams::new("add_tool"))
        .await
        .expect("add_tool");
    let (alias, message) = tokio::time::timeout(DEADLINE, lists.recv())
        .await
        .expect("a list change within the deadline")
        .expect("the channel is open");
    assert_eq!(alias, "fx");
    assert_eq!(
        message["method"], "notifications/tools/list_changed",
        "{message}"
    );
    supervisor.stop("fx");
}
