//! End to end: hosted MCP servers in a real calyx server. `calyx mcp add` starts the real
//! server-everything, `calyx mcp list/details` show it, rmcp's client on `/mcp-hosted` lists and
//! calls its tools and hears `tools/list_changed` when they come and go; `[mcp] host_servers =
//! false` makes the route 404 until `reload-config` turns it on, and `reload-config` picks up a
//! hand-edited `mcp-servers.json`.

use crate::common;
use crate::hosted_support::server_everything;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{calyx_bin, Env};
use rmcp::model::{CallToolRequestParams, ProgressNotificationParam};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{json, Value};

/// Generous: a loaded 2-core machine starts node slowly.
const DEADLINE: Duration = Duration::from_secs(90);

/// A client that counts the `tools/list_changed` it hears and keeps the progress.
#[derive(Clone, Default)]
pub(crate) struct Listener {
    pub list_changed: Arc<AtomicUsize>,
    pub progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
}

impl ClientHandler for Listener {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.fetch_add(1, Ordering::SeqCst);
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(params);
    }
}

/// `calyx ARGS` on a blocking thread (the client's runtime keeps running meanwhile).
pub(crate) async fn calyx(env: &Env, args: &[&str]) -> std::process::Output {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let vars = env.vars();
    tokio::task::spawn_blocking(move || {
        std::process::Command::new(calyx_bin())
            .args(&args)
            .env_clear()
            .envs(vars)
            .output()
            .expect("run calyx")
    })
    .await
    .expect("calyx")
}

pub(crate) fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub(crate) fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `calyx ARGS`, asserting exit 0; its stdout.
pub(crate) async fn calyx_ok(env: &Env, args: &[&str]) -> String {
    let out = calyx(env, args).await;
    assert!(
        out.status.success(),
        "calyx {args:?}: {}{}",
        stdout(&out),
        stderr(&out)
    );
    stdout(&out)
}

/// Polls `check` every 50 ms until it is Some, or panics after [`DEADLINE`].
pub(crate) async fn eventually<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + DEADLINE;
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The row of `alias` in `calyx mcp list --json` once `wanted` accepts it.
pub(crate) async fn row_when(env: &Env, alias: &str, wanted: impl Fn(&Value) -> bool) -> Value {
    eventually(&format!("a row of `{alias}` as wanted"), || async {
        let out = calyx(env, &["mcp", "list", "--json"]).await;
        let rows: Value = serde_json::from_slice(&out.stdout).ok()?;
        let row = rows
            .as_array()?
            .iter()
            .find(|r| r["alias"] == alias)?
            .clone();
        wanted(&row).then_some(row)
    })
    .await
}

/// A world with a running server whose secrets go to the file (no D-Bus in tests).
pub(crate) fn world(config: &str) -> Env {
    let env = Env::new();
    env.write_config(&format!("[mcp]\nsecret_store = \"file\"\n{config}"));
    env.ok(&["new", "-d", "-s", "hosted"]);
    env
}

pub(crate) async fn connect(env: &Env, listener: Listener) -> RunningService<RoleClient, Listener> {
    connect_allowing(env, listener, None).await
}

/// [`connect`] with rmcp's 16 MiB message limits raised to `max_message` bytes (for results
/// as large as calyx passes on), when given.
pub(crate) async fn connect_allowing(
    env: &Env,
    listener: Listener,
    max_message: Option<usize>,
) -> RunningService<RoleClient, Listener> {
    let ep = common::mcp::endpoint(env);
    let surface = env.first_surface();
    let mut headers = HashMap::new();
    headers.insert(
        "x-calyx-surface-id".parse().expect("name"),
        surface.parse().expect("value"),
    );
    let config = StreamableHttpClientTransportConfig::with_uri(format!(
        "http://127.0.0.1:{}/mcp-hosted",
        ep.port
    ))
    .auth_header(ep.token)
    .custom_headers(headers);
    let config = match max_message {
        Some(bytes) => config
            .max_sse_event_size(bytes)
            .max_json_response_size(bytes),
        None => config,
    };
    // reqwest is built without a default TLS provider (calyx picks ring); any client needs it.
    calyx::hosted::connection::http_client::install_tls_provider();
    listener
        .serve(StreamableHttpClientTransport::from_config(config))
        .await
        .expect("client connects to /mcp-hosted")
}

