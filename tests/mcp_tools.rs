//! `/mcp` end to end: a real endpoint on a kernel-assigned loopback port with the
//! [`FakeBackend`], driven by rmcp's own Streamable HTTP client.

use crate::support_endpoint as common;

use std::collections::HashMap;
use std::sync::Arc;

use calyx::mcp::{McpOptions, PaneRef};
use common::fake_backend::{Acted, FakeBackend};
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};

struct Mcp {
    server: common::TestServer,
    backend: Arc<FakeBackend>,
    options: McpOptions,
}

async fn start() -> Mcp {
    let backend = Arc::new(FakeBackend::new());
    let options = McpOptions::new(backend.clone());
    let mcp = options.clone();
    let state = tempfile::tempdir().expect("tempdir");
    let server = common::start_server_in(state, move |o| calyx::http::EndpointOptions {
        mcp: Some(mcp),
        ..o
    })
    .await;
    Mcp {
        server,
        backend,
        options,
    }
}

impl Mcp {
    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.server.handle.port())
    }

    /// A connected client; `surface` adds the identity headers of that fake pane.
    async fn client(
        &self,
        surface: Option<&str>,
        kind: Option<&str>,
    ) -> RunningService<RoleClient, ()> {
        let mut headers = HashMap::new();
        if let Some(s) = surface {
            headers.insert("x-calyx-surface-id".parse().unwrap(), s.parse().unwrap());
        }
        if let Some(k) = kind {
            headers.insert("x-calyx-agent-kind".parse().unwrap(), k.parse().unwrap());
        }
        let config = StreamableHttpClientTransportConfig::with_uri(self.url())
            .auth_header(self.server.handle.token().to_owned())
            .custom_headers(headers);
        // reqwest in this process has TLS without a built-in provider (calyx uses `ring`).
        calyx::hosted::connection::http_client::install_tls_provider();
        ().serve(StreamableHttpClientTransport::from_config(config))
            .await
            .expect("client connects")
    }
}

