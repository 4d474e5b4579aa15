//! `calyx setup`: wires calyx into every agent CLI's own configuration (MCP entry, hooks,
//! plugin, extension), shows a unified diff of every file it would touch, asks once, writes.
//! `--uninstall` takes back exactly what calyx wrote. What each CLI gets, and how each file is
//! edited without breaking it, lives in `calyx_integrations::setup`; this module is the
//! command: discovery, the endpoint, the diff, the prompt, and the re-sync the server runs at
//! start.
//!
//! The endpoint: MCP entries hold the port and token literally, so setup needs them. When no
//! server has run yet (no endpoint file), setup starts the server (as any client command does)
//! and waits for it to write the file; `--dry-run` and `--uninstall` never start one (a dry
//! run shows the default port and a placeholder token instead).
//!
//! Before a CLI's files are written, the installed CLI is asked to load them where it offers a
//! way (`calyx_integrations::setup::cli_check`, which knows how to ask each CLI): a config the
//! CLI would reject is refused with its complaint, and nothing is written for that CLI.

mod diff;
pub mod doctor;

use std::collections::BTreeMap;
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context};
use calyx_integrations::setup::{self as plans, Ctx, Op, Plan};
use calyx_integrations::AgentKind;

use crate::cli::SetupArgs;
use crate::http::endpoint_file::{self, EndpointInfo};

