//! A standalone agent endpoint for measuring `calyx hook` (docs/performance.md): an owner that
//! accepts every event (204) and leaves every approval to the CLI (200, empty). It writes the
//! endpoint file where `calyx hook` looks (`$XDG_STATE_HOME/calyx/agent-endpoint.json`), prints
//! the port and the file's path, and runs until SIGINT or SIGTERM (then shuts down cleanly,
//! removing the file).
//!
//! Not a calyx feature: the real server runs the endpoint inside `calyx server`.

use calyx::http::{self, EndpointCall, EndpointOptions, EndpointReply, EndpointRequest};
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::mpsc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let (sender, mut requests) = mpsc::channel::<EndpointRequest>(256);
    tokio::spawn(async move {
        while let Some(EndpointRequest { call, reply }) = requests.recv().await {
            let answer = match call {
                EndpointCall::AgentEvent { .. } => EndpointReply::NoContent,
                EndpointCall::ApprovalRequest { .. } => EndpointReply::EmptyOk,
            };
            let _ = reply.send(answer);
        }
    });
    let options = EndpointOptions::ephemeral(calyx::paths::endpoint_file());
    let handle = http::start(sender, options).await?;
    println!("port {}", handle.port());
    println!("endpoint file {}", handle.endpoint_file().display());
    let mut terminate = signal(SignalKind::terminate())?;
    tokio::select! {
        result = tokio::signal::ctrl_c() => result?,
        _ = terminate.recv() => {}
    }
    handle.shutdown().await
}
