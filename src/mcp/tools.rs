//! The tool list and the dispatcher: argument parsing, limits, calls into the backend or the
//! peer registry, and the rendering of every answer as structuredContent plus readable text.
//! Every failure a model can fix is an `isError` result whose text says how.

use calyx_pty::commands::keep_tail;
use std::sync::Arc;
use std::time::Duration;

use rmcp::handler::server::common::{schema_for_output, schema_for_type};
use rmcp::model::{CallToolResult, ContentBlock as Content, JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::across;
use super::backend::{
    AgentWaitEnd, McpBackend, PaneRef, RunOutcome, RunRequest, SplitRequest, WindowRequest,
};
use super::commands::{CommandInfo, CommandStatus, CommandWait};
use super::peers::{PeerError, PeerInfo, PeerRegistry};
use super::schema::*;
use crate::protocol::RemoteCaller;

/// Most text `pane_read` returns; older lines are cut first.
pub const MAX_READ_BYTES: usize = 64 * 1024;
/// Most lines `pane_read` takes (its schema's `lines` maximum).
const MAX_READ_LINES: u32 = 10_000;
/// Most output `pane_run` returns with await; the start is cut first.
pub const MAX_RUN_OUTPUT_BYTES: usize = 64 * 1024;
const DEFAULT_WAIT_MS: u64 = 30_000;
const MAX_WAIT_MS: u64 = 55_000;
const DEFAULT_ACT_MS: u64 = 120_000;
const MAX_ACT_MS: u64 = 570_000;
const DEFAULT_COMMANDS: u32 = 20;
const MAX_COMMANDS: u32 = 200;
/// How much longer than its own wait a call on another machine may take (ssh's connect and
/// the round trip): past it the call fails as unreachable.
const FORWARD_MARGIN: Duration = Duration::from_secs(15);

/// Everything a tool call can use.
pub(crate) struct Ctx<'a> {
    pub backend: &'a Arc<dyn McpBackend>,
    pub peers: &'a PeerRegistry,
    /// The caller's pane; `None` for a client outside calyx.
    pub caller: Option<&'a PaneRef>,
    /// Set when an agent on another machine made this call ([`super::from_afar`]): it runs
    /// here and is never passed on, and messages it sends are from that machine's peer.
    pub from_afar: Option<&'a RemoteCaller>,
}

fn tool<In: JsonSchema + 'static, Out: JsonSchema + 'static>(
    name: &'static str,
    title: &'static str,
    description: &'static str,
    annotations: ToolAnnotations,
) -> Tool {
    Tool::new(name, description, portable(schema_for_type::<In>()))
        .with_title(title)
        .with_raw_output_schema(portable(schema_for_output::<Out>()))
        .with_annotations(annotations.with_title_str(title))
}