async fn call(client: &RunningService<RoleClient, ()>, name: &str, args: Value) -> CallToolResult {
    let args: JsonObject = serde_json::from_value(args).expect("object");
    client
        .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

fn ok(result: &CallToolResult) -> Value {
    assert_eq!(result.is_error, Some(false), "{}", text(result));
    assert!(!text(result).is_empty());
    result
        .structured_content
        .clone()
        .expect("structuredContent")
}

fn err(result: &CallToolResult) -> String {
    assert_eq!(result.is_error, Some(true), "{result:?}");
    text(result)
}

#[tokio::test]
async fn initialize_binds_the_pane_and_says_who_it_is() {
    let mcp = start().await;
    let client = mcp.client(Some("surface-2"), Some("codex")).await;
    let info = client.peer_info().expect("server info");
    assert_eq!(info.protocol_version.to_string(), "2025-11-25");
    assert_eq!(
        info.server_info.as_ref().map(|s| s.name.as_str()),
        Some("calyx")
    );
    let tools = info.capabilities.tools.as_ref().expect("tools capability");
    assert_eq!(tools.list_changed, Some(true));
    let instructions = info.instructions.as_deref().unwrap_or_default();
    assert!(instructions.contains("pane %2"), "{instructions}");
    assert!(mcp.backend.acted().contains(&Acted::Seen {
        pane: "%2".into(),
        kind: calyx_integrations::AgentKind::Codex
    }));
    client.cancel().await.ok();

    let anonymous = mcp.client(None, Some("codex")).await;
    let info = anonymous.peer_info().expect("server info");
    assert!(info
        .instructions
        .as_deref()
        .unwrap_or_default()
        .contains("not inside a calyx pane"));
    // No identity: no agent row refresh.
    assert_eq!(mcp.backend.acted().len(), 1);
}

#[tokio::test]
async fn every_tool_is_listed_with_input_and_output_schemas() {
    let mcp = start().await;
    let client = mcp.client(None, None).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "pane_list",
            "pane_read",
            "agent_list",
            "agent_wait",
            "pane_split",
            "window_create",
            "pane_run",
            "pane_send_keys",
            "terminal_list_commands",
            "terminal_read_output",
            "terminal_await_command",
            "register_peer",
            "list_peers",
            "send_message",
            "broadcast",
            "receive_messages",
            "get_peer_status"
        ]
    );
    for tool in &tools {
        // Only JSON Schema formats: schemars' `uint16` & co make Ajv-based clients warn.
        let schemas = format!(
            "{} {}",
            serde_json::to_string(&tool.input_schema).unwrap_or_default(),
            serde_json::to_string(&tool.output_schema).unwrap_or_default()
        );
        assert!(
            !schemas.contains("\"format\":\"uint") && !schemas.contains("\"format\":\"int"),
            "{}: {schemas}",
            tool.name
        );
        assert_eq!(
            tool.input_schema.get("type"),
            Some(&json!("object")),
            "{}",
            tool.name
        );
        let output = tool.output_schema.as_ref().expect("outputSchema");
        assert_eq!(output.get("type"), Some(&json!("object")), "{}", tool.name);
        assert!(tool.description.is_some() && tool.annotations.is_some());
    }
    let run = tools.iter().find(|t| t.name == "pane_run").unwrap();
    let props = run.input_schema.get("properties").unwrap();
    assert!(props.get("await").is_some(), "{props}");
    assert_eq!(
        run.input_schema.get("required"),
        Some(&json!(["pane", "command"]))
    );
    let list = tools
        .iter()
        .find(|t| t.name == "terminal_list_commands")
        .unwrap();
    let schema = serde_json::to_string(&list.input_schema).unwrap();
    assert!(
        schema.contains("\"running\"") && schema.contains("\"maximum\":200"),
        "{schema}"
    );
    assert_eq!(list.input_schema.get("required"), Some(&json!(["pane"])));
    let awaiting = tools
        .iter()
        .find(|t| t.name == "terminal_await_command")
        .unwrap();
    let schema = serde_json::to_string(&awaiting.input_schema).unwrap();
    assert!(schema.contains("\"maximum\":55000"), "{schema}");
    let output = serde_json::to_string(&awaiting.output_schema).unwrap();
    assert!(output.contains("pane_closed"), "{output}");
    let wait = tools.iter().find(|t| t.name == "agent_wait").unwrap();
    let schema = serde_json::to_string(&wait.input_schema).unwrap();
    assert!(
        schema.contains("\"blocked\"") && schema.contains("minItems"),
        "{schema}"
    );
}

