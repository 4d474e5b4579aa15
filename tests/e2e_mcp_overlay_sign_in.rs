//! End to end: signing in from the servers overlay (`prefix M`, issue 16) against the
//! project's fixture in its OAuth mode (examples/mcp_fixture/oauth.rs: an MCP server that
//! answers 401 until it gets its bearer, and its own authorization server on loopback), through
//! a real calyx server and a real client's screen. A client with no browser (no `DISPLAY`, as
//! over SSH) gets the URL as an OSC 8 link and the paste field: the test plays the browser
//! (GET the URL, read the redirect's `Location`), pastes that address, and the row goes to
//! `N tools` with `Signed in`; `S` signs out; `s` then `c` cancels a sign-in. A local client
//! (`DISPLAY` and `BROWSER` set) has its browser run: a stand-in that follows the redirect
//! into calyx's listener, and the page closes by itself once signed in. A client over SSH
//! gets the `ssh -L` line and a redirect on port 41890.

use crate::common;
use crate::hosted_support::fixture::HttpFixture;

use std::io::{Read, Write};
use std::time::Duration;

use common::{wait_until_within, Client, Env};
use serde_json::Value;

const DEADLINE: Duration = Duration::from_secs(60);

/// The row of `alias` in `calyx mcp list --json`.
fn listed(env: &Env, alias: &str) -> Value {
    let rows: Value =
        serde_json::from_str(&env.ok(&["mcp", "list", "--json"])).unwrap_or(Value::Null);
    rows.as_array()
        .and_then(|rows| rows.iter().find(|r| r["alias"] == alias).cloned())
        .unwrap_or(Value::Null)
}

fn wait_line(c: &Client, what: &str, wanted: impl Fn(&str) -> bool) -> String {
    wait_until_within(what, DEADLINE, || {
        let screen = c.screen();
        screen.lines().any(&wanted).then_some(screen)
    })
}

/// The URL drawn on the sign-in page: its lines between the heading and the blank line, the
/// borders (the overlay's and the window's) taken off.
fn url_on(screen: &str) -> String {
    screen
        .lines()
        .skip_while(|l| !l.contains("Open this address"))
        .skip(1)
        .map(|l| l.trim_matches(|c: char| c == '│' || c == '┃' || c.is_whitespace()))
        .take_while(|l| !l.is_empty())
        .collect()
}

/// What a browser does with the authorization URL: GET it; the `Location` it is sent to.
fn redirect_of(url: &str) -> String {
    let rest = url.strip_prefix("http://").expect("a loopback http URL");
    let (host, path) = rest.split_at(rest.find('/').expect("a path"));
    let mut stream = std::net::TcpStream::connect(host).expect("connect to the fixture");
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .expect("send");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("read");
    answer
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("location")
                .then(|| value.trim().to_string())
        })
        .unwrap_or_else(|| panic!("no redirect from {url}:\n{answer}"))
}

fn setup(env: &Env, fixture: &HttpFixture) {
    env.write_config("[mcp]\nsecret_store = \"file\"\n");
    env.ok(&[
        "mcp",
        "add",
        "sec",
        "--name",
        "Secured",
        "--url",
        &fixture.url,
    ]);
}

#[test]
fn paste_signs_in_sign_out_and_cancel() {
    let env = Env::new();
    let fixture = HttpFixture::start_with(&env.path().join("cancels"), &["--oauth"]);
    setup(&env, &fixture);
    // No DISPLAY, no SSH_CONNECTION: no browser to run, so the page asks for a paste.
    let mut c = env.client(&["new", "-s", "sig"], 40, 140);
    c.wait_for("[sig]");
    c.prefix("M");
    wait_line(&c, "sec waits for sign-in", |l| {
        l.contains("[x] Secured") && l.contains("Sign-in required")
    });

    c.send("s");
    let screen = c.wait_screen("the sign-in page with its paste field", |s| {
        s.contains("sign in to Secured") && s.contains("paste the address")
    });
    let url = url_on(&screen);
    let origin = fixture.url.trim_end_matches("/mcp");
    assert!(url.starts_with(&format!("{origin}/authorize?")), "{url}");
    assert!(!screen.contains("ssh -L"), "not over SSH:\n{screen}");
    // The URL went out as one OSC 8 link.
    let raw = String::from_utf8_lossy(&c.raw()).to_string();
    assert!(
        raw.contains(&format!("\x1b]8;;{origin}/authorize?")),
        "no OSC 8 link to the authorization URL"
    );
    // Ctrl-Y copies it with OSC 52 (typed `y` would go into the paste field).
    c.send("\x19");
    c.wait_for("copied the sign-in address");
    let raw = String::from_utf8_lossy(&c.raw()).to_string();
    assert!(raw.contains("\x1b]52;c;"), "no OSC 52 write");

    // The user approves in a browser elsewhere; it fails to load the redirect; they paste it.
    let location = redirect_of(&url);
    assert!(
        location.contains("/callback?code=fixture-code"),
        "{location}"
    );
    c.send(format!("\x1b[200~{location}\n\x1b[201~"));
    c.wait_for("> http://127.0.0.1:");
    c.send("\r");
    let screen = wait_line(&c, "sec signed in and ready", |l| {
        l.contains("[x] Secured") && l.contains(" tools, ")
    });
    assert!(screen.contains("Signed in"), "{screen}");
    assert_eq!(listed(&env, "sec")["signed_in"], true);

    // S: the tokens go, the server asks for sign-in again.
    c.send("S");
    let screen = wait_line(&c, "sec signed out", |l| {
        l.contains("[x] Secured") && l.contains("Sign-in required")
    });
    assert!(!screen.contains("Signed in"), "{screen}");
    assert_eq!(listed(&env, "sec")["signed_in"], false);

    // s, back to the list while it waits, then c cancels it.
    c.send("s");
    c.wait_for("sign in to Secured");
    c.send("\x1b");
    wait_line(&c, "sec signing in", |l| {
        l.contains("[x] Secured") && l.contains("Signing in")
    });
    c.send("c");
    wait_line(&c, "the sign-in cancelled", |l| {
        l.contains("[x] Secured") && l.contains("Sign-in required")
    });
}

