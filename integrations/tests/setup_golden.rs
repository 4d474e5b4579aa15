//! Golden tests: calyx setup over realistic user configs (fixtures/configs/), per CLI. Each
//! case checks the diff against a reviewed snapshot, that a second install changes nothing,
//! and that uninstall gives back the user's bytes (or, where calyx adopted a hand-written
//! entry under its own name, a file without it).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use calyx_integrations::setup::{self, Ctx, Op};
use calyx_integrations::AgentKind;

const TOKEN: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/configs")
}

fn ctx(home: &Path) -> Ctx {
    Ctx {
        home: home.to_path_buf(),
        env: BTreeMap::new(),
        calyx_bin: "/opt/calyx bin/calyx".into(),
        endpoint_file: "/home/dev/.local/state/calyx/agent-endpoint.json".into(),
        port: 41830,
        token: TOKEN.into(),
        host_servers: true,
    }
}

/// Copies fixture files into a fresh home; `(fixture file, path under home)`.
fn home_with(dir: &str, files: &[(&str, &str)]) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    for (src, dst) in files {
        let to = home.path().join(dst);
        fs::create_dir_all(to.parent().unwrap()).unwrap();
        fs::copy(fixtures().join(dir).join(src), &to).unwrap();
    }
    home
}

/// Every regular file under `dir` with its bytes (backups excluded).
fn snapshot_tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let meta = fs::symlink_metadata(&p).unwrap();
            if meta.is_dir() {
                stack.push(p);
            } else if !p.to_string_lossy().ends_with(".calyx.bak") {
                out.insert(
                    p.strip_prefix(dir).unwrap().to_path_buf(),
                    fs::read(&p).unwrap(),
                );
            }
        }
    }
    out
}

fn render(plan: &setup::Plan, home: &Path) -> String {
    let mut out = String::new();
    for c in &plan.changes {
        let rel = c.path.strip_prefix(home).unwrap().display().to_string();
        let before = c.before.clone().unwrap_or_default();
        let after = c.after.clone().unwrap_or_default();
        let what = match (&c.before, &c.after) {
            (None, _) => "created",
            (_, None) => "deleted",
            _ => "changed",
        };
        out.push_str(&format!("=== {rel} ({what})\n"));
        if rel.ends_with(".js") || rel.ends_with(".ts") {
            out.push_str(&format!(
                "({} lines of calyx's own source)\n",
                after.lines().count()
            ));
            continue;
        }
        let diff = similar::TextDiff::from_lines(&before, &after);
        out.push_str(
            &diff
                .unified_diff()
                .context_radius(2)
                .missing_newline_hint(true)
                .to_string(),
        );
    }
    for n in &plan.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    out.replace("\r\n", "⏎\n")
}

/// Installs into `home`, snapshots the diff, checks idempotence and the round trip.
fn check(name: &str, kind: AgentKind, home: &tempfile::TempDir, exact_round_trip: bool) -> String {
    let ctx = ctx(home.path());
    let original = snapshot_tree(home.path());
    let plan = setup::plan(kind, &ctx, Op::Install).unwrap();
    let rendered = render(&plan, home.path());
    insta::assert_snapshot!(name, rendered);
    setup::apply(&plan).unwrap();
    let installed = snapshot_tree(home.path());
    let again = setup::plan(kind, &ctx, Op::Install).unwrap();
    assert!(
        again.changes.is_empty(),
        "{name}: second install changes {:?}",
        again.changes
    );
    let un = setup::plan(kind, &ctx, Op::Uninstall).unwrap();
    setup::apply(&un).unwrap();
    let restored = snapshot_tree(home.path());
    if exact_round_trip {
        assert_eq!(
            restored, original,
            "{name}: uninstall did not restore the bytes"
        );
    } else {
        // Adopted entries are gone; a second round trip is exact.
        setup::apply(&setup::plan(kind, &ctx, Op::Install).unwrap()).unwrap();
        assert_eq!(
            snapshot_tree(home.path()),
            installed,
            "{name}: reinstall differs"
        );
        setup::apply(&setup::plan(kind, &ctx, Op::Uninstall).unwrap()).unwrap();
        assert_eq!(
            snapshot_tree(home.path()),
            restored,
            "{name}: second uninstall differs"
        );
    }
    check_hosting_switch(name, kind, home.path(), &installed, &restored);
    assert!(setup::plan(kind, &ctx, Op::Uninstall)
        .unwrap()
        .changes
        .is_empty());
    String::from_utf8(restored.values().flatten().copied().collect()).unwrap_or_default()
}