#[tokio::test]
async fn panes_and_agents() {
    let mcp = start().await;
    let client = mcp.client(Some("surface-1"), None).await;
    let panes = ok(&call(&client, "pane_list", json!({})).await);
    assert_eq!(panes["panes"].as_array().unwrap().len(), 3);
    assert_eq!(panes["panes"][0]["agent_kind"], "claude-code");

    let read = ok(&call(&client, "pane_read", json!({"pane": "%2", "lines": 2})).await);
    assert_eq!(read["text"], "%2 line 4\n%2 line 5");
    assert_eq!(read["truncated"], false);
    let big = ok(&call(
        &client,
        "pane_read",
        json!({"pane": "%2", "scrollback": true}),
    )
    .await);
    assert_eq!(big["truncated"], true);
    assert!(big["text"].as_str().unwrap().len() <= 64 * 1024);
    let missing = err(&call(&client, "pane_read", json!({"pane": "%9"})).await);
    assert!(missing.contains("pane_list"), "{missing}");
    let bad = err(&call(&client, "pane_read", json!({"pane": 3})).await);
    assert!(bad.contains("invalid arguments for pane_read"), "{bad}");
    let extra = err(&call(&client, "pane_read", json!({"pane": "%1", "bogus": 1})).await);
    assert!(extra.contains("bogus"), "{extra}");
    for lines in [0, 10_001] {
        let out_of_range =
            err(&call(&client, "pane_read", json!({"pane": "%2", "lines": lines})).await);
        assert!(
            out_of_range.contains("`lines` must be 1 to 10000"),
            "{out_of_range}"
        );
    }

    let agents = ok(&call(&client, "agent_list", json!({})).await);
    assert_eq!(agents["agents"][0]["subagents"][0]["name"], "explore");

    let reached = ok(&call(
        &client,
        "agent_wait",
        json!({"pane": "%2", "until": ["idle", "done"]}),
    )
    .await);
    assert_eq!(reached["state"], "idle");
    assert_eq!(reached["timed_out"], false);
    let timeout = ok(&call(
        &client,
        "agent_wait",
        json!({"pane": "%1", "until": ["idle"], "timeout_ms": 50}),
    )
    .await);
    assert_eq!(timeout["state"], "timeout");
    assert_eq!(timeout["timed_out"], true);
    assert_eq!(
        timeout["agent_state"], "working",
        "where the agent still is"
    );
    assert_eq!(reached["agent_state"], "idle");
    let empty = err(&call(&client, "agent_wait", json!({"pane": "%1", "until": []})).await);
    assert!(empty.contains("until"), "{empty}");
    let wrong = err(&call(
        &client,
        "agent_wait",
        json!({"pane": "%1", "until": ["asleep"]}),
    )
    .await);
    assert!(wrong.contains("asleep"), "{wrong}");

    let split = ok(&call(
        &client,
        "pane_split",
        json!({"pane": "%1", "direction": "right", "command": "htop"}),
    )
    .await);
    assert_eq!(split["pane"]["title"], "htop");
    let bad_dir = err(&call(
        &client,
        "pane_split",
        json!({"pane": "%1", "direction": "up"}),
    )
    .await);
    assert!(
        bad_dir.contains("direction") || bad_dir.contains("up"),
        "{bad_dir}"
    );
    let window = ok(&call(&client, "window_create", json!({"name": "logs"})).await);
    assert_eq!(window["pane"]["window_name"], "logs");
}

#[tokio::test]
async fn acting_tools_report_denial_and_timeout_as_results() {
    let mcp = start().await;
    let client = mcp.client(Some("surface-1"), None).await;
    let done = ok(&call(
        &client,
        "pane_run",
        json!({"pane": "%3", "command": "ls", "await": true}),
    )
    .await);
    assert_eq!(done["status"], "finished");
    assert_eq!(done["exit_code"], 0);
    assert_eq!(done["output"], "ran ls\n");
    let failed = ok(&call(
        &client,
        "pane_run",
        json!({"pane": "%3", "command": "fail", "await": true}),
    )
    .await);
    assert_eq!(failed["exit_code"], 1);
    let sent = ok(&call(
        &client,
        "pane_run",
        json!({"pane": "%3", "command": "make"}),
    )
    .await);
    assert_eq!(sent["status"], "sent");
    assert!(sent.get("exit_code").is_none());
    let denied = call(
        &client,
        "pane_run",
        json!({"pane": "%3", "command": "deny rm -rf /"}),
    )
    .await;
    assert_eq!(ok(&denied)["status"], "denied");
    assert_eq!(ok(&denied)["reason"], "the user said no");
    let slow = ok(&call(
        &client,
        "pane_run",
        json!({"pane": "%3", "command": "slow", "timeout_ms": 999999999}),
    )
    .await);
    assert_eq!(slow["status"], "timeout");
    let two_lines = err(&call(
        &client,
        "pane_run",
        json!({"pane": "%3", "command": "a\nb"}),
    )
    .await);
    assert!(two_lines.contains("one non-empty line"), "{two_lines}");
    let keys = ok(&call(
        &client,
        "pane_send_keys",
        json!({"pane": "%2", "keys": ["y", "Enter"]}),
    )
    .await);
    assert_eq!(keys["status"], "sent");

    let acted = mcp.backend.acted();
    let run = acted.iter().find_map(|a| match a {
        Acted::Run(r) if r.command == "slow" => Some(r.clone()),
        _ => None,
    });
    // Timeouts are capped before they reach the backend.
    assert_eq!(run.map(|r| r.timeout.as_millis()), Some(570_000));
    assert!(acted.contains(&Acted::Keys {
        pane: "%2".into(),
        keys: vec!["y".into(), "Enter".into()]
    }));
}

