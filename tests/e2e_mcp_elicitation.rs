//! End to end (issue 17, "Elicitation"): server-everything hosted by a real calyx server over
//! stdio, a real client attached in a PTY, and an agent (rmcp's client bound to a pane) calling
//! `ev-trigger-elicitation-request`. The server's `elicitation/create` becomes the panel
//! `Everything request` in the client's screen, with the defaults pre-filled; keys fill it and
//! accept it, and the tool's result echoes the typed values (integers as integers). Two more
//! runs decline and cancel it. `ev-trigger-url-elicitation` shows the URL panel: Open answers
//! accept (the client has no display: the panel shows the address), `Done` closes it; with
//! `errorPath: true` the call's `-32042` shows the prerequisite page and the call is retried
//! once it is done. The project's fixture server (no npm) checks every field kind's typed
//! content exactly, and a URL panel closed by the server's `notifications/elicitation/complete`.

use crate::common::{Client, Env};
use crate::e2e_mcp_hosted::{calyx_ok, connect, published, row_when, Listener};
use crate::hosted_support::fixture::mcp_fixture;
use crate::hosted_support::server_everything;

use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::RoleClient;
use serde_json::{json, Value};

/// Generous: a loaded 2-core machine.
const DEADLINE: Duration = Duration::from_secs(90);

/// A calyx world with a client attached to session `el` and server-everything added as `ev`
/// (named Everything) and ready; None when Node or the package is missing.
async fn everything_world() -> Option<(Env, Client)> {
    let index = server_everything()?.display().to_string();
    let env = Env::new();
    env.write_config("[mcp]\nsecret_store = \"file\"\n");
    let c = Client::spawn_with(&env, &["new", "-s", "el"], 30, 110, &env.vars());
    tokio::task::block_in_place(|| c.wait_for("[el]"));
    calyx_ok(
        &env,
        &[
            "mcp",
            "add",
            "ev",
            "--name",
            "Everything",
            "--",
            "node",
            &index,
            "stdio",
        ],
    )
    .await;
    row_when(&env, "ev", |r| r["state"] == "ready").await;
    Some((env, c))
}

/// An agent bound to the session's pane, once `tool` is published to it.
async fn agent_with(env: &Env, tool: &str) -> RunningService<RoleClient, Listener> {
    let agent = connect(env, Listener::default()).await;
    let names = published(&agent).await;
    assert!(
        names.iter().any(|n| n == tool),
        "{tool} is published (calyx announced elicitation): {names:?}"
    );
    agent
}

fn call(
    agent: &RunningService<RoleClient, Listener>,
    tool: &'static str,
    args: Value,
) -> tokio::task::JoinHandle<CallToolResult> {
    let peer = agent.peer().clone();
    let mut params = CallToolRequestParams::new(tool);
    params.arguments = args.as_object().cloned();
    tokio::spawn(async move {
        peer.call_tool(params)
            .await
            .expect("a tool result, not a protocol error")
    })
}

