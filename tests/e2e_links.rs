//! End to end: strikethrough and OSC 8 hyperlinks printed in a pane reach the user's terminal
//! (a real client in a PTY) and `capture --ansi`, unsafe links do not, and `hyperlinks = false`
//! turns links off.

mod common;

use common::{wait_until, Env};

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

#[test]
fn hyperlinks_off_in_config_sends_no_osc8() {
    let env = Env::new();
    env.write_config("hyperlinks = false\n");
    let script = script(&env);
    let c = env.client(&["new", "-s", "nolinks", "--", "sh", &script], 24, 90);
    c.wait_for("done");
    // The frame with the text is out; the link would have been in it.
    wait_until("text drawn", || {
        c.screen().contains("the docs").then_some(())
    });
    let raw = String::from_utf8_lossy(&c.raw()).to_string();
    assert!(!raw.contains("\x1b]8;"), "{raw:?}");
    assert!(sgr_before(&raw, "struck").iter().any(|p| p == "9"));
}
