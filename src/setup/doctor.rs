//! `calyx doctor` (also `calyx setup --status`): per agent CLI, where its binary is and which
//! version, whether calyx's MCP entry and hooks are installed and current (binary path, port,
//! token), whether calyx's endpoint answers, the last event calyx received from it, and what
//! is left for the user to do. Exits non-zero when something is wrong: an endpoint that does
//! not answer, entries that are stale, a config file calyx cannot read.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use calyx_integrations::setup::{self as plans, Op};
use calyx_integrations::AgentKind;

use crate::http::endpoint_file::{self, EndpointInfo};

/// The last event calyx received per CLI: event name and when. The server's agent rows hold
/// this; the caller passes it when it has it (`None` prints "unknown").
pub type LastEvents = HashMap<AgentKind, (String, SystemTime)>;

/// Prints the report for the named CLIs (all when empty) and returns the exit status.
pub fn run(agents: &[String], last_events: Option<&LastEvents>) -> ExitCode {
    let mut kinds = Vec::new();
    for name in agents {
        match name.parse::<AgentKind>() {
            Ok(k) => kinds.push(k),
            Err(e) => {
                eprintln!("calyx doctor: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let calyx_bin = match super::calyx_binary() {
        Ok(b) => b,
        Err(e) => {
            eprintln!("calyx doctor: {e:#}");
            return ExitCode::FAILURE;
        }
    };
    let (text, ok) = report(&kinds, &calyx_bin, last_events);
    let _ = std::io::stdout().write_all(text.as_bytes());
    let _ = std::io::stdout().write_all(sessions_file_lines().as_bytes());
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// A line per sessions file the server found unusable and moved aside (issue 18 §1): the
/// server started without it, and the user may want to look at it or delete it.
fn sessions_file_lines() -> String {
    let path = crate::persist::file::sessions_file();
    crate::persist::file::moved_aside(&path)
        .iter()
        .map(|bad| {
            format!(
                "sessions: {} was unusable and moved aside to {} (the server started without it)\n",
                path.display(),
                bad.display()
            )
        })
        .collect()
}

/// The report's text and whether everything is fine.
pub fn report(
    kinds: &[AgentKind],
    calyx_bin: &Path,
    last_events: Option<&LastEvents>,
) -> (String, bool) {
    let mut out = String::new();
    let mut ok = true;
    let endpoint_path = crate::paths::endpoint_file();
    let endpoint = endpoint_file::read(&endpoint_path);
    let _ = writeln!(out, "calyx {}", calyx_bin.display());
    match &endpoint {
        None => {
            ok = false;
            let _ = writeln!(
                out,
                "endpoint: no endpoint file at {} (start calyx, or run `calyx setup`)",
                endpoint_path.display()
            );
        }
        Some(info) => match health(info) {
            Ok(()) => {
                let _ = writeln!(out, "endpoint: http://127.0.0.1:{} answers", info.port);
            }
            Err(e) => {
                ok = false;
                let _ = writeln!(
                    out,
                    "endpoint: http://127.0.0.1:{} does not answer ({e}); is the calyx server running?",
                    info.port
                );
            }
        },
    }
    ok &= report_secrets(&mut out);
    let probe = endpoint.clone().unwrap_or(EndpointInfo {
        port: 0,
        token: String::new(),
    });
    let ctx = super::context(&probe, calyx_bin);
    let mut shown = 0;
    let mut wired = 0;
    let selected: Vec<AgentKind> = if kinds.is_empty() {
        AgentKind::ALL.to_vec()
    } else {
        kinds.to_vec()
    };
    for kind in selected {
        let binary = plans::find_binary(kind);
        let found = binary.is_some() || plans::config_dir(kind, &ctx).is_dir();
        if !found && kinds.is_empty() {
            continue;
        }
        shown += 1;
        let _ = writeln!(out, "\n{} ({kind})", kind.display_name());
        match &binary {
            Some(path) => {
                let version = plans::cli_check::version(kind, path)
                    .unwrap_or_else(|| "version unknown".into());
                let _ = writeln!(out, "  binary: {} ({version})", path.display());
            }
            None => {
                let _ = writeln!(out, "  binary: not on PATH");
            }
        }
        let installed = plans::is_installed(kind, &ctx);
        let wired_here = matches!(installed, Ok(true));
        wired += usize::from(wired_here);
        let install_plan = plans::plan(kind, &ctx, Op::Install);
        let current = install_plan
            .as_ref()
            .map(|p| !p.changes.iter().any(|c| c.edits_text()))
            .map_err(Clone::clone);
        if matches!(installed, Ok(true)) {
            if let Ok(plan) = &install_plan {
                ok &= report_readable_token(&mut out, plan);
            }
        }
        match (installed, current) {
            (Err(e), _) | (_, Err(e)) => {
                ok = false;
                let _ = writeln!(out, "  config: {e}");
            }
            (Ok(false), _) => {
                let _ = writeln!(
                    out,
                    "  calyx entries: not installed (run `calyx setup --agent {kind}`)"
                );
                if !plans::verified(kind) {
                    let _ = writeln!(out, "  note: calyx could not test this CLI; its file formats come from published notes, so it is wired only when named with --agent");
                }
            }
            (Ok(true), Ok(true)) if endpoint.is_some() => {
                let _ = writeln!(out, "  calyx entries: installed and current");
            }
            (Ok(true), Ok(_)) if endpoint.is_none() => {
                let _ = writeln!(
                    out,
                    "  calyx entries: installed (port and token not checked: no endpoint file)"
                );
            }
            (Ok(true), Ok(_)) => {
                ok = false;
                let _ = writeln!(out, "  calyx entries: installed but stale (binary path, port or token changed): run `calyx setup --agent {kind}`");
            }
        }
        if wired_here {
            report_mcp_entries(&mut out, kind, &ctx);
        }
        if let Some(verdict) = plans::cli_check::check(kind, &ctx, None) {
            ok &= report_check(&mut out, verdict);
        }
        let last = last_events
            .and_then(|m| m.get(&kind))
            .map(|(event, at)| format!("{}, {} ago", event_in_words(event), ago(*at)))
            .unwrap_or_else(|| "unknown".into());
        let _ = writeln!(out, "  last event: {last}");
        for step in plans::standing_steps(kind) {
            let _ = writeln!(out, "  to do: {step}");
        }
    }
    // Nothing to supervise is not a healthy state: say what to do, and fail for scripts.
    if shown == 0 {
        ok = false;
        let names: Vec<&str> = AgentKind::ALL.iter().map(|k| k.display_name()).collect();
        let _ = writeln!(
            out,
            "\nno agent CLI found (looked on PATH and in the config folders of {}): install one, then run `calyx setup`",
            names.join(", ")
        );
    } else if wired == 0 {
        ok = false;
        let _ = writeln!(
            out,
            "\nno CLI has calyx's entries yet: run `calyx setup` (agents report nothing to calyx until then)"
        );
    }
    (out, ok)
}

/// One line on where hosted MCP servers' secrets are kept: `secrets: Secret Service` or
/// `secrets: file PATH (0600) (no usable Secret Service: <reason>)`. It comes from the same
/// choice the server makes at its first need (`[mcp] secret_store`; `auto` probes the Secret
/// Service with a write, read and delete, 3 s at most), so doctor says what the server does.
/// `secret_store = "keyring"` without a usable Secret Service is a failure: hosted servers
/// needing a secret cannot start.
fn report_secrets(out: &mut String) -> bool {
    let setting = crate::config::Config::load(&crate::paths::config_file())
        .0
        .mcp_secret_store;
    match crate::hosted::secrets::choose_here(setting) {
        Ok(chosen) => {
            let _ = writeln!(out, "{}", chosen.summary);
            true
        }
        Err(e) => {
            let _ = writeln!(out, "secrets: {e}");
            false
        }
    }
}

/// The last event's name as the user reads it: the CLI's own event names stay as they are (they
/// are what the CLI's docs call them), calyx's own records are said in words.
fn event_in_words(event: &str) -> String {
    match event {
        "calyx:approval" => "a permission request calyx held for you".into(),
        "calyx:decision" => "your answer in calyx's approval panel".into(),
        other => other.into(),
    }
}

/// One line on calyx's two MCP entries in the CLI's config (pi: its extension's two tools):
/// each there or not, and for `calyx-mcp` whether `[mcp] host_servers` wants it. A mismatch
/// is already a stale install above; this says which entry it is.
fn report_mcp_entries(out: &mut String, kind: AgentKind, ctx: &plans::Ctx) {
    use plans::mcp_entries::HOSTED_ENTRY;
    let present = match plans::mcp_entry_files::present(kind, ctx) {
        Ok(Some(present)) => present,
        Ok(None) => return,
        Err(e) => {
            let _ = writeln!(out, "  MCP entries: {e}");
            return;
        }
    };
    let parts: Vec<String> = present
        .iter()
        .map(|&(name, there)| {
            let shown = match (kind, name == HOSTED_ENTRY) {
                (AgentKind::Pi, false) => "tool calyx (calyx-ipc)",
                (AgentKind::Pi, true) => "tool calyx_mcp (calyx-mcp)",
                _ => name,
            };
            let state = match (name == HOSTED_ENTRY, there, ctx.host_servers) {
                (_, true, true) | (false, true, _) => "present",
                (true, true, false) => "present, but [mcp] host_servers = false: setup removes it",
                (true, false, false) => "not written ([mcp] host_servers = false)",
                (_, false, _) => "missing",
            };
            format!("{shown} {state}")
        })
        .collect();
    let label = if kind == AgentKind::Pi {
        "MCP tools (pi extension)"
    } else {
        "MCP entries"
    };
    let _ = writeln!(out, "  {label}: {}", parts.join("; "));
}

/// Reports what the installed CLI said when asked to load its config as it is now.
fn report_check(out: &mut String, verdict: plans::cli_check::Verdict) -> bool {
    use plans::cli_check::Verdict;
    match verdict {
        Verdict::Accepted(how) => {
            let _ = writeln!(out, "  config check: {how}");
            true
        }
        Verdict::Unchecked(why) => {
            let _ = writeln!(out, "  config check: not checked: {why}");
            true
        }
        Verdict::Rejected {
            file,
            cli,
            complaint,
        } => {
            let _ = writeln!(
                out,
                "  config check: {cli} rejects {}: {complaint}",
                file.display()
            );
            false
        }
    }
}

/// Reports each installed file that holds calyx's token and that other local users can read
/// (group or other permission bits set); returns whether there was none.
fn report_readable_token(out: &mut String, plan: &plans::Plan) -> bool {
    let mut ok = true;
    for change in &plan.changes {
        if let Some(mode) = change.old_mode {
            ok = false;
            let path = change.path.display();
            let _ = writeln!(
                out,
                "  token: {path} is mode {mode:04o} and holds calyx's token: other local users can read it and act as your agents; run `chmod 600 {path}` (or `calyx setup --agent {}`, which does it)",
                plan.kind
            );
        }
    }
    ok
}

fn ago(at: SystemTime) -> String {
    let secs = SystemTime::now()
        .duration_since(at)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    match secs {
        0..=59 => format!("{secs}s"),
        60..=3599 => format!("{}m", secs / 60),
        _ => format!("{}h", secs / 3600),
    }
}

/// `GET /health` with the bearer token; Ok when the server answers 200.
fn health(info: &EndpointInfo) -> std::io::Result<()> {
    let timeout = Duration::from_secs(2);
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, info.port));
    let mut stream = TcpStream::connect_timeout(&addr, timeout)?;
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    write!(
        stream,
        "GET /health HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {}\r\nConnection: close\r\n\r\n",
        info.port, info.token
    )?;
    let mut head = [0u8; 64];
    let n = stream.read(&mut head)?;
    let line = String::from_utf8_lossy(&head[..n]);
    if line.starts_with("HTTP/1.1 200") || line.starts_with("HTTP/1.0 200") {
        Ok(())
    } else {
        let status = line.lines().next().unwrap_or("").to_string();
        Err(std::io::Error::other(format!("answered {status:?}")))
    }
}
