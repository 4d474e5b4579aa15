use super::*;
use crate::persist::record::SavedAgent;

fn argv(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_string).collect()
}

fn restart() -> Vec<String> {
    [
        "vim", "nvim", "less", "man", "htop", "top", "tail -f", "watch",
    ]
    .map(String::from)
    .to_vec()
}

fn pane(command: &str, program: &str, foreground: &str) -> SavedPane {
    SavedPane {
        id: 1,
        record_id: String::new(),
        cwd: "/".into(),
        command: argv(command),
        foreground: argv(foreground),
        program: argv(program),
        title: String::new(),
        agent: None,
        history: None,
    }
}

#[test]
fn a_shell_at_its_prompt_is_just_a_shell() {
    assert_eq!(plan(&pane("", "bash", ""), &restart()), Relaunch::default());
}

#[test]
fn less_started_from_the_shell_is_typed_again_with_its_file() {
    let got = plan(&pane("", "bash", "less /tmp/my notes.txt"), &restart());
    assert_eq!(got.command, Vec::<String>::new());
    assert_eq!(got.typed.as_deref(), Some("less /tmp/my notes.txt"));
    let spaced = SavedPane {
        foreground: vec!["less".into(), "/tmp/my notes.txt".into()],
        ..pane("", "bash", "")
    };
    assert_eq!(
        plan(&spaced, &restart()).typed.as_deref(),
        Some("less '/tmp/my notes.txt'")
    );
}

#[test]
fn a_pane_started_with_a_listed_program_starts_it_again() {
    let got = plan(&pane("vim a.rs", "vim a.rs", ""), &restart());
    assert_eq!(got.command, argv("vim a.rs"));
    assert_eq!(got.typed, None);
}

#[test]
fn tail_needs_its_follow_flag_to_be_restarted() {
    assert!(restartable(&argv("tail -f log"), &restart()));
    assert!(!restartable(&argv("tail log"), &restart()));
}

#[test]
fn anything_else_leaves_a_shell_and_a_note() {
    let got = plan(&pane("", "bash", "cargo build --release"), &restart());
    assert_eq!(got.command, Vec::<String>::new());
    assert_eq!(got.typed, None);
    let note = got.note.expect("a note");
    assert!(note.contains("cargo build --release"), "{note}");
}

#[test]
fn an_agent_with_a_session_id_resumes_through_its_script() {
    let mut p = pane("", "bash", "node /opt/bin/claude --model opus");
    p.agent = Some(SavedAgent {
        kind: "claude-code".into(),
        session_id: Some("1234-abcd".into()),
        state: "idle".into(),
        transcript_path: None,
    });
    let got = plan(&p, &restart());
    assert_eq!(
        got.typed.as_deref(),
        Some("/opt/bin/claude --resume 1234-abcd --model opus")
    );
    assert_eq!(got.note, None);
}

#[test]
fn an_agent_that_cannot_resume_starts_fresh_and_says_so() {
    let mut p = pane("grok -m pro", "grok -m pro", "");
    p.agent = Some(SavedAgent {
        kind: "grok".into(),
        session_id: Some("s".into()),
        state: "idle".into(),
        transcript_path: None,
    });
    let got = plan(&p, &restart());
    assert_eq!(got.command, argv("grok -m pro"));
    assert!(got.note.expect("note").contains("Grok"));
}

#[test]
fn plain_shells_take_typed_lines_at_once_and_others_through_their_line_editor() {
    use super::shell_edits_lines;
    let dir = tempfile::tempdir().expect("tempdir");
    let dash = dir.path().join("dash");
    std::fs::write(&dash, "").expect("dash");
    let linked_sh = dir.path().join("sh");
    let bash = dir.path().join("bash");
    std::fs::write(&bash, "").expect("bash");
    std::os::unix::fs::symlink(&bash, &linked_sh).expect("link");
    assert!(!shell_edits_lines(&dash.display().to_string()));
    // `/bin/sh` that is bash edits lines: its link is followed.
    assert!(shell_edits_lines(&linked_sh.display().to_string()));
    assert!(shell_edits_lines("/no/such/zsh"));
    assert!(!shell_edits_lines("/no/such/sh"));
}

#[test]
fn a_cli_run_as_a_python_module_resumes_as_one() {
    let mut p = pane("", "bash", "/venv/bin/python -m kimi_cli.cli -m k2 --yolo");
    p.agent = Some(SavedAgent {
        kind: "kimi".into(),
        session_id: Some("s1".into()),
        state: "idle".into(),
        transcript_path: None,
    });
    let got = plan(&p, &restart());
    assert_eq!(
        got.typed.as_deref(),
        Some("/venv/bin/python -m kimi_cli.cli --session s1 -m k2")
    );
}
