//! The config file: every problem reported at once, everything valid applied.
use super::*;
use crate::commands::Action;
use crate::layout::SplitDir;

fn p() -> &'static Path {
    Path::new("/home/u/.config/calyx/config.toml")
}

#[test]
fn try_load_tells_a_missing_file_from_one_it_cannot_use() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("config.toml");
    let (c, errors) = Config::try_load(&missing).expect("missing is the defaults");
    assert!(errors.is_empty() && c.mouse);
    // A directory where the file should be cannot be read: an error naming it.
    let e = Config::try_load(dir.path()).expect_err("unreadable");
    assert!(e.contains(&*dir.path().display().to_string()) && e.contains("cannot read"));
    std::fs::write(&missing, "[mcp\n").expect("write");
    let e = Config::try_load(&missing).expect_err("not TOML");
    assert!(e.contains("config.toml"), "{e}");
    // load() falls back to the defaults with the same message.
    let (c, errors) = Config::load(&missing);
    assert!(
        c.mouse && errors[0].ends_with("; using defaults"),
        "{errors:?}"
    );
}

#[test]
fn empty_file_is_defaults() {
    let (c, errors) = Config::parse("", p());
    assert!(errors.is_empty());
    assert!(c.mouse);
    assert_eq!(c.hyperlinks, Hyperlinks::Auto);
    assert_eq!(c.scrollback_lines, 10_000);
}

#[test]
fn hyperlinks_modes_and_the_older_switch() {
    for (text, want) in [
        ("hyperlinks = \"auto\"\n", Hyperlinks::Auto),
        ("hyperlinks = \"always\"\n", Hyperlinks::Always),
        ("hyperlinks = \"never\"\n", Hyperlinks::Never),
        ("hyperlinks = true\n", Hyperlinks::Auto),
        ("hyperlinks = false\n", Hyperlinks::Never),
    ] {
        let (c, errors) = Config::parse(text, p());
        assert!(errors.is_empty(), "{text}: {errors:?}");
        assert_eq!(c.hyperlinks, want, "{text}");
    }
    let (c, errors) = Config::parse("mouse = true\nhyperlinks = \"sometimes\"\n", p());
    assert_eq!(c.hyperlinks, Hyperlinks::Auto);
    assert!(
        errors.len() == 1
            && errors[0].contains("line 2")
            && errors[0].contains("hyperlinks")
            && errors[0].contains("sometimes"),
        "{errors:?}"
    );
    let (_, errors) = Config::parse("hyperlinks = 3\n", p());
    assert!(errors[0].contains("hyperlinks`: 3 is not"), "{errors:?}");
}

#[test]
fn set_clipboard_modes_default_to_external() {
    assert_eq!(
        Config::parse("", p()).0.set_clipboard,
        SetClipboard::External
    );
    for (text, want) in [
        ("set_clipboard = \"external\"\n", SetClipboard::External),
        ("set_clipboard = \"on\"\n", SetClipboard::On),
        ("set_clipboard = \"off\"\n", SetClipboard::Off),
    ] {
        let (c, errors) = Config::parse(text, p());
        assert!(errors.is_empty(), "{text}: {errors:?}");
        assert_eq!(c.set_clipboard, want, "{text}");
    }
    // tmux's words only; a boolean is not guessed at.
    let (c, errors) = Config::parse("mouse = true\nset_clipboard = true\n", p());
    assert_eq!(c.set_clipboard, SetClipboard::External);
    assert!(
        errors.len() == 1 && errors[0].contains("line 2") && errors[0].contains("set_clipboard"),
        "{errors:?}"
    );
}

#[test]
fn pane_borders_default_to_box_and_take_separators() {
    assert_eq!(Config::parse("", p()).0.pane_borders, PaneBorders::Box);
    let (c, errors) = Config::parse("pane_borders = \"separators\"\n", p());
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(c.pane_borders, PaneBorders::Separators);
    // A wrong word is one problem on its line; the other keys still apply.
    let (c, errors) = Config::parse("mouse = false\npane_borders = \"thin\"\n", p());
    assert_eq!(c.pane_borders, PaneBorders::Box);
    assert!(!c.mouse);
    assert!(
        errors.len() == 1 && errors[0].contains("line 2") && errors[0].contains("pane_borders"),
        "{errors:?}"
    );
}