#[tokio::test]
async fn peers_register_message_and_read() {
    let mcp = start().await;
    let alice = mcp.client(Some("surface-1"), None).await;
    let bob = mcp.client(Some("surface-2"), None).await;
    let outsider = mcp.client(None, None).await;

    let before = err(&call(&alice, "send_message", json!({"to": "%2", "content": "hi"})).await);
    assert!(before.contains("register_peer"), "{before}");
    let me = ok(&call(&alice, "register_peer", json!({"name": "alice"})).await);
    assert_eq!(me["peer"]["peer_id"], "%1");
    let renamed = ok(&call(
        &alice,
        "register_peer",
        json!({"name": "alice2", "role": "lead"}),
    )
    .await);
    assert_eq!(renamed["peer"]["name"], "alice2");
    ok(&call(&bob, "register_peer", json!({"name": "bob"})).await);
    let peers = ok(&call(&outsider, "list_peers", json!({})).await);
    assert_eq!(peers["peers"].as_array().unwrap().len(), 2);
    let no_id = err(&call(&outsider, "register_peer", json!({"name": "x"})).await);
    assert!(no_id.contains("not in a calyx pane"), "{no_id}");

    let unknown = err(&call(&alice, "send_message", json!({"to": "%7", "content": "hi"})).await);
    assert!(unknown.contains("list_peers"), "{unknown}");
    let huge = "x".repeat(64 * 1024 + 1);
    let too_big = err(&call(&alice, "send_message", json!({"to": "%2", "content": huge})).await);
    assert!(too_big.contains("64 KiB"), "{too_big}");
    for i in 0..102 {
        ok(&call(
            &alice,
            "send_message",
            json!({"to": "%2", "content": format!("m{i}")}),
        )
        .await);
    }
    let status = ok(&call(&alice, "get_peer_status", json!({"peer_id": "%2"})).await);
    assert_eq!(status["peer"]["unread"], 100);
    assert_eq!(status["agent_state"], "idle");
    assert_eq!(
        mcp.options.peers.unread(&PaneRef { pane: "%2".into() }),
        100
    );
    let sent = ok(&call(&bob, "broadcast", json!({"content": "to all"})).await);
    assert_eq!(sent["delivered_to"], json!(["%1"]));

    let inbox = ok(&call(&bob, "receive_messages", json!({})).await);
    assert_eq!(inbox["dropped"], 2);
    assert_eq!(inbox["messages"].as_array().unwrap().len(), 100);
    assert_eq!(inbox["messages"][0]["content"], "m2");
    assert_eq!(inbox["messages"][0]["from_name"], "alice2");
    let again = ok(&call(&bob, "receive_messages", json!({})).await);
    assert_eq!(again["messages"], json!([]));
    let alice_inbox = ok(&call(&alice, "receive_messages", json!({})).await);
    assert_eq!(alice_inbox["messages"][0]["broadcast"], true);
    assert!(mcp.backend.acted().contains(&Acted::Unread {
        pane: "%2".into(),
        unread: 0
    }));
}

#[tokio::test]
async fn unknown_tools_are_protocol_errors() {
    let mcp = start().await;
    let client = mcp.client(None, None).await;
    let result = client.call_tool(CallToolRequestParams::new("nope")).await;
    assert!(result.is_err(), "{result:?}");
}

