//! Failures leave the user's files intact: an invalid file is refused with its name and line,
//! a read-only file or directory, a symlink loop, or a write that fails midway changes nothing.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use calyx_integrations::setup::{self, Ctx, Op};
use calyx_integrations::AgentKind;

fn ctx(home: &Path) -> Ctx {
    Ctx {
        home: home.to_path_buf(),
        env: BTreeMap::new(),
        calyx_bin: "/usr/local/bin/calyx".into(),
        endpoint_file: "/run/agent-endpoint.json".into(),
        port: 41830,
        token: "ab".repeat(32),
        host_servers: true,
    }
}

fn write(home: &Path, rel: &str, text: &str) -> std::path::PathBuf {
    let p = home.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(&p, text).unwrap();
    p
}

#[test]
fn invalid_files_are_refused_with_file_and_line() {
    let cases: [(AgentKind, &str, &str, usize); 4] = [
        (
            AgentKind::ClaudeCode,
            ".claude.json",
            "{\n  \"a\": 1,\n  \"b\": }\n",
            3,
        ),
        (
            AgentKind::Codex,
            ".codex/config.toml",
            "model = \"x\"\n[broken\n",
            2,
        ),
        (
            AgentKind::Hermes,
            ".hermes/config.yaml",
            "model:\n\tdefault: x\n",
            2,
        ),
        (
            AgentKind::Gemini,
            ".gemini/settings.json",
            "{\n// ok\n\"a\": [1,,2]}",
            3,
        ),
    ];
    for (kind, rel, text, line) in cases {
        let home = tempfile::tempdir().unwrap();
        let path = write(home.path(), rel, text);
        let err = setup::plan(kind, &ctx(home.path()), Op::Install).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains(&path.display().to_string()), "{msg}");
        assert!(msg.contains(&format!("line {line}")), "{msg}");
        assert!(msg.contains("left as it is"), "{msg}");
        assert_eq!(fs::read_to_string(&path).unwrap(), text);
        assert!(setup::plan(kind, &ctx(home.path()), Op::Uninstall).is_err());
    }
}

#[test]
fn an_mcp_servers_value_of_the_wrong_shape_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let path = write(home.path(), ".claude.json", "{\"mcpServers\": [1]}");
    let err = setup::plan(AgentKind::ClaudeCode, &ctx(home.path()), Op::Install).unwrap_err();
    assert!(err.to_string().contains("mcpServers"), "{err}");
    let yaml = write(home.path(), ".hermes/config.yaml", "mcp_servers: {}\n");
    let err = setup::plan(AgentKind::Hermes, &ctx(home.path()), Op::Install).unwrap_err();
    assert!(err.to_string().contains("line 1"), "{err}");
    assert_eq!(fs::read_to_string(path).unwrap(), "{\"mcpServers\": [1]}");
    assert_eq!(fs::read_to_string(yaml).unwrap(), "mcp_servers: {}\n");
}

#[test]
fn a_read_only_file_is_not_replaced() {
    let home = tempfile::tempdir().unwrap();
    let path = write(home.path(), ".claude.json", "{}\n");
    fs::set_permissions(&path, fs::Permissions::from_mode(0o444)).unwrap();
    let plan = setup::plan(AgentKind::ClaudeCode, &ctx(home.path()), Op::Install).unwrap();
    let err = setup::apply(&plan).unwrap_err();
    assert!(err.to_string().contains("read-only"), "{err}");
    assert_eq!(fs::read_to_string(&path).unwrap(), "{}\n");
}

/// Makes a directory unwritable for the test's life: mode 0555, or for root (whom modes do not
/// stop) the immutable attribute. None when neither can be set here.
struct ReadOnlyDir(std::path::PathBuf, bool);

impl ReadOnlyDir {
    fn new(dir: &std::path::Path) -> Option<Self> {
        if nix::unistd::geteuid().is_root() {
            let ok = std::process::Command::new("chattr")
                .arg("+i")
                .arg(dir)
                .status()
                .is_ok_and(|s| s.success());
            ok.then(|| Self(dir.to_path_buf(), true))
        } else {
            fs::set_permissions(dir, fs::Permissions::from_mode(0o555)).ok()?;
            Some(Self(dir.to_path_buf(), false))
        }
    }
}

impl Drop for ReadOnlyDir {
    fn drop(&mut self) {
        if self.1 {
            let _ = std::process::Command::new("chattr")
                .arg("-i")
                .arg(&self.0)
                .status();
        } else {
            let _ = fs::set_permissions(&self.0, fs::Permissions::from_mode(0o755));
        }
    }
}

#[test]
fn a_read_only_directory_leaves_the_file_intact() {
    let home = tempfile::tempdir().unwrap();
    let path = write(home.path(), ".codex/config.toml", "a = 1\n");
    let dir = path.parent().unwrap();
    let Some(guard) = ReadOnlyDir::new(dir) else {
        eprintln!("cannot make a directory read-only here (no chattr for root); skipped");
        return;
    };
    let plan = setup::plan(AgentKind::Codex, &ctx(home.path()), Op::Install).unwrap();
    assert!(setup::apply(&plan).is_err());
    drop(guard);
    assert_eq!(fs::read_to_string(&path).unwrap(), "a = 1\n");
}

#[test]
fn a_symlink_loop_is_an_error_not_a_hang() {
    let home = tempfile::tempdir().unwrap();
    let a = home.path().join(".claude.json");
    let b = home.path().join("loop");
    std::os::unix::fs::symlink(&b, &a).unwrap();
    std::os::unix::fs::symlink(&a, &b).unwrap();
    let err = setup::plan(AgentKind::ClaudeCode, &ctx(home.path()), Op::Install).unwrap_err();
    assert!(err.to_string().contains("symbolic links"), "{err}");
}

#[test]
fn a_write_that_fails_midway_leaves_the_original() {
    let home = tempfile::tempdir().unwrap();
    let path = write(home.path(), ".codex/config.toml", "a = 1\n");
    // The temp file's name is taken by a directory: the write fails before any rename.
    let temp = path
        .parent()
        .unwrap()
        .join(format!(".config.toml.calyx-{}.tmp", std::process::id()));
    fs::create_dir_all(temp.join("x")).unwrap();
    let plan = setup::plan(AgentKind::Codex, &ctx(home.path()), Op::Install).unwrap();
    assert!(setup::apply(&plan).is_err());
    assert_eq!(fs::read_to_string(&path).unwrap(), "a = 1\n");
    assert!(
        temp.join("x").is_dir(),
        "someone else's entry is not deleted"
    );
}

#[test]
fn a_file_changed_after_planning_is_not_overwritten_and_a_replan_keeps_the_change() {
    let home = tempfile::tempdir().unwrap();
    let path = write(home.path(), ".claude.json", "{\"numStartups\": 1}\n");
    let c = ctx(home.path());
    let plan = setup::plan(AgentKind::ClaudeCode, &c, Op::Install).unwrap();
    // Claude Code rewrites its file meanwhile.
    fs::write(&path, "{\"numStartups\": 2}\n").unwrap();
    let err = setup::apply(&plan).unwrap_err();
    assert!(err.changed(), "{err}");
    assert_eq!(fs::read_to_string(&path).unwrap(), "{\"numStartups\": 2}\n");
    setup::plan_and_apply(AgentKind::ClaudeCode, &c, Op::Install).unwrap();
    let text = fs::read_to_string(&path).unwrap();
    assert!(
        text.contains("\"numStartups\": 2") && text.contains("calyx-ipc"),
        "{text}"
    );
}