/// The schema without schemars' integer `format`s (`uint16`, `int64`...): they are not JSON
/// Schema formats, and clients that validate with Ajv (Gemini CLI, the MCP inspector) print a
/// warning for each one. The bounds stay as `minimum`/`maximum`.
fn portable(schema: Arc<rmcp::model::JsonObject>) -> Arc<rmcp::model::JsonObject> {
    fn strip(value: &mut serde_json::Value) {
        match value {
            serde_json::Value::Object(map) => {
                let integer_format = map
                    .get("format")
                    .and_then(serde_json::Value::as_str)
                    .is_some_and(|f| f.starts_with("uint") || f.starts_with("int"));
                if integer_format {
                    map.remove("format");
                }
                map.values_mut().for_each(strip);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut value = serde_json::Value::Object((*schema).clone());
    strip(&mut value);
    match value {
        serde_json::Value::Object(map) => Arc::new(map),
        _ => schema,
    }
}

trait TitleExt {
    fn with_title_str(self, title: &str) -> Self;
}

impl TitleExt for ToolAnnotations {
    fn with_title_str(mut self, title: &str) -> Self {
        self.title = Some(title.to_owned());
        self
    }
}

fn reading() -> ToolAnnotations {
    ToolAnnotations::new()
        .read_only(true)
        .destructive(false)
        .open_world(false)
}

fn writing(destructive: bool) -> ToolAnnotations {
    ToolAnnotations::new()
        .read_only(false)
        .destructive(destructive)
        .open_world(false)
}

/// The tools, in a fixed order (the set never varies per connection).
pub(crate) fn list() -> Vec<Tool> {
    // Built once: every session's tools/list would otherwise regenerate and rewrite 17 schemas.
    static TOOLS: std::sync::OnceLock<Vec<Tool>> = std::sync::OnceLock::new();
    TOOLS.get_or_init(build_list).clone()
}

fn build_list() -> Vec<Tool> {
    vec![
        tool::<MachineArgs, PaneListOut>("pane_list", "List panes", "Every calyx pane: id, session, window, title, cwd, size, focus, and the agent running there with its state. Pane ids are what the other tools take as `pane`. With `machine`, a saved machine's panes (ids like `build/%3`).", reading()),
        tool::<PaneReadArgs, PaneReadOut>("pane_read", "Read a pane", "The text on a pane's screen (or its scrollback), newest lines last, capped at 64 KiB with secrets redacted.", reading()),
        tool::<MachineArgs, AgentListOut>("agent_list", "List agents", "Every agent row calyx tracks: pane, CLI kind, state (working, blocked, idle, done, unknown) and subagents. With `machine`, a saved machine's agents (panes like `build/%3`).", reading()),
        tool::<AgentWaitArgs, AgentWaitOut>("agent_wait", "Wait for an agent", "Blocks until the agent in `pane` reaches one of `until` or `timeout_ms` passes (at most 55 s); returns the state reached or `timeout`. Call again to keep waiting.", reading().idempotent(true)),
        tool::<PaneSplitArgs, NewPaneOut>("pane_split", "Split a pane", "Splits `pane` to the right or down and starts `command` (default: a shell) in the new pane. A `command` waits for the human to approve it; `denied` and `timeout` are normal answers: do not retry a denied command unchanged.", writing(false)),
        tool::<WindowCreateArgs, NewPaneOut>("window_create", "Create a window", "Creates a window in your session (or the first session) running `command` (default: a shell). A `command` waits for the human to approve it; `denied` and `timeout` are normal answers: do not retry a denied command unchanged.", writing(false)),
        tool::<PaneRunArgs, RunOut>("pane_run", "Run a command in a pane", "Asks the human to approve, then types `command` and Enter into a shell pane. With `await`, returns the exit code and output once the shell reports it finished. `denied` and `timeout` are normal answers: do not retry a denied command unchanged.", writing(true)),
        tool::<PaneSendKeysArgs, RunOut>("pane_send_keys", "Send keys to a pane", "Asks the human to approve, then sends keys (tmux send-keys syntax) to a pane, e.g. to answer a prompt. `denied` and `timeout` are normal answers.", writing(true)),
        tool::<ListCommandsArgs, ListCommandsOut>("terminal_list_commands", "List a shell pane's commands", "The commands a bash, zsh or fish pane ran (newest last): id, command line, cwd, state, exit code, times and output size, secrets redacted. The pane keeps its last 200 commands. Read one's output with terminal_read_output.", reading()),
        tool::<ReadOutputArgs, ReadOutputOut>("terminal_read_output", "Read a command's output", "The output of one command from terminal_list_commands as plain text (the last 256 KiB, secrets redacted); while it runs, the output so far.", reading()),
        tool::<AwaitCommandArgs, AwaitCommandOut>("terminal_await_command", "Wait for a command", "Blocks until a command in a shell pane finishes (`command_id`, or else the running command, or else the next one to start) or `timeout_ms` passes (at most 55 s); returns its exit code and the end of its output, or `timeout`. Call again with the command_id to keep waiting.", reading().idempotent(true)),
        tool::<RegisterPeerArgs, PeerOut>("register_peer", "Register as a peer", "Makes your pane a peer other agents can message, under `name`. Calling it again renames you; your peer_id (your pane id) stays.", writing(false).idempotent(true)),
        tool::<MachineArgs, PeerListOut>("list_peers", "List peers", "Every registered peer with its peer_id, name, role, pane and unread count, on this machine and on the saved machines (their ids like `build/%3`: send_message reaches them there).", reading()),
        tool::<SendMessageArgs, SendOut>("send_message", "Send a message", "Queues a message in one peer's inbox (at most 64 KiB; an inbox keeps the newest 100). Register first. With deliver \"type\", an idle recipient also gets it typed into its pane as a prompt once the human approves.", writing(false)),
        tool::<BroadcastArgs, SendOut>("broadcast", "Broadcast a message", "Queues a message in every other peer's inbox. Register first.", writing(false)),
        tool::<NoArgs, ReceiveOut>("receive_messages", "Receive messages", "Returns and deletes the messages waiting in your inbox, oldest first, with how many were dropped because it was full.", writing(false)),
        tool::<PeerStatusArgs, PeerStatusOut>("get_peer_status", "Get a peer's status", "One peer's name, role, pane, unread count and its agent's state.", reading()),
    ]
}

/// Runs tool `name`; `None` when there is no such tool (a protocol error, not a tool error).
pub(crate) async fn call(ctx: Ctx<'_>, name: &str, args: JsonObject) -> Option<CallToolResult> {
    let mut args = args;
    // A call naming another machine goes there; one from another machine is never passed on.
    if ctx.from_afar.is_none() {
        let routed = match across::route(name, &mut args) {
            Ok(Some(machine)) => forward(&ctx, &machine, name, args).await,
            Ok(None) => return local(ctx, name, args).await,
            Err(e) => Err(e),
        };
        return Some(
            routed.unwrap_or_else(|message| CallToolResult::error(vec![Content::text(message)])),
        );
    }
    local(ctx, name, args).await
}

/// Runs tool `name` on this machine.
async fn local(ctx: Ctx<'_>, name: &str, args: JsonObject) -> Option<CallToolResult> {
    let result = match name {
        "pane_list" => pane_list(&ctx, args).await,
        "pane_read" => pane_read(&ctx, args).await,
        "agent_list" => agent_list(&ctx, args).await,
        "agent_wait" => agent_wait(&ctx, args).await,
        "pane_split" => pane_split(&ctx, args).await,
        "window_create" => window_create(&ctx, args).await,
        "pane_run" => pane_run(&ctx, args).await,
        "pane_send_keys" => pane_send_keys(&ctx, args).await,
        "terminal_list_commands" => list_commands(&ctx, args).await,
        "terminal_read_output" => read_output(&ctx, args).await,
        "terminal_await_command" => await_command(&ctx, args).await,
        "register_peer" => register_peer(&ctx, args),
        "list_peers" => list_peers(&ctx, args).await,
        "send_message" => send_message(&ctx, args).await,
        "broadcast" => broadcast(&ctx, args),
        "receive_messages" => receive_messages(&ctx, args),
        "get_peer_status" => get_peer_status(&ctx, args).await,
        _ => return None,
    };
    Some(result.unwrap_or_else(|message| CallToolResult::error(vec![Content::text(message)])))
}

type ToolResult = Result<CallToolResult, String>;

fn parse<T: DeserializeOwned>(tool: &str, args: JsonObject) -> Result<T, String> {
    serde_json::from_value(serde_json::Value::Object(args))
        .map_err(|e| format!("invalid arguments for {tool}: {e}; see its inputSchema"))
}

/// A success: the structured value plus a readable rendering.
fn answer<T: Serialize>(value: &T, text: String) -> ToolResult {
    let structured = serde_json::to_value(value).map_err(|e| format!("internal error: {e}"))?;
    let mut result = CallToolResult::structured(structured);
    result.content = vec![Content::text(text)];
    Ok(result)
}

fn millis(value: Option<u64>, default: u64, max: u64) -> Duration {
    Duration::from_millis(value.unwrap_or(default).min(max))
}

fn caller<'a>(ctx: &Ctx<'a>) -> Result<&'a PaneRef, String> {
    ctx.caller.ok_or_else(|| PeerError::NoIdentity.to_string())
}

/// Who this machine's caller is, for a call on another machine: this machine's name, the
/// caller's pane and its peer name when it registered.
fn remote_caller(ctx: &Ctx<'_>) -> RemoteCaller {
    RemoteCaller {
        machine: across::this_machine(),
        pane: ctx.caller.map(|c| c.pane.clone()),
        name: ctx
            .caller
            .and_then(|c| ctx.peers.get(&c.pane).ok())
            .map(|p| p.name),
    }
}

/// Runs `name` on saved machine `machine` ([`across::forward`]), waiting as long as the tool
/// itself may wait there.
async fn forward(ctx: &Ctx<'_>, machine: &str, name: &str, args: JsonObject) -> ToolResult {
    let ms = |key: &str| args.get(key).and_then(serde_json::Value::as_u64);
    let waits = match name {
        "agent_wait" => millis(ms("timeout_ms"), DEFAULT_WAIT_MS, MAX_WAIT_MS),
        "pane_run" => millis(ms("timeout_ms"), DEFAULT_ACT_MS, MAX_ACT_MS),
        "send_message" => {
            // A message names its sender, so only a registered peer sends one.
            let me = caller(ctx)?;
            if !ctx.peers.is_peer(me) {
                return Err(PeerError::NotRegistered.to_string());
            }
            let typed = args.get("deliver").and_then(serde_json::Value::as_str) == Some("type");
            if typed {
                millis(None, DEFAULT_ACT_MS, MAX_ACT_MS)
            } else {
                Duration::ZERO
            }
        }
        _ => Duration::ZERO,
    };
    across::forward(
        &**ctx.backend,
        machine,
        name,
        args,
        remote_caller(ctx),
        waits + FORWARD_MARGIN,
    )
    .await
}

async fn pane_list(ctx: &Ctx<'_>, args: JsonObject) -> ToolResult {
    parse::<MachineArgs>("pane_list", args)?;
    let panes = ctx.backend.pane_list().await;
    let mut text = format!("{} pane(s)\n", panes.len());
    for p in &panes {
        text.push_str(&format!(
            "{} {}:{} {:?} {}x{} cwd={} {}{}\n",
            p.id,
            p.session,
            p.window,
            p.title,
            p.cols,
            p.rows,
            p.cwd,
            if p.focused { "focused " } else { "" },
            match (&p.agent_kind, &p.agent_state) {
                (Some(k), Some(s)) => format!("agent={k} ({s})"),
                (Some(k), None) => format!("agent={k}"),
                _ => String::new(),
            }
        ));
    }
    answer(&PaneListOut { panes }, text)
}

async fn pane_read(ctx: &Ctx<'_>, args: JsonObject) -> ToolResult {
    let args: PaneReadArgs = parse("pane_read", args)?;
    if args
        .lines
        .is_some_and(|n| !(1..=MAX_READ_LINES).contains(&n))
    {
        return Err(format!(
            "`lines` must be 1 to {MAX_READ_LINES}; leave it out for the whole screen"
        ));
    }
    let text = ctx
        .backend
        .pane_read(ctx.caller, &args.pane, args.lines, args.scrollback)
        .await?;
    let (text, truncated) = keep_tail(text, MAX_READ_BYTES);
    let out = PaneReadOut {
        pane: args.pane,
        text: text.clone(),
        truncated,
    };
    answer(&out, text)
}

async fn agent_list(ctx: &Ctx<'_>, args: JsonObject) -> ToolResult {
    parse::<MachineArgs>("agent_list", args)?;
    let agents = ctx.backend.agent_list().await;
    let mut text = format!("{} agent(s)\n", agents.len());
    for a in &agents {
        text.push_str(&format!("{} {} {}", a.pane, a.kind, a.state));
        if let Some(detail) = &a.detail {
            text.push_str(&format!(": {detail}"));
        }
        for s in &a.subagents {
            text.push_str(&format!("\n  subagent {} {}", s.name, s.state));
        }
        text.push('\n');
    }
    answer(&AgentListOut { agents }, text)
}

async fn agent_wait(ctx: &Ctx<'_>, args: JsonObject) -> ToolResult {
    let args: AgentWaitArgs = parse("agent_wait", args)?;
    if args.until.is_empty() {
        return Err("`until` needs at least one state: idle, blocked, done or working".into());
    }
    let until = args.until.iter().map(|s| s.as_str().to_owned()).collect();
    let timeout = millis(args.timeout_ms, DEFAULT_WAIT_MS, MAX_WAIT_MS);
    let (state, timed_out, agent_state) =
        match ctx.backend.agent_wait(&args.pane, until, timeout).await? {
            AgentWaitEnd::Reached(state) => (state.clone(), false, Some(state)),
            AgentWaitEnd::TimedOut(now) => ("timeout".to_owned(), true, now),
        };
    let text = if timed_out {
        let now = agent_state
            .as_deref()
            .map_or("has no agent row".to_owned(), |s| format!("is still {s}"));
        format!(
            "{} {now} after {} ms; call agent_wait again to keep waiting",
            args.pane,
            timeout.as_millis()
        )
    } else {
        format!("{} is {state}", args.pane)
    };
    let out = AgentWaitOut {
        pane: args.pane,
        state,
        timed_out,
        agent_state,
    };
    answer(&out, text)
}

async fn pane_split(ctx: &Ctx<'_>, args: JsonObject) -> ToolResult {
    let args: PaneSplitArgs = parse("pane_split", args)?;
    let request = SplitRequest {
        pane: args.pane,
        direction: args.direction,
        command: args.command,
        cwd: args.cwd,
        timeout: millis(args.timeout_ms, DEFAULT_ACT_MS, MAX_ACT_MS),
    };
    let pane = ctx.backend.pane_split(ctx.caller, request).await?;
    let text = format!(
        "created pane {} in {}:{}",
        pane.id, pane.session, pane.window
    );
    answer(&NewPaneOut { pane }, text)
}

async fn window_create(ctx: &Ctx<'_>, args: JsonObject) -> ToolResult {
    let args: WindowCreateArgs = parse("window_create", args)?;
    let request = WindowRequest {
        name: args.name,
        cwd: args.cwd,
        command: args.command,
        timeout: millis(args.timeout_ms, DEFAULT_ACT_MS, MAX_ACT_MS),
    };
    let pane = ctx.backend.window_create(ctx.caller, request).await?;
    let text = format!(
        "created window {}:{} ({}) with pane {}",
        pane.session, pane.window, pane.window_name, pane.id
    );
    answer(&NewPaneOut { pane }, text)
}

async fn pane_run(ctx: &Ctx<'_>, args: JsonObject) -> ToolResult {
    let args: PaneRunArgs = parse("pane_run", args)?;
    if args.command.trim().is_empty() || args.command.contains(['\n', '\r']) {
        return Err("`command` must be one non-empty line; run several commands one by one or join them with &&".into());
    }
    let request = RunRequest {
        pane: args.pane.clone(),
        command: args.command,
        wait: args.wait,
        timeout: millis(args.timeout_ms, DEFAULT_ACT_MS, MAX_ACT_MS),
    };
    let outcome = ctx.backend.pane_run(ctx.caller, request).await?;
    run_answer(args.pane, outcome, args.wait)
}

async fn pane_send_keys(ctx: &Ctx<'_>, args: JsonObject) -> ToolResult {
    let args: PaneSendKeysArgs = parse("pane_send_keys", args)?;
    if args.keys.is_empty() || args.keys.len() > 256 {
        return Err("`keys` needs 1 to 256 entries".into());
    }
    let timeout = millis(args.timeout_ms, DEFAULT_ACT_MS, MAX_ACT_MS);
    let outcome = ctx
        .backend
        .pane_send_keys(ctx.caller, &args.pane, args.keys, timeout)
        .await?;
    run_answer(args.pane, outcome, false)
}

/// `awaited`: the caller asked to wait, so a plain `Sent` means the pane cannot report commands.
fn run_answer(pane: String, outcome: RunOutcome, awaited: bool) -> ToolResult {
    let mut out = RunOut {
        pane,
        status: RunStatus::Sent,
        exit_code: None,
        output: None,
        reason: None,
    };
    let text = match outcome {
        RunOutcome::Sent if awaited => format!(
            "sent to {}, but its shell does not report commands (no shell integration), so calyx cannot tell when it finishes; read the pane with pane_read",
            out.pane
        ),
        RunOutcome::Sent => format!("sent to {}", out.pane),
        RunOutcome::Finished { exit_code, output } => {
            let (output, cut) = keep_tail(output, MAX_RUN_OUTPUT_BYTES);
            out.status = RunStatus::Finished;
            out.exit_code = exit_code;
            out.output = Some(output.clone());
            let code = exit_code.map_or_else(|| "unknown".to_owned(), |c| c.to_string());
            let cut = if cut { " (start cut)" } else { "" };
            format!(
                "finished in {} with exit code {code}; output{cut}:\n{output}",
                out.pane
            )
        }
        RunOutcome::Denied { reason } => {
            out.status = RunStatus::Denied;
            let text = format!("denied: {reason}; do not retry it unchanged");
            out.reason = Some(reason);
            text
        }
        RunOutcome::TimedOut => {
            out.status = RunStatus::Timeout;
            "timed out waiting for approval or for the command to finish".to_owned()
        }
    };
    answer(&out, text)
}

/// One line about a command: `%3:17 [exit 1] false (in /tmp)`.
fn command_line(c: &CommandInfo) -> String {
    let state = match (c.state, c.exit_code) {
        (CommandStatus::Running, _) => "running".to_owned(),
        (CommandStatus::Finished, Some(code)) => format!("exit {code}"),
        (CommandStatus::Finished, None) => "exit unknown".to_owned(),
    };
    let cwd = c
        .cwd
        .as_deref()
        .map(|d| format!(" (in {d})"))
        .unwrap_or_default();
    format!("{} [{state}] {}{cwd}", c.id, c.command)
}

async fn list_commands(ctx: &Ctx<'_>, args: JsonObject) -> ToolResult {
    let args: ListCommandsArgs = parse("terminal_list_commands", args)?;
    let limit = args.limit.unwrap_or(DEFAULT_COMMANDS);
    if !(1..=MAX_COMMANDS).contains(&limit) {
        return Err(format!("`limit` must be 1 to {MAX_COMMANDS}"));
    }
    let history = ctx.backend.commands(&args.pane).await?;
    let mut commands: Vec<CommandInfo> = history
        .commands
        .into_iter()
        .filter(|c| args.state.is_none_or(|s| s == c.state))
        .collect();
    let matched = commands.len();
    commands.drain(..matched.saturating_sub(limit as usize));
    let mut text = if history.integrated {
        format!(
            "{} of {matched} matching command(s) in {}\n",
            commands.len(),
            args.pane
        )
    } else {
        format!("{} reports no commands: it is not a bash, zsh or fish pane with calyx's shell integration; use pane_read to see it\n", args.pane)
    };
    for c in &commands {
        text.push_str(&command_line(c));
        text.push('\n');
    }
    let out = ListCommandsOut {
        pane: args.pane,
        shell_integration: history.integrated,
        commands,
        matched,
    };
    answer(&out, text)
}

async fn read_output(ctx: &Ctx<'_>, args: JsonObject) -> ToolResult {
    let args: ReadOutputArgs = parse("terminal_read_output", args)?;
    let found = ctx.backend.command_output(&args.command_id).await?;
    let cut = if found.command.output_truncated {
        " (start cut)"
    } else {
        ""
    };
    let text = format!(
        "{}\noutput{cut}:\n{}",
        command_line(&found.command),
        found.output
    );
    let out = ReadOutputOut {
        command: found.command,
        output: found.output,
    };
    answer(&out, text)
}

async fn await_command(ctx: &Ctx<'_>, args: JsonObject) -> ToolResult {
    let args: AwaitCommandArgs = parse("terminal_await_command", args)?;
    let timeout = millis(args.timeout_ms, DEFAULT_WAIT_MS, MAX_WAIT_MS);
    let waited = ctx
        .backend
        .command_await(&args.pane, args.command_id.as_deref(), timeout)
        .await?;
    let (out, text) = match waited {
        CommandWait::Finished(found) => {
            let (output, cut) = keep_tail(found.output, MAX_RUN_OUTPUT_BYTES);
            let cut = if cut || found.command.output_truncated {
                " (start cut; terminal_read_output has more)"
            } else {
                ""
            };
            let text = format!("{}\noutput{cut}:\n{output}", command_line(&found.command));
            let out = AwaitCommandOut {
                pane: args.pane,
                status: AwaitStatus::Finished,
                command_id: found.command.id.clone(),
                command: Some(found.command),
                output: Some(output),
            };
            (out, text)
        }
        CommandWait::TimedOut { command_id } => {
            let text = format!("{command_id} has not finished after {} ms; call terminal_await_command again with this command_id to keep waiting", timeout.as_millis());
            let out = AwaitCommandOut {
                pane: args.pane,
                status: AwaitStatus::Timeout,
                command_id,
                command: None,
                output: None,
            };
            (out, text)
        }
        CommandWait::PaneClosed { command_id } => {
            let text = format!(
                "{}'s program exited before {command_id} finished",
                args.pane
            );
            let out = AwaitCommandOut {
                pane: args.pane,
                status: AwaitStatus::PaneClosed,
                command_id,
                command: None,
                output: None,
            };
            (out, text)
        }
    };
    answer(&out, text)
}

fn register_peer(ctx: &Ctx<'_>, args: JsonObject) -> ToolResult {
    let args: RegisterPeerArgs = parse("register_peer", args)?;
    let me = caller(ctx)?;
    let peer = ctx
        .peers
        .register(me, &args.name, args.role.as_deref())
        .map_err(|e| e.to_string())?;
    let text = format!(
        "you are peer {} ({:?}) in pane {}",
        peer.peer_id, peer.name, peer.pane
    );
    answer(&PeerOut { peer }, text)
}

async fn list_peers(ctx: &Ctx<'_>, args: JsonObject) -> ToolResult {
    parse::<MachineArgs>("list_peers", args)?;
    let mut peers = ctx.peers.list();
    let mut unreachable = Vec::new();
    if ctx.from_afar.is_none() {
        let (theirs, failed) = saved_machines_peers(ctx).await;
        peers.extend(theirs);
        unreachable = failed;
    }
    let mut text = format!("{} peer(s)\n", peers.len());
    for p in &peers {
        let role = p
            .role
            .as_deref()
            .map(|r| format!(" [{r}]"))
            .unwrap_or_default();
        text.push_str(&format!(
            "{} {:?}{role} unread={}\n",
            p.peer_id, p.name, p.unread
        ));
    }
    for line in &unreachable {
        text.push_str(line);
        text.push('\n');
    }
    answer(&PeerListOut { peers, unreachable }, text)
}

/// Every enabled saved machine's peers, ids qualified (`build/%3`), asked at once; a machine
/// that does not answer is a line saying why instead.
async fn saved_machines_peers(ctx: &Ctx<'_>) -> (Vec<PeerInfo>, Vec<String>) {
    let names = match ctx.backend.saved_machines() {
        Ok(names) => names,
        Err(e) => return (Vec::new(), vec![e.to_string()]),
    };
    let asks = names.iter().map(|machine| {
        across::forward(
            &**ctx.backend,
            machine,
            "list_peers",
            JsonObject::new(),
            remote_caller(ctx),
            FORWARD_MARGIN,
        )
    });
    let mut peers = Vec::new();
    let mut unreachable = Vec::new();
    for answer in futures::future::join_all(asks).await {
        let listed = answer.and_then(|result| {
            let out = result.structured_content.unwrap_or_default();
            serde_json::from_value::<Vec<PeerInfo>>(out["peers"].clone())
                .map_err(|e| format!("a machine's peer list could not be read: {e}"))
        });
        match listed {
            Ok(theirs) => peers.extend(theirs),
            Err(why) => unreachable.push(why),
        }
    }
    (peers, unreachable)
}

async fn send_message(ctx: &Ctx<'_>, args: JsonObject) -> ToolResult {
    let args: SendMessageArgs = parse("send_message", args)?;
    let me = caller(ctx)?;
    let delivery = match ctx.from_afar {
        // From a peer on another machine: named by its machine-qualified id there.
        Some(from) => ctx.peers.send_from_afar(
            &me.pane,
            from.name.as_deref().unwrap_or(&from.machine),
            &args.to,
            &args.content,
        ),
        None => ctx.peers.send(me, &args.to, &args.content),
    }
    .map_err(|e| e.to_string())?;
    let typed = match args.deliver {
        Some(Deliver::Type) => Some(type_into(ctx, &delivery.to.pane, &args.content).await),
        _ => None,
    };
    sent(ctx, vec![delivery], typed)
}

/// Types a message into an idle agent's pane as its next prompt, behind the approval queue.
/// A busy agent is not interrupted: the message waits in its inbox.
async fn type_into(ctx: &Ctx<'_>, pane: &str, content: &str) -> String {
    let state = ctx
        .backend
        .agent_list()
        .await
        .into_iter()
        .find(|a| a.pane == pane)
        .map(|a| a.state);
    if state.as_deref() != Some("idle") {
        let why = state.map_or("no agent reports from it".to_string(), |s| {
            format!("its agent is {s}")
        });
        return format!("not typed: {why}; the message waits in its inbox");
    }
    // One line: a newline inside would submit half the message.
    let line: String = content
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let keys = vec![line, "Enter".to_string()];
    let timeout = millis(None, DEFAULT_ACT_MS, MAX_ACT_MS);
    match ctx
        .backend
        .pane_send_keys(ctx.caller, pane, keys, timeout)
        .await
    {
        Ok(RunOutcome::Sent | RunOutcome::Finished { .. }) => "typed".into(),
        Ok(RunOutcome::Denied { reason }) => format!("denied: {reason}"),
        Ok(RunOutcome::TimedOut) => "timeout".into(),
        Err(e) => format!("not typed: {e}"),
    }
}

fn broadcast(ctx: &Ctx<'_>, args: JsonObject) -> ToolResult {
    let args: BroadcastArgs = parse("broadcast", args)?;
    let me = caller(ctx)?;
    let deliveries = ctx
        .peers
        .broadcast(me, &args.content)
        .map_err(|e| e.to_string())?;
    sent(ctx, deliveries, None)
}

fn sent(
    ctx: &Ctx<'_>,
    deliveries: Vec<super::peers::Delivery>,
    typed: Option<String>,
) -> ToolResult {
    for d in &deliveries {
        ctx.backend.unread_changed(&d.to, d.unread);
    }
    let out = SendOut {
        delivered_to: deliveries.iter().map(|d| d.to.pane.clone()).collect(),
        overflowed: deliveries
            .iter()
            .filter(|d| d.dropped_now)
            .map(|d| d.to.pane.clone())
            .collect(),
        typed,
    };
    let mut text = if out.delivered_to.is_empty() {
        "no other peers are registered; nobody got it".to_owned()
    } else {
        format!("queued for {}", out.delivered_to.join(", "))
    };
    if let Some(typed) = &out.typed {
        text.push_str(&format!("; {typed}"));
    }
    answer(&out, text)
}

fn receive_messages(ctx: &Ctx<'_>, args: JsonObject) -> ToolResult {
    parse::<NoArgs>("receive_messages", args)?;
    let me = caller(ctx)?;
    let inbox = ctx.peers.receive(me).map_err(|e| e.to_string())?;
    ctx.backend.unread_changed(me, 0);
    let mut text = format!("{} message(s)", inbox.messages.len());
    if inbox.dropped > 0 {
        text.push_str(&format!(", {} older dropped (inbox full)", inbox.dropped));
    }
    for m in &inbox.messages {
        text.push_str(&format!(
            "\nfrom {} ({:?}): {}",
            m.from, m.from_name, m.content
        ));
    }
    let out = ReceiveOut {
        messages: inbox.messages,
        dropped: inbox.dropped,
    };
    answer(&out, text)
}

async fn get_peer_status(ctx: &Ctx<'_>, args: JsonObject) -> ToolResult {
    let args: PeerStatusArgs = parse("get_peer_status", args)?;
    let peer = ctx.peers.get(&args.peer_id).map_err(|e| e.to_string())?;
    let agent = ctx
        .backend
        .agent_list()
        .await
        .into_iter()
        .find(|a| a.pane == peer.pane);
    let out = PeerStatusOut {
        agent_state: agent.as_ref().map(|a| a.state.clone()),
        agent_kind: agent.map(|a| a.kind),
        peer,
    };
    let text = format!(
        "peer {} {:?} in pane {}: unread={} agent={}",
        out.peer.peer_id,
        out.peer.name,
        out.peer.pane,
        out.peer.unread,
        out.agent_state.as_deref().unwrap_or("none")
    );
    answer(&out, text)
}
