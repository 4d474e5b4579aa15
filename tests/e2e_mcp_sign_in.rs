//! End to end (issue 16, OAuth): an agent calls a tool of a hosted HTTP server that needs
//! sign-in. A real MCP server behind a loopback authorization server
//! ([`hosted_support::oauth_server`]) is added to a real calyx server whose tools cache already
//! knows its tool, so the tool stays published while the server waits for sign-in. An rmcp
//! client bound to a pane calls it: the attached client shows `Linear requires sign-in`; `s`
//! runs `$BROWSER` (the stand-in follows the redirect into calyx's listener, as a user
//! approving would), the server becomes ready and the original call returns the tool's result.
//! `Esc` instead answers every waiting call (two here, one prompt) with the sign-in sentence.
//! Signed in, a call to a tool that needs a scope the token lacks (a 403 `insufficient_scope`)
//! raises the prompt again; `s` steps up to that scope and the call returns its result. A
//! client with no display gets the address in the prompt, an OSC 8 link to all of it.

use crate::common::{self, Client, Env};
use crate::e2e_mcp_hosted::{calyx_ok, connect, published, row_when, Listener};
use crate::hosted_support::oauth_server::{browser_script, refusing_browser_script, OAuthServer};

use std::sync::atomic::Ordering;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult};

/// Generous: a loaded 2-core machine.
const DEADLINE: Duration = Duration::from_secs(90);

/// A calyx world whose tools cache knows `lin`'s tool `whoami` from an earlier run, a client
/// attached from a local desktop whose `$BROWSER` is the stand-in, and `lin` (named Linear)
/// added and waiting for sign-in.
async fn waiting_for_sign_in() -> (Env, Client, OAuthServer) {
    waiting_for_sign_in_on(true).await
}

/// [`waiting_for_sign_in`] with a browser whose user refuses.
async fn waiting_for_sign_in_refused() -> (Env, Client, OAuthServer) {
    waiting_for_sign_in_with(true, true).await
}

/// [`waiting_for_sign_in`], the client on a local desktop or (`desktop` false) on a box with
/// no display, which cannot open a browser; hyperlinks always on.
async fn waiting_for_sign_in_on(desktop: bool) -> (Env, Client, OAuthServer) {
    waiting_for_sign_in_with(desktop, false).await
}

async fn waiting_for_sign_in_with(desktop: bool, refuse: bool) -> (Env, Client, OAuthServer) {
    let server = OAuthServer::start();
    let env = Env::new();
    env.write_config("hyperlinks = \"always\"\n[mcp]\nsecret_store = \"file\"\n");
    let cache = serde_json::json!({"version": 1, "servers": {"lin": {
        "name": "Linear",
        "tools": [
            {"name": "whoami", "inputSchema": {"type": "object"}},
            {"name": "admin", "inputSchema": {"type": "object"}},
        ],
    }}});
    std::fs::create_dir_all(env.path().join("state/calyx")).expect("state dir");
    std::fs::write(
        env.path().join("state/calyx/mcp-tools-cache.json"),
        cache.to_string(),
    )
    .expect("the tools cache");
    let browser = if refuse {
        refusing_browser_script(env.path())
    } else {
        browser_script(env.path())
    };
    let mut vars = env.vars();
    if desktop {
        vars.push(("DISPLAY".into(), ":99".into()));
    }
    vars.push(("BROWSER".into(), browser.display().to_string()));
    let c = Client::spawn_with(&env, &["new", "-s", "si"], 30, 110, &vars);
    tokio::task::block_in_place(|| c.wait_for("[si]"));
    calyx_ok(
        &env,
        &[
            "mcp",
            "add",
            "lin",
            "--name",
            "Linear",
            "--url",
            &server.url(),
        ],
    )
    .await;
    row_when(&env, "lin", |r| r["state"] == "sign-in required").await;
    (env, c, server)
}

/// Calls `lin-whoami` in the background; its result when it ends.
fn call_whoami(
    peer: &rmcp::service::Peer<rmcp::RoleClient>,
) -> tokio::task::JoinHandle<CallToolResult> {
    call(peer, "lin-whoami")
}