/// The result's text blocks, joined.
async fn finished(call: tokio::task::JoinHandle<CallToolResult>) -> String {
    let result = tokio::time::timeout(DEADLINE, call)
        .await
        .expect("the call ends in time")
        .expect("the call's task");
    assert_ne!(result.is_error, Some(true), "{result:?}");
    serde_json::to_value(&result).unwrap_or_default()["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

fn wait_panel_gone(c: &Client) {
    tokio::task::block_in_place(|| {
        c.wait_screen("the panel gone", |s| !s.contains("Everything request"))
    });
}

/// Presses `key` until the panel takes it and goes: a panel that appeared right after a key
/// lets its keys wake only 500 ms later.
fn press_until_gone(c: &mut Client, key: &str) {
    press_until(c, key, |s| !s.contains("Everything request"));
}

/// Presses `key` until the screen is as `done` wants (a panel's keys may still sleep).
fn press_until(c: &mut Client, key: &str, done: impl Fn(&str) -> bool) {
    let deadline = std::time::Instant::now() + DEADLINE;
    tokio::task::block_in_place(|| loop {
        c.send(key);
        let look_until = std::time::Instant::now() + Duration::from_millis(300);
        while std::time::Instant::now() < look_until {
            if done(&c.screen()) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{key:?} was never taken"
        );
    });
}

/// The form panel of `trigger-elicitation-request`, shown.
fn form_shown(c: &Client) -> String {
    panel_shown(c, "Everything asks", FORM_KEYS)
}

/// The keys line under a form, the last row its panel draws.
const FORM_KEYS: &str = "Enter press · Esc cancel";
/// The keys line under a URL before Open.
const URL_KEYS: &str = "copy the address · Esc cancel";
/// The keys line under an opened URL.
const DONE_KEYS: &str = "Enter Done · Ctrl-Y copy the address";

/// The screen once a panel showing `needle` is drawn down to its keys line `last` (a screen
/// read mid-frame may hold the top of a panel only).
fn panel_shown(c: &Client, needle: &str, last: &str) -> String {
    tokio::task::block_in_place(|| {
        c.wait_screen(&format!("{needle:?} drawn down to {last:?}"), |s| {
            s.contains(needle) && s.contains(last)
        })
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_elicitation_is_filled_and_accepted_with_keys_and_the_result_echoes_it() {
    let Some((env, mut c)) = everything_world().await else {
        return;
    };
    let agent = agent_with(&env, "ev-trigger-elicitation-request").await;
    let pending = call(&agent, "ev-trigger-elicitation-request", json!({}));

    let screen = form_shown(&c);
    assert!(screen.contains("Everything request"), "{screen}");
    assert!(
        screen.contains("Please provide inputs for the following fields:"),
        "{screen}"
    );
    assert!(
        screen.contains("› String *"),
        "the required name, focused: {screen}"
    );
    assert!(screen.contains("[ Accept ]"), "{screen}");
    assert!(
        screen.contains("during a call from pane %"),
        "the agent's pane is named: {screen}"
    );
    // The name, then Tab to the boolean and Space to tick it.
    c.send("Ana Lima");
    tokio::task::block_in_place(|| c.wait_for("[Ana Lima_]"));
    c.send("\t");
    c.send(" ");
    tokio::task::block_in_place(|| c.wait_for("[x] yes"));
    // Two fields on, the email: a bad one first.
    c.send("\t\t");
    c.send("nope");
    tokio::task::block_in_place(|| c.wait_for("[nope_]"));
    // Shift-Tab four times wraps to Cancel; Left twice reaches Accept, which is refused.
    c.send("\x1b[Z\x1b[Z\x1b[Z\x1b[Z");
    c.send("\x1b[D\x1b[D");
    c.send("\r");
    tokio::task::block_in_place(|| c.wait_for("! not an email address"));
    // The focus went to the email: Ctrl-U clears it, a good one, then Accept again.
    c.send("\x15");
    c.send("ana@example.com");
    tokio::task::block_in_place(|| c.wait_for("[ana@example.com_]"));
    c.send("\x1b[Z\x1b[Z\x1b[Z\x1b[Z");
    c.send("\x1b[D\x1b[D");
    c.send("\r");

    let text = finished(pending).await;
    assert!(
        text.contains("User provided the requested information"),
        "{text}"
    );
    assert!(text.contains("- Name: Ana Lima"), "{text}");
    assert!(text.contains("- Agreed to terms: true"), "{text}");
    assert!(text.contains("- Email: ana@example.com"), "{text}");
    assert!(
        text.contains("- Favorite Integer: 42"),
        "default kept: {text}"
    );
    let raw: String = text.split_whitespace().collect();
    assert!(raw.contains(r#""integer":42,"#), "a JSON integer: {text}");
    assert!(
        raw.contains(r#""untitledMultipleSelectEnum":["Guitar"]"#),
        "{text}"
    );
    assert!(
        raw.contains(r#""titledSingleSelectEnum":"hero-1""#),
        "{text}"
    );
    wait_panel_gone(&c);
    let _ = agent.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_elicitation_is_declined_then_cancelled() {
    let Some((env, mut c)) = everything_world().await else {
        return;
    };
    let agent = agent_with(&env, "ev-trigger-elicitation-request").await;

    let pending = call(&agent, "ev-trigger-elicitation-request", json!({}));
    form_shown(&c);
    // Shift-Tab wraps to Cancel; Left reaches Decline.
    c.send("\x1b[Z");
    c.send("\x1b[D");
    c.send("\r");
    let text = finished(pending).await;
    assert!(text.contains("User declined"), "{text}");
    wait_panel_gone(&c);

    // The Enter that declined was typed less than a second before this panel came: its keys
    // sleep 500 ms (the user may have been typing), so Esc is pressed until it is taken.
    let pending = call(&agent, "ev-trigger-elicitation-request", json!({}));
    form_shown(&c);
    press_until_gone(&mut c, "\x1b");
    let text = finished(pending).await;
    assert!(text.contains("User cancelled"), "{text}");
    wait_panel_gone(&c);
    let _ = agent.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_url_elicitation_is_opened_then_done() {
    let Some((env, mut c)) = everything_world().await else {
        return;
    };
    let agent = agent_with(&env, "ev-trigger-url-elicitation").await;
    let url = "https://example.com/verify?step=1";
    let pending = call(
        &agent,
        "ev-trigger-url-elicitation",
        json!({"url": url, "message": "Verify your account", "elicitationId": "e2e-1"}),
    );
    let screen = panel_shown(&c, "Verify your account", URL_KEYS);
    assert!(screen.contains(url), "the whole URL: {screen}");
    assert!(
        screen.contains("[ Cancel ]  [ Decline ]  [ Open ]"),
        "{screen}"
    );
    // Open is focused: the client has no display, so the panel shows the address to open.
    c.send("\r");
    let text = finished(pending).await;
    assert!(
        text.contains("User completed the URL elicitation flow"),
        "{text}"
    );
    assert!(text.contains("e2e-1"), "{text}");
    let screen = panel_shown(&c, "[ Done ]", DONE_KEYS);
    assert!(screen.contains("Ctrl-Y copies it"), "{screen}");
    c.send("\r");
    wait_panel_gone(&c);
    let _ = agent.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_answered_minus_32042_shows_the_page_and_is_retried_once_done() {
    let Some((env, mut c)) = everything_world().await else {
        return;
    };
    let agent = agent_with(&env, "ev-trigger-url-elicitation").await;
    let url = "https://example.com/after-prerequisite";
    let pending = call(
        &agent,
        "ev-trigger-url-elicitation",
        json!({"url": url, "message": "Now the real one", "elicitationId": "e2e-2", "errorPath": true}),
    );
    // The -32042's prerequisite page, shown as a URL elicitation.
    let screen = panel_shown(&c, "Open this link to satisfy the prerequisite", URL_KEYS);
    assert!(
        screen.contains("https://modelcontextprotocol.io"),
        "{screen}"
    );
    c.send("\r");
    panel_shown(&c, "[ Done ]", DONE_KEYS);
    c.send("\r");
    // Done: the call is sent again, and this time the server asks with elicitation/create.
    let screen = panel_shown(&c, "Now the real one", URL_KEYS);
    assert!(screen.contains(url), "{screen}");
    press_until(&mut c, "\r", |s| s.contains("[ Done ]"));
    let text = finished(pending).await;
    assert!(
        text.contains("User completed the URL elicitation flow"),
        "{text}"
    );
    assert!(text.contains("e2e-2"), "the retried call's result: {text}");
    c.send("\r");
    wait_panel_gone(&c);

    // Cancelled, the page is not opened: the agent gets isError with the URL, no retry. (Esc,
    // pressed until taken: this panel came right after the last Enter, its keys sleep.)
    let pending = call(
        &agent,
        "ev-trigger-url-elicitation",
        json!({"url": url, "elicitationId": "e2e-3", "errorPath": true}),
    );
    panel_shown(&c, "Open this link to satisfy the prerequisite", URL_KEYS);
    press_until_gone(&mut c, "\x1b");
    let result = tokio::time::timeout(DEADLINE, pending)
        .await
        .expect("the call ends in time")
        .expect("the call's task");
    let text = serde_json::to_string(&result).unwrap_or_default();
    assert_eq!(result.is_error, Some(true), "{text}");
    assert!(text.contains("needs these pages opened"), "{text}");
    assert!(text.contains("https://modelcontextprotocol.io"), "{text}");
    let _ = agent.cancel().await;
}

/// A calyx world with a client attached to session `fx` and the project's fixture server
/// (examples/mcp_fixture, no npm needed) added over stdio as `fx`, named Fixture.
async fn fixture_world() -> (Env, Client) {
    let fixture = mcp_fixture().display().to_string();
    let env = Env::new();
    env.write_config("[mcp]\nsecret_store = \"file\"\n");
    let c = Client::spawn_with(&env, &["new", "-s", "fx"], 30, 110, &env.vars());
    tokio::task::block_in_place(|| c.wait_for("[fx]"));
    calyx_ok(
        &env,
        &["mcp", "add", "fx", "--name", "Fixture", "--", &fixture],
    )
    .await;
    row_when(&env, "fx", |r| r["state"] == "ready").await;
    (env, c)
}

/// The JSON the fixture's `elicit-*` tools answer with: the client's `ElicitResult`.
async fn elicit_result(call: tokio::task::JoinHandle<CallToolResult>) -> Value {
    let text = finished(call).await;
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fixture_gets_every_field_kind_typed_as_its_schema_says() {
    let (env, mut c) = fixture_world().await;
    let agent = agent_with(&env, "fx-elicit-form").await;
    let pending = call(&agent, "fx-elicit-form", json!({}));
    let screen = panel_shown(&c, "Fixture asks", FORM_KEYS);
    assert!(screen.contains("The fixture asks a few things"), "{screen}");
    // The fixture's rmcp sends the properties sorted by name: age, agree, name, tags, tier.
    assert!(screen.contains("› Age"), "{screen}");
    assert!(
        screen.contains("[30_]"),
        "the default age, focused: {screen}"
    );
    assert!(screen.contains("◀ Free ▶"), "the default tier: {screen}");
    // Agree: Space; Name: typed; Tags: Right to green, Space ticks it; Tier: Right to Pro.
    c.send("\t ");
    tokio::task::block_in_place(|| c.wait_for("[x] yes"));
    c.send("\tAl");
    tokio::task::block_in_place(|| c.wait_for("[Al_]"));
    c.send("\t\x1b[C ");
    tokio::task::block_in_place(|| c.wait_for("[x] green"));
    c.send("\t\x1b[C");
    tokio::task::block_in_place(|| c.wait_for("◀ Pro ▶"));
    // Tab reaches Accept.
    c.send("\t\r");
    let answer = elicit_result(pending).await;
    assert_eq!(
        answer,
        json!({"action": "accept", "content": {
            "name": "Al", "age": 30, "tier": "pro", "tags": ["green"], "agree": true
        }})
    );
    wait_panel_named_gone(&c, "Fixture request");
    let _ = agent.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_opened_url_closes_itself_on_the_server_s_complete_notification() {
    let (env, mut c) = fixture_world().await;
    let agent = agent_with(&env, "fx-elicit-url").await;
    let url = "https://example.com/fixture-page";
    let pending = call(
        &agent,
        "fx-elicit-url",
        json!({"url": url, "id": "fx-9", "complete": true}),
    );
    let screen = panel_shown(&c, "Fixture request", URL_KEYS);
    assert!(screen.contains(url), "{screen}");
    // One Enter: Open. The fixture then sends notifications/elicitation/complete, which closes
    // the panel with no Done pressed.
    c.send("\r");
    let answer = elicit_result(pending).await;
    assert_eq!(answer, json!({"action": "accept"}));
    wait_panel_named_gone(&c, "Fixture request");
    let _ = agent.cancel().await;
}

fn wait_panel_named_gone(c: &Client, title: &str) {
    tokio::task::block_in_place(|| c.wait_screen("the panel gone", |s| !s.contains(title)));
}