/// `[mcp] host_servers` off then on again over the user's files: off takes `calyx-mcp` out and
/// leaves `calyx-ipc`, on puts back exactly the bytes of a full install, and an uninstall made
/// while hosting is off still removes both entries and gives back `restored`.
fn check_hosting_switch(
    name: &str,
    kind: AgentKind,
    home: &Path,
    installed: &BTreeMap<PathBuf, Vec<u8>>,
    restored: &BTreeMap<PathBuf, Vec<u8>>,
) {
    let on = ctx(home);
    let off = Ctx {
        host_servers: false,
        ..ctx(home)
    };
    let entries = |ctx: &Ctx| setup::mcp_entry_files::present(kind, ctx).unwrap();
    setup::apply(&setup::plan(kind, &on, Op::Install).unwrap()).unwrap();
    assert_eq!(&snapshot_tree(home), installed, "{name}: install");
    if let Some(both) = entries(&on) {
        assert_eq!(both, [("calyx-ipc", true), ("calyx-mcp", true)], "{name}");
    }
    setup::apply(&setup::plan(kind, &off, Op::Install).unwrap()).unwrap();
    if let Some(present) = entries(&off) {
        assert_eq!(
            present,
            [("calyx-ipc", true), ("calyx-mcp", false)],
            "{name}"
        );
    }
    assert!(
        setup::plan(kind, &off, Op::Install)
            .unwrap()
            .changes
            .is_empty(),
        "{name}: a second install with hosting off changes something"
    );
    setup::apply(&setup::plan(kind, &on, Op::Install).unwrap()).unwrap();
    assert_eq!(&snapshot_tree(home), installed, "{name}: hosting on again");
    setup::apply(&setup::plan(kind, &off, Op::Uninstall).unwrap()).unwrap();
    assert_eq!(
        &snapshot_tree(home),
        restored,
        "{name}: uninstall with hosting off left calyx-mcp"
    );
}

#[test]
fn claude_code_with_other_servers_hooks_and_a_symlinked_settings_file() {
    let home = home_with(
        "claude",
        &[
            ("claude.json", ".claude.json"),
            ("settings.json", "dotfiles/claude-settings.json"),
        ],
    );
    fs::create_dir_all(home.path().join(".claude")).unwrap();
    std::os::unix::fs::symlink(
        "../dotfiles/claude-settings.json",
        home.path().join(".claude/settings.json"),
    )
    .unwrap();
    check("claude_code", AgentKind::ClaudeCode, &home, true);
    let link = fs::symlink_metadata(home.path().join(".claude/settings.json")).unwrap();
    assert!(link.file_type().is_symlink(), "the dotfile link survives");
}

#[test]
fn codex_adopts_a_hand_written_entry() {
    let home = home_with(
        "codex",
        &[
            ("config.toml", ".codex/config.toml"),
            ("hooks.json", ".codex/hooks.json"),
        ],
    );
    let restored = check("codex", AgentKind::Codex, &home, false);
    assert!(restored.contains("[projects.\"/home/dev/src/app\"]"));
    assert!(!restored.contains("Bearer stale"));
}

#[test]
fn codex_trust_tables_inside_calyx_block_move_out_verbatim() {
    let home = home_with("codex-trust", &[("config.toml", ".codex/config.toml")]);
    let ctx = ctx(home.path());
    let plan = setup::plan(AgentKind::Codex, &ctx, Op::Uninstall).unwrap();
    let after = plan.changes[0].after.clone().unwrap();
    insta::assert_snapshot!("codex_trust_uninstall", after);
    assert!(after
        .contains("[hooks.trusted.\"sha256:5f2c0a\"]\ntrusted_at = \"2026-11-02T10:00:00Z\"\n"));
    assert!(!after.contains("calyx"));
    check("codex_trust", AgentKind::Codex, &home, false);
}

#[test]
fn opencode_jsonc_with_comments_and_trailing_commas() {
    let home = home_with(
        "opencode",
        &[("opencode.jsonc", ".config/opencode/opencode.jsonc")],
    );
    check("opencode", AgentKind::OpenCode, &home, true);
}

#[test]
fn hermes_four_space_yaml_with_hooks_on_the_same_events() {
    let home = home_with("hermes", &[("config.yaml", ".hermes/config.yaml")]);
    check("hermes", AgentKind::Hermes, &home, true);
}