#[test]
fn auto_hyperlinks_skip_terminals_that_print_osc8() {
    let auto = Hyperlinks::Auto;
    for term in [
        "xterm-256color",
        "screen-256color",
        "tmux-256color",
        "alacritty",
        "xterm-kitty",
        "wezterm",
        "foot",
    ] {
        assert!(auto.allowed_for(Some(term)), "{term}");
    }
    for term in [
        "linux",
        "linux-16color",
        "vt100",
        "VT220",
        "vt102-nsl",
        "dumb",
        "cons25",
        "",
    ] {
        assert!(!auto.allowed_for(Some(term)), "{term}");
    }
    assert!(!auto.allowed_for(None));
    assert!(Hyperlinks::Always.allowed_for(Some("linux")));
    assert!(!Hyperlinks::Never.allowed_for(Some("xterm-256color")));
}

#[test]
fn rebinding_and_unbinding() {
    let text =
        "prefix = \"C-a\"\nmouse = false\n[keys]\n\"|\" = \"split-window -h\"\n\"%\" = \"none\"\n";
    let (c, errors) = Config::parse(text, p());
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(c.keymap.prefix, Key::ctrl('a'));
    assert!(!c.mouse);
    let bar = Key::parse("|").map(|k| c.keymap.lookup(&k));
    assert_eq!(bar, Some(Some(Action::Split(SplitDir::Horizontal))));
    assert_eq!(Key::parse("%").and_then(|k| c.keymap.lookup(&k)), None);
}

#[test]
fn shell_integration_is_on_unless_switched_off() {
    assert!(Config::parse("", p()).0.shell_integration);
    let (c, errors) = Config::parse("shell_integration = false\n", p());
    assert!(errors.is_empty(), "{errors:?}");
    assert!(!c.shell_integration);
}

#[test]
fn window_numbering_defaults_to_tmuxs_and_can_change() {
    let c = Config::parse("", p()).0;
    assert_eq!((c.base_index, c.renumber_windows), (0, false));
    let (c, errors) = Config::parse("base_index = 1\nrenumber_windows = true\n", p());
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!((c.base_index, c.renumber_windows), (1, true));
    let (c, errors) = Config::parse("base_index = -1\n", p());
    assert_eq!(c.base_index, 0);
    assert!(errors[0].contains("key `base_index`"), "{errors:?}");
}

#[test]
fn broken_toml_names_file_and_line() {
    let (c, errors) = Config::parse("mouse = true\nscrollback_lines = \"many\"\n", p());
    assert_eq!(errors.len(), 1);
    assert!(errors[0].contains("config.toml"), "{}", errors[0]);
    assert!(errors[0].contains("line 2"), "{}", errors[0]);
    assert!(errors[0].contains("scrollback_lines"), "{}", errors[0]);
    assert!(c.mouse);
}

#[test]
fn unknown_keys_and_bad_bindings_are_named() {
    let (_, errors) = Config::parse("mouse = true\nfancy = 1\n", p());
    assert!(errors[0].contains("fancy"), "{errors:?}");
    let (c, errors) = Config::parse("[keys]\n\"q\" = \"explode\"\n", p());
    assert!(
        errors[0].contains("keys.q")
            && errors[0].contains("explode")
            && errors[0].contains("line 2"),
        "{errors:?}"
    );
    assert!(c.keymap.lookup(&Key::ctrl('b')).is_some());
}

#[test]
fn deny_gates_are_opt_in_per_cli() {
    let (c, errors) = Config::parse("", p());
    assert!(errors.is_empty());
    assert!(!c.approval_policy.gemini && !c.approval_policy.hermes);
    let (c, errors) = Config::parse("[approvals]\ndeny_gates = [\"gemini\", \"claude\"]\n", p());
    assert!(c.approval_policy.gemini && !c.approval_policy.hermes);
    assert!(
        errors.len() == 1 && errors[0].contains("claude") && errors[0].contains("line 2"),
        "{errors:?}"
    );
    let (c, _) = Config::parse("[approvals]\ndeny_gates = [\"kimi\", \"cursor\"]\n", p());
    assert!(c.approval_policy.kimi && c.approval_policy.cursor && !c.approval_policy.gemini);
}

