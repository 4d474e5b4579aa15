//! calyx: a terminal multiplexer for running and supervising coding agents.

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = calyx::cli::Cli::parse();
    let _ = cli;
    std::process::ExitCode::SUCCESS
}
