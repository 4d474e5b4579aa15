//! The project's fixture MCP server (issue 16, "Tests"): a test program on rmcp's server for
//! what the npm servers cannot do on demand. Not a calyx feature; tests and
//! scripts/bench-mcp-hosted.py run it from `target/<profile>/examples/mcp_fixture`.
//!
//! `mcp_fixture [stdio]` speaks MCP on stdin/stdout; `mcp_fixture http` serves Streamable HTTP
//! on a free 127.0.0.1 port and prints its URL as the first stdout line. `slow` appends
//! `cancelled <request id>` to the file named by `--cancel-record PATH` or
//! `$CALYX_FIXTURE_CANCEL_RECORD`. `http --oauth` wants a bearer and serves its own
//! authorization server (`oauth.rs`), for sign-in tests.
//!
//! Tools: `echo {message}`, `add_tool` (adds `added-N`, sends tools/list_changed), `slow`
//! (progress, then waits for its cancel), `big {mib}` ([`tools::big_text`]), `dotted.name`,
//! a 56-character name ([`tools::LONG`]), `needs_task` (`execution.taskSupport: "required"`),
//! `exit {code}`, `elicit-form` and `elicit-url {url, id, complete}` (ask the client with
//! `elicitation/create`, answer with its `ElicitResult`); `show_time` and `show_wait` have an
//! MCP App view (`view.rs`).

mod http;
mod oauth;
mod raw;
mod tools;
mod view;

use std::path::PathBuf;

use rmcp::ServiceExt;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut mode = "stdio".to_string();
    let mut oauth = false;
    let mut cancel_record = std::env::var_os("CALYX_FIXTURE_CANCEL_RECORD").map(PathBuf::from);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "stdio" | "http" => mode = arg,
            "--oauth" => oauth = true,
            "--cancel-record" => {
                let path = args
                    .next()
                    .ok_or_else(|| anyhow::anyhow!("--cancel-record needs a path"))?;
                cancel_record = Some(PathBuf::from(path));
            }
            other => anyhow::bail!(
                "usage: mcp_fixture [stdio|http [--oauth]] [--cancel-record PATH] (not {other:?})"
            ),
        }
    }
    let fixture = tools::Fixture::new(cancel_record);
    if mode == "http" {
        return http::serve(fixture, oauth).await;
    }
    let running = fixture.serve(raw::stdio()).await?;
    running.waiting().await?;
    Ok(())
}
