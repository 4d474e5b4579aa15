//! Issue 15 §11: `pane_borders = "separators"` (tmux's model) through a real server and a real
//! client in a real PTY: the sizes panes get (list-panes), the separator column on the outer
//! terminal, dragging it with the mouse, zoom, and switching back to boxes at reload-config.

use crate::common;

use common::{wait_until, Client, Env};

/// (id, cols, rows, focused) of every pane, in layout order.
fn sizes(env: &Env) -> Vec<(String, u64, u64, bool)> {
    env.panes()
        .iter()
        .map(|p| {
            (
                p["id"].as_str().unwrap_or_default().to_string(),
                p["cols"].as_u64().unwrap_or(0),
                p["rows"].as_u64().unwrap_or(0),
                p["focused"].as_bool() == Some(true),
            )
        })
        .collect()
}

/// Waits until the panes' (cols, rows) are `want`.
fn wait_sizes(env: &Env, what: &str, want: &[(u64, u64)]) {
    wait_until(what, || {
        let now: Vec<(u64, u64)> = sizes(env).iter().map(|p| (p.1, p.2)).collect();
        (now == want).then_some(())
    });
}

/// Waits until the pane's shell runs commands. (Not by waiting for "$ ": with no border to
/// its right, the prompt's space is a trailing blank the outer screen's text drops.)
fn wait_for_shell(c: &mut Client) {
    c.send("echo shell-$((40 + 2))\r");
    c.wait_for("shell-42");
}

/// Whether column `col` of the outer terminal is a separator line on rows `rows`.
fn separator_column(c: &Client, col: u16, rows: std::ops::Range<u16>) -> bool {
    let len = rows.len() as u16;
    c.region(rows.start, col, len, 1)
        .iter()
        .all(|cell| cell == "│")
}

#[test]
fn separators_give_a_lone_pane_the_whole_width_and_share_one_column() {
    let env = Env::new();
    env.write_config("pane_borders = \"separators\"\n");
    let mut c = env.client(&[], 45, 160);
    wait_for_shell(&mut c);
    // The acceptance line: a lone pane in a 160x45 terminal is 160 columns wide (44 rows: the
    // status line takes one).
    wait_sizes(&env, "a lone pane of 160x44", &[(160, 44)]);
    assert!(
        c.region(0, 0, 44, 160).iter().all(|row| !row.contains('│')),
        "no border around a lone pane"
    );

    // Side by side: 80, one separator column, 79 (tmux's split of 160 columns).
    c.prefix("%");
    wait_sizes(&env, "two panes side by side", &[(80, 44), (79, 44)]);
    wait_until("the separator column at x=80", || {
        separator_column(&c, 80, 0..44).then_some(())
    });
    let status = c.region(44, 0, 1, 160).concat();
    assert!(
        !status.contains('│'),
        "the separator stops above the status line: {status}"
    );

    // Zoom gives the focused pane the whole window; unzoom brings the separator back.
    c.prefix("z");
    wait_sizes(
        &env,
        "the zoomed pane fills the window",
        &[(80, 44), (160, 44)],
    );
    c.prefix("z");
    wait_sizes(&env, "unzoomed", &[(80, 44), (79, 44)]);

    // A click on the left pane's content focuses it.
    let ids = sizes(&env);
    assert!(ids[1].3, "the new pane has the focus");
    c.send("\x1b[<0;10;10M\x1b[<0;10;10m");
    wait_until("click focuses the left pane", || {
        sizes(&env)[0].3.then_some(())
    });

    // Drag the separator (column 80, 1-based 81) to column 60: the left pane gets 60
    // columns, the right one 160 - 60 - 1.
    c.send("\x1b[<0;81;10M\x1b[<32;71;10M\x1b[<32;61;10M\x1b[<0;61;10m");
    wait_sizes(&env, "the separator dragged to x=60", &[(60, 44), (99, 44)]);
    wait_until("the separator drawn at x=60", || {
        separator_column(&c, 60, 0..44).then_some(())
    });
    assert!(
        !separator_column(&c, 80, 0..44),
        "the old separator column is content again"
    );

    // Back to boxes at reload-config, live: each pane loses a frame's two columns and rows.
    env.write_config("pane_borders = \"box\"\n");
    env.ok(&["reload-config"]);
    wait_until("boxes after reload-config", || {
        let now = sizes(&env);
        let cols: u64 = now.iter().map(|p| p.1).sum();
        (cols == 160 - 4 && now.iter().all(|p| p.2 == 42)).then_some(())
    });
    wait_until("the box's corner drawn", || {
        let corner = c.region(0, 0, 1, 1).concat();
        matches!(corner.as_str(), "┌" | "┏").then_some(())
    });
}

#[test]
fn stacked_panes_share_one_row_with_the_lower_title_on_it() {
    let env = Env::new();
    env.write_config("pane_borders = \"separators\"\n");
    let mut c = env.client(&[], 45, 160);
    wait_for_shell(&mut c);
    c.prefix("\"");
    // 44 rows: 22, a separator row, 21.
    wait_sizes(&env, "two stacked panes", &[(160, 22), (160, 21)]);
    // The separator row carries the lower pane's number and title ("1: sh").
    wait_until("the lower pane's title on the separator row", || {
        let row = c.region(22, 0, 1, 160).concat();
        (row.starts_with("─ 1: ") && row.contains("──")).then_some(())
    });
    // The upper pane has no line above it: its title is on the status line once focused.
    c.send("\x1b[<0;10;5M\x1b[<0;10;5m");
    wait_until("the upper pane focused", || sizes(&env)[0].3.then_some(()));
    let upper = sizes(&env)[0].0.clone();
    wait_until("its id on the status line", || {
        c.region(44, 0, 1, 160)
            .concat()
            .contains(&upper)
            .then_some(())
    });
}