#[test]
fn a_local_client_runs_its_browser_and_the_page_closes_when_signed_in() {
    let env = Env::new();
    let fixture = HttpFixture::start_with(&env.path().join("cancels"), &["--oauth"]);
    setup(&env, &fixture);
    // The browser stand-in follows the authorization server's redirect into calyx's listener.
    let browser = env.path().join("browser");
    std::fs::write(
        &browser,
        format!(
            "#!/bin/sh\necho \"$1\" > {}\nexec curl -s -L -o /dev/null \"$1\"\n",
            env.path().join("opened").display()
        ),
    )
    .expect("write the browser");
    std::fs::set_permissions(
        &browser,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .expect("chmod");
    let mut vars = env.vars();
    vars.push(("DISPLAY".into(), ":0".into()));
    vars.push(("BROWSER".into(), browser.display().to_string()));
    let mut c = Client::spawn_with(&env, &["new", "-s", "loc"], 40, 140, &vars);
    c.wait_for("[loc]");
    c.prefix("M");
    wait_line(&c, "sec waits for sign-in", |l| {
        l.contains("[x] Secured") && l.contains("Sign-in required")
    });
    c.send("s");
    // The page says where it opened, then closes by itself once the listener got the code.
    let screen = wait_line(&c, "sec signed in and ready", |l| {
        l.contains("[x] Secured") && l.contains(" tools, ")
    });
    assert!(screen.contains("Signed in"), "{screen}");
    assert!(!screen.contains("sign in to Secured"), "{screen}");
    let opened = std::fs::read_to_string(env.path().join("opened")).unwrap_or_default();
    let origin = fixture.url.trim_end_matches("/mcp");
    assert!(
        opened.starts_with(&format!("{origin}/authorize?")),
        "{opened}"
    );
}

#[test]
fn over_ssh_the_page_shows_the_forward_line_and_listens_on_41890() {
    let env = Env::new();
    let fixture = HttpFixture::start_with(&env.path().join("cancels"), &["--oauth"]);
    setup(&env, &fixture);
    let mut vars = env.vars();
    vars.push((
        "SSH_CONNECTION".into(),
        "203.0.113.5 51234 198.51.100.7 22".into(),
    ));
    vars.push(("USER".into(), "ana".into()));
    // A DISPLAY forwarded over SSH does not make the client local.
    vars.push(("DISPLAY".into(), "localhost:10.0".into()));
    let mut c = Client::spawn_with(&env, &["new", "-s", "ssh"], 40, 140, &vars);
    c.wait_for("[ssh]");
    c.prefix("M");
    wait_line(&c, "sec waits for sign-in", |l| {
        l.contains("[x] Secured") && l.contains("Sign-in required")
    });
    c.send("s");
    let screen = c.wait_screen("the sign-in page, or 41890 taken", |s| {
        s.contains("paste the address") || s.contains("41890")
    });
    if !screen.contains("paste the address") {
        eprintln!("SKIP over_ssh...: port 41890 is taken on this machine:\n{screen}");
        return;
    }
    assert!(
        screen.contains("ssh -L 41890:127.0.0.1:41890 ana@198.51.100.7"),
        "{screen}"
    );
    let url = url_on(&screen);
    assert!(
        url.contains("redirect_uri=http%3A%2F%2F127.0.0.1%3A41890%2Fcallback"),
        "the redirect listens on the forwarded port: {url}"
    );
    // Finished by the paste (which also closes the 41890 listener).
    let location = redirect_of(&url);
    c.send(format!("\x1b[200~{location}\x1b[201~\r"));
    let screen = wait_line(&c, "sec signed in and ready", |l| {
        l.contains("[x] Secured") && l.contains(" tools, ")
    });
    assert!(screen.contains("Signed in"), "{screen}");
}
