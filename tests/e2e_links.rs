//! End to end: strikethrough and OSC 8 hyperlinks printed in a pane reach the user's terminal
//! (a real client in a PTY) and `capture --ansi`, unsafe links do not. Links go only to
//! terminals that can take them: with `hyperlinks = "auto"` (the default) a client whose TERM
//! names a terminal that prints OSC 8 as text (the Linux console, VTs, dumb) gets the text
//! without links, while another client of the same session gets them; "always" and "never"
//! override that.

use crate::common;

use common::{wait_until, Client, Env};

/// A pane program that prints a link, struck text and a link with a C1 control in its URI, then
/// waits.
fn script(env: &Env) -> String {
    let path = env.path().join("links.sh");
    let body = concat!(
        "printf 'see \\033]8;id=doc;https://example.com/docs?a=1\\033\\\\the docs\\033]8;;\\033\\\\ now\\n'\n",
        "printf 'x \\033[9mstruck\\033[29m y\\n'\n",
        "printf '\\033]8;;https://evil.example/\\302\\233\\061m\\033\\\\bad\\033]8;;\\033\\\\ done\\n'\n",
        "exec cat\n",
    );
    std::fs::write(&path, body).expect("write script");
    path.to_string_lossy().to_string()
}

/// The SGR parameters in force for the first occurrence of `text` in `raw`: those of the last
/// `ESC [ ... m` before it.
fn sgr_before(raw: &str, text: &str) -> Vec<String> {
    let at = raw.find(text).unwrap_or(0);
    let before = &raw[..at];
    before
        .rfind("\x1b[")
        .map(|i| &before[i + 2..])
        .and_then(|s| s.strip_suffix('m').or_else(|| s.split('m').next()))
        .map(|p| p.split(';').map(str::to_string).collect())
        .unwrap_or_default()
}

#[test]
fn links_and_strikethrough_reach_the_client() {
    let env = Env::new();
    let script = script(&env);
    let c = env.client(&["new", "-s", "links", "--", "sh", &script], 24, 90);
    c.wait_for("done");
    let raw = String::from_utf8_lossy(&c.raw()).to_string();
    let open = "\x1b]8;id=doc;https://example.com/docs?a=1\x1b\\the docs";
    assert!(raw.contains(open), "no OSC 8 open in {raw:?}");
    let after = &raw[raw.find(open).unwrap_or(0)..];
    assert!(
        after.contains("the docs\x1b]8;;\x1b\\"),
        "link not closed after its text: {after:?}"
    );
    assert!(
        sgr_before(&raw, "struck").iter().any(|p| p == "9"),
        "no SGR 9 before the struck text: {raw:?}"
    );
    // The unsafe URI never reaches the terminal; its text does, unlinked.
    assert!(!raw.contains("evil.example"), "{raw:?}");
    assert!(raw.contains("bad"));
    // capture --ansi keeps the strikethrough and the link.
    let ansi = env.ok(&["capture", "-t", "links", "--ansi"]);
    assert!(ansi.contains("\x1b[9mstruck"), "{ansi:?}");
    assert!(
        ansi.contains("\x1b]8;id=doc;https://example.com/docs?a=1\x1b\\the docs\x1b]8;;\x1b\\"),
        "{ansi:?}"
    );
    drop(c);
}

/// The link's text is on `c`'s screen; returns whether any OSC 8 reached its terminal.
fn got_links(c: &Client) -> bool {
    c.wait_for("done");
    wait_until("text drawn", || {
        c.screen().contains("the docs").then_some(())
    });
    let raw = String::from_utf8_lossy(&c.raw()).to_string();
    assert!(
        sgr_before(&raw, "struck").iter().any(|p| p == "9"),
        "the rest of the styling is drawn: {raw:?}"
    );
    raw.contains("\x1b]8;")
}

/// A client attached to `session` whose terminal says it is `term`.
fn client_with_term(env: &Env, session: &str, term: &str) -> Client {
    let vars: Vec<(String, String)> = env
        .vars()
        .into_iter()
        .map(|(k, v)| {
            if k == "TERM" {
                (k, term.to_string())
            } else {
                (k, v)
            }
        })
        .collect();
    Client::spawn_with(env, &["attach", "-t", session], 24, 90, &vars)
}

#[test]
fn hyperlinks_off_in_config_sends_no_osc8() {
    for setting in ["false", "\"never\""] {
        let env = Env::new();
        env.write_config(&format!("hyperlinks = {setting}\n"));
        let script = script(&env);
        let c = env.client(&["new", "-s", "nolinks", "--", "sh", &script], 24, 90);
        assert!(!got_links(&c), "hyperlinks = {setting}");
    }
}

#[test]
fn auto_hyperlinks_skip_terminals_that_would_print_them() {
    let env = Env::new();
    let script = script(&env);
    // A shell that prints the script's lines, then takes more commands.
    env.ok(&["new", "-d", "-s", "auto", "--", "sh"]);
    env.ok(&[
        "send-keys",
        "-t",
        "auto",
        &format!("head -n 3 {script} | sh"),
        "Enter",
    ]);
    env.wait_capture("auto", "done");
    let xterm = client_with_term(&env, "auto", "xterm-256color");
    assert!(got_links(&xterm), "xterm-256color gets links");
    for term in ["linux", "vt220", "dumb"] {
        let console = client_with_term(&env, "auto", term);
        assert!(!got_links(&console), "TERM={term} must not get OSC 8");
    }
    // Output drawn while both kinds of client are attached: links for one, text for the other.
    let before = xterm.raw().len();
    let console = client_with_term(&env, "auto", "linux");
    console.wait_for("done");
    env.ok(&[
        "send-keys",
        "-t",
        "auto",
        r"printf '\033]8;;https://example.com/2\033\\link-%s\033]8;;\033\\\n' $((6*7))",
        "Enter",
    ]);
    console.wait_for("link-42");
    wait_until("the new link on the xterm client", || {
        let raw = String::from_utf8_lossy(&xterm.raw()[before..]).to_string();
        let open = "\x1b]8;;https://example.com/2\x1b\\";
        let linked = raw
            .split_once(open)
            .and_then(|(_, after)| after.split_once("\x1b]8;;\x1b\\"))
            .map(|(inside, _)| inside.to_string());
        linked.filter(|text| text.contains("link-42"))
    });
    assert!(!String::from_utf8_lossy(&console.raw()).contains("\x1b]8;"));
}

#[test]
fn always_hyperlinks_reach_any_terminal() {
    let env = Env::new();
    env.write_config("hyperlinks = \"always\"\n");
    let script = script(&env);
    env.ok(&["new", "-d", "-s", "always", "--", "sh", &script]);
    let console = client_with_term(&env, "always", "linux");
    assert!(got_links(&console));
}
