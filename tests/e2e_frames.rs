//! End to end: frames that redraw only what changed (single rows, scrolled regions) leave the
//! user's terminal showing exactly the pane's screen, through echoes, scrolling, clears, the
//! alternate screen, a program's own scroll region and side-by-side panes.

use crate::common;

use common::{wait_until, Client, Env};

/// The pane's text as the server has it, one string per screen row.
fn pane_rows(env: &Env, pane: &str, rows: usize) -> Vec<String> {
    let text = env.ok(&["capture", "-t", pane]);
    let mut lines: Vec<String> = text.lines().map(|l| l.trim_end().to_string()).collect();
    lines.resize(rows, String::new());
    lines
}

/// Waits until the single full-window pane (inside its border) shows what the server has, after
/// the pane printed `marker`.
fn wait_in_sync(env: &Env, c: &Client, pane: &str, marker: &str, (rows, cols): (u16, u16)) {
    let inner = (rows - 3, cols - 2);
    let mut last = (Vec::new(), Vec::new());
    let synced = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        wait_until(&format!("terminal in sync after {marker}"), || {
            let want = pane_rows(env, pane, usize::from(inner.0));
            let mut shown = c.region(1, 1, inner.0, inner.1);
            // The border beside every row too (a scrolled region must not take it along).
            let borders = c.region(1, 0, inner.0, 1) == vec!["┃"; usize::from(inner.0)];
            if !borders {
                shown.push("(a border cell is missing)".into());
            }
            let done = want.iter().any(|l| l.contains(marker)) && shown == want;
            last = (want, shown);
            done.then_some(())
        })
    }));
    if synced.is_err() {
        panic!(
            "after {marker}: the terminal shows\n{}\nbut the pane has\n{}",
            last.1.join("\n"),
            last.0.join("\n")
        );
    }
}

#[test]
fn partial_frames_keep_the_terminal_equal_to_the_pane() {
    let env = Env::new();
    let size = (24, 80);
    let mut c = env.client(&["new", "-s", "f", "--", "sh"], size.0, size.1);
    c.wait_for("$ ");
    let first = env.panes()[0]["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    // Keystroke echoes, one row at a time.
    for ch in "echo typed-one-by-one".chars() {
        c.send(ch.to_string());
    }
    c.send("\r");
    wait_in_sync(&env, &c, &first, "typed-one-by-one", size);
    // Many lines in one burst and one by one: the pane scrolls by several rows, and by one.
    c.send("seq 1 60 | sed 's/^/burst-/'\r");
    wait_in_sync(&env, &c, &first, "burst-60", size);
    // One program prints them (a shell loop would start `sleep` each time, and the window's
    // name follows the foreground program: the status line would change between frames), after
    // a pause so its own start (the name changing to python3) is drawn in an earlier frame.
    c.send(
        "python3 -c 'import time\ntime.sleep(0.3)\n[(print(\"step-%d\" % i, flush=True), \
         time.sleep(0.05)) for i in range(1, 7)]\nprint(\"steps-%d\" % 6)'\r",
    );
    wait_in_sync(&env, &c, &first, "steps-6", size);
    // Those lines scrolled the terminal's region instead of sending every row again.
    let raw = String::from_utf8_lossy(&c.raw()).to_string();
    assert!(
        raw.contains(&format!("\x1b[2;{}r", size.0 - 2)),
        "no scroll region used"
    );
    // A colored row scrolled away leaves no color behind (the lines a scroll brings in are
    // blank with the default background, on the terminal as in the pane).
    c.send("printf '\\033[41m red \\033[0m\\n'; seq 1 30; echo colored-$((1+1))\r");
    wait_in_sync(&env, &c, &first, "colored-2", size);
    assert_eq!(c.colored_cells(1, 1, size.0 - 3, size.1 - 2), 0);
    // A clear, then the alternate screen and back.
    c.send("clear; echo cleared-$((3+3))\r");
    wait_in_sync(&env, &c, &first, "cleared-6", size);
    c.send("printf '\\033[?1049h\\033[HALT-SCREEN'; sleep 0.2; printf '\\033[?1049l'; echo back-$((4+4))\r");
    wait_in_sync(&env, &c, &first, "back-8", size);
    // The program's own scroll region: rows 3-8 scroll, the rest stays.
    c.send("clear; seq 1 12; printf '\\033[3;8r\\033[8;1H'; seq 100 104; printf '\\033[r\\033[20;1H'; echo region-$((5+5))\r");
    wait_in_sync(&env, &c, &first, "region-10", size);
    // Side by side: the left pane scrolls without a terminal scroll region.
    c.prefix("%");
    wait_until("two panes", || (env.panes().len() == 2).then_some(()));
    let right = env.panes()[1]["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    c.send("seq 1 40 | sed 's/^/right-/'\r");
    env.wait_capture(&right, "right-40");
    env.ok(&[
        "send-keys",
        "-t",
        &first,
        "seq 1 40 | sed 's/^/left-/'",
        "Enter",
    ]);
    env.wait_capture(&first, "left-40");
    wait_until("both panes drawn", || {
        let screen = c.screen();
        let want: Vec<String> = [first.as_str(), right.as_str()]
            .iter()
            .flat_map(|p| pane_rows(&env, p, 20))
            .filter(|l| !l.is_empty())
            .collect();
        want.iter()
            .all(|l| screen.contains(l.as_str()))
            .then_some(())
    });
}