fn call(
    peer: &rmcp::service::Peer<rmcp::RoleClient>,
    tool: &'static str,
) -> tokio::task::JoinHandle<CallToolResult> {
    let peer = peer.clone();
    tokio::spawn(async move {
        peer.call_tool(CallToolRequestParams::new(tool))
            .await
            .expect("a tool result, not a protocol error")
    })
}

async fn finished(call: tokio::task::JoinHandle<CallToolResult>) -> CallToolResult {
    tokio::time::timeout(DEADLINE, call)
        .await
        .expect("the call ends in time")
        .expect("the call's task")
}

/// Presses `s` in the asking prompt until it takes it: a prompt that appeared right after a
/// key lets its keys wake only 500 ms later (the user may have been typing).
fn sign_in_with_s(c: &mut Client) {
    let deadline = std::time::Instant::now() + DEADLINE;
    tokio::task::block_in_place(|| loop {
        c.send("s");
        let look_until = std::time::Instant::now() + Duration::from_millis(300);
        while std::time::Instant::now() < look_until {
            if !c.screen().contains("s Sign In    Esc Cancel") {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(std::time::Instant::now() < deadline, "s was never taken");
    });
}

fn wait_prompt_gone(c: &Client) {
    tokio::task::block_in_place(|| {
        c.wait_screen("the prompt gone", |s| !s.contains("requires sign-in"))
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_raises_the_prompt_and_signing_in_with_s_returns_its_result() {
    let (env, mut c, server) = waiting_for_sign_in().await;
    let agent = connect(&env, Listener::default()).await;
    assert!(
        published(&agent).await.iter().any(|n| n == "lin-whoami"),
        "the cached tool is published while the server waits for sign-in"
    );
    let call = call_whoami(agent.peer());

    let screen = tokio::task::block_in_place(|| c.wait_for("Linear requires sign-in"));
    assert!(screen.contains("s Sign In    Esc Cancel"), "{screen}");
    assert_eq!(server.calls.load(Ordering::SeqCst), 0, "not run yet");
    sign_in_with_s(&mut c);

    let answer = finished(call).await;
    let text = serde_json::to_string(&answer).unwrap_or_default();
    assert_ne!(answer.is_error, Some(true), "{text}");
    assert!(text.contains("signed in as tester"), "{text}");
    assert_eq!(server.calls.load(Ordering::SeqCst), 1, "ran upstream once");
    wait_prompt_gone(&c);
    let row = row_when(&env, "lin", |r| r["state"] == "ready").await;
    assert_eq!(row["signed_in"], true, "{row}");
    let _ = agent.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn esc_answers_every_waiting_call_with_the_sign_in_sentence() {
    let (env, mut c, server) = waiting_for_sign_in().await;
    let agent = connect(&env, Listener::default()).await;
    let first = call_whoami(agent.peer());
    let second = call_whoami(agent.peer());

    // Both calls wait on the one prompt: a single box, counting them.
    let screen = tokio::task::block_in_place(|| c.wait_for("2 calls wait"));
    assert_eq!(screen.matches("requires sign-in").count(), 1, "{screen}");
    c.send("\x1b");

    let sentence = "`Linear` requires sign-in: run `calyx mcp login lin` or sign in from prefix M";
    for call in [first, second] {
        let answer = finished(call).await;
        let text = serde_json::to_string(&answer).unwrap_or_default();
        assert_eq!(answer.is_error, Some(true), "{text}");
        assert!(text.contains(sentence), "{text}");
    }
    assert_eq!(
        server.calls.load(Ordering::SeqCst),
        0,
        "nothing ran upstream"
    );
    wait_prompt_gone(&c);
    let rows = common::wait_until_within("the row", DEADLINE, || {
        let rows: serde_json::Value =
            serde_json::from_str(&env.ok(&["mcp", "list", "--json"])).ok()?;
        Some(rows)
    });
    assert_eq!(rows[0]["state"], "sign-in required", "{rows}");
    let _ = agent.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_refused_for_its_scope_steps_up_through_the_prompt() {
    let (env, mut c, server) = waiting_for_sign_in().await;
    let agent = connect(&env, Listener::default()).await;
    let first = call_whoami(agent.peer());
    tokio::task::block_in_place(|| c.wait_for("Linear requires sign-in"));
    sign_in_with_s(&mut c);
    let answer = finished(first).await;
    assert_ne!(answer.is_error, Some(true), "{answer:?}");
    wait_prompt_gone(&c);
    row_when(&env, "lin", |r| r["state"] == "ready").await;

    // Ready and signed in, but without the scope `admin`: the 403 raises the prompt again.
    let admin = call(agent.peer(), "lin-admin");
    tokio::task::block_in_place(|| c.wait_for("Linear requires sign-in"));
    row_when(&env, "lin", |r| r["state"] == "sign-in required").await;
    sign_in_with_s(&mut c);
    let answer = finished(admin).await;
    let text = serde_json::to_string(&answer).unwrap_or_default();
    assert_ne!(answer.is_error, Some(true), "{text}");
    assert!(text.contains("admin granted"), "{text}");
    let scopes = server
        .scopes
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    assert_eq!(scopes.len(), 2, "a sign-in, then one step-up: {scopes:?}");
    assert!(
        scopes[1].split(' ').any(|s| s == "admin"),
        "the step-up asked for the challenged scope: {scopes:?}"
    );
    wait_prompt_gone(&c);
    // The connection stayed up: the row is ready again without reconnecting.
    row_when(&env, "lin", |r| r["state"] == "ready").await;
    let _ = agent.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_display_the_prompt_shows_the_address_as_a_link() {
    let (env, mut c, server) = waiting_for_sign_in_on(false).await;
    let agent = connect(&env, Listener::default()).await;
    let call = call_whoami(agent.peer());
    tokio::task::block_in_place(|| c.wait_for("Linear requires sign-in"));
    sign_in_with_s(&mut c);
    let authorize = format!("{}/authorize?", server.origin);
    tokio::task::block_in_place(|| c.wait_for("Open this address to sign in:"));
    // The whole address is the target of the OSC 8 link over its rows.
    let url = tokio::task::block_in_place(|| {
        common::wait_until_within("the address as a link", DEADLINE, || {
            let raw = String::from_utf8_lossy(&c.raw()).into_owned();
            let start = raw.find(&format!("\x1b]8;;{authorize}"))? + "\x1b]8;;".len();
            let end = start + raw[start..].find('\x1b')?;
            Some(raw[start..end].to_string())
        })
    });
    assert_eq!(
        server.scopes.lock().map(|s| s.len()).unwrap_or(0),
        0,
        "not opened"
    );
    // The user opens it in a browser elsewhere; it follows the redirect back to calyx.
    let status = std::process::Command::new(browser_script(env.path()))
        .arg(&url)
        .status()
        .expect("the browser stand-in runs");
    assert!(status.success());
    let answer = finished(call).await;
    let text = serde_json::to_string(&answer).unwrap_or_default();
    assert!(text.contains("signed in as tester"), "{text}");
    wait_prompt_gone(&c);
    let _ = agent.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_sign_in_says_why_in_the_prompt_and_esc_then_answers_the_call() {
    let (env, mut c, server) = waiting_for_sign_in_refused().await;
    let agent = connect(&env, Listener::default()).await;
    let call = call_whoami(agent.peer());
    tokio::task::block_in_place(|| c.wait_for("Linear requires sign-in"));
    sign_in_with_s(&mut c);
    let screen = tokio::task::block_in_place(|| c.wait_for("access_denied (no thanks)"));
    assert!(screen.contains("s Try again    Esc Cancel"), "{screen}");
    assert_eq!(
        server.scopes.lock().map(|s| s.len()).unwrap_or(0),
        1,
        "one authorization"
    );
    c.send("\x1b");
    let answer = finished(call).await;
    let text = serde_json::to_string(&answer).unwrap_or_default();
    assert_eq!(answer.is_error, Some(true), "{text}");
    assert!(text.contains("`Linear` requires sign-in"), "{text}");
    wait_prompt_gone(&c);
    let _ = agent.cancel().await;
}
