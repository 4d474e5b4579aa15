//! calyx: a terminal multiplexer for running and supervising coding agents.

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = calyx::cli::Cli::parse();
    match cli.command {
        Some(calyx::cli::Command::Hook(args)) => calyx::hook::run(&args.kind, args.approval),
        _ => std::process::ExitCode::SUCCESS,
    }
}
