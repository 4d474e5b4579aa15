//! End to end: lines a shell printed survive shrinking and growing its window, whatever the
//! shell redraws on SIGWINCH (issue 15, item 2). Real bash in a real pane, a real client whose
//! terminal is resized; the pane's history and screen are read with `calyx capture`.

use crate::common;

use common::{wait_until, Env};

const LONG: &str = "a fairly long line of text that should rewrap correctly when the width returns";
/// A prompt as long as a usual `user@host:dir$ `: it wraps in the narrow pane, so the shell's
/// redraw at the full width moves up over the rows it took there.
const PROMPT: &str = "user@calyx-host:~/src/project$ ";

/// The issue's repro in `shell`: print, split, shrink to 24x8, grow back; every printed line
/// must still be in the pane's history or on its screen.
fn lines_survive(shell: &str) {
    let env = Env::new();
    let mut c = env.client(&["new", "-s", "r"], 45, 160);
    c.wait_for("$ ");
    c.send(format!("exec {shell}\r"));
    c.send(format!("PS1='{PROMPT}'; echo shell-$((20+22))\r"));
    env.wait_capture("%1", "shell-42");
    c.send(format!("clear; seq 1 5; echo \"{LONG}\"\r"));
    env.wait_capture("%1", &format!("5\n{LONG}\n{}", PROMPT.trim_end()));
    c.prefix("%");
    wait_until("two panes", || (env.panes().len() == 2).then_some(()));
    common::resize_session(&env, &mut c, 8, 24);
    common::resize_session(&env, &mut c, 45, 160);
    // Wait for the end state, not the first capture that shows a prompt: on a busy machine a
    // capture can land between the two resizes and bash's redraws for them, while the pane is
    // still narrow. Lines lost for good still fail (the deadline passes, and the last capture
    // is what the assertions below show).
    let wanted = ["1", "2", "3", "4", "5"];
    let settled = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let all = loop {
        let text = env.ok(&["capture", "-t", "%1", "--scrollback"]);
        let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
        let prompt_back = lines.contains(&PROMPT.trim_end());
        if prompt_back && wanted.iter().all(|w| lines.contains(w)) {
            break text;
        }
        if std::time::Instant::now() > settled {
            break text;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    // The live screen (what the client draws) has them too: it is 42 rows tall again.
    let screen = env.ok(&["capture", "-t", "%1"]);
    assert!(
        screen.lines().any(|l| l == "5") && screen.contains(LONG),
        "lost from the screen:\n{screen}"
    );
    let lines: Vec<&str> = all.lines().map(str::trim_end).collect();
    for want in wanted {
        assert!(lines.contains(&want), "{want:?} lost:\n{all}");
    }
    let joined = all.replace('\n', "");
    assert!(joined.contains(LONG), "the long line lost:\n{all}");
    let five = lines.iter().position(|l| *l == "5").unwrap_or(0);
    assert!(
        lines[..five].iter().filter(|l| **l == "4").count() == 1,
        "printed once:\n{all}"
    );
}

#[test]
fn bash_lines_survive_a_shrink_and_grow() {
    lines_survive("bash");
}

#[test]
fn bash_norc_lines_survive_a_shrink_and_grow() {
    lines_survive("bash --norc");
}
