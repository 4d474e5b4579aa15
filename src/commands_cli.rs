//! Runs each `calyx <verb>` as a client of the server and prints the answer.

use std::process::ExitCode;

use crate::cli::{AgentsCommand, Command};
use crate::cli_table::Table;
use crate::client;
use crate::command_requests;
use crate::format;
use crate::protocol::{ClientMessage, NewSession, PaneInfo, Request, Response};

/// Whether this command runs inside a pane of the server it talks to (never, with `--remote`:
/// this shell's pane belongs to the local server).
fn inside_our_server() -> bool {
    crate::remote::target().is_none()
        && std::env::var("CALYX").ok() == Some(crate::paths::socket_path().display().to_string())
}

/// The default target of a command run inside a calyx pane: that pane (like tmux's TMUX_PANE).
fn default_target(target: Option<String>) -> Option<String> {
    target.or_else(|| {
        inside_our_server()
            .then(|| std::env::var("CALYX_PANE_ID").ok())
            .flatten()
    })
}

/// Why attaching from inside one of the server's own panes is refused: the session would be
/// drawn inside one of its own panes, shrunk to that pane's size (tmux refuses the same).
const NESTED: &str = "calyx: this shell runs inside calyx already, and attaching here would show \
the session inside its own pane. Switch sessions with prefix s (or prefix ( and )), or unset \
CALYX to force it.";

/// A `-c DIR` argument made absolute against this client's directory (the server's own
/// directory has nothing to do with the user's).
fn start_dir(dir: Option<String>) -> Option<String> {
    let dir = dir?;
    let path = std::path::Path::new(&dir);
    // With `--remote` the directory is the remote machine's, relative to its server's.
    if path.is_absolute() || crate::remote::target().is_some() {
        return Some(dir);
    }
    Some(match std::env::current_dir() {
        Ok(here) => here.join(path).display().to_string(),
        Err(_) => dir,
    })
}

/// This shell's directory, for new panes; none with `--remote` (it names a directory of this
/// machine, and the remote server starts panes in its own).
fn cwd() -> Option<String> {
    if crate::remote::target().is_some() {
        return None;
    }
    std::env::current_dir()
        .ok()
        .map(|p| p.display().to_string())
}

