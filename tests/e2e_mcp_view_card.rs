//! End to end: the MCP App view card in a real client (issue 17, "The TUI card"). An agent on
//! `/mcp-hosted` calls the fixture's `ui://` tools with the pane's identity; the client's
//! screen shows the dock beside the pane (whose PTY shrinks), `◆` on the window's tab while a
//! call runs, the keys of `prefix v` and `prefix V`, and a client attached over SSH sees the
//! `ssh -L` line for both view ports.

use std::time::Duration;

use crate::common::{Client, Env};
use crate::e2e_mcp_hosted::{calyx_ok, eventually};
use crate::e2e_mcp_views::{agent_in, call_text, panes, views, world_with_fixture};

use rmcp::model::CallToolRequestParams;

const DEADLINE: Duration = Duration::from_secs(30);

/// Waits until the client's screen satisfies `wanted`; the screen. The panic shows the last
/// screen.
pub(crate) fn wait_screen(c: &Client, what: &str, wanted: impl Fn(&str) -> bool) -> String {
    let deadline = std::time::Instant::now() + DEADLINE;
    loop {
        let screen = c.screen();
        if wanted(&screen) {
            return screen;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}; the screen:\n{screen}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The content width of pane `id` as `list-panes` says.
fn pane_cols(env: &Env, id: &str) -> u64 {
    env.panes()
        .iter()
        .find(|p| p["id"] == id)
        .and_then(|p| p["cols"].as_u64())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_card_docks_beside_the_pane_and_answers_its_keys() {
    let env = world_with_fixture().await;
    let (pane, surface) = panes(&env)[0].clone();
    let mut c = env.client(&["attach", "-t", "hosted"], 30, 120);
    c.wait_for("[hosted]");
    let full = pane_cols(&env, &pane);
    let agent = agent_in(&env, &surface).await;

    // A running call: the dock, `Running`, and `◆` on the window's tab.
    let peer = agent.peer().clone();
    let waiting = tokio::spawn(async move {
        peer.call_tool(CallToolRequestParams::new("fx-show_wait".to_string()))
            .await
    });
    let screen = wait_screen(&c, "a running card", |s| {
        s.contains("◆ show_wait · fx") && s.contains("Running  ○ not open")
    });
    assert!(screen.contains("Ignored CSP entries: *"), "{screen}");
    let status = screen.lines().last().unwrap_or_default();
    assert!(
        status.contains("◆"),
        "the tab marks the running view: {screen}"
    );
    let docked = eventually("the pane's PTY to shrink", || async {
        let cols = pane_cols(&env, &pane);
        (cols < full).then_some(cols)
    })
    .await;
    assert_eq!(docked, full - full * 40 / 100, "the dock takes 40%");

    // A second view: the switcher line, the newest card shown, its result as the body.
    assert_eq!(
        call_text(&agent, "fx-show_time").await,
        "fixture time 12:00"
    );
    let screen = wait_screen(&c, "the second card", |s| {
        s.contains("1 show_wait  2 show_time") && s.contains("Completed  ○ not open")
    });
    assert!(screen.contains("fixture time 12:00"), "{screen}");

    // prefix v: the card has the keyboard; `>` widens the dock by 5%, `1` switches, Esc leaves.
    c.prefix("v");
    wait_screen(&c, "the card focused", |s| {
        s.contains("VIEW") && s.contains("Esc back")
    });
    c.send(">");
    eventually("the dock to widen", || async {
        (pane_cols(&env, &pane) == full - full * 45 / 100).then_some(())
    })
    .await;
    c.send("1");
    wait_screen(&c, "the first card again", |s| {
        s.contains("◆ show_wait · fx") && s.contains("Running")
    });
    // `o` for a client without a display says why and shows the URL; `c` copies it; `r`
    // reads the resource again.
    c.send("o");
    wait_screen(&c, "why o did not open", |s| {
        s.contains("no local browser (no DISPLAY): open the URL below")
            && s.contains("http://127.0.0.1:")
    });
    c.send("c");
    wait_screen(&c, "the copy", |s| s.contains("URL copied (OSC 52)"));
    c.send("r");
    wait_screen(&c, "the reload", |s| {
        s.contains("reloading") && s.contains("Running  ○ not open")
    });
    // `x` closes the shown view: the other stays, the hub forgets it.
    c.send("x");
    wait_screen(&c, "one card left", |s| {
        !s.contains("◆ show_wait") && s.contains("◆ show_time · fx")
    });
    assert_eq!(views(&env).await.len(), 1, "x removed the view");
    c.send("\x1b");
    wait_screen(&c, "the card unfocused", |s| !s.contains("Esc back"));

    // prefix V lists every view; Esc closes it.
    c.prefix("V");
    let screen = wait_screen(&c, "the view list", |s| s.contains("MCP App views"));
    assert!(
        screen.contains(&format!("1 {pane}  show_time · fx  Completed")),
        "{screen}"
    );
    c.send("\x1b");
    wait_screen(&c, "the list closed", |s| !s.contains("MCP App views"));
    // Enter on a row focuses that view's card in its pane.
    c.prefix("V");
    wait_screen(&c, "the view list again", |s| s.contains("MCP App views"));
    c.send("\r");
    wait_screen(&c, "the card focused from the list", |s| {
        !s.contains("MCP App views") && s.contains("Esc back")
    });
    c.send("\x1b");
    waiting.abort();

    // The last view closed: the dock goes and the pane gets its width back.
    calyx_ok(&env, &["mcp", "disable", "fx"]).await;
    wait_screen(&c, "no card", |s| !s.contains("show_time · fx"));
    eventually("the pane's width back", || async {
        (pane_cols(&env, &pane) == full).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_over_ssh_sees_the_tunnel_line_and_a_narrow_pane_the_strip() {
    let env = world_with_fixture().await;
    let (_, surface) = panes(&env)[0].clone();
    let mut vars = env.vars();
    vars.push(("SSH_CONNECTION".into(), "10.0.0.2 50000 10.0.0.1 22".into()));
    vars.push(("USER".into(), "ana".into()));
    let mut c = Client::spawn_with(&env, &["attach", "-t", "hosted"], 30, 200, &vars);
    c.wait_for("[hosted]");
    let agent = agent_in(&env, &surface).await;
    // The pane's agent row shows a running view in the sidebar.
    crate::e2e_mcp_views::hook(&env, &surface, "SessionStart", "conv-1");
    let peer = agent.peer().clone();
    let waiting = tokio::spawn(async move {
        peer.call_tool(CallToolRequestParams::new("fx-show_wait".to_string()))
            .await
    });
    c.prefix("a");
    wait_screen(&c, "the sidebar row", |s| s.contains("◆ app: show_wa"));
    c.prefix("a");
    waiting.abort();
    call_text(&agent, "fx-show_time").await;
    // The ports the view server took (41880 and 41881 unless another server holds them).
    let rows = crate::e2e_mcp_views::views(&env).await;
    let url = rows
        .iter()
        .rev()
        .find_map(|r| r["url"].as_str())
        .expect("a view URL")
        .to_string();
    let port: u16 = url
        .trim_start_matches("http://127.0.0.1:")
        .split('/')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("the URL's port");
    let tunnel = format!("ssh -L {port}:127.0.0.1:{port} -L ");
    wait_screen(&c, "the tunnel line", |s| {
        s.contains(&tunnel) && s.contains("ana@10.0.0.1")
    });

    // Two panes side by side on a narrower terminal leave this one under 40 columns beside
    // a dock: the strip.
    env.ok(&["split-window", "-h", "-d"]);
    c.resize(30, 120);
    wait_screen(&c, "the strip", |s| {
        s.contains("◆ show_time · completed · prefix v")
    });
}
