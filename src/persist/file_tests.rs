use std::os::unix::fs::PermissionsExt as _;

use super::*;
use crate::layout::{Layout, SplitDir};
use crate::persist::record::{SavedPane, SavedSession, SavedWindow};

fn sample() -> SavedState {
    let pane = |id, cwd: &str| SavedPane {
        id,
        record_id: String::new(),
        cwd: cwd.into(),
        command: Vec::new(),
        foreground: vec!["less".into(), "notes.txt".into()],
        program: vec!["bash".into()],
        title: "t".into(),
        agent: None,
        history: None,
    };
    SavedState {
        version: VERSION,
        saved_at: 1,
        sessions: vec![SavedSession {
            name: "work".into(),
            saved_at: 1,
            active_window: 0,
            windows: vec![SavedWindow {
                number: 0,
                name: "w".into(),
                auto_name: true,
                layout: Layout::Split {
                    dir: SplitDir::Horizontal,
                    ratio: 300,
                    first: Box::new(Layout::Pane(1)),
                    second: Box::new(Layout::Pane(2)),
                },
                active: 2,
                zoomed: false,
                synchronized: true,
                panes: vec![pane(1, "/tmp"), pane(2, "/")],
            }],
        }],
        approval_rules: Vec::new(),
    }
}

#[test]
fn a_written_file_reads_back_the_same_and_is_private() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("sessions.json");
    write(&path, &sample()).expect("write");
    let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    match load(&path) {
        Loaded::Read(state) => assert_eq!(state, sample()),
        other => panic!("expected the saved state, got {other:?}"),
    }
    // No temp file is left behind.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["sessions.json".to_string()]);
}

#[test]
fn corrupt_truncated_and_future_files_are_moved_aside() {
    let full = serde_json::to_string(&sample()).expect("json");
    let future = full.replacen("\"version\":1", "\"version\":99", 1);
    for text in [
        "{not json",
        &full[..full.len() / 2],
        &future,
        "[]",
        "\u{0}\u{1}",
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("sessions.json");
        std::fs::write(&path, text).expect("write");
        match load(&path) {
            Loaded::MovedAside { moved_to, why } => {
                assert!(!path.exists(), "{text:?}: the bad file stayed");
                assert_eq!(std::fs::read_to_string(&moved_to).expect("aside"), text);
                assert!(!why.is_empty());
                assert_eq!(moved_aside(&path), vec![moved_to]);
            }
            other => panic!("{text:?}: expected it moved aside, got {other:?}"),
        }
        assert!(matches!(load(&path), Loaded::Missing));
    }
}

#[test]
fn a_future_version_says_which_version_it_found() {
    let text = serde_json::to_string(&sample()).expect("json").replacen(
        "\"version\":1",
        "\"version\":7",
        1,
    );
    let why = parse(&text).expect_err("future version");
    assert!(why.contains("version 7"), "{why}");
}

#[test]
fn a_missing_file_is_nothing_saved() {
    let dir = tempfile::tempdir().expect("tempdir");
    assert!(matches!(
        load(&dir.path().join("sessions.json")),
        Loaded::Missing
    ));
    assert!(read(&dir.path().join("sessions.json")).is_none());
}
