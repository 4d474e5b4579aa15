//! The echo's frame drawn before the chrome is gathered (`render::render_early`): it shows the
//! pane's new cells at once, the frame `render_client` draws next adds nothing (and locks no
//! pane's terminal again) when only pane contents changed, and when the chrome changed too that frame composes over the early one so
//! the client's terminal ends up showing exactly the whole frame.

use super::reducer_tests::{wait, Harness, CLIENT};

/// Renders the early frame into the client's terminal; returns its bytes.
fn early(h: &mut Harness) -> Vec<u8> {
    let cache = h.server.frames.entry(CLIENT).or_default();
    let bytes = super::render::render_early(&mut h.server.state, CLIENT, cache)
        .map(|r| r.bytes)
        .unwrap_or_default();
    h.terminal.process(&bytes);
    bytes
}

/// What the client's terminal would show after a whole frame drawn now.
fn whole(h: &mut Harness) -> String {
    let (rows, cols) = h.terminal.screen().size();
    let mut fresh = vt100::Parser::new(rows, cols, 0);
    let agents = h.agents();
    let mut cache = super::render::frame_cache::FrameCache::default();
    let bytes =
        super::render::render_client(&mut h.server.state, &agents, None, None, CLIENT, &mut cache)
            .map(|r| r.bytes)
            .unwrap_or_default();
    fresh.process(&bytes);
    fresh.screen().contents()
}

#[test]
fn an_echo_is_drawn_early_and_the_usual_frame_then_sends_nothing() {
    let mut h = Harness::new(12, 60);
    let shell = h.shell_pane();
    h.frame();
    // Nothing changed since: no early frame bytes, and no usual frame bytes.
    assert!(
        early(&mut h).is_empty(),
        "an unchanged pane draws nothing early"
    );
    assert!(h.frame_bytes().is_empty(), "nor in the usual frame");
    h.keys(b"q");
    h.wait_pane(shell, "$ q");
    let drawn = early(&mut h);
    assert!(
        String::from_utf8_lossy(&drawn).contains('q'),
        "the echo is in the early frame: {:?}",
        String::from_utf8_lossy(&drawn)
    );
    assert!(h.terminal.screen().contents().contains("$ q"));
    let locks = h.server.state.counts.now().locks;
    assert!(
        h.frame_bytes().is_empty(),
        "the usual frame after it has nothing to add"
    );
    assert_eq!(
        h.server.state.counts.now().locks,
        locks,
        "nor does it lock the panes' terminals again"
    );
    assert_eq!(h.terminal.screen().contents(), whole(&mut h));
}

#[test]
fn when_the_chrome_changed_too_the_usual_frame_draws_over_the_early_one() {
    let mut h = Harness::new(12, 60);
    let shell = h.shell_pane();
    h.frame();
    // One output changes the pane's cells and its title (the border's and status line's text).
    h.keys(b"printf '\\033]2;retitled-pane\\007ok\\n'\r");
    h.wait_pane(shell, "\nok");
    wait("the title read from the output", || {
        h.server.state.panes[&shell]
            .glance
            .title()
            .filter(|t| t.contains("retitled-pane"))
            .map(|_| ())
    });
    let drawn = early(&mut h);
    assert!(!drawn.is_empty(), "the new cells are drawn early");
    assert!(
        !h.terminal.screen().contents().contains("retitled-pane"),
        "the early frame keeps the last frame's chrome"
    );
    assert!(
        !h.frame_bytes().is_empty(),
        "the changed chrome is drawn next"
    );
    let shown = h.terminal.screen().contents();
    assert!(shown.contains("retitled-pane"), "{shown}");
    assert_eq!(shown, whole(&mut h));
}
