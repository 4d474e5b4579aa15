//! End to end: the hosted MCP servers overlay (`prefix M`, issue 16) on a real client's
//! terminal, over the real server-everything: the overlay follows a server added while it is
//! open from `Connecting` to `N tools` by itself, `Space` switches it off (the entry says
//! Disabled and `calyx mcp list --json` agrees), `Enter` shows its details, and `D` removes it.
//! The import field takes a bracketed paste and previews it like `calyx mcp import --dry-run`;
//! the Add form refuses a bad alias under its field and adds a server with a working directory
//! and two masked variables, and Edit changes its name. The HTTP form takes a header, the legacy
//! SSE switch and the OAuth client (ID, basic authentication, a masked secret, the fixed port),
//! refuses a bad header name with that field focused, and Edit keeps the saved secrets. Without node: a stdio server that fails shows why, its stderr
//! beneath; `host_servers = false` puts the banner on top.

use crate::common;
use crate::hosted_support::server_everything;

use std::time::Duration;

use common::{wait_until_within, Client, Env};
use serde_json::Value;

/// Generous: a loaded 2-core machine starts node slowly.
const DEADLINE: Duration = Duration::from_secs(90);

/// The row of `alias` in `calyx mcp list --json`, if there is one.
fn listed(env: &Env, alias: &str) -> Option<Value> {
    let rows: Value = serde_json::from_str(&env.ok(&["mcp", "list", "--json"])).ok()?;
    rows.as_array()?
        .iter()
        .find(|r| r["alias"] == alias)
        .cloned()
}

/// Waits until a line of the client's screen satisfies `wanted`; the screen.
fn wait_line(c: &Client, what: &str, wanted: impl Fn(&str) -> bool) -> String {
    wait_until_within(what, DEADLINE, || {
        let screen = c.screen();
        screen.lines().any(&wanted).then_some(screen)
    })
}