#[tokio::test]
async fn command_history_lists_reads_and_limits() {
    let mcp = start().await;
    let client = mcp.client(Some("surface-1"), None).await;
    let all = ok(&call(&client, "terminal_list_commands", json!({"pane": "%3"})).await);
    assert_eq!(all["shell_integration"], true);
    assert_eq!(all["matched"], 3);
    assert_eq!(all["commands"][0]["id"], "%3:1");
    assert_eq!(all["commands"][0]["exit_code"], 1);
    assert_eq!(all["commands"][2]["state"], "running");
    let finished = ok(&call(
        &client,
        "terminal_list_commands",
        json!({"pane": "%3", "state": "finished", "limit": 1}),
    )
    .await);
    assert_eq!(finished["matched"], 2);
    let newest = finished["commands"].as_array().cloned().unwrap_or_default();
    assert_eq!(newest.len(), 1);
    assert_eq!(newest[0]["command"], "echo hi");
    let agent = ok(&call(&client, "terminal_list_commands", json!({"pane": "%1"})).await);
    assert_eq!(agent["shell_integration"], false);
    let listed = call(&client, "terminal_list_commands", json!({"pane": "%1"})).await;
    assert!(text(&listed).contains("pane_read"), "{}", text(&listed));

    for limit in [0, 201] {
        let e = err(&call(
            &client,
            "terminal_list_commands",
            json!({"pane": "%3", "limit": limit}),
        )
        .await);
        assert!(e.contains("1 to 200"), "{e}");
    }
    let e = err(&call(
        &client,
        "terminal_list_commands",
        json!({"pane": "%3", "state": "done"}),
    )
    .await);
    assert!(e.contains("invalid arguments"), "{e}");
    let e = err(&call(&client, "terminal_list_commands", json!({"pane": "%9"})).await);
    assert!(e.contains("pane_list"), "{e}");

    let read = call(
        &client,
        "terminal_read_output",
        json!({"command_id": "%3:2"}),
    )
    .await;
    let out = ok(&read);
    assert_eq!(out["output"], "hi\n");
    assert_eq!(out["command"]["command"], "echo hi");
    assert!(
        text(&read).contains("%3:2 [exit 0] echo hi"),
        "{}",
        text(&read)
    );
    let e = err(&call(
        &client,
        "terminal_read_output",
        json!({"command_id": "%3:99"}),
    )
    .await);
    assert!(e.contains("terminal_list_commands"), "{e}");
    let e = err(&call(&client, "terminal_read_output", json!({"command_id": "17"})).await);
    assert!(e.contains("%3:17"), "{e}");
    let e = err(&call(&client, "terminal_read_output", json!({})).await);
    assert!(e.contains("command_id"), "{e}");
}

#[tokio::test]
async fn command_await_finishes_times_out_and_explains_errors() {
    let mcp = start().await;
    let client = mcp.client(Some("surface-1"), None).await;
    let done = call(
        &client,
        "terminal_await_command",
        json!({"pane": "%3", "command_id": "%3:2"}),
    )
    .await;
    let out = ok(&done);
    assert_eq!(out["status"], "finished");
    assert_eq!(out["command"]["exit_code"], 0);
    assert_eq!(out["output"], "hi\n");
    let start = std::time::Instant::now();
    let waiting = ok(&call(
        &client,
        "terminal_await_command",
        json!({"pane": "%3", "timeout_ms": 50}),
    )
    .await);
    assert_eq!(waiting["status"], "timeout");
    assert_eq!(waiting["command_id"], "%3:3");
    assert!(waiting.get("output").is_none());
    assert!(start.elapsed() < std::time::Duration::from_secs(5));
    let e = err(&call(
        &client,
        "terminal_await_command",
        json!({"pane": "%1", "timeout_ms": 10}),
    )
    .await);
    assert!(e.contains("no commands"), "{e}");
    let e = err(&call(
        &client,
        "terminal_await_command",
        json!({"pane": "%3", "command_id": "%3:x"}),
    )
    .await);
    assert!(e.contains("%3:17"), "{e}");
    let e = err(&call(
        &client,
        "terminal_await_command",
        json!({"pane": "%3", "timeout_ms": -1}),
    )
    .await);
    assert!(e.contains("invalid arguments"), "{e}");
}