/// Runs a client command; None means plain `calyx` (attach or create the default session).
/// `install`: `--install` came with `--remote`, so calyx is put on the remote machine first.
pub async fn run(command: Option<Command>, install: bool) -> ExitCode {
    if let (true, Some(target)) = (install, crate::remote::target()) {
        match crate::remote::install::install(target).await {
            Ok(done) => eprintln!("calyx: {done}"),
            Err(e) => {
                eprintln!("calyx: {e:#}");
                return ExitCode::FAILURE;
            }
        }
    }
    match execute(command).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("calyx: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn one_shot(request: Request, start: bool) -> anyhow::Result<Response> {
    let mut stream = if start {
        client::connect_or_start().await?
    } else {
        client::connect_existing().await?
    };
    client::request(&mut stream, request).await
}

/// Prints a server's answer the plain way: ok, an error (exit 1), or its text or JSON.
fn print_response(response: Response) -> ExitCode {
    match response {
        Response::Ok | Response::Created { .. } => ExitCode::SUCCESS,
        Response::Text(t) => {
            print!("{t}");
            ExitCode::SUCCESS
        }
        Response::Json(v) => {
            println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
            ExitCode::SUCCESS
        }
        Response::Error(e) => {
            eprintln!("calyx: {e}");
            ExitCode::FAILURE
        }
        Response::Sessions(sessions) => {
            if sessions.is_empty() {
                eprintln!("calyx: no sessions");
                return ExitCode::FAILURE;
            }
            for s in sessions {
                let attached = if s.attached > 0 { " (attached)" } else { "" };
                println!(
                    "{}: {}, {} [{}x{}]{}",
                    s.name,
                    counted(s.windows, "window"),
                    counted(s.panes, "pane"),
                    s.cols,
                    s.rows,
                    attached
                );
            }
            ExitCode::SUCCESS
        }
        Response::Panes(panes) => {
            print_panes(&panes);
            ExitCode::SUCCESS
        }
    }
}

/// `1 window`, `3 windows`.
fn counted(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

fn print_panes(panes: &[PaneInfo]) {
    let mut table = Table::new(&[
        "ID", "SESSION", "WINDOW", "SIZE", "PID", "COMMAND", "TITLE", "CWD",
    ]);
    for p in panes {
        let focus = if p.focused { "*" } else { "" };
        table.row(vec![
            format!("{}{focus}", p.id),
            calyx_tui::escape::visible(&p.session),
            format!("{}.{}", p.window, p.index),
            format!("{}x{}", p.cols, p.rows),
            p.pid.map(|p| p.to_string()).unwrap_or_default(),
            calyx_tui::escape::visible(&p.command),
            calyx_tui::sidebar::truncate(&calyx_tui::escape::visible(&p.title), 20),
            calyx_tui::escape::visible(&p.cwd),
        ]);
    }
    print!("{}", table.render());
}

/// Runs one command as a client of the server: the table from commands to the functions
/// that carry them out.
async fn execute(command: Option<Command>) -> anyhow::Result<ExitCode> {
    let size = client::terminal_size().unwrap_or((24, 80));
    let Some(command) = command else {
        return start_or_attach(size).await;
    };
    match command {
        Command::Attach(args) => {
            // A saved session is worth starting a server for: it restores it. This machine's
            // state file says nothing about a remote one's: there the server decides.
            if let Some(code) = remote_tty(args.target.clone(), false).await? {
                return Ok(code);
            }
            let start = crate::remote::target().is_some()
                || crate::saved_cli::is_saved(args.target.as_deref());
            attach_and_report(attach_message(size, args.target, None, false), start).await
        }
        Command::New(args) => new_session(args, size).await,
        Command::KillServer { forget } => kill_server(forget).await,
        Command::Ls { all: true } => Ok(crate::machines::ls_all::run().await),
        Command::Ls { .. } => list_sessions().await,
        Command::Kill(args) if args.target.is_some() => kill_session(args.target).await,
        Command::Split(args) => {
            let shown = print_format(args.print, args.format.clone(), format::NEW_PANE);
            created(command_requests::split(args, &Shell), shown).await
        }
        Command::NewWindow(args) => {
            let shown = print_format(args.print, args.format.clone(), format::NEW_PANE);
            created(command_requests::new_window(args, &Shell), shown).await
        }
        Command::BreakPane(args) => {
            let shown = print_format(args.print, args.format.clone(), format::NEW_PANE);
            created(command_requests::break_pane(args, &Shell), shown).await
        }
        Command::ListPanes(args) => list_panes(args).await,
        Command::Agents(args) => agents(args).await,
        Command::Approvals(args) => approvals(args).await,
        Command::Hook(args) => Ok(crate::hook::run(&args.kind, args.approval)),
        Command::Setup(args) => Ok(crate::setup::run(args).await),
        Command::Doctor(args) => doctor(args).await,
        Command::Mcp(args) => Ok(crate::mcp_cli::run(args).await),
        Command::ServerUpgrade(args) => crate::upgrade::client::server_upgrade(args.binary).await,
        Command::Server(_) => Ok(print_response(unreachable_server())),
        Command::Machine(args) => Ok(crate::machines::cli::run(args.command).await),
        Command::RemoteBridge(args) if args.tty => Ok(crate::remote::tty_bridge::run(args).await),
        Command::RemoteBridge(args) => Ok(crate::remote::bridge::run(!args.no_start).await),
        // Every other command is one request, built as the `:` prompt builds it.
        other => match command_requests::request_for(other, &Shell) {
            Ok(request) => ask(request).await,
            Err(other) => Ok(print_response(Response::Error(format!(
                "{other:?} is not a request"
            )))),
        },
    }
}

/// What a shell supplies to a command: inside a calyx pane, that pane as the default target
/// (`kill` and `rename` keep the server's default, the most recent session); directories
/// relative to the shell's own.
struct Shell;

impl command_requests::Defaults for Shell {
    fn target(&self, given: Option<String>) -> Option<String> {
        default_target(given)
    }

    fn session_target(&self, given: Option<String>) -> Option<String> {
        given
    }

    fn dir(&self, given: Option<String>) -> Option<String> {
        start_dir(given)
    }

    fn new_window_dir(&self) -> Option<String> {
        cwd()
    }
}

/// The attach message for this terminal: its size and TERM (the server reads the device
/// itself only when the client offers it, which `calyx` with no command does not here).
fn attach_message(
    (rows, cols): (u16, u16),
    target: Option<String>,
    create: Option<NewSession>,
    create_if_missing: bool,
) -> ClientMessage {
    ClientMessage::Attach {
        target,
        create,
        create_if_missing,
        rows,
        cols,
        term: std::env::var("TERM").ok(),
        terminal: None,
        opener_env: client::opener_env(),
        back_to: None,
    }
}

/// Sends one request (without starting a server) and prints its answer.
async fn ask(request: Request) -> anyhow::Result<ExitCode> {
    Ok(print_response(one_shot(request, false).await?))
}

/// `calyx` alone: attaches to the most recent session, or starts one here.
async fn start_or_attach(size: (u16, u16)) -> anyhow::Result<ExitCode> {
    if let Some(code) = remote_tty(None, true).await? {
        return Ok(code);
    }
    let spec = NewSession {
        name: None,
        cwd: cwd(),
        command: Vec::new(),
        env: client::session_env(),
    };
    attach_and_report(attach_message(size, None, Some(spec), true), true).await
}

/// `calyx new`: a session, attached unless `-d` (then sized by `-x`/`-y` or this terminal).
async fn new_session(
    args: crate::cli::NewArgs,
    (rows, cols): (u16, u16),
) -> anyhow::Result<ExitCode> {
    let spec = NewSession {
        name: args.name,
        cwd: start_dir(args.cwd).or_else(cwd),
        command: args.command,
        env: client::session_env(),
    };
    if !args.detached {
        return attach_and_report(attach_message((rows, cols), None, Some(spec), false), true)
            .await;
    }
    let rows = args.height.unwrap_or(rows);
    let cols = args.width.unwrap_or(cols);
    let shown = print_format(args.print, args.format, format::NEW_SESSION);
    let response = one_shot(Request::NewSession { spec, rows, cols }, true).await?;
    print_created(response, shown).await
}

/// The format `-P`/`-F` ask to print about a new pane: `-F` implies `-P`; `-P` alone prints
/// tmux's default for the command.
fn print_format(print: bool, format: Option<String>, default: &str) -> Option<String> {
    format.or_else(|| print.then(|| default.to_string()))
}

/// Sends a request that creates a pane and prints what `-P`/`-F` asked for about it.
async fn created(request: Request, shown: Option<String>) -> anyhow::Result<ExitCode> {
    let response = one_shot(request, false).await?;
    print_created(response, shown).await
}

/// With a format, prints it expanded for the pane `response` created (the server expands it,
/// as for `display-message -p`); else the usual answer.
async fn print_created(response: Response, shown: Option<String>) -> anyhow::Result<ExitCode> {
    let (Response::Created { pane, .. }, Some(message)) = (&response, shown) else {
        return Ok(print_response(response));
    };
    let request = Request::DisplayMessage {
        target: Some(format!("%{pane}")),
        message,
        print: true,
    };
    ask(request).await
}

/// `calyx kill-server`: a server already gone counts as killed (`--forget` then forgets the
/// saved sessions in the state file itself).
async fn kill_server(forget: bool) -> anyhow::Result<ExitCode> {
    let request = if forget {
        Request::KillServerForget
    } else {
        Request::KillServer
    };
    let response = match one_shot(request, false).await {
        Ok(response) => {
            wait_for_socket_gone();
            response
        }
        // A remote machine's state file is not this one's, nor is its ssh failure "gone".
        Err(e) if crate::remote::target().is_some() => return Err(e),
        Err(_) if forget => {
            crate::saved_cli::forget_in_file(None)?;
            Response::Ok
        }
        Err(_) => Response::Ok,
    };
    Ok(print_response(response))
}

/// Waits (at most 3 s) until the server removed its socket, which it does once its sessions
/// are saved: a `calyx` run right after `kill-server` then starts a new server that reads them.
fn wait_for_socket_gone() {
    let socket = crate::paths::socket_path();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
    while socket.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// `calyx ls`: the running sessions, then the saved ones that are not running. The status is
/// success only when some session is running.
async fn list_sessions() -> anyhow::Result<ExitCode> {
    let (running, unreachable) = match one_shot(Request::ListSessions, false).await {
        Ok(Response::Sessions(sessions)) => (Some(sessions), None),
        Ok(other) => return Ok(print_response(other)),
        Err(e) => (None, Some(e)),
    };
    let saved = match running {
        Some(_) => one_shot(Request::SavedSessions, false).await.ok(),
        None => None,
    };
    let saved = crate::saved_cli::lines(crate::saved_cli::not_running(saved));
    match running {
        Some(sessions) if !sessions.is_empty() || saved.is_empty() => {
            let code = print_response(Response::Sessions(sessions));
            if !saved.is_empty() {
                println!("{}", saved.join("\n"));
                return Ok(ExitCode::SUCCESS);
            }
            Ok(code)
        }
        // Nothing runs: the saved sessions are listed, and the status still says no server
        // runs (scripts test `calyx ls` for that, as they do `tmux ls`).
        _ if !saved.is_empty() => {
            println!("{}", saved.join("\n"));
            eprintln!("calyx: no sessions running (`calyx attach -t NAME` restores a saved one)");
            Ok(ExitCode::FAILURE)
        }
        _ => Err(unreachable.unwrap_or_else(|| anyhow::anyhow!("no sessions"))),
    }
}

/// `calyx kill -t NAME`: the server kills it (or forgets it when it is only saved); with no
/// server, a saved session by that name is forgotten in the state file.
async fn kill_session(target: Option<String>) -> anyhow::Result<ExitCode> {
    let request = Request::KillSession {
        target: target.clone(),
    };
    match one_shot(request.clone(), false).await {
        Ok(response) => Ok(print_response(response)),
        Err(e) => match target.as_deref() {
            Some(name) if crate::saved_cli::forget_in_file(Some(name))? => Ok(ExitCode::SUCCESS),
            _ => Err(e),
        },
    }
}

/// `calyx list-panes`, as a table or (`--json`) as JSON.
async fn list_panes(args: crate::cli::ListPanesArgs) -> anyhow::Result<ExitCode> {
    let target = args.target;
    let response = one_shot(Request::ListPanes { target }, false).await?;
    if let (true, Response::Panes(panes)) = (args.json, &response) {
        println!("{}", serde_json::to_string_pretty(panes)?);
        return Ok(ExitCode::SUCCESS);
    }
    if let (Some(wanted), Response::Panes(panes)) = (&args.format, &response) {
        let lines: String = panes
            .iter()
            .map(|p| format::expand(wanted, p) + "\n")
            .collect();
        print!("{lines}");
        return Ok(ExitCode::SUCCESS);
    }
    Ok(print_response(response))
}

/// `calyx agents` (the rows) and `calyx agents explain PANE`.
async fn agents(args: crate::cli::AgentsArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        Some(AgentsCommand::Explain { pane }) => ask(Request::AgentsExplain { pane }).await,
        None if args.all => Ok(crate::machines::agents_all::run(args.json).await),
        None => {
            let response = one_shot(Request::Agents, false).await?;
            Ok(crate::agents_cli::print(response, args.json))
        }
    }
}

/// `calyx approvals`.
async fn approvals(args: crate::cli::ApprovalsArgs) -> anyhow::Result<ExitCode> {
    let pending_only = args.pending;
    let response = one_shot(Request::Approvals { pending_only }, false).await?;
    if let (true, Response::Json(answer)) = (args.rules, &response) {
        let text = crate::approvals::rules_cli::rules_text(answer, args.json);
        // Written in one go, ignoring a closed stdout (a script's `grep -q`).
        let _ = std::io::Write::write_all(&mut std::io::stdout().lock(), text.as_bytes());
        return Ok(ExitCode::SUCCESS);
    }
    Ok(print_approvals(response, args.json))
}

/// `calyx doctor`: the last event per CLI comes from the running server's agent rows, if any.
async fn doctor(args: crate::cli::DoctorArgs) -> anyhow::Result<ExitCode> {
    let agents = one_shot(Request::Agents, false).await.ok();
    let last = agents.map(|r| last_events(&r));
    Ok(crate::setup::doctor::run(&args.agents, last.as_ref()))
}

fn unreachable_server() -> Response {
    Response::Error("`calyx server` runs in the foreground process, not as a client".into())
}

async fn attach_and_report(message: ClientMessage, start: bool) -> anyhow::Result<ExitCode> {
    if inside_our_server() {
        eprintln!("{NESTED}");
        return Ok(ExitCode::FAILURE);
    }
    if let Some(missing) = missing_target_without_terminal(&message).await {
        eprintln!("calyx: {missing}");
        return Ok(ExitCode::FAILURE);
    }
    let stream = if start {
        client::connect_or_start().await?
    } else {
        client::connect_existing().await?
    };
    let text = client::attach(stream, message).await?;
    // A remote attach the chooser started, left with `prefix L`: the local client it came
    // from attaches again, and nothing is printed over the terminal.
    if text == crate::remote::switch::BACK_MESSAGE && crate::remote::switch::back_to().is_some() {
        return Ok(ExitCode::from(crate::remote::switch::BACK_CODE));
    }
    // A remote attach this client switched to ended and printed its own line (empty text).
    Ok(client::report(&text))
}

/// `calyx --remote TARGET` and `calyx attach --remote TARGET` on a terminal: ssh holds the
/// terminal and the far side attaches it to its server (`remote::tty`). None: not that case
/// (no `--remote`, no terminal, a nested attach), or the far side's calyx predates it; the
/// framed attach (`attach_and_report`) goes on.
async fn remote_tty(session: Option<String>, create: bool) -> anyhow::Result<Option<ExitCode>> {
    use std::io::IsTerminal;
    let Some(target) = crate::remote::target() else {
        return Ok(None);
    };
    if inside_our_server() || !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        return Ok(None);
    }
    let what = crate::remote::tty::Attach {
        session,
        create,
        back_to: crate::remote::switch::back_to(),
    };
    crate::remote::tty::attach(target, &what).await
}

/// Without a terminal an attach cannot go on, but a target that names nothing is the more
/// useful thing to hear (`calyx attach -t nosuch` from a script): the server resolves the
/// target as it would for the attach, without attaching anything.
async fn missing_target_without_terminal(message: &ClientMessage) -> Option<String> {
    if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        return None;
    }
    let ClientMessage::Attach {
        target: Some(target),
        create: None,
        ..
    } = message
    else {
        return None;
    };
    let request = Request::ListPanes {
        target: Some(target.clone()),
    };
    match one_shot(request, false).await {
        Ok(Response::Error(e)) => Some(e),
        Err(e) => Some(format!("{e:#}")),
        Ok(_) => None,
    }
}