#[test]
fn the_overlay_follows_switches_details_and_removes_a_server() {
    let Some(index) = server_everything() else {
        return;
    };
    let index = index.display().to_string();
    let env = Env::new();
    env.write_config("[mcp]\nsecret_store = \"file\"\n");
    let mut c = env.client(&["new", "-s", "hov"], 40, 120);
    c.wait_for("[hov]");

    c.prefix("M");
    c.wait_for("MCP servers");
    c.wait_for("no hosted MCP servers");
    env.ok(&[
        "mcp",
        "add",
        "ev",
        "--name",
        "Everything",
        "--",
        "node",
        &index,
        "stdio",
    ]);
    // Added while the overlay is open: the state changes alone bring it to `N tools`.
    let screen = wait_line(&c, "ev ready in the overlay", |l| {
        l.contains("[x] Everything") && l.contains(" tools, ") && l.contains("with UI")
    });
    assert!(screen.contains("ev  stdio  node "), "{screen}");

    // Enter: the details `calyx mcp details` prints; Esc back to the list.
    c.send("\r");
    let screen = c.wait_for("ev details");
    assert!(
        screen.contains("tools:") && screen.contains("ev-echo"),
        "{screen}"
    );
    c.send("\x1b");
    wait_line(&c, "back on the list", |l| l.contains("[x] Everything"));

    // Space switches it off: the entry and `calyx mcp list --json` agree.
    c.send(" ");
    wait_line(&c, "ev disabled in the overlay", |l| {
        l.contains("[ ] Everything") && l.contains("Disabled")
    });
    let row = listed(&env, "ev").expect("ev still listed");
    assert_eq!(row["enabled"], false, "{row}");
    assert_eq!(row["state"], "disabled", "{row}");

    // D removes it at once.
    c.send("D");
    c.wait_for("no hosted MCP servers");
    assert!(listed(&env, "ev").is_none(), "ev removed");

    // i: a bracketed paste goes in verbatim and Enter previews it.
    c.send("i");
    c.wait_for("import MCP servers");
    c.send(format!(
        "\x1b[200~{{\"mcpServers\": {{\n  \"pasted\": {{\"command\": \"node\", \"args\": [\"{index}\", \"--\", \"stdio\"]}}\n}}}}\x1b[201~"
    ));
    c.wait_for(r#""pasted": {"command": "node""#);
    c.send("\r");
    let screen = c.wait_for("import preview");
    assert!(screen.contains("pasted"), "{screen}");
    // Enter imports it with the default policy; it shows in the list.
    c.send("\r");
    wait_line(&c, "the imported server listed", |l| {
        l.contains("[x] pasted")
    });
    assert!(listed(&env, "pasted").is_some(), "imported");

    // a: the Add form; Ctrl-S refuses a bad alias with the message under it, then adds.
    c.send("a");
    c.wait_for("add an MCP server");
    c.send("\tBad Alias\x13");
    c.wait_for("invalid alias `Bad Alias`");
    c.send("\x7f".repeat(9));
    // Command (quoted like a shell), working directory, then two variables.
    let workdir = env.path().join("home");
    c.send(format!(
        "formed\t\tnode '{index}' stdio\t{}\tCALYX_TEST_GREETING\t",
        workdir.display()
    ));
    // The value pasted, as a token usually is.
    c.send("\x1b[200~secret-greeting\n\x1b[201~");
    let screen = c.wait_for("••••••");
    assert!(
        !screen.contains("secret-greeting"),
        "the value is masked:\n{screen}"
    );
    c.send("\tSECOND_VAR\tsecond-value");
    c.wait_screen("the second variable masked", |s| {
        s.contains("SECOND_VAR") && s.matches("••••••").count() == 2
    });
    c.send("\x13");
    wait_line(&c, "the added server ready", |l| {
        l.contains("[x] formed") && l.contains(" tools, ")
    });
    assert!(listed(&env, "formed").is_some(), "added");
    // The pasted value went to the secret store, whole and without the paste's newline.
    let secrets = std::fs::read_to_string(env.path().join("state/calyx/mcp-secrets.json"))
        .unwrap_or_default();
    assert!(secrets.contains("\"secret-greeting\""), "{secrets}");
    assert!(secrets.contains("\"second-value\""), "{secrets}");
    let servers = std::fs::read_to_string(env.path().join("config/calyx/mcp-servers.json"))
        .unwrap_or_default();
    assert!(
        servers.contains(&format!("\"cwd\": \"{}\"", workdir.display()))
            && servers.contains("SECOND_VAR"),
        "{servers}"
    );

    // e on it: the saved value shows masked; a new name is saved, the rest left alone.
    c.send("j");
    wait_line(&c, "formed selected", |l| l.contains("[x] formed"));
    c.send("e");
    // The title is drawn before the fields: wait for the whole form.
    c.wait_screen("the edit form with its masked secret", |s| {
        s.contains("edit `formed`") && s.contains("CALYX_TEST_GREETING") && s.contains("••••••")
    });
    c.send("\t\t");
    c.send("\x7f".repeat(6));
    c.send("Formed Again\x13");
    wait_line(&c, "the new name listed", |l| {
        l.contains("[x] Formed Again")
    });
    let row = listed(&env, "formed").expect("formed still listed");
    assert_eq!(row["name"], "Formed Again", "{row}");

    c.send("q");
    wait_until_within("the overlay closed", DEADLINE, || {
        (!c.screen().contains("MCP servers")).then_some(())
    });
}

#[test]
fn a_failed_server_shows_why_with_its_stderr() {
    let env = Env::new();
    env.write_config("[mcp]\nsecret_store = \"file\"\n");
    env.ok(&["new", "-d", "-s", "hov"]);
    env.ok(&[
        "mcp",
        "add",
        "broken",
        "--",
        "sh",
        "-c",
        "echo boom-on-stderr >&2; exit 3",
    ]);
    let mut c = env.client(&["attach", "-t", "hov"], 40, 120);
    c.wait_for("[hov]");
    c.prefix("M");
    c.wait_for("MCP servers");
    let screen = wait_line(&c, "the failure's stderr under it", |l| {
        l.contains("| boom-on-stderr")
    });
    let status = screen
        .lines()
        .find(|l| l.contains("[x] broken"))
        .unwrap_or_default();
    assert!(
        status.contains("exited before answering initialize") && !status.contains('↵'),
        "the failure's first line on the row, its stderr beneath: {screen}"
    );
}

#[test]
fn hosting_off_shows_the_banner() {
    let env = Env::new();
    env.write_config("[mcp]\nsecret_store = \"file\"\nhost_servers = false\n");
    let mut c = env.client(&["new", "-s", "off"], 30, 120);
    c.wait_for("[off]");
    c.prefix("M");
    let screen = c.wait_for("MCP servers");
    assert!(
        screen.contains("hosting is off: host_servers = false"),
        "{screen}"
    );
}

#[test]
fn the_http_form_takes_headers_legacy_sse_and_the_oauth_client() {
    let env = Env::new();
    env.write_config("[mcp]\nsecret_store = \"file\"\n");
    let mut c = env.client(&["new", "-s", "form"], 40, 120);
    c.wait_for("[form]");
    c.prefix("M");
    c.wait_for("no hosted MCP servers");
    c.send("a");
    c.wait_for("add an MCP server");
    // Right: http; then alias, name, URL, the legacy switch, a header with a bad name.
    c.send("\x1b[C");
    c.wait_for("[http]");
    // The alias is left alone: it follows the name.
    c.send("\t\tWeb Hooks\thttp://127.0.0.1:9/mcp\t \tBad:Name\tcore");
    c.wait_screen("the http fields", |s| {
        s.contains("Legacy SSE  [x]") && s.contains("Alias  webhooks")
    });
    c.send("\x13");
    c.wait_for("the header name `Bad:Name` of `webhooks` is invalid");
    // The refusal focused the header's name: fix it there.
    c.send("\x7f".repeat(8));
    c.send("X-Team");
    // Its value, the blank row's two fields, then the OAuth client: ID, basic, secret, port.
    c.send("\t\t\t\tapp-1\t\x1b[C\x1b[C\tshh-client\t \t \x13");
    wait_line(&c, "the added server listed", |l| {
        l.contains("[ ] Web Hooks") && l.contains("Disabled")
    });
    let servers = std::fs::read_to_string(env.path().join("config/calyx/mcp-servers.json"))
        .unwrap_or_default();
    let list: Value = serde_json::from_str(&servers).unwrap_or(Value::Null);
    let web = &list["servers"][0];
    assert_eq!(web["legacy_sse"], true, "{servers}");
    assert_eq!(web["headers"], serde_json::json!(["X-Team"]), "{servers}");
    assert_eq!(web["oauth"]["client_id"], "app-1", "{servers}");
    assert_eq!(
        web["oauth"]["client_auth"], "client_secret_basic",
        "{servers}"
    );
    assert_eq!(web["oauth"]["fixed_redirect_port"], true, "{servers}");
    assert!(!servers.contains("shh-client") && !servers.contains("core"));
    let secrets = || {
        std::fs::read_to_string(env.path().join("state/calyx/mcp-secrets.json")).unwrap_or_default()
    };
    let stored = secrets();
    assert!(
        stored.contains("\"shh-client\"") && stored.contains("\"core\""),
        "{stored}"
    );

    // Edit: both secrets show masked; saving unchanged keeps them.
    c.send("e");
    c.wait_screen("the edit form with masked secrets", |s| {
        s.contains("edit `webhooks`") && s.contains("X-Team") && s.matches("••••••").count() == 2
    });
    c.send("\x13");
    wait_line(&c, "back on the list", |l| l.contains("[ ] Web Hooks"));
    assert_eq!(secrets(), stored, "an unchanged edit keeps the secrets");
}
