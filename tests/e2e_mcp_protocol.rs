//! End to end with rmcp's own client against a real calyx server: the protocol features a long
//! tool call relies on. Cancelling a `pane_run` withdraws its approval request (nothing is
//! typed); a call carrying a progress token hears progress while it waits for the human; a
//! `pane_run` whose timeout passes answers "timeout", and a late approve can no longer type.

use crate::common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{calyx_bin, Env};
use rmcp::model::{
    CallToolRequestParams, ClientRequest, JsonObject, ProgressNotificationParam, ProgressToken,
    RequestMetaObject, ServerResult,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{json, Value};

/// A client that records the progress notifications it hears.
#[derive(Clone, Default)]
struct Recorder {
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
    list_changed: Arc<std::sync::atomic::AtomicUsize>,
}

impl ClientHandler for Recorder {
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

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Runs `calyx ARGS` in the test's environment on a blocking thread (the client's runtime must
/// keep running meanwhile).
async fn calyx(vars: Vec<(String, String)>, args: &[&str]) -> std::process::Output {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
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

/// `calyx ARGS`, its output parsed as JSON (Null when it is not).
async fn calyx_json(vars: Vec<(String, String)>, args: &[&str]) -> Value {
    serde_json::from_slice(&calyx(vars, args).await.stdout).unwrap_or(Value::Null)
}

/// Whether `calyx ARGS` exits 0.
async fn calyx_succeeds(vars: Vec<(String, String)>, args: &[&str]) -> bool {
    calyx(vars, args).await.status.success()
}

async fn pending(vars: &[(String, String)]) -> Vec<Value> {
    let v = calyx_json(vars.to_vec(), &["approvals", "--json", "--pending"]).await;
    v["pending"].as_array().cloned().unwrap_or_default()
}

/// Polls `check` every 20 ms until it is Some, or panics after 15 s.
async fn eventually<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

struct Live {
    env: Env,
    vars: Vec<(String, String)>,
    pane: String,
    surface: String,
}

fn live() -> Live {
    let env = Env::new();
    env.ok(&["new", "-d", "-s", "proto"]);
    let panes = env.panes();
    let pane = panes[0]["id"].as_str().unwrap_or_default().to_string();
    let surface = panes[0]["surface_id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let vars = env.vars();
    Live {
        env,
        vars,
        pane,
        surface,
    }
}

async fn connect(live: &Live, recorder: Recorder) -> RunningService<RoleClient, Recorder> {
    let ep = common::mcp::endpoint(&live.env);
    let mut headers = HashMap::new();
    headers.insert(
        "x-calyx-surface-id".parse().expect("name"),
        live.surface.parse().expect("value"),
    );
    let config =
        StreamableHttpClientTransportConfig::with_uri(format!("http://127.0.0.1:{}/mcp", ep.port))
            .auth_header(ep.token)
            .custom_headers(headers);
    // reqwest in this process has TLS without a built-in provider (calyx uses `ring`).
    calyx::hosted::connection::http_client::install_tls_provider();
    recorder
        .serve(StreamableHttpClientTransport::from_config(config))
        .await
        .expect("client connects")
}

fn call_request(name: &str, args: Value) -> ClientRequest {
    let args: JsonObject = serde_json::from_value(args).expect("object");
    ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(
        CallToolRequestParams::new(name.to_owned()).with_arguments(args),
    ))
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

#[test]
fn cancelling_a_pane_run_withdraws_its_approval_and_types_nothing() {
    let live = live();
    runtime().block_on(async {
        let client = connect(&live, Recorder::default()).await;
        let handle = client
            .send_cancellable_request(
                call_request(
                    "pane_run",
                    json!({"pane": live.pane, "command": "echo ran-$((40+2))"}),
                ),
                PeerRequestOptions::no_options(),
            )
            .await
            .expect("sent");
        let id = eventually("the approval request", || async {
            pending(&live.vars).await.first().map(|p| p["id"].clone())
        })
        .await;
        handle
            .cancel(Some("the user changed their mind".into()))
            .await
            .expect("cancel sent");
        eventually("the request to be withdrawn", || async {
            pending(&live.vars).await.is_empty().then_some(())
        })
        .await;
        // Too late to approve: it is gone, and the pane never ran the command.
        let id = id.to_string();
        assert!(
            !calyx_succeeds(live.vars.clone(), &["approve", &id]).await,
            "approve of a withdrawn request must fail"
        );
        let recent = calyx_json(live.vars.clone(), &["approvals", "--json"]).await;
        assert!(
            recent.to_string().contains("withdrawn"),
            "the record says withdrawn: {recent}"
        );
        let _ = client.cancel().await;
    });
    let screen = live.env.ok(&["capture", "-t", &live.pane]);
    assert!(!screen.contains("ran-42"), "{screen}");
}

#[test]
fn a_waiting_call_with_a_progress_token_hears_progress_until_answered() {
    let live = live();
    let recorder = Recorder::default();
    let heard = recorder.progress.clone();
    runtime().block_on(async {
        let client = connect(&live, recorder).await;
        let token = ProgressToken(rmcp::model::NumberOrString::String("run-1".into()));
        let mut options = PeerRequestOptions::no_options();
        options.meta = Some(RequestMetaObject::with_progress_token(token));
        let handle = client
            .send_cancellable_request(
                call_request(
                    "pane_run",
                    json!({"pane": live.pane, "command": "echo progress-$((6*7))", "timeout_ms": 60000}),
                ),
                options,
            )
            .await
            .expect("sent");
        let id = eventually("the approval request", || async {
            pending(&live.vars).await.first().map(|p| p["id"].to_string())
        })
        .await;
        eventually("two progress notifications", || async {
            (heard.lock().unwrap_or_else(|e| e.into_inner()).len() >= 2).then_some(())
        })
        .await;
        {
            let heard = heard.lock().unwrap_or_else(|e| e.into_inner());
            // rmcp's client puts its own token on the request: one token throughout.
            assert!(
                heard.iter().all(|p| p.progress_token == heard[0].progress_token),
                "{heard:?}"
            );
            assert!(heard[1].progress > heard[0].progress, "{heard:?}");
            assert_eq!(heard[0].total, Some(60.0));
            assert!(heard[0]
                .message
                .as_deref()
                .is_some_and(|m| m.contains("pane_run")));
        }
        calyx_json(live.vars.clone(), &["approve", &id]).await;
        let answer = handle.await_response().await.expect("answered");
        let ServerResult::CallToolResult(result) = answer else {
            panic!("not a tool result: {answer:?}");
        };
        let out = serde_json::to_value(&result.structured_content).expect("json");
        assert_eq!(out["status"], "sent", "{out}");
        let _ = client.cancel().await;
    });
    live.env.wait_capture(&live.pane, "progress-42");
}

#[test]
fn a_pane_run_that_times_out_can_no_longer_be_approved_into_typing() {
    let live = live();
    runtime().block_on(async {
        let client = connect(&live, Recorder::default()).await;
        let handle = client
            .send_cancellable_request(
                call_request(
                    "pane_run",
                    json!({"pane": live.pane, "command": "echo late-$((6*7))", "timeout_ms": 1500}),
                ),
                PeerRequestOptions::no_options(),
            )
            .await
            .expect("sent");
        let id = eventually("the approval request", || async {
            pending(&live.vars)
                .await
                .first()
                .map(|p| p["id"].to_string())
        })
        .await;
        let answer = handle.await_response().await.expect("answered");
        let ServerResult::CallToolResult(result) = answer else {
            panic!("not a tool result: {answer:?}");
        };
        let out = serde_json::to_value(&result.structured_content).expect("json");
        assert_eq!(out["status"], "timeout", "{out}");
        assert_ne!(result.is_error, Some(true), "a timeout is a normal answer");
        // The queue itself ended the request at the timeout: nothing left to approve.
        assert!(pending(&live.vars).await.is_empty());
        assert!(!calyx_succeeds(live.vars.clone(), &["approve", &id]).await);
        let _ = client.cancel().await;
    });
    // Give a wrongly typed command the time an echo takes, checked through a marker after it.
    live.env.ok(&[
        "send-keys",
        "-t",
        &live.pane,
        "echo after-$((6*7))",
        "Enter",
    ]);
    let screen = live.env.wait_capture(&live.pane, "after-42");
    assert!(!screen.contains("late-42"), "{screen}");
}

/// The names `tools/list` returns now.
async fn tool_names(client: &RunningService<RoleClient, Recorder>) -> Vec<String> {
    client
        .list_all_tools()
        .await
        .expect("tools/list")
        .into_iter()
        .map(|t| t.name.to_string())
        .collect()
}

#[test]
fn turning_tools_off_in_the_config_tells_every_open_session() {
    let live = live();
    let recorder = Recorder::default();
    let changed = recorder.list_changed.clone();
    let count = move || changed.load(std::sync::atomic::Ordering::SeqCst);
    runtime().block_on(async {
        let client = connect(&live, recorder).await;
        assert!(tool_names(&client).await.contains(&"pane_run".to_string()));
        // An unchanged list tells nobody.
        live.env.write_config("mouse = true\n");
        let vars = live.vars.clone();
        let said = calyx_text(vars.clone(), &["reload-config"]).await;
        assert!(!said.contains("MCP tools changed"), "{said}");
        live.env
            .write_config("[mcp]\ndisabled_tools = [\"pane_run\", \"pane_send_keys\"]\n");
        let said = calyx_text(vars.clone(), &["reload-config"]).await;
        assert!(said.contains("MCP tools changed"), "{said}");
        eventually("tools/list_changed", || async {
            (count() >= 1).then_some(())
        })
        .await;
        let names = tool_names(&client).await;
        assert!(!names.contains(&"pane_run".to_string()), "{names:?}");
        assert!(!names.contains(&"pane_send_keys".to_string()), "{names:?}");
        assert!(names.contains(&"pane_list".to_string()), "{names:?}");
        let refused = client
            .call_tool(
                CallToolRequestParams::new("pane_run").with_arguments(
                    serde_json::from_value(json!({"pane": live.pane, "command": "true"}))
                        .expect("object"),
                ),
            )
            .await;
        let error = format!("{refused:?}");
        assert!(error.contains("turned off"), "{error}");
        assert!(pending(&vars).await.is_empty(), "nothing was queued");
        // A broken file changes nothing.
        live.env.write_config("[mcp\n");
        let broken = calyx_succeeds(vars.clone(), &["reload-config"]).await;
        assert!(!broken, "a broken config is reported as a failure");
        assert!(!tool_names(&client).await.contains(&"pane_run".to_string()));
        // Turned on again: told again.
        live.env.write_config("");
        calyx_text(vars, &["reload-config"]).await;
        eventually("a second tools/list_changed", || async {
            (count() >= 2).then_some(())
        })
        .await;
        assert!(tool_names(&client).await.contains(&"pane_run".to_string()));
        let _ = client.cancel().await;
    });
}

/// `calyx ARGS`: stdout and stderr together.
async fn calyx_text(vars: Vec<(String, String)>, args: &[&str]) -> String {
    let out = calyx(vars, args).await;
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}