/// `println!` that ignores a closed stdout (`calyx setup --dry-run | head` must not panic).
macro_rules! say {
    ($($arg:tt)*) => {{
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// Shown in dry runs before any server has created the real token.
const PLACEHOLDER_TOKEN: &str = "<token: created when the calyx server first starts>";

/// Runs `calyx setup`.
pub async fn run(args: SetupArgs) -> ExitCode {
    if args.status {
        return doctor::run(&args.agents, None);
    }
    match execute(args).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("calyx setup: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn execute(args: SetupArgs) -> anyhow::Result<ExitCode> {
    let op = if args.uninstall {
        Op::Uninstall
    } else {
        Op::Install
    };
    let calyx_bin = calyx_binary()?;
    let endpoint = match op {
        Op::Install if !args.dry_run => Some(ensure_endpoint().await?),
        _ => endpoint_file::read(&crate::paths::endpoint_file()),
    };
    let placeholder = endpoint.is_none();
    let endpoint = endpoint.unwrap_or_else(|| EndpointInfo {
        port: 41830,
        token: PLACEHOLDER_TOKEN.to_string(),
    });
    let ctx = context(&endpoint, &calyx_bin);
    let kinds = select_kinds(&args.agents, &ctx, op)?;
    if kinds.is_empty() {
        say!("calyx setup: no agent CLI found (use --agent NAME to name one)");
        return Ok(ExitCode::SUCCESS);
    }
    let mut failed = false;
    let mut plans_to_apply = Vec::new();
    for kind in kinds {
        match plans::plan(kind, &ctx, op) {
            Ok(plan) => {
                if op == Op::Install && !plan.changes.is_empty() && !cli_accepts(&plan, &ctx) {
                    failed = true;
                    continue;
                }
                print_plan(&plan, &endpoint.token);
                if !plan.changes.is_empty() {
                    plans_to_apply.push(plan);
                }
            }
            Err(e) => {
                eprintln!("calyx setup: {}: {e}", kind.display_name());
                failed = true;
            }
        }
    }
    if placeholder && op == Op::Install {
        say!("(no calyx server has run yet: the diff shows port 41830 and a placeholder token)");
    }
    if plans_to_apply.is_empty() {
        say!("Nothing to change.");
        return Ok(exit(failed));
    }
    if args.dry_run {
        say!("Dry run: nothing was written.");
        return Ok(exit(failed));
    }
    if !args.yes && !confirm(op)? {
        say!("Nothing was written.");
        return Ok(ExitCode::FAILURE);
    }
    for plan in &plans_to_apply {
        // A running CLI may have rewritten its file since the diff was read (Claude Code updates
        // ~/.claude.json constantly): plan again over its new contents and apply the same entries.
        let result = match plans::apply(plan) {
            Err(e) if e.changed() => plans::plan_and_apply(plan.kind, &ctx, op).map(|_| ()),
            other => other,
        };
        match result {
            Ok(()) => {
                let verb = if op == Op::Install {
                    "set up"
                } else {
                    "removed from"
                };
                say!("calyx {verb} {}.", plan.kind.display_name());
                if op == Op::Install {
                    for step in plans::user_steps(plan.kind) {
                        say!("  next: {step}");
                    }
                }
            }
            Err(e) => {
                eprintln!("calyx setup: {}: {e}", plan.kind.display_name());
                failed = true;
            }
        }
    }
    Ok(exit(failed))
}

fn exit(failed: bool) -> ExitCode {
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Asks the installed CLI to load the files as `plan` would leave them (see `cli_check`) and
/// says what it answered; false when it rejected them (the error names the CLI, the file and
/// its complaint).
fn cli_accepts(plan: &Plan, ctx: &Ctx) -> bool {
    let name = plan.kind.display_name();
    match plans::cli_check::check(plan.kind, ctx, Some(plan)) {
        None => true,
        Some(plans::cli_check::Verdict::Accepted(how)) => {
            say!("{name}: checked: {how}");
            true
        }
        Some(plans::cli_check::Verdict::Unchecked(why)) => {
            say!("{name}: warning: could not check the new config with the CLI: {why}");
            true
        }
        Some(plans::cli_check::Verdict::Rejected {
            file,
            cli,
            complaint,
        }) => {
            eprintln!(
                "calyx setup: {name}: {}: {cli} rejects the config calyx would write, so nothing was written for {name}: {complaint}",
                file.display()
            );
            false
        }
    }
}

/// The absolute, canonical path of this binary, which hooks will run. A path with a double
/// quote cannot be quoted in every CLI's syntax, so it is refused up front.
pub fn calyx_binary() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe().context("failed to find the calyx binary")?;
    let exe = exe.canonicalize().unwrap_or(exe);
    if exe.to_string_lossy().contains(['"', '\n', '\r']) {
        bail!(
            "the calyx binary's path {} contains a quote or line break; move calyx elsewhere",
            exe.display()
        );
    }
    Ok(exe)
}

/// The endpoint file's port and token, starting the server when there is none yet.
async fn ensure_endpoint() -> anyhow::Result<EndpointInfo> {
    let path = crate::paths::endpoint_file();
    if let Some(info) = endpoint_file::read(&path) {
        return Ok(info);
    }
    crate::client::connect_or_start()
        .await
        .context("no endpoint file yet, and the calyx server could not be started")?;
    for _ in 0..100 {
        if let Some(info) = endpoint_file::read(&path) {
            return Ok(info);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    bail!(
        "the calyx server started but did not write {}",
        path.display()
    )
}

/// The planning context from the real environment, with `[mcp] host_servers` from calyx's
/// config.toml (read here, not passed in, so that setup, doctor and the server's re-sync at
/// start all follow the file as it is now; the server reports the file's problems).
pub fn context(endpoint: &EndpointInfo, calyx_bin: &Path) -> Ctx {
    let env: BTreeMap<String, String> = plans::RELOCATING_VARS
        .iter()
        .filter_map(|&k| std::env::var(k).ok().map(|v| (k.to_string(), v)))
        .collect();
    Ctx {
        home: crate::paths::home_dir(),
        env,
        calyx_bin: calyx_bin.to_path_buf(),
        endpoint_file: crate::paths::endpoint_file(),
        port: endpoint.port,
        token: endpoint.token.clone(),
        host_servers: crate::config::Config::load(&crate::paths::config_file())
            .0
            .mcp_host_servers,
    }
}

pub use plans::find_binary;

/// Whether the CLI looks installed: its binary on PATH or its config directory present.
pub fn discovered(kind: AgentKind, ctx: &Ctx) -> bool {
    find_binary(kind).is_some() || plans::config_dir(kind, ctx).is_dir()
}

/// The CLIs to work on: the named ones; else, for install, the verified CLIs that are found;
/// for uninstall, every CLI where calyx's entries are present.
fn select_kinds(names: &[String], ctx: &Ctx, op: Op) -> anyhow::Result<Vec<AgentKind>> {
    if !names.is_empty() {
        let mut kinds = Vec::new();
        for name in names {
            let kind: AgentKind = name.parse()?;
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
        }
        return Ok(kinds);
    }
    Ok(AgentKind::ALL
        .into_iter()
        .filter(|&k| match op {
            Op::Install => plans::verified(k) && discovered(k, ctx),
            Op::Uninstall => plans::is_installed(k, ctx).unwrap_or(true),
        })
        .collect())
}

fn print_plan(plan: &Plan, token: &str) {
    let mut out = std::io::stdout().lock();
    for change in &plan.changes {
        let _ = write!(out, "{}", diff::unified(change, token));
    }
    for note in &plan.notes {
        let _ = writeln!(out, "{}: note: {note}", plan.kind.display_name());
    }
}

/// Asks once on the terminal. Without a terminal, refuses: an unattended run must say --yes.
fn confirm(op: Op) -> anyhow::Result<bool> {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        bail!("not asking without a terminal: run with --yes to apply, or --dry-run to only look");
    }
    let verb = if op == Op::Install { "Apply" } else { "Remove" };
    let _ = write!(std::io::stdout(), "{verb} these changes? [y/N] ");
    std::io::stdout().flush()?;
    let mut line = String::new();
    stdin.lock().read_line(&mut line)?;
    Ok(matches!(line.trim(), "y" | "Y" | "yes" | "YES" | "Yes"))
}

/// Run by the server at start: brings calyx's entries up to date (port, token, binary path)
/// for every CLI where they are already installed, with no prompt. CLIs without calyx's
/// entries are not touched. Returns one human-readable message per CLI updated or failed.
pub fn resync_installed(endpoint: &EndpointInfo, calyx_bin: &Path) -> Vec<String> {
    let ctx = context(endpoint, calyx_bin);
    let mut messages = Vec::new();
    for kind in AgentKind::ALL {
        let result = plans::is_installed(kind, &ctx).and_then(|installed| {
            if !installed {
                return Ok(None);
            }
            let plan = plans::plan_and_apply(kind, &ctx, Op::Install)?;
            Ok((!plan.changes.is_empty()).then_some(plan))
        });
        match result {
            Ok(Some(plan)) => {
                let files: Vec<String> = plan
                    .changes
                    .iter()
                    .map(|c| c.path.display().to_string())
                    .collect();
                messages.push(format!(
                    "re-synced calyx's entries for {}: {}",
                    kind.display_name(),
                    files.join(", ")
                ));
            }
            Ok(None) => {}
            Err(e) => messages.push(format!("could not re-sync {}: {e}", kind.display_name())),
        }
    }
    messages
}
