//! Runs each `calyx <verb>` as a client of the server and prints the answer.

use std::process::ExitCode;

use crate::cli::{AgentsCommand, Command};
use crate::client;
use crate::protocol::{ClientMessage, NewSession, PaneInfo, Request, Response};

/// Whether this command runs inside a pane of the server it talks to.
fn inside_our_server() -> bool {
    std::env::var("CALYX").ok() == Some(crate::paths::socket_path().display().to_string())
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
    if path.is_absolute() {
        return Some(dir);
    }
    Some(match std::env::current_dir() {
        Ok(here) => here.join(path).display().to_string(),
        Err(_) => dir,
    })
}

fn cwd() -> Option<String> {
    std::env::current_dir()
        .ok()
        .map(|p| p.display().to_string())
}

/// Runs a client command; None means plain `calyx` (attach or create the default session).
pub async fn run(command: Option<Command>) -> ExitCode {
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
pub fn print_response(response: Response) -> ExitCode {
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
                    "{}: {} windows, {} panes [{}x{}]{}",
                    s.name, s.windows, s.panes, s.cols, s.rows, attached
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

fn print_panes(panes: &[PaneInfo]) {
    println!(
        "{:<6} {:<12} {:<10} {:<9} {:<8} {:<12} {:<20} CWD",
        "ID", "SESSION", "WINDOW", "SIZE", "PID", "COMMAND", "TITLE"
    );
    for p in panes {
        let focus = if p.focused { "*" } else { "" };
        println!(
            "{:<6} {:<12} {:<10} {:<9} {:<8} {:<12} {:<20} {}",
            format!("{}{focus}", p.id),
            p.session,
            format!("{}.{}", p.window, p.index),
            format!("{}x{}", p.cols, p.rows),
            p.pid.map(|p| p.to_string()).unwrap_or_default(),
            p.command,
            p.title.chars().take(20).collect::<String>(),
            p.cwd
        );
    }
}

async fn execute(command: Option<Command>) -> anyhow::Result<ExitCode> {
    let (rows, cols) = client::terminal_size().unwrap_or((24, 80));
    let attach = |target: Option<String>, create: Option<NewSession>, create_if_missing: bool| {
        ClientMessage::Attach {
            target,
            create,
            create_if_missing,
            rows,
            cols,
            term: std::env::var("TERM").ok(),
            terminal: None,
        }
    };
    let response = match command {
        None => {
            let spec = NewSession {
                name: None,
                cwd: cwd(),
                command: Vec::new(),
                env: client::session_env(),
            };
            return attach_and_report(attach(None, Some(spec), true), true).await;
        }
        Some(Command::Attach(args)) => {
            return attach_and_report(attach(args.target, None, false), false).await
        }
        Some(Command::New(args)) => {
            let spec = NewSession {
                name: args.name,
                cwd: start_dir(args.cwd).or_else(cwd),
                command: args.command,
                env: client::session_env(),
            };
            if args.detached {
                let rows = args.height.unwrap_or(rows);
                let cols = args.width.unwrap_or(cols);
                one_shot(Request::NewSession { spec, rows, cols }, true).await?
            } else {
                return attach_and_report(attach(None, Some(spec), false), true).await;
            }
        }
        Some(Command::Ls) => one_shot(Request::ListSessions, false).await?,
        Some(Command::ReloadConfig) => one_shot(Request::ReloadConfig, false).await?,
        Some(Command::Kill(args)) => {
            one_shot(
                Request::KillSession {
                    target: args.target,
                },
                false,
            )
            .await?
        }
        Some(Command::KillPane(args)) => {
            let target = default_target(args.target);
            one_shot(Request::KillPane { target }, false).await?
        }
        Some(Command::KillWindow(args)) => {
            let target = default_target(args.target);
            one_shot(Request::KillWindow { target }, false).await?
        }
        Some(Command::KillServer) => match one_shot(Request::KillServer, false).await {
            Ok(r) => r,
            Err(_) => Response::Ok,
        },
        Some(Command::Split(args)) => {
            one_shot(
                Request::Split {
                    target: default_target(args.target),
                    horizontal: args.horizontal,
                    detached: args.detached,
                    cwd: start_dir(args.cwd),
                    command: args.command,
                },
                false,
            )
            .await?
        }
        Some(Command::NewWindow(args)) => {
            one_shot(
                Request::NewWindow {
                    target: default_target(args.target),
                    name: args.name,
                    cwd: start_dir(args.cwd).or_else(cwd),
                    detached: args.detached,
                    command: args.command,
                },
                false,
            )
            .await?
        }
        Some(Command::SendKeys(args)) => {
            one_shot(
                Request::SendKeys {
                    target: default_target(args.target),
                    keys: args.keys,
                    literal: args.literal,
                },
                false,
            )
            .await?
        }
        Some(Command::Capture(args)) => {
            one_shot(
                Request::Capture {
                    target: default_target(args.target),
                    scrollback: args.scrollback,
                    ansi: args.ansi,
                },
                false,
            )
            .await?
        }
        Some(Command::ListPanes(args)) => {
            let response = one_shot(
                Request::ListPanes {
                    target: args.target,
                },
                false,
            )
            .await?;
            if let (true, Response::Panes(panes)) = (args.json, &response) {
                println!("{}", serde_json::to_string_pretty(panes)?);
                return Ok(ExitCode::SUCCESS);
            }
            response
        }
        Some(Command::Select(args)) => {
            one_shot(
                Request::Select {
                    target: default_target(args.target),
                },
                false,
            )
            .await?
        }
        Some(Command::Rename(args)) => {
            one_shot(
                Request::Rename {
                    target: args.target,
                    window: args.window,
                    name: args.name,
                },
                false,
            )
            .await?
        }
        Some(Command::Agents(args)) => match args.command {
            Some(AgentsCommand::Explain { pane }) => {
                one_shot(Request::AgentsExplain { pane }, false).await?
            }
            None => {
                let response = one_shot(Request::Agents, false).await?;
                return Ok(crate::agents_cli::print(response, args.json));
            }
        },
        Some(Command::Approvals(args)) => {
            let response = one_shot(
                Request::Approvals {
                    pending_only: args.pending,
                },
                false,
            )
            .await?;
            if args.rules {
                return Ok(crate::approvals::rules_cli::print_rules(
                    response, args.json,
                ));
            }
            return Ok(print_approvals(response, args.json));
        }
        Some(Command::Approve(args)) => {
            one_shot(
                Request::Decide {
                    id: args.id,
                    allow: true,
                    message: None,
                },
                false,
            )
            .await?
        }
        Some(Command::Deny(args)) => {
            one_shot(
                Request::Decide {
                    id: args.id,
                    allow: false,
                    message: args.message,
                },
                false,
            )
            .await?
        }
        Some(Command::Hook(args)) => return Ok(crate::hook::run(&args.kind, args.approval)),
        Some(Command::Setup(args)) => return Ok(crate::setup::run(args).await),
        Some(Command::Doctor(args)) => {
            // The last event per CLI comes from the running server's agent rows, if any.
            let agents = one_shot(Request::Agents, false).await.ok();
            let last = agents.map(|r| last_events(&r));
            return Ok(crate::setup::doctor::run(&args.agents, last.as_ref()));
        }
        Some(Command::Server(_)) => unreachable_server(),
    };
    Ok(print_response(response))
}

fn unreachable_server() -> Response {
    Response::Error("`calyx server` runs in the foreground process, not as a client".into())
}

async fn attach_and_report(message: ClientMessage, start: bool) -> anyhow::Result<ExitCode> {
    if inside_our_server() {
        eprintln!("{NESTED}");
        return Ok(ExitCode::FAILURE);
    }
    let stream = if start {
        client::connect_or_start().await?
    } else {
        client::connect_existing().await?
    };
    let text = client::attach(stream, message).await?;
    println!("[{text}]");
    let failed = text.starts_with("can't")
        || text.starts_with("no sessions")
        || text.starts_with("duplicate")
        || text.starts_with("bad");
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Prints `calyx approvals` as a table or JSON. Written in one go, ignoring a closed stdout:
/// scripts pipe it into `grep -q`, which may exit before reading it all.
fn print_approvals(response: Response, json: bool) -> ExitCode {
    use std::fmt::Write as _;
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
            let _ = writeln!(
                out,
                "{:<5} {:<5} {:<12} {:<10} {:<30} {}",
                field("id"),
                field("pane"),
                field("cli"),
                field("tool"),
                field("state"),
                field("summary")
            );
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