#[test]
fn mcp_tools_can_be_turned_off_by_name() {
    let text = "[mcp]\ndisabled_tools = [\"pane_run\", \"rm_rf\"]\n";
    let (c, errors) = Config::parse(text, p());
    assert_eq!(c.mcp_disabled_tools, vec!["pane_run".to_string()]);
    assert!(
        errors.len() == 1
            && errors[0].contains("rm_rf")
            && errors[0].contains("line 2")
            && errors[0].contains("pane_send_keys"),
        "{errors:?}"
    );
}

#[test]
fn hosting_mcp_servers_is_on_unless_turned_off() {
    assert!(Config::default().mcp_host_servers);
    let (c, errors) = Config::parse("[mcp]\nhost_servers = false\n", p());
    assert!(!c.mcp_host_servers && errors.is_empty(), "{errors:?}");
    let (c, errors) = Config::parse("[mcp]\nhost_servers = \"no\"\n", p());
    assert!(c.mcp_host_servers);
    assert!(
        errors.len() == 1
            && errors[0].contains("line 2")
            && errors[0].contains("mcp.host_servers")
            && errors[0].contains("expected true or false"),
        "{errors:?}"
    );
}

#[test]
fn every_problem_is_reported_at_once_and_the_rest_applies() {
    let text = "prefix = \"C-a\"\nmouse = \"on\"\nscrollback_lines = -5\nfoo = 1\nbell = false\nmose = true\n[keys]\n\"q\" = 3\n\"|\" = \"split-window -h\"\n[approvals]\ndeny_gate = [\"gemini\"]\n";
    let (c, errors) = Config::parse(text, p());
    // Five problems, in file order, each with its line and key.
    let expect = [
        (
            "line 2:",
            "key `mouse`",
            "expected true or false, found \"on\"",
        ),
        ("line 3:", "key `scrollback_lines`", "found -5"),
        ("line 4:", "key `foo`", "not a setting"),
        ("line 6:", "key `mose`", "did you mean `mouse`?"),
        ("line 8:", "key `keys.q`", "expected a command name"),
    ];
    for (line, key, what) in expect {
        assert!(
            errors
                .iter()
                .any(|e| e.contains(line) && e.contains(key) && e.contains(what)),
            "{line} {key} {what}: {errors:#?}"
        );
    }
    assert!(
        errors
            .iter()
            .any(|e| e.contains("line 11:") && e.contains("approvals.deny_gate")),
        "{errors:#?}"
    );
    assert_eq!(errors.len(), 6, "{errors:#?}");
    // Everything valid is in force; the keys in error keep their defaults.
    assert_eq!(c.keymap.prefix, Key::ctrl('a'));
    assert!(!c.bell && c.mouse);
    assert_eq!(c.scrollback_lines, 10_000);
    let bar = Key::parse("|").map(|k| c.keymap.lookup(&k));
    assert_eq!(bar, Some(Some(Action::Split(SplitDir::Horizontal))));
}

#[test]
fn text_that_is_not_toml_names_the_line() {
    let e = Config::try_parse("mouse = true\nbell = = false\n", p()).expect_err("not TOML");
    assert!(e.contains("config.toml") && e.contains("line 2"), "{e}");
}

#[test]
fn hosting_keys_are_read_and_checked() {
    let (c, errors) = Config::parse("", p());
    assert!(c.mcp_host_servers, "hosting is on by default");
    assert_eq!(
        c.mcp_secret_store,
        crate::hosted::secrets::SecretStoreSetting::Auto
    );
    let text = "[mcp]\nhost_servers = false\nsecret_store = \"file\"\n";
    let (c, errors2) = Config::parse(text, p());
    assert!(errors.is_empty() && errors2.is_empty(), "{errors2:?}");
    assert!(!c.mcp_host_servers);
    assert_eq!(
        c.mcp_secret_store,
        crate::hosted::secrets::SecretStoreSetting::File
    );
    let text = "[mcp]\nhost_servers = \"yes\"\nsecret_store = \"vault\"\n";
    let (c, errors) = Config::parse(text, p());
    assert!(c.mcp_host_servers);
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].contains("line 2") && errors[0].contains("true or false"));
    assert!(errors[1].contains("line 3") && errors[1].contains("\"vault\""));
}

