//! A standalone `/mcp` endpoint backed by the fake backend, for the MCP conformance suite and
//! the inspector: prints `URL` and `TOKEN` lines, then serves until killed or stdin closes.

use std::sync::Arc;

use calyx::http::{self, EndpointOptions};
use calyx::mcp::testing::FakeBackend;
use calyx::mcp::McpOptions;
use tokio::io::AsyncReadExt;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let options = EndpointOptions {
        mcp: Some(McpOptions::new(Arc::new(FakeBackend::new()))),
        ..EndpointOptions::ephemeral(dir.path().join("agent-endpoint.json"))
    };
    // Hook routes are not exercised here: an owner that never answers is enough.
    let (sender, _requests) = tokio::sync::mpsc::channel(1);
    let handle = http::start(sender, options).await?;
    println!("URL http://127.0.0.1:{}/mcp", handle.port());
    println!("TOKEN {}", handle.token());
    let mut sink = Vec::new();
    let _ = tokio::io::stdin().read_to_end(&mut sink).await;
    handle.shutdown().await
}
