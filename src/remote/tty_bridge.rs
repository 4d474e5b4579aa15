//! `calyx remote-bridge --tty`, run by `ssh -t` on the far side of an interactive `calyx
//! --remote` (`remote::tty`): the terminal here is the pty sshd allocated, and this process
//! attaches it to this machine's server exactly as a local `calyx attach` does, terminal
//! handover included (`client::attach`, `server::terminal`): the server reads keys from that
//! pty and draws on it itself. A keystroke then goes terminal -> ssh -> sshd -> pty -> server,
//! with no calyx process relaying on either machine.
//!
//! The exit status is what the machine that ran ssh acts on: 0 detached (or the session
//! ended), [`BACK_CODE`] left with `prefix L` for the session named by `--back-to`, 1 an
//! attach that failed (its message printed here, so on the user's terminal).

use std::process::ExitCode;

use anyhow::Context;

use super::switch::BACK_CODE;
use super::words;
use crate::cli::RemoteBridgeArgs;
use crate::protocol::{ClientMessage, NewSession, BACK_MESSAGE};

/// Attaches this terminal and returns the status for ssh to pass back.
pub async fn run(args: RemoteBridgeArgs) -> ExitCode {
    match attach(args).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("calyx: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn attach(args: RemoteBridgeArgs) -> anyhow::Result<ExitCode> {
    let target = args.target.as_deref().map(words::decode).transpose()?;
    let back_to = args.back_to.as_deref().map(words::decode).transpose()?;
    let env = terminal_env(&args.env)?;
    let (rows, cols) = crate::client::terminal_size().unwrap_or((24, 80));
    // As for any remote client: the sign-in page of a hosted server is shown as an address,
    // never opened in a browser of this machine (the user sits at the other one).
    let mut opener_env = crate::client::opener_env();
    opener_env.retain(|(k, _)| k == "USER");
    let message = ClientMessage::Attach {
        target,
        create: args.create.then(|| NewSession {
            name: None,
            cwd: None,
            command: Vec::new(),
            env,
        }),
        create_if_missing: args.create,
        rows,
        cols,
        term: std::env::var("TERM").ok(),
        terminal: None,
        opener_env,
        back_to: back_to.clone(),
    };
    let stream = if args.no_start {
        crate::client::connect_existing().await?
    } else {
        crate::client::connect_or_start().await?
    };
    let text = crate::client::attach(stream, message).await?;
    if back_to.is_some() && text == BACK_MESSAGE {
        return Ok(ExitCode::from(BACK_CODE));
    }
    Ok(crate::client::report(&text))
}

/// What new sessions get from the user's terminal: the `--env NAME=VALUE` the other machine
/// sent (only the variables that describe a terminal; any other name is ignored), and `TERM`,
/// which ssh itself forwarded.
fn terminal_env(words_given: &[String]) -> anyhow::Result<Vec<(String, String)>> {
    let mut env = Vec::new();
    for word in words_given {
        let pair = words::decode(word)?;
        let (name, value) = pair
            .split_once('=')
            .with_context(|| format!("--env {pair:?}: NAME=VALUE expected"))?;
        if crate::client::is_terminal_var(name) && name != "TERM" {
            env.push((name.to_string(), value.to_string()));
        }
    }
    if let Ok(term) = std::env::var("TERM") {
        env.push(("TERM".to_string(), term));
    }
    Ok(env)
}
