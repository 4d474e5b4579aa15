//! End to end: the pane-moving commands (issue 15 §8) from the CLI and the `:` prompt, through
//! a real server: `resize-pane` (-L/-R/-U/-D N, -x/-y in cells or %, -Z), `swap-pane` (-s/-t,
//! -U/-D, -d), `join-pane` / `move-pane` (-h/-v, -b, -l, -d, across sessions) and `break-pane`
//! (-d, -n, -P -F). Geometry and ids are read back with `list-panes -F`; a bad target is
//! refused naming the flag, and nothing moves.

use crate::common;

use common::{wait_until, Env};

/// `list-panes -t SESSION -F FORMAT`, one line per pane, in window and layout order.
fn panes(env: &Env, session: &str, format: &str) -> Vec<String> {
    env.ok(&["list-panes", "-t", session, "-F", format])
        .lines()
        .map(str::to_string)
        .collect()
}

/// A detached session `name` of 100x30 cells with a shell; returns its first pane's id.
fn session(env: &Env, name: &str) -> String {
    let made = env.ok(&[
        "new",
        "-d",
        "-s",
        name,
        "-x",
        "100",
        "-y",
        "30",
        "-P",
        "-F",
        "#{pane_id}",
    ]);
    made.trim().to_string()
}

/// Splits `target` (-h: side by side) and returns the new pane's id.
fn split(env: &Env, target: &str, horizontal: bool) -> String {
    let dir = if horizontal { "-h" } else { "-v" };
    env.ok(&["split", dir, "-t", target, "-P", "-F", "#{pane_id}"])
        .trim()
        .to_string()
}

/// A pane's `#{pane_width}x#{pane_height}`.
fn size(env: &Env, pane: &str) -> String {
    env.ok(&[
        "display-message",
        "-p",
        "-t",
        pane,
        "#{pane_width}x#{pane_height}",
    ])
    .trim()
    .to_string()
}