/// The servers' tools an agent lists (names).
pub(crate) async fn published(client: &RunningService<RoleClient, Listener>) -> Vec<String> {
    client
        .peer()
        .list_all_tools()
        .await
        .expect("tools/list")
        .into_iter()
        .map(|t| t.name.to_string())
        // A pane-bound session also has the pane's own `app_context` (e2e_mcp_app_tools).
        .filter(|name| name != "app_context")
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn added_servers_are_published_to_agents_and_follow_every_change() {
    let Some(index) = server_everything() else {
        return;
    };
    let index = index.display().to_string();
    let env = world("");
    let listener = Listener::default();
    let heard = listener.list_changed.clone();
    let client = connect(&env, listener).await;
    assert!(published(&client).await.is_empty(), "nothing hosted yet");
    let info = client.peer_info().expect("initialize result");
    assert!(info.capabilities.tools.is_some());
    assert_eq!(
        info.server_info.as_ref().map(|s| s.name.as_str()),
        Some("calyx-mcp")
    );

    calyx_ok(
        &env,
        &[
            "mcp",
            "add",
            "ev",
            "--name",
            "Everything",
            "--env",
            "CALYX_TEST_GREETING=hello-from-add",
            "--",
            "node",
            &index,
            "stdio",
        ],
    )
    .await;
    let row = row_when(&env, "ev", |r| r["state"] == "ready").await;
    let count = row["tools"].as_u64().expect("a tool count");
    assert!(count > 5, "{row}");
    assert_eq!(row["name"], "Everything");
    assert_eq!(row["transport"], "stdio");

    // The agent hears the change and sees the tools, renamed.
    eventually("tools/list_changed after add", || async {
        (heard.load(Ordering::SeqCst) >= 1).then_some(())
    })
    .await;
    let names = published(&client).await;
    assert_eq!(names.len() as u64, count, "{names:?}");
    assert!(names.iter().any(|n| n == "ev-echo"), "{names:?}");
    assert!(!names.iter().any(|n| n.contains("simulate-research-query")));
    let mut call = CallToolRequestParams::new("ev-echo");
    call.arguments = json!({"message": "through calyx"}).as_object().cloned();
    let answer = client.peer().call_tool(call).await.expect("ev-echo");
    assert!(
        serde_json::to_string(&answer)
            .unwrap_or_default()
            .contains("through calyx"),
        "{answer:?}"
    );
    // The variable given with --env reached the server from the secret store.
    let env_call = CallToolRequestParams::new("ev-get-env");
    let answer = client.peer().call_tool(env_call).await.expect("ev-get-env");
    assert!(
        serde_json::to_string(&answer)
            .unwrap_or_default()
            .contains("hello-from-add"),
        "{answer:?}"
    );
    let secrets = std::fs::read_to_string(env.path().join("state/calyx/mcp-secrets.json"))
        .unwrap_or_default();
    assert!(secrets.contains("hello-from-add"));
    let list_file =
        std::fs::read_to_string(env.path().join("config/calyx/mcp-servers.json")).expect("list");
    assert!(
        list_file.contains("CALYX_TEST_GREETING") && !list_file.contains("hello-from-add"),
        "names only in the list: {list_file}"
    );

    // Details: published next to original names, the excluded tool with its reason.
    let details: Value =
        serde_json::from_str(&calyx_ok(&env, &["mcp", "details", "ev", "--json"]).await)
            .expect("details json");
    let excluded = details["excluded"].as_array().cloned().unwrap_or_default();
    assert!(
        excluded
            .iter()
            .any(|e| e["name"] == "simulate-research-query"
                && e["reason"]
                    .as_str()
                    .is_some_and(|r| r.contains("task support"))),
        "{details}"
    );
    assert!(details["protocol_version"]
        .as_str()
        .is_some_and(|v| !v.is_empty()));
    assert!(details["server_name"].as_str().is_some());
    let text = calyx_ok(&env, &["mcp", "details", "ev"]).await;
    assert!(text.contains("ev-echo  <- echo"), "{text}");
    assert!(text.contains("simulate-research-query  excluded: needs task support"));

    // Disable: the tools go and the agent hears it; enable: they come back.
    let before = heard.load(Ordering::SeqCst);
    calyx_ok(&env, &["mcp", "disable", "ev"]).await;
    eventually("tools/list_changed after disable", || async {
        (heard.load(Ordering::SeqCst) > before).then_some(())
    })
    .await;
    assert!(published(&client).await.is_empty());
    row_when(&env, "ev", |r| {
        r["state"] == "disabled" && r["enabled"] == false
    })
    .await;
    calyx_ok(&env, &["mcp", "enable", "ev"]).await;
    row_when(&env, "ev", |r| r["state"] == "ready").await;
    let names = published(&client).await;
    assert!(names.iter().any(|n| n == "ev-echo"), "{names:?}");

    // Edit: a changed server restarts with the new settings.
    calyx_ok(&env, &["mcp", "edit", "ev", "--name", "Everything 2"]).await;
    row_when(&env, "ev", |r| {
        r["name"] == "Everything 2" && r["state"] == "ready"
    })
    .await;

    // Remove: gone from the list, its secret deleted, the tools withdrawn.
    calyx_ok(&env, &["mcp", "remove", "ev"]).await;
    let rows: Value =
        serde_json::from_str(&calyx_ok(&env, &["mcp", "list", "--json"]).await).expect("rows");
    assert_eq!(rows, json!([]));
    let secrets = std::fs::read_to_string(env.path().join("state/calyx/mcp-secrets.json"))
        .unwrap_or_default();
    assert!(!secrets.contains("hello-from-add"), "{secrets}");
    eventually("tools withdrawn after remove", || async {
        published(&client).await.is_empty().then_some(())
    })
    .await;
    let _ = client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_exits_2_with_its_sentence() {
    let env = world("");
    let cases: [(&[&str], &str); 6] = [
        (
            &["mcp", "add", "My-Server", "--", "node", "x.js"],
            "invalid alias `My-Server`",
        ),
        (&["mcp", "add", "ev"], "needs a command after `--`"),
        (
            &["mcp", "add", "web", "--url", "ftp://host/mcp"],
            "is not an http:// or https:// URL",
        ),
        (
            &["mcp", "add", "ev", "--env", "1BAD=x", "--", "node"],
            "environment variable name `1BAD`",
        ),
        (
            &["mcp", "enable", "nosuch"],
            "no hosted server has the alias `nosuch`",
        ),
        (
            &["mcp", "add", "ev", "--env", "TOKEN", "--", "node"],
            "stdin is not a terminal",
        ),
    ];
    for (args, sentence) in cases {
        let out = calyx(&env, args).await;
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(sentence),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    // A taken alias is refused by the server with its sentence.
    calyx_ok(
        &env,
        &["mcp", "add", "ev", "--", "calyx-no-such-test-server"],
    )
    .await;
    let out = calyx(&env, &["mcp", "add", "ev", "--", "node"]).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("the alias `ev` is taken"),
        "{}",
        stderr(&out)
    );
    // A missing command fails at once with the PATH sentence.
    let row = row_when(&env, "ev", |r| r["state"] == "failed").await;
    assert!(
        row["status"]
            .as_str()
            .is_some_and(|s| s.contains("was not found in PATH")),
        "{row}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_route_follows_host_servers_and_reload_applies_a_hand_edit() {
    let env = world("host_servers = false\n");
    let ep = common::mcp::endpoint(&env);
    let (_, head) = common::mcp::open(&ep, "GET", "/mcp-hosted", &[]);
    assert_eq!(common::mcp::status(&head), 404, "{head}");
    // /mcp is unaffected.
    let (_, head) = common::mcp::open(&ep, "GET", "/health", &[]);
    assert_eq!(common::mcp::status(&head), 200, "{head}");

    // A hand-edited list, and hosting switched on: reload-config applies both.
    let list = json!({"version": 1, "servers": [{
        "alias": "gone", "name": "Gone", "enabled": true, "transport": "stdio",
        "command": "calyx-no-such-test-server", "args": [], "cwd": null, "env": []}]});
    std::fs::write(
        env.path().join("config/calyx/mcp-servers.json"),
        list.to_string(),
    )
    .expect("write list");
    let rows: Value =
        serde_json::from_str(&calyx_ok(&env, &["mcp", "list", "--json"]).await).expect("rows");
    assert!(
        rows[0]["status"]
            .as_str()
            .is_some_and(|s| s.contains("host_servers = false")),
        "{rows}"
    );
    env.write_config("[mcp]\nsecret_store = \"file\"\nhost_servers = true\n");
    calyx_ok(&env, &["reload-config"]).await;
    row_when(&env, "gone", |r| r["state"] == "failed").await;
    let client = connect(&env, Listener::default()).await;
    assert!(published(&client).await.is_empty());
    let _ = client.cancel().await;

    // The route keeps /mcp's guard: a foreign browser Origin is refused, no token is 401.
    let (_, head) = common::mcp::open(
        &ep,
        "GET",
        "/mcp-hosted",
        &[("Origin", "http://evil.example")],
    );
    assert_eq!(common::mcp::status(&head), 403, "{head}");
    let bad = common::mcp::Endpoint {
        port: ep.port,
        token: "wrong".into(),
    };
    let (_, head) = common::mcp::open(&bad, "GET", "/mcp-hosted", &[]);
    assert_eq!(common::mcp::status(&head), 401, "{head}");

    // Removed by hand and reloaded: the row goes.
    std::fs::write(
        env.path().join("config/calyx/mcp-servers.json"),
        json!({"version": 1, "servers": []}).to_string(),
    )
    .expect("write list");
    calyx_ok(&env, &["reload-config"]).await;
    let rows: Value =
        serde_json::from_str(&calyx_ok(&env, &["mcp", "list", "--json"]).await).expect("rows");
    assert_eq!(rows, json!([]));
}

#[test]
fn list_reads_the_file_when_no_server_runs() {
    let env = Env::new();
    let list = json!({"version": 1, "servers": [{
        "alias": "ev", "name": "Everything", "enabled": true, "transport": "stdio",
        "command": "node", "args": ["index.js", "stdio"], "cwd": null, "env": []}]});
    std::fs::write(
        env.path().join("config/calyx/mcp-servers.json"),
        list.to_string(),
    )
    .expect("write list");
    let out = env.run(&["mcp", "list"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no calyx server runs"),
        "{}",
        stderr(&out)
    );
    let text = stdout(&out);
    assert!(
        text.contains("ev") && text.contains("node index.js stdio"),
        "{text}"
    );
    assert!(
        !env.path().join("run/calyx/server.sock").exists(),
        "list starts no server"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn import_previews_renames_and_imports_an_unresolved_server_disabled() {
    let env = world("");
    calyx_ok(
        &env,
        &["mcp", "add", "github", "--", "calyx-no-such-test-server"],
    )
    .await;
    let file = env.path().join("claude.json");
    std::fs::write(
        &file,
        json!({"mcpServers": {
            "github": {
                "command": "calyx-no-such-test-server",
                "args": ["stdio"],
                "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"},
                "alwaysAllow": ["x"]
            },
            "files": {
                "command": "calyx-no-such-test-server",
                "env": {"WHERE": "${HOME}/imported"}
            }
        }})
        .to_string(),
    )
    .expect("write import file");
    let file = file.display().to_string();

    let preview = calyx_ok(&env, &["mcp", "import", &file, "--dry-run"]).await;
    assert!(preview.contains("github2"), "{preview}");
    assert!(preview.contains("GITHUB_TOKEN"), "{preview}");
    assert!(preview.contains("alwaysAllow"), "{preview}");
    // Without a terminal and without --yes nothing is guessed.
    let refused = calyx(&env, &["mcp", "import", &file]).await;
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("--yes"));

    calyx_ok(&env, &["mcp", "import", &file, "--yes"]).await;
    let row = row_when(&env, "github2", |r| r["state"] == "disabled").await;
    assert_eq!(row["enabled"], false);
    assert!(
        row["note"]
            .as_str()
            .is_some_and(|n| n.contains("GITHUB_TOKEN")),
        "{row}"
    );
    // A resolved variable's value went to the secret store, not to the list.
    let secrets = std::fs::read_to_string(env.path().join("state/calyx/mcp-secrets.json"))
        .unwrap_or_default();
    let home = env.path().join("home/imported").display().to_string();
    assert!(
        secrets.contains("files/env/WHERE") && secrets.contains(&home),
        "{secrets}"
    );
    let list = std::fs::read_to_string(env.path().join("config/calyx/mcp-servers.json"))
        .unwrap_or_default();
    assert!(!list.contains(&home), "{list}");
    row_when(&env, "files", |r| r["state"] == "failed").await;
    // Parse errors name line and column, exit 2.
    std::fs::write(env.path().join("bad.json"), "{\n  \"mcpServers\": {,}\n}").expect("write");
    let bad = env.path().join("bad.json").display().to_string();
    let out = calyx(&env, &["mcp", "import", &bad, "--yes"]).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("line 2, column"), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_route_speaks_the_same_protocol_versions_as_mcp() {
    let env = world("");
    let ep = common::mcp::endpoint(&env);
    let init = |version: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"{version}","capabilities":{{}},"clientInfo":{{"name":"e2e","version":"0"}}}}}}"#
        )
    };
    for (asked, answered) in [
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-03-26"),
        ("2025-11-25", "2025-11-25"),
        ("1999-01-01", "2025-11-25"),
    ] {
        let (_, hosted) = common::mcp::post_to(&ep, "/mcp-hosted", &[], &init(asked));
        let (_, own) = common::mcp::post(&ep, &[], &init(asked));
        assert_eq!(hosted["result"]["protocolVersion"], answered, "{hosted}");
        assert_eq!(
            hosted["result"]["protocolVersion"], own["result"]["protocolVersion"],
            "{own}"
        );
        assert_eq!(hosted["result"]["serverInfo"]["name"], "calyx-mcp");
        assert_eq!(
            hosted["result"]["capabilities"]["tools"]["listChanged"],
            true
        );
    }
    // The stateless era: discovery lists the same versions on both routes.
    let discover = r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"e2e","version":"0"}}}}"#;
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "server/discover"),
    ];
    let (_, hosted) = common::mcp::post_to(&ep, "/mcp-hosted", &headers, discover);
    let (_, own) = common::mcp::post(&ep, &headers, discover);
    let versions = &hosted["result"]["supportedVersions"];
    assert!(versions.to_string().contains("2026-07-28"), "{hosted}");
    assert_eq!(versions, &own["result"]["supportedVersions"]);
}

