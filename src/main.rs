//! calyx: a terminal multiplexer for running and supervising coding agents.

use std::process::ExitCode;

use clap::Parser;

use calyx::cli::{Cli, Command};

fn main() -> ExitCode {
    // `calyx hook` runs on every tool call of every agent: the forms `calyx setup` writes are
    // read here before clap builds the whole command line's parser.
    if let Some((kind, approval)) = hook_args(std::env::args_os().skip(1)) {
        return calyx::hook::run(&kind, approval);
    }
    let cli = Cli::parse();
    if let Some(text) = &cli.remote.remote {
        if let Err(e) = remote_target(text, cli.command.as_ref()) {
            eprintln!("calyx: {e:#}");
            return ExitCode::FAILURE;
        }
    }
    let install = cli.remote.install;
    match cli.command {
        // First, and alone: `calyx hook` runs on every tool call of every agent, so it builds no
        // runtime, asks no terminal anything (crossterm would run `tput` without one) and
        // starts no process.
        Some(Command::Hook(args)) => calyx::hook::run(&args.kind, args.approval),
        Some(Command::Server(args)) if args.check_adopt => calyx::upgrade::check_adopt(),
        Some(Command::Server(args)) => {
            let served = match args.adopt {
                Some(fd) => calyx::server::serve_adopted(fd),
                None => calyx::server::serve(calyx::paths::socket_path()),
            };
            match served {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("calyx server: {e:#}");
                    ExitCode::FAILURE
                }
            }
        }
        command => {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    eprintln!("calyx: failed to start: {e}");
                    return ExitCode::FAILURE;
                }
            };
            let code = runtime.block_on(calyx::commands_cli::run(command, install));
            // stdin reads may sit in a blocking thread: do not wait for them.
            runtime.shutdown_background();
            code
        }
    }
}

/// Sends every connection of this process to `--remote`'s machine; refused for the commands
/// that only make sense on this one.
fn remote_target(text: &str, command: Option<&Command>) -> anyhow::Result<()> {
    let local_only = match command {
        Some(Command::Hook(_)) => Some("hook"),
        Some(Command::Server(_)) => Some("server"),
        Some(Command::Setup(_)) => Some("setup"),
        Some(Command::Doctor(_)) => Some("doctor"),
        Some(Command::RemoteBridge(_)) => Some("remote-bridge"),
        Some(Command::Machine(_)) => Some("machine"),
        _ => None,
    };
    if let Some(verb) = local_only {
        anyhow::bail!(
            "`calyx {verb}` works on this machine only; run it on the remote (ssh HOST calyx {verb})"
        );
    }
    calyx::remote::set_target(calyx::remote::Target::parse(text)?);
    Ok(())
}

/// `hook KIND` or `hook KIND --approval` (either order), exactly; anything else (`--help`, a
/// typo) goes through clap, which explains.
fn hook_args(mut args: impl Iterator<Item = std::ffi::OsString>) -> Option<(String, bool)> {
    if args.next()? != "hook" {
        return None;
    }
    let rest: Vec<String> = args.map(|a| a.into_string().ok()).collect::<Option<_>>()?;
    let approval = rest.iter().any(|a| a == "--approval");
    let mut kinds = rest.iter().filter(|a| *a != "--approval");
    let kind = kinds.next()?;
    let plain = !kind.starts_with('-') && kinds.next().is_none() && rest.len() <= 2;
    plain.then(|| (kind.clone(), approval))
}

#[cfg(test)]
mod tests {
    use super::hook_args;

    fn parse(args: &[&str]) -> Option<(String, bool)> {
        hook_args(args.iter().map(std::ffi::OsString::from))
    }

    #[test]
    fn only_the_exact_hook_forms_skip_clap() {
        assert_eq!(parse(&["hook", "codex"]), Some(("codex".into(), false)));
        assert_eq!(
            parse(&["hook", "codex", "--approval"]),
            Some(("codex".into(), true))
        );
        assert_eq!(
            parse(&["hook", "--approval", "codex"]),
            Some(("codex".into(), true))
        );
        for other in [
            &["hook"][..],
            &["hook", "--help"],
            &["hook", "codex", "--approval", "--approval"],
            &["hook", "codex", "extra"],
            &["hook", "--approval"],
            &["ls"],
            &[],
        ] {
            assert_eq!(parse(other), None, "{other:?}");
        }
    }
}