/// Runs `calyx ARGS`, expecting it to fail with `code`; returns its stderr.
fn fails(env: &Env, args: &[&str], code: i32) -> String {
    let out = env.run(args);
    assert_eq!(out.status.code(), Some(code), "calyx {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stderr).to_string()
}

#[test]
fn resize_pane_moves_borders_sets_sizes_and_zooms() {
    let env = Env::new();
    let left = session(&env, "r");
    let right = split(&env, &left, true);
    // 100 columns: two boxes of 50, 48 columns of content each.
    assert_eq!(size(&env, &left), "48x27");
    env.ok(&["resize-pane", "-t", &left, "-R", "5"]);
    assert_eq!(size(&env, &left), "53x27");
    assert_eq!(size(&env, &right), "43x27");
    // Without N: one cell.
    env.ok(&["resize-pane", "-t", &left, "-L"]);
    assert_eq!(size(&env, &left), "52x27");
    // -x in cells and in percent of the window; the pane on the right side too.
    env.ok(&["resize-pane", "-t", &right, "-x", "30"]);
    assert_eq!(size(&env, &right), "30x27");
    env.ok(&["resize-pane", "-t", &left, "-x", "25%"]);
    assert_eq!(size(&env, &left), "25x27");
    let below = split(&env, &right, false);
    env.ok(&["resize-pane", "-t", &below, "-y", "10"]);
    assert!(
        size(&env, &below).ends_with("x10"),
        "{}",
        size(&env, &below)
    );
    // -Z zooms the target to the whole window, and back.
    env.ok(&["resize-pane", "-t", &below, "-Z"]);
    assert_eq!(size(&env, &below), "98x27");
    let active = env.ok(&["display-message", "-p", "-t", "r", "#{pane_id}"]);
    assert_eq!(active.trim(), below, "the zoomed pane is the focused one");
    env.ok(&["resize-pane", "-t", &below, "-Z"]);
    assert!(size(&env, &below).ends_with("x10"));

    // Usage errors exit 2 and change nothing; a missing target exits 1 naming it.
    let before = panes(&env, "r", "#{pane_id} #{pane_width}x#{pane_height}");
    assert!(fails(&env, &["resize-pane", "-t", &left, "-x", "wide"], 2).contains("not a size"));
    fails(&env, &["resize-pane", "-t", &left, "-L", "-x", "3"], 2);
    fails(&env, &["resize-pane", "-t", &left, "-L", "-R"], 2);
    fails(&env, &["resize-pane", "-t", &left, "4"], 2);
    let missing = fails(&env, &["resize-pane", "-t", "%99", "-L", "3"], 1);
    assert!(
        missing.contains("-t %99: can't find pane: %99"),
        "{missing}"
    );
    assert_eq!(
        panes(&env, "r", "#{pane_id} #{pane_width}x#{pane_height}"),
        before
    );
}

#[test]
fn swap_pane_exchanges_places_in_and_across_windows() {
    let env = Env::new();
    let a = session(&env, "s");
    let b = split(&env, &a, true);
    let c = split(&env, &b, true);
    let order = |env: &Env| panes(env, "s", "#{window_index}.#{pane_index} #{pane_id}");
    assert_eq!(
        order(&env),
        [format!("0.0 {a}"), format!("0.1 {b}"), format!("0.2 {c}")]
    );
    // -s and -t: focus goes to the target, in its new place.
    env.ok(&["swap-pane", "-s", &a, "-t", &c]);
    assert_eq!(
        order(&env),
        [format!("0.0 {c}"), format!("0.1 {b}"), format!("0.2 {a}")]
    );
    let focused = || env.ok(&["display-message", "-p", "-t", "s", "#{pane_id}"]);
    assert_eq!(focused().trim(), c);
    // -D: the target with the next pane; -d keeps the focus on the place it was (0.0).
    env.ok(&["swap-pane", "-t", &c, "-D", "-d"]);
    assert_eq!(
        order(&env),
        [format!("0.0 {b}"), format!("0.1 {c}"), format!("0.2 {a}")]
    );
    assert_eq!(focused().trim(), b);
    // -U wraps around from the first pane to the last.
    env.ok(&["swap-pane", "-t", &b, "-U"]);
    assert_eq!(
        order(&env),
        [format!("0.0 {a}"), format!("0.1 {c}"), format!("0.2 {b}")]
    );
    // Across windows: each window gets the other's pane, processes untouched.
    let pid = env.ok(&["display-message", "-p", "-t", &c, "#{pane_pid}"]);
    let other = env
        .ok(&["new-window", "-d", "-t", "s", "-P", "-F", "#{pane_id}"])
        .trim()
        .to_string();
    env.ok(&["swap-pane", "-s", &c, "-t", &other, "-d"]);
    let now = order(&env);
    assert!(now.contains(&format!("0.1 {other}")), "{now:?}");
    assert!(now.contains(&format!("1.0 {c}")), "{now:?}");
    assert_eq!(
        env.ok(&["display-message", "-p", "-t", &c, "#{pane_pid}"]),
        pid
    );
    // A bad source names itself; nothing moved.
    let err = fails(&env, &["swap-pane", "-s", "nosuch:0", "-t", &a], 1);
    assert!(
        err.contains("-s nosuch:0: can't find session: nosuch"),
        "{err}"
    );
    assert_eq!(order(&env), now);
    fails(&env, &["swap-pane", "-s", &a, "-D"], 2);
}

#[test]
fn join_pane_moves_a_running_pane_into_another_window_or_session() {
    let env = Env::new();
    let a = session(&env, "j");
    let lone = env
        .ok(&["new-window", "-d", "-t", "j", "-P", "-F", "#{pane_id}"])
        .trim()
        .to_string();
    env.ok(&["new-window", "-d", "-t", "j"]);
    let pid = env.ok(&["display-message", "-p", "-t", &lone, "#{pane_pid}"]);
    // -h beside the target: window 1 empties and closes; window 2 keeps its number.
    env.ok(&["join-pane", "-h", "-s", &lone, "-t", &a]);
    let layout = panes(
        &env,
        "j",
        "#{window_index}.#{pane_index} #{pane_id} #{pane_width}x#{pane_height}",
    );
    assert_eq!(layout[0], format!("0.0 {a} 48x27"), "{layout:?}");
    assert_eq!(layout[1], format!("0.1 {lone} 48x27"), "{layout:?}");
    assert!(layout[2].starts_with("2.0 "), "{layout:?}");
    assert_eq!(
        env.ok(&["display-message", "-p", "-t", &lone, "#{pane_pid}"]),
        pid
    );
    let focused = env.ok(&["display-message", "-p", "-t", "j", "#{pane_id}"]);
    assert_eq!(focused.trim(), lone, "without -d the moved pane is shown");

    // move-pane from another session, above the target (-b), 10 rows high, -d: focus stays.
    let guest = session(&env, "g");
    env.ok(&["move-pane", "-s", &guest, "-t", &a, "-b", "-l", "10", "-d"]);
    let layout = panes(
        &env,
        "j",
        "#{window_index}.#{pane_index} #{pane_id} #{pane_height}",
    );
    assert_eq!(layout[0], format!("0.0 {guest} 10"), "{layout:?}");
    assert_eq!(layout[1], format!("0.1 {a} 15"), "{layout:?}");
    let ls = env.ok(&["ls"]);
    assert!(!ls.contains("g:"), "the emptied session ended: {ls}");
    let focused = env.ok(&["display-message", "-p", "-t", "j", "#{pane_id}"]);
    assert_eq!(focused.trim(), lone);

    // Refusals change nothing.
    let before = panes(&env, "j", "#{window_index}.#{pane_index} #{pane_id}");
    let err = fails(&env, &["join-pane", "-s", &a, "-t", &a], 1);
    assert!(err.contains("itself"), "{err}");
    let err = fails(&env, &["join-pane", "-s", "%77", "-t", &a], 1);
    assert!(err.contains("-s %77: can't find pane: %77"), "{err}");
    let err = fails(&env, &["join-pane", "-s", &a, "-t", "j:9"], 1);
    assert!(err.contains("-t j:9: can't find window: 9"), "{err}");
    fails(&env, &["join-pane", "-s", &a, "-l", "0", "-t", &lone], 2);
    assert_eq!(
        panes(&env, "j", "#{window_index}.#{pane_index} #{pane_id}"),
        before
    );
}

#[test]
fn break_pane_makes_a_window_and_prints_where_it_went() {
    let env = Env::new();
    let a = session(&env, "b");
    let b = split(&env, &a, true);
    let printed = env.ok(&[
        "break-pane",
        "-s",
        &b,
        "-d",
        "-n",
        "logs",
        "-P",
        "-F",
        "#{window_index}:#{window_name}:#{pane_id}",
    ]);
    assert_eq!(printed.trim(), format!("1:logs:{b}"));
    assert_eq!(
        size(&env, &a),
        "98x27",
        "the pane left behind takes the window"
    );
    let focused = env.ok(&["display-message", "-p", "-t", "b", "#{pane_id}"]);
    assert_eq!(
        focused.trim(),
        a,
        "-d leaves the new window in the background"
    );
    let err = fails(&env, &["break-pane", "-s", &b], 1);
    assert!(err.contains("only pane"), "{err}");
    assert_eq!(panes(&env, "b", "#{window_index} #{pane_id}").len(), 2);
    // And back with join-pane: -l 25% is a quarter of the target's 98 columns.
    env.ok(&["join-pane", "-h", "-s", &b, "-t", &a, "-l", "25%", "-d"]);
    assert_eq!(size(&env, &b), "24x27");
    assert_eq!(
        panes(&env, "b", "#{window_index} #{pane_id}"),
        [format!("0 {a}"), format!("0 {b}")]
    );
}

#[test]
fn the_prompt_runs_the_pane_moving_commands_on_the_client_s_pane() {
    let env = Env::new();
    let mut c = env.client(&["new", "-s", "p"], 30, 100);
    c.wait_for("$ ");
    let first = wait_until("the first pane", || {
        let ids = panes(&env, "p", "#{pane_id}");
        ids.first().cloned()
    });
    let second = split(&env, &first, true);
    let layout = |env: &Env| {
        panes(
            env,
            "p",
            "#{window_index}.#{pane_index} #{pane_id} #{pane_width}",
        )
    };
    let prompt = |c: &mut common::Client, line: &str| {
        c.prefix(":");
        c.send(format!("{line}\r"));
    };
    // The focused pane is the new one (%second); -x without -t resizes it.
    prompt(&mut c, "resize-pane -x 20");
    wait_until("the focused pane 20 wide", || {
        layout(&env)
            .contains(&format!("0.1 {second} 20"))
            .then_some(())
    });
    prompt(&mut c, &format!("swap-pane -t {first}"));
    wait_until("the panes swapped", || {
        layout(&env)
            .first()
            .is_some_and(|l| l.starts_with(&format!("0.0 {second}")))
            .then_some(())
    });
    prompt(&mut c, &format!("break-pane -s {first} -n solo"));
    wait_until("the pane in a window of its own", || {
        layout(&env)
            .iter()
            .any(|l| l.starts_with(&format!("1.0 {first} ")))
            .then_some(())
    });
    prompt(&mut c, &format!("join-pane -h -s {second} -t {first}"));
    wait_until("both panes in window 1", || {
        let l = layout(&env);
        (l.len() == 2 && l.iter().all(|l| l.starts_with("1."))).then_some(())
    });
    // A bad target is refused on the status line, naming it.
    prompt(&mut c, "swap-pane -s %42");
    c.wait_for("-s %42: can't find pane: %42");
    prompt(&mut c, "resize-pane -x nope");
    c.wait_for("not a size");
}
