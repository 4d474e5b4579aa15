use super::*;

fn sources() -> Sources {
    Sources {
        targets: vec![
            "alpha".into(),
            "alpha:0".into(),
            "alpha:2".into(),
            "beta".into(),
            "%1".into(),
            "%12".into(),
        ],
        cwd: None,
        options: vec!["mouse".into(), "base_index".into()],
    }
}

fn candidates(line: &str) -> Vec<String> {
    complete(line, &sources()).candidates
}

#[test]
fn command_names_come_from_the_cli_and_the_key_table() {
    let kills = candidates("kill");
    for name in [
        "kill",
        "kill-pane",
        "kill-server",
        "kill-session",
        "kill-window",
    ] {
        assert!(kills.contains(&name.to_string()), "{name} in {kills:?}");
    }
    // Key-table commands and the prompt's own select-window.
    assert_eq!(candidates("copy-"), vec!["copy-mode"]);
    assert_eq!(candidates("select-w"), vec!["select-window"]);
    // Verbs that need a shell are not offered.
    assert!(candidates("").iter().all(|c| c != "attach" && c != "hook"));
    assert_eq!(complete("new-w", &sources()).start, 0);
}

#[test]
fn every_cli_verb_completes_without_a_list_here() {
    // A command added to cli.rs completes by itself: every visible clap verb not kept out.
    let all = candidates("");
    for sub in Cli::command().get_subcommands() {
        let name = sub.get_name();
        if !NOT_FOR_THE_PROMPT.contains(&name) && !sub.is_hide_set() {
            assert!(all.contains(&name.to_string()), "{name}");
        }
    }
}

#[test]
fn flags_of_the_typed_command() {
    let flags = candidates("split-window -");
    for flag in ["-h", "-v", "-d", "-c", "-t", "--cwd", "--target"] {
        assert!(flags.contains(&flag.to_string()), "{flag} in {flags:?}");
    }
    assert!(!flags.contains(&"--help".to_string()));
    assert_eq!(candidates("kill-session --t"), vec!["--target"]);
    // A key-table command's flags from its rows.
    let pane = candidates("select-pane -");
    for flag in ["-L", "-R", "-U", "-D", "-t"] {
        assert!(pane.contains(&flag.to_string()), "{flag} in {pane:?}");
    }
}

#[test]
fn targets_after_t_from_the_live_state() {
    assert_eq!(candidates("kill-pane -t %1"), vec!["%1", "%12"]);
    assert_eq!(
        candidates("kill-window -t alpha:"),
        vec!["alpha:0", "alpha:2"]
    );
    assert_eq!(candidates("kill-session --target b"), vec!["beta"]);
    let c = complete("kill-session -t ", &sources());
    assert_eq!(c.start, "kill-session -t ".len());
    assert_eq!(c.candidates.len(), 6);
    // A session name being made is not completed.
    assert!(candidates("new-session -s ").is_empty());
}

#[test]
fn directories_after_c_and_files_for_source_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("src dir")).expect("mkdir");
    std::fs::create_dir(dir.path().join("srv")).expect("mkdir");
    std::fs::write(dir.path().join("srcfile.toml"), "").expect("write");
    std::fs::write(dir.path().join(".hidden"), "").expect("write");
    let s = Sources {
        cwd: Some(dir.path().to_path_buf()),
        ..sources()
    };
    let at = |line: &str| complete(line, &s).candidates;
    // -c takes directories only, relative to the pane's directory.
    assert_eq!(at("split-window -c sr"), vec!["src dir/", "srv/"]);
    assert_eq!(at("new-window -c ./s"), vec!["./src dir/", "./srv/"]);
    // An escaped space stays in the word.
    assert_eq!(at("split-window -c src\\ "), vec!["src dir/"]);
    // source-file takes files too; hidden ones only when asked for.
    assert_eq!(at("source-file src"), vec!["src dir/", "srcfile.toml"]);
    assert!(at("source-file ").iter().all(|c| !c.starts_with('.')));
    assert_eq!(at("source-file .h"), vec![".hidden"]);
    let abs = format!("{}/sr", dir.path().display());
    assert_eq!(
        at(&format!("source-file {abs}")),
        vec![
            format!("{abs}c dir/"),
            format!("{abs}cfile.toml"),
            format!("{abs}v/")
        ]
    );
}

#[test]
fn option_names_for_set_option() {
    assert_eq!(candidates("set-option -g m"), vec!["mouse"]);
    assert_eq!(candidates("set b"), vec!["base_index"]);
    // The value: on/off for a switch, the words a setting takes, nothing for a number.
    assert_eq!(candidates("set-option -g mouse "), vec!["off", "on"]);
    assert_eq!(candidates("set hyperlinks a"), vec!["always", "auto"]);
    assert!(candidates("set-option base_index ").is_empty());
}

#[test]
fn a_bound_command_completes_as_typed_at_the_prompt() {
    assert_eq!(candidates("bind-key -n M-h kill-ses"), vec!["kill-session"]);
    assert_eq!(candidates("bind Q kill-pane -t %1"), vec!["%1", "%12"]);
    // The key itself is not completed.
    assert!(candidates("bind-key -n ").is_empty());
    // A key-table command's -t names a target too.
    assert_eq!(
        candidates("select-pane -t al"),
        vec!["alpha", "alpha:0", "alpha:2"]
    );
}

#[test]
fn escaping_and_the_common_start() {
    assert_eq!(escaped("a b'c"), "a\\ b\\'c");
    let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        common_prefix(&words(&["kill-pane", "kill-server"])),
        "kill-"
    );
    assert_eq!(common_prefix(&words(&["alpha", "alpha:0"])), "alpha");
    assert_eq!(common_prefix(&words(&["中文", "中国"])), "中");
    assert_eq!(common_prefix(&[]), "");
}