#[test]
fn grok_orphan_headers_table_is_adopted() {
    let home = home_with("grok", &[("config.toml", ".grok/config.toml")]);
    let restored = check("grok", AgentKind::Grok, &home, false);
    assert!(restored.contains("[compat.claude]\nhooks = true\n"));
}

#[test]
fn gemini_bom_crlf_tabs_and_comments() {
    let home = home_with("gemini", &[("settings.json", ".gemini/settings.json")]);
    check("gemini", AgentKind::Gemini, &home, true);
}

#[test]
fn copilot_odd_indentation() {
    let home = home_with(
        "copilot",
        &[("mcp-config.json", ".copilot/mcp-config.json")],
    );
    check("copilot", AgentKind::Copilot, &home, true);
}

#[test]
fn cursor_user_hooks_on_the_same_events() {
    let home = home_with("cursor", &[("hooks.json", ".cursor/hooks.json")]);
    check("cursor", AgentKind::Cursor, &home, true);
}

#[test]
fn kimi_user_hook_tables() {
    let home = home_with("kimi", &[("config.toml", ".kimi/config.toml")]);
    check("kimi", AgentKind::Kimi, &home, true);
}

#[test]
fn antigravity_one_line_file() {
    let home = home_with(
        "antigravity",
        &[("hooks.json", ".gemini/config/hooks.json")],
    );
    check("antigravity", AgentKind::Antigravity, &home, true);
}

#[test]
fn pi_extension_in_an_empty_home() {
    let home = tempfile::tempdir().unwrap();
    check("pi", AgentKind::Pi, &home, true);
    let ctx = ctx(home.path());
    let src = setup::plan(AgentKind::Pi, &ctx, Op::Install)
        .unwrap()
        .changes[0]
        .after
        .clone()
        .unwrap();
    assert!(src.contains("\"/home/dev/.local/state/calyx/agent-endpoint.json\""));
    assert!(
        src.contains("HERDR_PANE_ID")
            && src.contains("/approval-request")
            && src.contains("name: \"calyx\"")
    );
}

#[test]
fn opencode_plugin_reads_the_endpoint_file_and_stands_down_outside_calyx() {
    let home = tempfile::tempdir().unwrap();
    let ctx = ctx(home.path());
    let plan = setup::plan(AgentKind::OpenCode, &ctx, Op::Install).unwrap();
    let plugin = plan
        .changes
        .iter()
        .find(|c| c.path.ends_with("plugins/calyx.js"))
        .unwrap();
    let src = plugin.after.clone().unwrap();
    for needle in [
        "HERDR_PANE_ID",
        "CALYX_SURFACE_ID",
        "X-Calyx-Session-ID",
        "mtimeMs",
        "pending.has(sid)",
        "\"/home/dev/.local/state/calyx/agent-endpoint.json\"",
    ] {
        assert!(src.contains(needle), "{needle}");
    }
}

#[test]
fn a_users_file_under_calyx_owned_names_is_left_alone() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join(".grok/hooks/calyx-agent-hooks.json");
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, "{\"hooks\": {}}").unwrap();
    let ctx = ctx(home.path());
    for op in [Op::Install, Op::Uninstall] {
        let plan = setup::plan(AgentKind::Grok, &ctx, op).unwrap();
        assert!(plan.changes.iter().all(|c| c.path != path));
        assert!(plan.notes.iter().any(|n| n.contains("not calyx's")));
    }
}

#[test]
fn gemini_follows_gemini_cli_home() {
    // Gemini 0.61 takes `$GEMINI_CLI_HOME` as its home: its settings are `.gemini` under it.
    let home = tempfile::tempdir().unwrap();
    let moved = home.path().join("elsewhere");
    let mut ctx = ctx(home.path());
    ctx.env
        .insert("GEMINI_CLI_HOME".into(), moved.display().to_string());
    assert_eq!(
        setup::config_dir(AgentKind::Gemini, &ctx),
        moved.join(".gemini")
    );
    let plan = setup::plan(AgentKind::Gemini, &ctx, Op::Install).unwrap();
    assert!(
        plan.changes
            .iter()
            .any(|c| c.path == moved.join(".gemini/settings.json")),
        "{:?}",
        plan.changes.iter().map(|c| &c.path).collect::<Vec<_>>()
    );
    assert!(plan.changes.iter().all(|c| c.path.starts_with(&moved)));
    // Empty is unset, as for every relocating variable.
    ctx.env.insert("GEMINI_CLI_HOME".into(), String::new());
    assert_eq!(
        setup::config_dir(AgentKind::Gemini, &ctx),
        home.path().join(".gemini")
    );
}
