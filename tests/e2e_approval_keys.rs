//! End to end: the approval panel's keys beyond y/n/m, in a real client, answering real
//! `calyx hook ... --approval` processes in real panes: always-allow rules per pane and for
//! every pane, allow-all with its confirmation, stepping through requests, Claude Code's own
//! suggestions, hiding and reopening, and scrolling a long command.

use crate::common;

use common::gates::{
    claude_bash, fixture_payload, gate, payload_file, pending, side_by_side, wait_pending,
    CLAUDE_ALLOW,
};
use common::{wait_until, Client, Env};

const CLAUDE_DENY: &str = r#"{"hookSpecificOutput":{"decision":{"behavior":"deny","message":"Denied by the user in calyx."},"hookEventName":"PermissionRequest"}}"#;

/// A session "gates" with `panes` panes side by side, focus on the first; a client shows it.
fn setup(panes: usize) -> (Env, Client, Vec<String>) {
    side_by_side(panes, 150)
}

/// The record lines of request `id`.
fn decided_by(env: &Env, id: u64) -> Vec<String> {
    common::gates::approvals_log(env)
        .into_iter()
        .filter(|l| l["id"] == id)
        .filter_map(|l| l["by"].as_str().map(str::to_string))
        .collect()
}

/// The id the record gave the newest request.
fn last_id(env: &Env) -> u64 {
    common::gates::approvals_log(env)
        .iter()
        .filter_map(|l| l["id"].as_u64())
        .max()
        .expect("a recorded request")
}

#[test]
fn a_always_allows_the_tool_in_this_pane_but_another_pane_still_asks() {
    let (env, mut c, panes) = setup(2);
    let payload = payload_file(&env, "ls.json", &claude_bash("ls -la"));
    let g = gate(&env, &panes[0], "claude-code", &payload, "first");
    c.wait_for(&format!("in {} (gates:0) wants Bash", panes[0]));
    c.answer("a");
    assert_eq!(g.output(&env), CLAUDE_ALLOW);
    // The same tool from the same pane: the rule answers, nobody is asked.
    let g = gate(&env, &panes[0], "claude-code", &payload, "again");
    assert_eq!(g.output(&env), CLAUDE_ALLOW);
    assert_eq!(decided_by(&env, last_id(&env)), vec!["rule"]);
    assert!(pending(&env).is_empty());
    // The same tool from another pane is asked about.
    let g = gate(&env, &panes[1], "claude-code", &payload, "other");
    c.wait_for(&format!("in {} (gates:0) wants Bash", panes[1]));
    assert_eq!(wait_pending(&env, 1)[0]["pane"], panes[1].as_str());
    assert!(!g.done(&env), "answered without asking");
    c.answer("n");
    assert_eq!(g.output(&env), CLAUDE_DENY);
}

#[test]
fn capital_a_always_allows_the_tool_in_every_pane_and_only_that_tool() {
    let (env, mut c, panes) = setup(2);
    let payload = payload_file(&env, "ls.json", &claude_bash("ls -la"));
    let g = gate(&env, &panes[0], "claude-code", &payload, "first");
    c.wait_for("wants Bash");
    c.answer("A");
    assert_eq!(g.output(&env), CLAUDE_ALLOW);
    let g = gate(&env, &panes[1], "claude-code", &payload, "other");
    assert_eq!(g.output(&env), CLAUDE_ALLOW);
    assert_eq!(decided_by(&env, last_id(&env)), vec!["rule"]);
    // Another tool is still asked about.
    let mut write = fixture_payload("claude-2.1.197-PermissionRequest.json");
    write["tool_name"] = "Write".into();
    write["tool_input"] = serde_json::json!({"file_path": "/tmp/x", "content": "x"});
    let write = payload_file(&env, "write.json", &write);
    let g = gate(&env, &panes[1], "claude-code", &write, "write");
    c.wait_for("wants Write");
    c.answer("y");
    assert_eq!(g.output(&env), CLAUDE_ALLOW);
    assert_eq!(decided_by(&env, last_id(&env)), vec!["human"]);
}