#[test]
fn the_persistence_table_sets_when_sessions_come_back_and_adds_programs() {
    use crate::config::persistence::Restore;
    let text = "[persistence]\nrestore = \"at-start\"\nrestart = [\"btop\", \"less\"]\n";
    let (c, errors) = Config::parse(text, p());
    assert!(errors.is_empty(), "{errors:#?}");
    assert_eq!(c.persistence.restore, Restore::AtStart);
    assert!(c.persistence.restart.contains(&"btop".to_string()));
    assert!(c.persistence.restart.contains(&"tail -f".to_string()));
    assert_eq!(
        c.persistence
            .restart
            .iter()
            .filter(|r| *r == "less")
            .count(),
        1
    );
    let (c, errors) = Config::parse("[persistence]\nrestore = \"sometimes\"\n", p());
    assert_eq!(c.persistence.restore, Restore::OnAttach);
    assert!(errors[0].contains("persistence.restore"), "{errors:#?}");
}

#[test]
fn persistence_scrollback_lines_is_a_count_capped_and_zero_turns_it_off() {
    use crate::config::persistence::{DEFAULT_SCROLLBACK_LINES, MAX_SCROLLBACK_LINES};
    assert_eq!(
        Config::default().persistence.scrollback_lines,
        DEFAULT_SCROLLBACK_LINES
    );
    let (c, errors) = Config::parse("[persistence]\nscrollback_lines = 0\n", p());
    assert!(errors.is_empty(), "{errors:#?}");
    assert_eq!(c.persistence.scrollback_lines, 0);
    let (c, _) = Config::parse("[persistence]\nscrollback_lines = 99999999\n", p());
    assert_eq!(c.persistence.scrollback_lines, MAX_SCROLLBACK_LINES);
    let (c, errors) = Config::parse("[persistence]\nscrollback_lines = \"all\"\n", p());
    assert_eq!(c.persistence.scrollback_lines, DEFAULT_SCROLLBACK_LINES);
    assert!(
        errors[0].contains("persistence.scrollback_lines"),
        "{errors:#?}"
    );
}

#[test]
fn the_mcp_apps_table_defaults_and_values() {
    use crate::config::mcp_apps::{OpenBrowser, Theme};
    let (c, errors) = Config::parse("", p());
    assert!(errors.is_empty());
    assert!(c.mcp_apps.views);
    assert_eq!(c.mcp_apps.open_browser, OpenBrowser::Never);
    assert_eq!(c.mcp_apps.view_port, 41880);
    assert_eq!(c.mcp_apps.theme, Theme::Auto);
    assert_eq!(c.mcp_apps.accent, "#2472c8");
    assert_eq!(c.mcp_apps.font_size, 14);
    let text = "[mcp_apps]\nviews = false\nopen_browser = \"local\"\nview_port = 42000\n\
                theme = \"dark\"\naccent = \"#f80\"\nfont_size = 16\n";
    let (c, errors) = Config::parse(text, p());
    assert!(errors.is_empty(), "{errors:?}");
    assert!(!c.mcp_apps.views);
    assert_eq!(c.mcp_apps.open_browser, OpenBrowser::Local);
    assert_eq!(c.mcp_apps.view_port, 42000);
    assert_eq!(c.mcp_apps.theme, Theme::Dark);
    assert_eq!(c.mcp_apps.accent, "#f80");
    assert_eq!(c.mcp_apps.font_size, 16);
}

#[test]
fn bad_mcp_apps_values_name_their_key_and_keep_the_default() {
    for (line, key) in [
        ("views = \"yes\"", "mcp_apps.views"),
        ("open_browser = \"always\"", "mcp_apps.open_browser"),
        ("view_port = 65535", "mcp_apps.view_port"),
        ("view_port = 80", "mcp_apps.view_port"),
        ("theme = \"blue\"", "mcp_apps.theme"),
        ("accent = \"red; x: y\"", "mcp_apps.accent"),
        ("font_size = 200", "mcp_apps.font_size"),
        ("colour = 1", "mcp_apps.colour"),
    ] {
        let (c, errors) = Config::parse(&format!("[mcp_apps]\n{line}\n"), p());
        assert_eq!(errors.len(), 1, "{line}: {errors:?}");
        assert!(
            errors[0].contains(&format!("`{key}`")) && errors[0].contains("line 2"),
            "{line}: {errors:?}"
        );
        assert_eq!(
            c.mcp_apps,
            crate::config::mcp_apps::McpApps::default(),
            "{line}"
        );
    }
}