/// The pids of processes whose command line mentions `needle` and whose environment names this
/// world (the server passes its own environment to the servers it starts).
pub(crate) fn world_processes(env: &Env, needle: &str) -> Vec<u32> {
    let world = env.path().display().to_string();
    std::fs::read_dir("/proc")
        .map(|dir| {
            dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
                .filter(|pid| {
                    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
                    String::from_utf8_lossy(&cmdline).contains(needle)
                        && String::from_utf8_lossy(&environ).contains(&world)
                })
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_is_asked_without_echo_and_servers_end_with_calyx() {
    let Some(index) = server_everything() else {
        return;
    };
    let index = index.display().to_string();
    let env = world("");
    // On a terminal, `--env KEY` asks for the value and does not show what is typed.
    let mut terminal = common::Client::spawn_with(
        &env,
        &[
            "mcp",
            "add",
            "ev",
            "--env",
            "CALYX_TEST_GREETING",
            "--",
            "node",
            &index,
            "stdio",
        ],
        24,
        120,
        &env.vars(),
    );
    terminal.wait_for("value of CALYX_TEST_GREETING (not shown): ");
    terminal.send("typed-unseen\r");
    terminal.wait_for("added `ev`");
    assert!(
        !terminal.screen().contains("typed-unseen"),
        "{}",
        terminal.screen()
    );
    let secrets = std::fs::read_to_string(env.path().join("state/calyx/mcp-secrets.json"))
        .unwrap_or_default();
    assert!(secrets.contains("typed-unseen"), "the value was stored");
    row_when(&env, "ev", |r| r["state"] == "ready").await;
    let running = world_processes(&env, &index);
    assert!(!running.is_empty(), "server-everything runs");

    // The hosted servers end with the calyx server.
    calyx_ok(&env, &["kill-server"]).await;
    eventually("server-everything gone with calyx", || async {
        world_processes(&env, &index).is_empty().then_some(())
    })
    .await;
}

#[test]
fn an_unusable_keyring_setting_is_explained_and_the_list_still_shows() {
    let env = Env::new();
    env.write_config("[mcp]\nsecret_store = \"keyring\"\n");
    let list = json!({"version": 1, "servers": [{
        "alias": "ev", "name": "Everything", "enabled": true, "transport": "stdio",
        "command": "node", "args": [], "cwd": null, "env": []}]});
    std::fs::write(
        env.path().join("config/calyx/mcp-servers.json"),
        list.to_string(),
    )
    .expect("write list");
    // No session bus: the Secret Service cannot be reached.
    let no_bus = format!("unix:path={}", env.path().join("no-bus").display());
    let run = |args: &[&str]| {
        std::process::Command::new(calyx_bin())
            .args(args)
            .env_clear()
            .envs(env.vars())
            .env("DBUS_SESSION_BUS_ADDRESS", &no_bus)
            .output()
            .expect("run calyx")
    };
    let started = run(&["new", "-d", "-s", "keyring"]);
    assert!(started.status.success(), "{}", stderr(&started));
    let out = run(&["mcp", "add", "ev2", "--", "node"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("the Secret Service is unavailable"),
        "{}",
        stderr(&out)
    );
    let out = run(&["mcp", "list", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let rows: Value = serde_json::from_slice(&out.stdout).expect("rows");
    assert_eq!(rows[0]["alias"], "ev");
    assert!(
        rows[0]["status"]
            .as_str()
            .is_some_and(|s| s.contains("secret_store = \"file\"")),
        "{rows}"
    );
}