#[test]
fn bang_asks_with_the_count_and_allows_only_the_requests_it_counted() {
    let (env, mut c, panes) = setup(3);
    let payload = payload_file(&env, "ls.json", &claude_bash("ls -la"));
    let first = gate(&env, &panes[0], "claude-code", &payload, "first");
    wait_pending(&env, 1);
    let second = gate(&env, &panes[1], "claude-code", &payload, "second");
    wait_pending(&env, 2);
    c.wait_for("1 of 2");
    // Declining allows nothing.
    c.answer("!");
    c.wait_for("allow all 2 pending requests?");
    c.answer("n");
    c.wait_screen("confirmation gone", |s| {
        !s.contains("allow all") && s.contains("1 of 2")
    });
    assert_eq!(pending(&env).len(), 2);
    assert!(!first.done(&env) && !second.done(&env));
    // A request that arrives while the question is shown is not part of the answer.
    c.answer("!");
    c.wait_for("allow all 2 pending requests?");
    let third = gate(&env, &panes[2], "claude-code", &payload, "third");
    wait_pending(&env, 3);
    c.wait_screen("three pending, two to confirm", |s| {
        s.contains(" 1 of 3 ") && s.contains("allow all 2 pending requests?")
    });
    c.answer("y");
    assert_eq!(first.output(&env), CLAUDE_ALLOW);
    assert_eq!(second.output(&env), CLAUDE_ALLOW);
    let left = wait_pending(&env, 1);
    assert_eq!(left[0]["pane"], panes[2].as_str());
    c.wait_for("1 of 1");
    c.answer("n");
    assert_eq!(third.output(&env), CLAUDE_DENY);
}

