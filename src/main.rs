//! calyx: a terminal multiplexer for running and supervising coding agents.

use std::process::ExitCode;

use clap::Parser;

use calyx::cli::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        // First, and alone: `calyx hook` runs on every tool call of every agent, so it builds no
        // runtime, asks no terminal anything (crossterm would run `tput` without one) and
        // starts no process.
        Some(Command::Hook(args)) => calyx::hook::run(&args.kind, args.approval),
        Some(Command::Server(_)) => match calyx::server::socket::serve(calyx::paths::socket_path())
        {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("calyx server: {e:#}");
                ExitCode::FAILURE
            }
        },
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
            let code = runtime.block_on(calyx::commands_cli::run(command));
            // stdin reads may sit in a blocking thread: do not wait for them.
            runtime.shutdown_background();
            code
        }
    }
}
