//! `calyx server-upgrade` on the command line: asks the running server to hand over to the
//! new binary, then waits for the server that took over to answer and says what changed.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use tokio::io::AsyncWriteExt;

use crate::client;
use crate::protocol::{
    encode_message, read_frame, ClientMessage, Frame, Request, Response, ServerMessage,
};

/// How long the new server has to answer after the exec.
const TAKE_OVER_TIME: Duration = Duration::from_secs(10);

/// The server's version, protocol and pid, as `ServerVersion` answers.
async fn server_version() -> anyhow::Result<serde_json::Value> {
    let mut stream = client::connect_existing().await?;
    match client::request(&mut stream, Request::ServerVersion).await? {
        Response::Json(v) => Ok(v),
        Response::Error(e) => anyhow::bail!("{e}"),
        other => anyhow::bail!("unexpected answer {other:?}"),
    }
}

/// Runs `calyx server-upgrade [--binary PATH]`.
pub async fn server_upgrade(binary: Option<String>) -> anyhow::Result<ExitCode> {
    // The server resolves the path in its own directory: a relative one is made ours.
    let binary = match binary {
        Some(path) => Some(
            std::path::absolute(&path)
                .with_context(|| format!("bad binary path {path}"))?
                .display()
                .to_string(),
        ),
        None => None,
    };
    let before = server_version().await.context(
        "the running server does not know server-upgrade (it is older than this calyx); \
         stop it with `calyx kill-server` (the sessions are saved) and start again",
    )?;
    let mut stream = client::connect_existing().await?;
    stream
        .write_all(&encode_message(&ClientMessage::Request(
            Request::ServerUpgrade { binary },
        )))
        .await?;
    loop {
        match read_frame::<_, ServerMessage>(&mut stream).await {
            Ok(Frame::Message(ServerMessage::Response(Response::Error(e)))) => {
                eprintln!("calyx: {e}");
                return Ok(ExitCode::FAILURE);
            }
            Ok(_) => continue,
            // The connection closes as the server execs the new binary.
            Err(_) => break,
        }
    }
    let deadline = tokio::time::Instant::now() + TAKE_OVER_TIME;
    let after = loop {
        match server_version().await {
            Ok(v) => break v,
            Err(e) if tokio::time::Instant::now() >= deadline => {
                return Err(e.context("the new server did not answer after the upgrade"))
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    };
    println!(
        "calyx server upgraded from {} to {} (pid {}); every pane kept running",
        before["version"].as_str().unwrap_or("?"),
        after["version"].as_str().unwrap_or("?"),
        after["pid"]
    );
    Ok(ExitCode::SUCCESS)
}