#[test]
fn tab_j_and_k_step_through_requests_and_y_answers_the_one_shown() {
    let (env, mut c, panes) = setup(3);
    let mut gates = Vec::new();
    for (i, word) in ["one", "two", "three"].iter().enumerate() {
        let p = payload_file(
            &env,
            &format!("{word}.json"),
            &claude_bash(&format!("echo {word}")),
        );
        gates.push(gate(&env, &panes[i], "claude-code", &p, word));
        wait_pending(&env, i + 1);
    }
    let shows = |c: &Client, index: usize, word: &str| {
        c.wait_screen(&format!("{index} of 3: {word}"), |s| {
            s.contains(&format!(" {index} of 3 ")) && s.contains(&format!("run: echo {word}"))
        });
    };
    shows(&c, 1, "one");
    c.send("\t");
    shows(&c, 2, "two");
    c.send("j");
    shows(&c, 3, "three");
    c.send("j");
    shows(&c, 1, "one");
    c.send("k");
    shows(&c, 3, "three");
    c.send("k");
    shows(&c, 2, "two");
    c.send("\x1b[Z"); // Shift-Tab
    shows(&c, 1, "one");
    c.send("\t");
    shows(&c, 2, "two");
    c.answer("y");
    assert_eq!(gates[1].output(&env), CLAUDE_ALLOW);
    let left: Vec<_> = wait_pending(&env, 2)
        .iter()
        .map(|p| p["pane"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(left, vec![panes[0].clone(), panes[2].clone()]);
    c.wait_for(" 1 of 2 ");
}

#[test]
fn claude_suggestions_are_numbered_choices_sent_as_updated_permissions() {
    let (env, mut c, panes) = setup(1);
    let p = payload_file(&env, "perm.json", &claude_bash("ls"));
    let g = gate(&env, &panes[0], "claude-code", &p, "suggested");
    c.wait_for(r#"1 addDirectories ["/home/dev/src/app"] (session)"#);
    // A number with no suggestion does nothing (`m` then Esc shows the key was handled).
    c.answer("2");
    c.answer("m");
    c.wait_for("deny with message");
    c.send("\x1b");
    c.wait_screen("message line closed", |s| !s.contains("deny with message"));
    assert_eq!(pending(&env).len(), 1);
    c.answer("1");
    assert_eq!(
        g.output(&env),
        r#"{"hookSpecificOutput":{"decision":{"behavior":"allow","updatedPermissions":[{"destination":"session","directories":["/home/dev/src/app"],"type":"addDirectories"}]},"hookEventName":"PermissionRequest"}}"#
    );
    // Codex rejects updatedPermissions: its requests offer no numbered choices.
    let mut codex = fixture_payload("codex-0.171.0-PermissionRequest.json");
    codex["permission_suggestions"] =
        fixture_payload("claude-2.1.197-PermissionRequest.json")["permission_suggestions"].clone();
    let p = payload_file(&env, "codex.json", &codex);
    let g = gate(&env, &panes[0], "codex", &p, "codex");
    let screen = c.wait_screen("the Codex request", |s| {
        s.contains("Codex") && s.contains("wants Bash")
    });
    assert!(!screen.contains("addDirectories"), "{screen}");
    c.answer("1");
    c.answer("y");
    assert_eq!(g.output(&env), CLAUDE_ALLOW);
}

#[test]
fn esc_hides_the_panel_the_status_line_counts_and_prefix_i_reopens_it() {
    let (env, mut c, panes) = setup(2);
    let p = payload_file(&env, "ls.json", &claude_bash("ls -la"));
    let g = gate(&env, &panes[0], "claude-code", &p, "hidden");
    c.wait_for("wants Bash");
    c.send("\x1b");
    c.wait_screen("panel hidden, the status line counting", |s| {
        !s.contains("wants Bash") && s.contains("1 approval (prefix i)")
    });
    // Keys go to the pane again: `y` does not answer the hidden request.
    c.send("yzqzq");
    env.wait_capture(&panes[0], "yzqzq");
    assert_eq!(pending(&env).len(), 1);
    assert!(!g.done(&env));
    // A new request shows the panel again, with both counted.
    let g2 = gate(&env, &panes[1], "claude-code", &p, "newer");
    c.wait_for("wants Bash");
    c.wait_for("2 approvals (prefix i)");
    c.send("\x1b");
    c.wait_screen("hidden again", |s| !s.contains("wants Bash"));
    c.prefix("i");
    c.wait_for("wants Bash");
    c.answer("y");
    // Keys answer the request on screen: the second is answered once it is drawn.
    c.wait_for(" 1 of 1 ");
    c.answer("y");
    assert_eq!(g.output(&env), CLAUDE_ALLOW);
    assert_eq!(g2.output(&env), CLAUDE_ALLOW);
    c.wait_screen("badge gone", |s| !s.contains("(prefix i)"));
    // With nothing pending, prefix i says so.
    c.prefix("i");
    c.wait_for("no approvals pending");
}

/// The body rows the panel says it shows: "lines A-B of N".
fn shown_range(screen: &str) -> (usize, usize, usize) {
    let at = screen.find(" lines ").expect("scroll position shown");
    let rest = &screen[at + 7..];
    let end = rest.find(' ').unwrap_or(rest.len());
    let (a, b) = rest[..end].split_once('-').expect("A-B");
    let n: String = rest[end + 4..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    (
        a.parse().expect("A"),
        b.parse().expect("B"),
        n.parse().expect("N"),
    )
}

/// Whether the rows on screen are the ones the panel says it shows ("line-A" to "line-B", and
/// neither neighbour; the headline shows "line-001").
fn rows_match(screen: &str, (a, b, _): (usize, usize, usize)) -> bool {
    let line = |k: usize| format!("line-{k:03}");
    screen.contains(&line(a))
        && screen.contains(&line(b.min(200)))
        && (a <= 2 || !screen.contains(&line(a - 1)))
        && (b >= 200 || !screen.contains(&line(b + 1)))
}

/// Waits until the panel shows a range that passes `check`, with the rows it says; returns
/// the first row shown.
fn wait_range(c: &Client, what: &str, check: impl Fn((usize, usize, usize)) -> bool) -> usize {
    let screen = c.wait_screen(what, |s| {
        s.contains(" lines ") && check(shown_range(s)) && rows_match(s, shown_range(s))
    });
    shown_range(&screen).0
}

#[test]
fn a_long_command_scrolls_with_the_panel_keys_and_stops_at_its_ends() {
    let (env, mut c, panes) = setup(1);
    let command: Vec<String> = (1..=200).map(|i| format!("line-{i:03}")).collect();
    let p = payload_file(&env, "long.json", &claude_bash(&command.join("\n")));
    let g = gate(&env, &panes[0], "claude-code", &p, "long");
    c.wait_for("wants Bash");
    // 200 command lines, a blank one and the description, a blank one and the fixture's
    // "always" choice listed whole.
    let (_, page_end, total) = {
        let s = c.wait_for(" lines 1-");
        shown_range(&s)
    };
    assert_eq!(total, 204);
    wait_range(&c, "top", |(a, _, _)| a == 1);
    c.send("\x1b[6~"); // PageDown: the last row shown stays on screen, at the top
    wait_range(&c, "a page down", |(a, _, _)| a == page_end);
    c.send("\x1b[B"); // Down
    wait_range(&c, "a row down", |(a, _, _)| a == page_end + 1);
    c.send(" ");
    wait_range(&c, "space pages", |(a, _, _)| a == 2 * page_end);
    c.send("\x1b[A"); // Up
    wait_range(&c, "a row up", |(a, _, _)| a == 2 * page_end - 1);
    c.send("\x1b[F"); // End
    let last_page = wait_range(&c, "the end", |(_, b, n)| b == n);
    c.wait_for("# Write marker file");
    // Past the end the panel stays on the last page: one row up from there moves at once.
    for _ in 0..3 {
        c.send("\x1b[6~");
    }
    c.send("\x1b[B");
    c.send("\x1b[A");
    wait_range(&c, "a row up from the last page", |(a, _, _)| {
        a == last_page - 1
    });
    c.send("\x1b[H"); // Home
    wait_range(&c, "back at the top", |(a, _, _)| a == 1);
    c.send("\x1b[5~"); // PageUp at the top stays there
    c.send("\x1b[A");
    c.send("\x1b[6~");
    wait_range(&c, "one page down from the top", |(a, _, _)| a == page_end);
    c.answer("y");
    assert_eq!(g.output(&env), CLAUDE_ALLOW);
    wait_until("nothing pending", || pending(&env).is_empty().then_some(()));
}

#[test]
fn a_request_that_appears_while_you_type_does_not_take_your_keys_as_answers() {
    let (env, mut c, panes) = setup(1);
    let payload = payload_file(&env, "ls.json", &claude_bash("ls -la"));
    // The user is typing in the pane when the request appears: they go on typing (a letter
    // no panel key uses) until it does, so a hook slow to start on a busy machine still
    // arrives within a second of a keystroke.
    c.send("echo typing");
    let g = gate(&env, &panes[0], "claude-code", &payload, "typed-over");
    let start = std::time::Instant::now();
    while !c.screen().contains("keys wake in a moment") {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(30),
            "no guarded panel; screen:\n{}",
            c.screen()
        );
        c.send("z");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // The next letters of their typing are not answers: no "always" rule, no allow.
    c.send("a");
    c.send("y");
    c.wait_for("read it, then answer");
    assert_eq!(pending(&env).len(), 1);
    assert!(!g.done(&env));
    // Once the keys wake (the panel lists them again), they answer.
    c.answer("n");
    assert_eq!(g.output(&env), CLAUDE_DENY);
    assert_eq!(decided_by(&env, last_id(&env)), vec!["human"]);
}

/// Plays `payload` as a plain hook event from `pane` (Claude's PermissionRequest ping, beside
/// its gate); returns once the server applied it.
fn ping(env: &Env, pane: &str, payload: &serde_json::Value) {
    let surface = env
        .panes()
        .into_iter()
        .find(|p| p["id"] == pane)
        .and_then(|p| p["surface_id"].as_str().map(str::to_string))
        .unwrap_or_default();
    env.hook_event(&surface, "claude-code", payload);
}

fn agent_state(env: &Env, pane: &str) -> String {
    common::gates::agent_row(env, pane)
        .and_then(|r| r["state"].as_str().map(str::to_string))
        .unwrap_or_default()
}

#[test]
fn the_permission_ping_of_a_request_calyx_answered_does_not_block_the_agent_again() {
    let (env, mut c, panes) = setup(1);
    let bash = claude_bash("ls -la");
    let payload = payload_file(&env, "ls.json", &bash);
    let g = gate(&env, &panes[0], "claude-code", &payload, "first");
    c.wait_for("wants Bash");
    c.answer("y");
    assert_eq!(g.output(&env), CLAUDE_ALLOW);
    wait_until("the agent working after the allow", || {
        (agent_state(&env, &panes[0]) == "working").then_some(())
    });
    // Claude's asynchronous PermissionRequest ping for that same call lands after the answer.
    ping(&env, &panes[0], &bash);
    assert_eq!(agent_state(&env, &panes[0]), "working");
    // With an always rule, a ping for that tool never blocks either.
    let second = payload_file(&env, "second.json", &claude_bash("ls /second"));
    let g = gate(&env, &panes[0], "claude-code", &second, "second");
    c.wait_for("ls /second");
    c.answer("a");
    assert_eq!(g.output(&env), CLAUDE_ALLOW);
    let mut later = bash.clone();
    later["tool_input"]["command"] = "ls /tmp".into();
    ping(&env, &panes[0], &later);
    assert_eq!(agent_state(&env, &panes[0]), "working");
}