/// Prints `calyx approvals` as a table or JSON. Written in one go, ignoring a closed stdout:
/// scripts pipe it into `grep -q`, which may exit before reading it all.
fn print_approvals(response: Response, json: bool) -> ExitCode {
    use std::io::Write as _;
    let Response::Json(value) = response else {
        return print_response(response);
    };
    let mut out = String::new();
    if json {
        // Tool names come from agents: no bidi control or tag character reaches the terminal
        // raw, even as JSON (escaped the JSON way, so a program reads the same value).
        out =
            calyx_tui::escape::json_safe(&serde_json::to_string_pretty(&value).unwrap_or_default());
        out.push('\n');
    } else {
        let rows = |key: &str| {
            value
                .get(key)
                .and_then(|v| v.as_array())
                .cloned()
                .unwrap_or_default()
        };
        let (pending, recent) = (rows("pending"), rows("recent"));
        if pending.is_empty() && recent.is_empty() {
            out.push_str("no approval requests\n");
        }
        let mut table = Table::new(&["ID", "PANE", "CLI", "TOOL", "STATE", "SUMMARY"]);
        for r in pending.iter().chain(recent.iter()) {
            // Tool names and summaries come from agents: control characters are shown
            // escaped, never sent to the user's terminal. (A summary was escaped by the
            // server already: its labels such as `␠×70000` stay as they are.)
            let field = |k: &str| {
                r.get(k)
                    .map(|v| {
                        calyx_tui::escape::visible_again(
                            &v.as_str()
                                .map(str::to_string)
                                .unwrap_or_else(|| v.to_string()),
                        )
                    })
                    .unwrap_or_default()
            };
            table.row(vec![
                field("id"),
                field("pane"),
                field("cli"),
                field("tool"),
                field("state"),
                field("summary"),
            ]);
        }
        if !table.is_empty() {
            out.push_str(&table.render());
        }
    }
    let _ = std::io::stdout().lock().write_all(out.as_bytes());
    ExitCode::SUCCESS
}

/// The newest event calyx received from each CLI, from `calyx agents` rows.
fn last_events(response: &Response) -> crate::setup::doctor::LastEvents {
    let mut out = crate::setup::doctor::LastEvents::new();
    let Response::Json(value) = response else {
        return out;
    };
    let rows = value
        .get("agents")
        .and_then(|a| a.as_array())
        .cloned()
        .unwrap_or_default();
    for row in rows {
        let kind = row
            .get("agent")
            .and_then(|k| k.as_str())
            .and_then(|k| k.parse::<calyx_integrations::AgentKind>().ok());
        let event = row
            .get("last_event")
            .and_then(|e| e.as_str())
            .unwrap_or("event")
            .to_string();
        let age = row
            .get("seconds_since_event")
            .and_then(|s| s.as_u64())
            .unwrap_or(0);
        let at = std::time::SystemTime::now() - std::time::Duration::from_secs(age);
        if let Some(kind) = kind {
            let newer = out.get(&kind).is_none_or(|(_, t)| *t < at);
            if newer {
                out.insert(kind, (event, at));
            }
        }
    }
    out
}
