//! Re-sync and relocation: a stale entry (old port, token or binary) is rewritten in place,
//! calyx's hooks on events it no longer registers are removed, and the variables that move a
//! CLI's config directory are honoured.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use calyx_integrations::setup::{self, Ctx, Op};
use calyx_integrations::AgentKind;

fn ctx(home: &Path, port: u16, bin: &str) -> Ctx {
    Ctx {
        home: home.to_path_buf(),
        env: BTreeMap::new(),
        calyx_bin: bin.into(),
        endpoint_file: "/e".into(),
        port,
        token: "cd".repeat(32),
        host_servers: true,
    }
}

#[test]
fn stale_entries_are_rewritten_in_place_for_every_cli() {
    for kind in AgentKind::ALL {
        let home = tempfile::tempdir().unwrap();
        let old = ctx(home.path(), 41830, "/old/calyx");
        setup::apply(&setup::plan(kind, &old, Op::Install).unwrap()).unwrap();
        let new = ctx(home.path(), 41831, "/new/bin/calyx");
        let plan = setup::plan(kind, &new, Op::Install).unwrap();
        // pi's extension holds neither port, token nor binary: it reads the endpoint file.
        assert_eq!(plan.changes.is_empty(), kind == AgentKind::Pi, "{kind}");
        setup::apply(&plan).unwrap();
        for change in &plan.changes {
            let text = fs::read_to_string(&change.path).unwrap();
            assert!(
                !text.contains("/old/calyx"),
                "{kind}: {}",
                change.path.display()
            );
            if text.contains("127.0.0.1:") {
                assert!(
                    !text.contains(":41830/"),
                    "{kind}: old port left in {}",
                    change.path.display()
                );
            }
        }
        assert!(setup::plan(kind, &new, Op::Install)
            .unwrap()
            .changes
            .is_empty());
        // Uninstall with the new context still finds entries written by the old one.
        setup::apply(&setup::plan(kind, &new, Op::Uninstall).unwrap()).unwrap();
        assert!(!setup::is_installed(kind, &old).unwrap(), "{kind}");
    }
}

#[test]
fn calyx_hooks_on_events_it_no_longer_registers_are_removed() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join(".claude/settings.json");
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(
        &path,
        r#"{"hooks": {"TeammateIdle": [{"hooks": [{"type": "command", "command": "\"/old/calyx\" hook claude-code"}]}, {"hooks": [{"type": "command", "command": "mine"}]}]}}"#,
    )
    .unwrap();
    let plan = setup::plan(
        AgentKind::ClaudeCode,
        &ctx(home.path(), 1, "/c/calyx"),
        Op::Install,
    )
    .unwrap();
    let after = plan
        .changes
        .iter()
        .find(|c| c.path == path)
        .unwrap()
        .after
        .clone()
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&after).unwrap();
    assert_eq!(v["hooks"]["TeammateIdle"].as_array().unwrap().len(), 1);
    assert_eq!(v["hooks"]["TeammateIdle"][0]["hooks"][0]["command"], "mine");
}

#[test]
fn relocating_variables_are_honoured() {
    let home = tempfile::tempdir().unwrap();
    let mut c = ctx(home.path(), 1, "/c/calyx");
    for (var, dir) in [
        ("CODEX_HOME", "codex-home"),
        ("CLAUDE_CONFIG_DIR", "claude-dir"),
        ("COPILOT_HOME", "copilot-home"),
        ("HERMES_HOME", "hermes-home"),
        ("PI_CODING_AGENT_DIR", "pi-dir"),
        ("XDG_CONFIG_HOME", "xdg"),
    ] {
        c.env
            .insert(var.into(), home.path().join(dir).display().to_string());
    }
    let expect = [
        (AgentKind::Codex, "codex-home/config.toml"),
        (AgentKind::ClaudeCode, "claude-dir/.claude.json"),
        (AgentKind::ClaudeCode, "claude-dir/settings.json"),
        (AgentKind::Copilot, "copilot-home/hooks/calyx.json"),
        (AgentKind::Hermes, "hermes-home/config.yaml"),
        (AgentKind::Pi, "pi-dir/extensions/calyx.ts"),
        (AgentKind::OpenCode, "xdg/opencode/plugins/calyx.js"),
    ];
    for (kind, rel) in expect {
        let plan = setup::plan(kind, &c, Op::Install).unwrap();
        assert!(
            plan.changes
                .iter()
                .any(|ch| ch.path == home.path().join(rel)),
            "{kind}: {rel} not in {:?}",
            plan.changes.iter().map(|c| &c.path).collect::<Vec<_>>()
        );
    }
}

/// An install made before calyx hosted MCP servers holds only `calyx-ipc` (an install with
/// hosting off looks the same): it counts as installed, so the server's re-sync at start runs
/// install over it, which adds `calyx-mcp` (pi: its extension's `calyx_mcp` tool) for every CLI.
#[test]
fn resync_adds_calyx_mcp_to_an_install_that_has_only_calyx_ipc() {
    for kind in AgentKind::ALL {
        let home = tempfile::tempdir().unwrap();
        let before = Ctx {
            host_servers: false,
            ..ctx(home.path(), 41830, "/c/calyx")
        };
        setup::apply(&setup::plan(kind, &before, Op::Install).unwrap()).unwrap();
        let now = ctx(home.path(), 41831, "/c/calyx");
        assert!(setup::is_installed(kind, &now).unwrap(), "{kind}");
        let Some(present) = setup::mcp_entry_files::present(kind, &now).unwrap() else {
            assert_eq!(kind, AgentKind::Antigravity, "only agy has no MCP entry");
            continue;
        };
        assert_eq!(
            present,
            [("calyx-ipc", true), ("calyx-mcp", false)],
            "{kind}"
        );
        setup::apply(&setup::plan(kind, &now, Op::Install).unwrap()).unwrap();
        let present = setup::mcp_entry_files::present(kind, &now).unwrap();
        assert_eq!(
            present,
            Some([("calyx-ipc", true), ("calyx-mcp", true)]),
            "{kind}"
        );
        let written: String = setup::plan(kind, &now, Op::Uninstall)
            .unwrap()
            .changes
            .iter()
            .filter_map(|c| c.before.clone())
            .collect();
        if kind != AgentKind::Pi {
            assert!(
                written.contains("http://127.0.0.1:41831/mcp-hosted"),
                "{kind}: {written}"
            );
        }
    }
}
