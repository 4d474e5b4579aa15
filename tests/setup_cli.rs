//! `calyx setup` and `calyx doctor` as real processes, with HOME and the XDG directories
//! pointed at a temporary directory: the files they write, `--dry-run` writing nothing, and
//! `--uninstall` giving back the original bytes.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use calyx::http::endpoint_file::{self, EndpointInfo};
use serde_json::Value;

const TOKEN: &str = "5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e";

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    /// A home with an existing ~/.claude.json and an endpoint file (so no server is started).
    fn new(with_endpoint: bool) -> Self {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("home/.claude")).unwrap();
        fs::write(
            dir.path().join("home/.claude.json"),
            "{\n  \"numStartups\": 2,\n  \"mcpServers\": {\n    \"x\": {\"command\": \"y\"}\n  }\n}\n",
        )
        .unwrap();
        if with_endpoint {
            let info = EndpointInfo {
                port: 45111,
                token: TOKEN.into(),
            };
            endpoint_file::write(&dir.path().join("state/calyx/agent-endpoint.json"), &info)
                .unwrap();
        }
        Self { dir }
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn calyx(&self, args: &[&str]) -> Output {
        let d = self.dir.path();
        Command::new(env!("CARGO_BIN_EXE_calyx"))
            .args(args)
            .env_clear()
            .env("HOME", self.home())
            .env("PATH", "/usr/bin:/bin")
            .env("XDG_STATE_HOME", d.join("state"))
            .env("XDG_CONFIG_HOME", d.join("home/.config"))
            .env("XDG_RUNTIME_DIR", d.join("run"))
            .env("CALYX_SOCKET", d.join("run/server.sock"))
            .output()
            .unwrap()
    }

    /// `calyx ARGS` with `extra` variables too, and without `run_bounded`'s address-space cap
    /// (a real CLI such as Claude Code's Bun reserves more than 2 GiB).
    fn calyx_with(&self, args: &[&str], extra: &[(&str, &std::ffi::OsStr)]) -> Output {
        let d = self.dir.path();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_calyx"));
        cmd.args(args)
            .env_clear()
            .env("HOME", self.home())
            .env("PATH", "/usr/bin:/bin")
            .env("XDG_STATE_HOME", d.join("state"))
            .env("XDG_CONFIG_HOME", d.join("home/.config"))
            .env("XDG_RUNTIME_DIR", d.join("run"))
            .env("CALYX_SOCKET", d.join("run/server.sock"));
        for (k, v) in extra {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    }

    fn files(&self) -> Vec<(PathBuf, Vec<u8>)> {
        let mut out = Vec::new();
        walk(&self.home(), &mut out);
        out.sort();
        out
    }
}

fn walk(dir: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            walk(&p, out);
        } else if !p.to_string_lossy().ends_with(".calyx.bak") {
            out.push((p.clone(), fs::read(&p).unwrap()));
        }
    }
}

fn text(o: &[u8]) -> String {
    String::from_utf8_lossy(o).into_owned()
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

#[test]
fn setup_yes_writes_claude_code_config_and_uninstall_restores_bytes() {
    let env = Env::new(true);
    let before = env.files();
    let out = env.calyx(&["setup", "--yes", "--agent", "claude-code"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("+++ "), "{stdout}");
    assert!(!stdout.contains(TOKEN), "the token is masked in the diff");

    let mcp = json(&env.home().join(".claude.json"));
    let entry = &mcp["mcpServers"]["calyx-ipc"];
    assert_eq!(entry["url"], "http://127.0.0.1:45111/mcp");
    assert_eq!(entry["headers"]["Authorization"], format!("Bearer {TOKEN}"));
    assert_eq!(
        entry["headers"]["X-Calyx-Surface-ID"],
        "${CALYX_SURFACE_ID:-}"
    );
    assert_eq!(mcp["mcpServers"]["x"]["command"], "y");
    let settings = json(&env.home().join(".claude/settings.json"));
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_calyx"))
        .canonicalize()
        .unwrap();
    let gate = &settings["hooks"]["PermissionRequest"][1]["hooks"][0];
    assert_eq!(
        gate["command"],
        format!("\"{}\" hook claude-code --approval", bin.display())
    );
    assert_eq!(gate["timeout"], 600);
    assert!(settings["hooks"]["SessionEnd"].is_array());

    // A second run changes nothing.
    let again = env.calyx(&["setup", "--yes", "--agent", "claude-code"]);
    assert!(
        text(&again.stdout).contains("Nothing to change"),
        "{}",
        text(&again.stdout)
    );

    // doctor: installed and current; the endpoint does not answer, so it exits non-zero.
    let doctor = env.calyx(&["doctor", "--agent", "claude-code"]);
    let report = text(&doctor.stdout);
    assert!(report.contains("installed and current"), "{report}");
    assert!(report.contains("does not answer"), "{report}");
    assert!(report.contains("last event: unknown"), "{report}");
    assert!(!doctor.status.success());

    let out = env.calyx(&["setup", "--uninstall", "--yes"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        env.files(),
        before,
        "uninstall gives back the original bytes"
    );
}

#[test]
fn dry_run_prints_a_diff_and_writes_nothing() {
    for with_endpoint in [true, false] {
        let env = Env::new(with_endpoint);
        let before = env.files();
        let out = env.calyx(&["setup", "--dry-run", "--agent", "claude-code,codex"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let stdout = text(&out.stdout);
        assert!(stdout.contains("--- /dev/null\n+++ "), "{stdout}");
        assert!(stdout.contains("\"calyx-ipc\": {"), "{stdout}");
        assert!(stdout.contains("[mcp_servers.calyx-ipc]"), "{stdout}");
        assert!(stdout.contains("Dry run: nothing was written."), "{stdout}");
        assert_eq!(env.files(), before);
        assert!(
            !env.dir.path().join("run/server.sock").exists(),
            "no server started"
        );
    }
}

#[test]
fn without_a_terminal_setup_asks_for_yes() {
    let env = Env::new(true);
    let before = env.files();
    let out = env.calyx(&["setup", "--agent", "claude-code"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("--yes"), "{}", text(&out.stderr));
    assert_eq!(env.files(), before);
}

#[test]
fn invalid_config_is_reported_with_file_and_line_and_left_alone() {
    let env = Env::new(true);
    let path = env.home().join(".claude.json");
    fs::write(&path, "{\n  \"a\": 1\n  \"b\": 2\n}\n").unwrap();
    let out = env.calyx(&["setup", "--yes", "--agent", "claude-code"]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(err.contains(".claude.json: line 3"), "{err}");
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "{\n  \"a\": 1\n  \"b\": 2\n}\n"
    );
}

#[test]
fn unknown_agent_names_are_refused() {
    let env = Env::new(true);
    let out = env.calyx(&["setup", "--dry-run", "--agent", "claude"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("unknown agent kind"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn resync_updates_only_installed_clis() {
    let home = tempfile::tempdir().unwrap();
    // resync_installed reads the real environment; exercise it through the library with a
    // context of our own instead, by installing at one port and re-planning at another.
    use calyx_integrations::setup::{self, Ctx, Op};
    use calyx_integrations::AgentKind;
    let ctx = |port: u16| Ctx {
        home: home.path().to_path_buf(),
        env: Default::default(),
        calyx_bin: "/bin/calyx".into(),
        endpoint_file: "/e".into(),
        port,
        token: TOKEN.into(),
        host_servers: true,
    };
    setup::apply(&setup::plan(AgentKind::Codex, &ctx(1), Op::Install).unwrap()).unwrap();
    assert!(setup::is_installed(AgentKind::Codex, &ctx(2)).unwrap());
    assert!(!setup::is_installed(AgentKind::ClaudeCode, &ctx(2)).unwrap());
    let plan = setup::plan(AgentKind::Codex, &ctx(2), Op::Install).unwrap();
    assert_eq!(plan.changes.len(), 1, "only config.toml holds the port");
}

/// Runs calyx like [`Env::calyx`], but under umask 022 (the usual one, which leaves new files
/// 0644), with its address space capped at 2 GiB (a regression that reads /dev/zero must fail
/// here, not take the machine's memory), and killed after `deadline`: a hang is a failure
/// that says so, not a test that never ends.
fn run_bounded(
    env: &Env,
    args: &[&str],
    extra_env: &[(&str, &std::ffi::OsStr)],
    deadline: Duration,
) -> Output {
    use std::os::unix::process::CommandExt;
    let d = env.dir.path();
    let out_path = d.join("bounded.out");
    let err_path = d.join("bounded.err");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_calyx"));
    cmd.args(args)
        .env_clear()
        .env("HOME", env.home())
        .env("PATH", "/usr/bin:/bin")
        .env("XDG_STATE_HOME", d.join("state"))
        .env("XDG_CONFIG_HOME", d.join("home/.config"))
        .env("XDG_RUNTIME_DIR", d.join("run"))
        .env("CALYX_SOCKET", d.join("run/server.sock"))
        .stdin(std::process::Stdio::null())
        .stdout(fs::File::create(&out_path).unwrap())
        .stderr(fs::File::create(&err_path).unwrap());
    for (k, v) in extra_env {
        cmd.env(k, v);
    }
    // SAFETY: the closure runs in the forked child before exec, where only async-signal-safe
    // calls are allowed: nix's umask and setrlimit are the bare system calls (no allocation, no
    // lock) and change only the child. std has no safe hook to set them there, so `pre_exec`
    // stays; a failed cap only leaves the test without its memory limit.
    unsafe {
        cmd.pre_exec(|| {
            nix::sys::stat::umask(nix::sys::stat::Mode::from_bits_truncate(0o022));
            let _ = nix::sys::resource::setrlimit(
                nix::sys::resource::Resource::RLIMIT_AS,
                2 << 30,
                2 << 30,
            );
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    let end = Instant::now() + deadline;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > end {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "calyx {args:?} did not finish within {deadline:?}; stderr so far: {}",
                fs::read_to_string(&err_path).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: fs::read(&out_path).unwrap(),
        stderr: fs::read(&err_path).unwrap(),
    }
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn chmod(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

const DEADLINE: Duration = Duration::from_secs(30);

/// `calyx setup --yes --agent AGENT` with a fake CLI first on `path`, which logs where it ran to
/// `$FAKE_<NAME>_LOG` (`log`); `accept`: the fake accepts every config
/// (`FAKE_<NAME>_ACCEPT_ALL=1`), else it rejects calyx's as the real CLI does.
fn setup_with_fake(
    env: &Env,
    path: &std::ffi::OsStr,
    name: &str,
    log: &Path,
    agent: &str,
    accept: bool,
) -> std::process::Output {
    let (log_var, accept_var) = (
        format!("FAKE_{name}_LOG"),
        format!("FAKE_{name}_ACCEPT_ALL"),
    );
    let one = std::ffi::OsString::from("1");
    let mut extra = vec![("PATH", path), (log_var.as_str(), log.as_os_str())];
    if accept {
        extra.push((accept_var.as_str(), one.as_os_str()));
    }
    run_bounded(env, &["setup", "--yes", "--agent", agent], &extra, DEADLINE)
}

#[test]
fn configs_holding_the_token_end_up_0600_and_the_diff_says_so() {
    let env = Env::new(true);
    let claude = env.home().join(".claude.json");
    let codex = env.home().join(".codex/config.toml");
    let gemini = env.home().join(".gemini/settings.json");
    fs::create_dir_all(codex.parent().unwrap()).unwrap();
    fs::create_dir_all(gemini.parent().unwrap()).unwrap();
    fs::write(&codex, "model = \"o3\"\n").unwrap();
    fs::write(&gemini, "{}\n").unwrap();
    for f in [&claude, &codex, &gemini] {
        chmod(f, 0o644);
    }
    let out = run_bounded(
        &env,
        &["setup", "--yes", "--agent", "claude-code,codex,gemini"],
        &[],
        DEADLINE,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    for f in [&claude, &codex, &gemini] {
        assert_eq!(mode(f), 0o600, "{} is 0{:o}", f.display(), mode(f));
        assert!(
            fs::read_to_string(f).unwrap().contains(TOKEN),
            "{}",
            f.display()
        );
        assert!(
            stdout.contains(&format!(
                "{}: mode 0644 -> 0600: it holds calyx's token",
                f.display()
            )),
            "{stdout}"
        );
        // The backup holds the file as it was: no more readable than the file itself.
        let bak = PathBuf::from(format!("{}.calyx.bak", f.display()));
        assert_eq!(mode(&bak), 0o600, "{}", bak.display());
    }
    // Hook files hold no token and keep the usual mode.
    assert_eq!(mode(&env.home().join(".claude/settings.json")), 0o644);
    another_user_cannot_read(&env, &[&claude, &codex, &gemini]);

    // An install made before this rule (entries current, file 0644) is tightened by a re-run,
    // which has no text to change.
    chmod(&claude, 0o644);
    let again = run_bounded(
        &env,
        &["setup", "--yes", "--agent", "claude-code"],
        &[],
        DEADLINE,
    );
    assert!(again.status.success(), "{}", text(&again.stderr));
    assert!(
        text(&again.stdout).contains("mode 0644 -> 0600: it holds calyx's token"),
        "{}",
        text(&again.stdout)
    );
    assert_eq!(mode(&claude), 0o600);
}

/// As another local account (`nobody`, through `setpriv`; needs root, which CI has): with every
/// directory on the way open to others, as a home directory of mode 0755 is, the files that
/// hold the token cannot be read.
fn another_user_cannot_read(env: &Env, files: &[&Path]) {
    let root = fs::read_to_string("/proc/self/status")
        .is_ok_and(|s| s.lines().any(|l| l.starts_with("Uid:\t0\t")));
    if !root
        || std::process::Command::new("setpriv")
            .arg("--version")
            .output()
            .is_err()
    {
        eprintln!("skipped: reading as another user needs root and setpriv (CI has both)");
        return;
    }
    for dir in env
        .home()
        .ancestors()
        .take_while(|d| d.starts_with(env.dir.path()))
    {
        chmod(dir, 0o755);
    }
    for f in files {
        if let Some(parent) = f.parent() {
            chmod(parent, 0o755);
        }
        let read = std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "cat"])
            .arg(f)
            .output()
            .expect("setpriv");
        assert!(!read.status.success(), "nobody read {}", f.display());
        assert!(
            !String::from_utf8_lossy(&read.stdout).contains(TOKEN),
            "{}",
            f.display()
        );
    }
}

#[test]
fn doctor_flags_a_group_or_other_readable_config_holding_the_token() {
    let env = Env::new(true);
    let out = run_bounded(
        &env,
        &["setup", "--yes", "--agent", "claude-code"],
        &[],
        DEADLINE,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let claude = env.home().join(".claude.json");
    chmod(&claude, 0o644);
    let doctor = run_bounded(&env, &["doctor", "--agent", "claude-code"], &[], DEADLINE);
    let report = text(&doctor.stdout);
    assert!(
        report.contains(&format!(
            "{} is mode 0644 and holds calyx's token",
            claude.display()
        )),
        "{report}"
    );
    assert!(
        report.contains(&format!("chmod 600 {}", claude.display())),
        "{report}"
    );
    assert!(!doctor.status.success());
    assert_eq!(mode(&claude), 0o644, "doctor only reports");
}

#[test]
fn a_fifo_config_is_refused_by_name_and_the_other_clis_are_still_set_up() {
    let env = Env::new(true);
    let fifo = env.home().join(".codex/config.toml");
    fs::create_dir_all(fifo.parent().unwrap()).unwrap();
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let out = run_bounded(
        &env,
        &["setup", "--yes", "--agent", "codex,claude-code"],
        &[],
        DEADLINE,
    );
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("{}: ", fifo.display())) && err.contains("FIFO"),
        "{err}"
    );
    use std::os::unix::fs::FileTypeExt;
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    let mcp = json(&env.home().join(".claude.json"));
    assert_eq!(
        mcp["mcpServers"]["calyx-ipc"]["url"],
        "http://127.0.0.1:45111/mcp"
    );
    assert!(env.home().join(".claude/settings.json").is_file());

    let doctor = run_bounded(&env, &["doctor", "--agent", "codex"], &[], DEADLINE);
    let report = text(&doctor.stdout);
    assert!(report.contains("FIFO"), "{report}");
    assert!(!doctor.status.success());
}

#[test]
fn a_config_linked_to_dev_zero_is_refused_by_name_and_the_other_clis_are_still_set_up() {
    let env = Env::new(true);
    let link = env.home().join(".gemini/settings.json");
    fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
    let out = run_bounded(
        &env,
        &["setup", "--yes", "--agent", "gemini,claude-code"],
        &[],
        DEADLINE,
    );
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("{}: ", link.display())) && err.contains("character device"),
        "{err}"
    );
    assert_eq!(fs::read_link(&link).unwrap(), PathBuf::from("/dev/zero"));
    let mcp = json(&env.home().join(".claude.json"));
    assert_eq!(
        mcp["mcpServers"]["calyx-ipc"]["url"],
        "http://127.0.0.1:45111/mcp"
    );

    let doctor = run_bounded(&env, &["doctor", "--agent", "gemini"], &[], DEADLINE);
    assert!(
        text(&doctor.stdout).contains("character device"),
        "{}",
        text(&doctor.stdout)
    );
}

#[test]
fn a_config_over_16_mib_is_refused_by_name_and_left_alone() {
    let env = Env::new(true);
    let big = env.home().join(".claude.json");
    let mut body = String::from("{\"numStartups\": 2");
    body.push_str(&" ".repeat(17 << 20));
    body.push_str("}\n");
    fs::write(&big, &body).unwrap();
    let out = run_bounded(
        &env,
        &["setup", "--yes", "--agent", "claude-code"],
        &[],
        DEADLINE,
    );
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("{}: ", big.display())) && err.contains("16 MiB"),
        "{err}"
    );
    assert_eq!(fs::metadata(&big).unwrap().len(), body.len() as u64);
}

/// A fake `kimi` on PATH: a Python console script (as pip installs it) whose `kimi_cli`
/// package's `load_config` rejects hook events the way kimi-cli 1.52.0's pydantic model does,
/// with its error text, but for an older Kimi that knows no SubagentStart/SubagentStop
/// (`FAKE_KIMI_ACCEPT_ALL=1`: it knows every event calyx writes).
fn fake_kimi(dir: &Path) -> (PathBuf, PathBuf) {
    let py = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 is needed for the fake kimi");
    let py = text(&py.stdout).trim().to_string();
    assert!(!py.is_empty(), "no python3 interpreter");
    let bin = dir.join("fake-kimi/bin");
    let lib = dir.join("fake-kimi/lib/kimi_cli");
    fs::create_dir_all(&bin).unwrap();
    fs::create_dir_all(&lib).unwrap();
    let kimi = bin.join("kimi");
    fs::write(
        &kimi,
        format!("#!{py}\nimport sys\nif '--version' in sys.argv:\n    print('kimi, version 1.52.0')\n    sys.exit(0)\nsys.exit('fake kimi: only --version')\n"),
    )
    .unwrap();
    chmod(&kimi, 0o755);
    fs::write(lib.join("__init__.py"), "").unwrap();
    fs::write(
        lib.join("exception.py"),
        "class ConfigError(Exception):\n    pass\n",
    )
    .unwrap();
    fs::write(
        lib.join("config.py"),
        r#"import os, re
from kimi_cli.exception import ConfigError
KNOWN = ['PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'UserPromptSubmit', 'Stop', 'StopFailure',
         'SessionStart', 'SessionEnd', 'SubagentStart', 'SubagentStop', 'PreCompact', 'PostCompact', 'Notification']
if not os.environ.get('FAKE_KIMI_ACCEPT_ALL'):
    KNOWN = [e for e in KNOWN if not e.startswith('Subagent')]
def load_config(config_file):
    events = re.findall(r'^event = "([^"]*)"', config_file.read_text(encoding='utf-8'), re.M)
    for i, ev in enumerate(events):
        if ev not in KNOWN:
            allowed = ', '.join(repr(e) for e in KNOWN[:-1]) + ' or ' + repr(KNOWN[-1])
            raise ConfigError(
                f"Invalid configuration file {config_file}: 1 validation error for Config\n"
                f"hooks.{i}.event\n  Input should be {allowed} [type=literal_error, "
                f"input_value='{ev}', input_type=String]\n"
                "    For further information visit https://errors.pydantic.dev/2.12/v/literal_error")
"#,
    )
    .unwrap();
    // Kimi validates mcp.json with fastmcp's MCPConfig (as `kimi mcp list` does).
    let fastmcp = dir.join("fake-kimi/lib/fastmcp");
    fs::create_dir_all(&fastmcp).unwrap();
    fs::write(fastmcp.join("__init__.py"), "").unwrap();
    fs::write(
        fastmcp.join("mcp_config.py"),
        "class MCPConfig:\n    @staticmethod\n    def model_validate(v):\n        assert isinstance(v.get('mcpServers'), dict)\n",
    )
    .unwrap();
    (bin, dir.join("fake-kimi/lib"))
}

#[test]
fn setup_refuses_a_kimi_config_the_installed_kimi_rejects_and_leaves_it_alone() {
    let env = Env::new(true);
    let (bin, lib) = fake_kimi(env.dir.path());
    let path = std::ffi::OsString::from(format!("{}:/usr/bin:/bin", bin.display()));
    let config = env.home().join(".kimi/config.toml");
    fs::create_dir_all(config.parent().unwrap()).unwrap();
    fs::write(&config, "default_model = \"k\"\n").unwrap();
    let extra = [("PATH", path.as_os_str()), ("PYTHONPATH", lib.as_os_str())];
    let out = run_bounded(
        &env,
        &["setup", "--yes", "--agent", "kimi"],
        &extra,
        DEADLINE,
    );
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("{}: ", config.display()))
            && err.contains("(kimi, version 1.52.0) rejects the config calyx would write")
            && err.contains("input_value='SubagentStart'")
            && err.contains(&format!("Invalid configuration file {}", config.display())),
        "{err}"
    );
    assert_eq!(
        fs::read_to_string(&config).unwrap(),
        "default_model = \"k\"\n"
    );
    assert!(!env.home().join(".kimi/mcp.json").exists());

    // A Kimi that knows every event calyx writes takes it, and setup says it asked.
    let accept = std::ffi::OsString::from("1");
    let extra = [
        ("PATH", path.as_os_str()),
        ("PYTHONPATH", lib.as_os_str()),
        ("FAKE_KIMI_ACCEPT_ALL", accept.as_os_str()),
    ];
    let out = run_bounded(
        &env,
        &["setup", "--yes", "--agent", "kimi"],
        &extra,
        DEADLINE,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("loaded config.toml and mcp.json"),
        "{}",
        text(&out.stdout)
    );
    assert!(fs::read_to_string(&config)
        .unwrap()
        .contains("event = \"SubagentStart\""));
    assert_eq!(mode(&env.home().join(".kimi/mcp.json")), 0o600);
}

#[test]
fn a_rejection_the_cli_already_gives_for_the_current_config_is_a_warning_not_a_refusal() {
    let env = Env::new(true);
    let (bin, lib) = fake_kimi(env.dir.path());
    let path = std::ffi::OsString::from(format!("{}:/usr/bin:/bin", bin.display()));
    let config = env.home().join(".kimi/config.toml");
    fs::create_dir_all(config.parent().unwrap()).unwrap();
    // The user's own hook on an event this Kimi does not know: Kimi rejects the file as it
    // is, with or without calyx's block, so the rejection is not calyx's doing.
    let mine = "[[hooks]]\nevent = \"Bogus\"\ncommand = \"true\"\n";
    fs::write(&config, mine).unwrap();
    let extra = [("PATH", path.as_os_str()), ("PYTHONPATH", lib.as_os_str())];
    let out = run_bounded(
        &env,
        &["setup", "--yes", "--agent", "kimi"],
        &extra,
        DEADLINE,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("Kimi Code: warning: could not check the new config with the CLI")
            && stdout.contains("already rejects the config as it is now, before calyx's change")
            && stdout.contains("input_value='Bogus'"),
        "{stdout}"
    );
    assert!(fs::read_to_string(&config).unwrap().starts_with(mine));
}

/// A fake `codex` on PATH (a shell script, as npm's launcher is a script too): `--version`
/// prints codex-cli 0.171.0's line; `mcp list` rejects, unless `FAKE_CODEX_ACCEPT_ALL` is set,
/// calyx's `env_http_headers` with the text codex-cli 0.171.0 printed for a mistyped
/// `mcp_servers.calyx-ipc.url` (an older Codex that wanted a string there). Every run logs
/// its CODEX_HOME, HOME, that directory's mode, its working directory, its OpenAI key and its
/// arguments to `$FAKE_CODEX_LOG`. `FAKE_CODEX_HANG`: `mcp list` never answers.
fn fake_codex(dir: &Path) -> PathBuf {
    let bin = dir.join("fake-codex/bin");
    fs::create_dir_all(&bin).unwrap();
    let codex = bin.join("codex");
    fs::write(
        &codex,
        r#"#!/bin/sh
echo "$CODEX_HOME|$HOME|$(stat -c %a "$CODEX_HOME")|$(pwd)|${OPENAI_API_KEY:-no key}|$*" >> "$FAKE_CODEX_LOG"
if [ "$1" = --version ]; then echo 'codex-cli 0.171.0'; exit 0; fi
[ "$1 $2" = "mcp list" ] || { echo "error: unrecognized subcommand '$1'" >&2; exit 2; }
[ -n "$FAKE_CODEX_HANG" ] && exec sleep 60
echo "WARNING: proceeding, even though we could not create PATH aliases: Refusing to create helper binaries under temporary dir \"/tmp\" (codex_home: AbsolutePathBuf(\"$CODEX_HOME\"))" >&2
if [ -z "$FAKE_CODEX_ACCEPT_ALL" ] && grep -q '^env_http_headers' "$CODEX_HOME/config.toml"; then
  printf 'Error: failed to load bootstrap configuration\n\nCaused by:\n    invalid type: map, expected a string\n    in `mcp_servers.calyx-ipc.env_http_headers`\n    \n\nStack backtrace:\n   0: <unknown>\n' >&2
  exit 1
fi
echo 'Name       Url                         Bearer Token Env Var  Status   Auth'
echo 'calyx-ipc  http://127.0.0.1:45111/mcp  -                     enabled  Bearer token'
"#,
    )
    .unwrap();
    chmod(&codex, 0o755);
    bin
}

#[test]
fn setup_refuses_a_codex_config_the_installed_codex_rejects_and_leaves_it_alone() {
    let env = Env::new(true);
    let bin = fake_codex(env.dir.path());
    let log = env.dir.path().join("fake-codex.log");
    let path = std::ffi::OsString::from(format!("{}:/usr/bin:/bin", bin.display()));
    let config = env.home().join(".codex/config.toml");
    fs::create_dir_all(config.parent().unwrap()).unwrap();
    fs::write(&config, "model = \"o3\"\n").unwrap();
    let key = std::ffi::OsString::from("sk-user-key");
    let extra = [
        ("PATH", path.as_os_str()),
        ("FAKE_CODEX_LOG", log.as_os_str()),
        ("OPENAI_API_KEY", key.as_os_str()),
    ];
    let out = run_bounded(
        &env,
        &["setup", "--yes", "--agent", "codex"],
        &extra,
        DEADLINE,
    );
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("{}: ", config.display()))
            && err.contains("(codex-cli 0.171.0) rejects the config calyx would write")
            && err.contains("in `mcp_servers.calyx-ipc.env_http_headers`")
            && !err.contains("WARNING")
            && !err.contains("Stack backtrace"),
        "{err}"
    );
    assert_eq!(fs::read_to_string(&config).unwrap(), "model = \"o3\"\n");
    assert!(!env.home().join(".codex/hooks.json").exists());
    // Codex was asked about a private copy (its `--version` run too), not the user's
    // directory, without the user's key, and got no config text on its command line. (Asked
    // twice: the files as they would be, then as they are, to tell whose fault it is.)
    let runs = fs::read_to_string(&log).unwrap();
    assert_eq!(
        runs.lines().filter(|l| l.ends_with("|mcp list")).count(),
        2,
        "{runs}"
    );
    for run in runs.lines() {
        let f: Vec<&str> = run.split('|').collect();
        assert_eq!(f.len(), 6, "{run}");
        assert!(!Path::new(f[0]).starts_with(env.home()), "{run}");
        assert_eq!(&f[1..5], [f[0], "700", f[0], "no key"], "{run}");
        assert!(["--version", "mcp list"].contains(&f[5]), "{run}");
        assert!(!Path::new(f[0]).exists(), "the copy is removed: {run}");
    }

    // A Codex that takes it lets setup through, and setup says it asked.
    let out = setup_with_fake(&env, &path, "CODEX", &log, "codex", true);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("(codex-cli 0.171.0) loaded config.toml"),
        "{}",
        text(&out.stdout)
    );
    assert!(fs::read_to_string(&config)
        .unwrap()
        .contains("[mcp_servers.calyx-ipc]"));
    assert!(env.home().join(".codex/hooks.json").exists());
}

/// The real CLI `name` from tests/realcli's cache (`$REALCLI_HOME`, else
/// `~/.cache/calyx-realcli`), linked alone into a directory for PATH; `None` (and a line
/// saying why the test is skipped) when it is not installed there.
fn real_cli(name: &str, dir: &Path) -> Option<PathBuf> {
    let cache = std::env::var_os("REALCLI_HOME")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/calyx-realcli"))
        })?;
    let real = cache.join("bin").join(name);
    if !real.exists() {
        eprintln!(
            "skipped: no real {name} at {} (install it with ../shared/realcli/realcli.sh install {name})",
            real.display()
        );
        return None;
    }
    let bin = dir.join(format!("real-{name}"));
    fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(&real, bin.join(name)).unwrap();
    Some(bin)
}

#[test]
fn the_real_codex_loads_what_setup_writes_and_doctor_reports_what_it_rejects() {
    let env = Env::new(true);
    let Some(bin) = real_cli("codex", env.dir.path()) else {
        return;
    };
    let path = std::ffi::OsString::from(format!("{}:/usr/bin:/bin", bin.display()));
    let config = env.home().join(".codex/config.toml");
    fs::create_dir_all(config.parent().unwrap()).unwrap();
    fs::write(&config, "model = \"o3\"\n").unwrap();
    // Real CLIs start slowly on a loaded test machine: their checks get four times the time.
    let extra = [
        ("PATH", path.as_os_str()),
        ("CALYX_SETUP_TIMEOUT_SCALE", std::ffi::OsStr::new("4")),
    ];
    let out = run_bounded(
        &env,
        &["setup", "--yes", "--agent", "codex"],
        &extra,
        DEADLINE,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("(codex-cli ")
            && text(&out.stdout).contains("loaded config.toml"),
        "{}",
        text(&out.stdout)
    );
    // A mistyped key of the user's: the real Codex refuses the file, and doctor says so.
    let written = fs::read_to_string(&config).unwrap();
    fs::write(&config, written.replace("model = \"o3\"", "model = 5")).unwrap();
    let out = run_bounded(&env, &["doctor"], &extra, DEADLINE);
    let stdout = text(&out.stdout);
    assert!(!out.status.success());
    assert!(
        stdout.contains(&format!("rejects {}", config.display()))
            && stdout.contains("failed to load bootstrap configuration")
            && stdout.contains("invalid type: integer `5`, expected a string"),
        "{stdout}"
    );
}

/// A fake `claude` on PATH: `--version` prints Claude Code 2.1.197's line; `mcp get calyx-ipc`
/// logs its CLAUDE_CONFIG_DIR, that directory's mode, whether HOME is the same directory and
/// its arguments to `$FAKE_CLAUDE_LOG`, then, unless `FAKE_CLAUDE_ACCEPT_ALL` is set, answers
/// as 2.1.197 does when its schema drops the entry (an older Claude that does not take calyx's
/// `${VAR:-}` headers): `No MCP server named "calyx-ipc"…`, exit 1.
fn fake_claude(dir: &Path) -> PathBuf {
    let bin = dir.join("fake-claude/bin");
    fs::create_dir_all(&bin).unwrap();
    let claude = bin.join("claude");
    fs::write(
        &claude,
        r#"#!/bin/sh
if [ "$1" = --version ]; then echo '2.1.197 (Claude Code)'; exit 0; fi
[ "$1 $2" = "mcp get" ] || { echo "error: unknown command '$1'" >&2; exit 1; }
same=no; [ "$HOME" = "$CLAUDE_CONFIG_DIR" ] && same=yes
echo "$CLAUDE_CONFIG_DIR $(stat -c %a "$CLAUDE_CONFIG_DIR") $same $*" >> "$FAKE_CLAUDE_LOG"
if [ -z "$FAKE_CLAUDE_ACCEPT_ALL" ] || ! grep -q '"calyx-ipc"' "$CLAUDE_CONFIG_DIR/.claude.json"; then
  echo 'No MCP server named "calyx-ipc". Run `claude mcp add` to add one.' >&2
  exit 1
fi
printf 'calyx-ipc:\n  Scope: User config (available in all your projects)\n  Status: \342\234\230 Failed to connect\n  Type: http\n'
"#,
    )
    .unwrap();
    chmod(&claude, 0o755);
    bin
}

#[test]
fn setup_refuses_a_claude_config_the_installed_claude_rejects_and_leaves_it_alone() {
    let env = Env::new(true);
    let bin = fake_claude(env.dir.path());
    let log = env.dir.path().join("fake-claude.log");
    let path = std::ffi::OsString::from(format!("{}:/usr/bin:/bin", bin.display()));
    let mcp = env.home().join(".claude.json");
    let before = fs::read(&mcp).unwrap();
    let out = setup_with_fake(&env, &path, "CLAUDE", &log, "claude-code", false);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("{}: ", mcp.display()))
            && err.contains("(2.1.197 (Claude Code)) rejects the config calyx would write")
            && err.contains("drops calyx's entry mcpServers.calyx-ipc")
            && err.contains("No MCP server named \"calyx-ipc\""),
        "{err}"
    );
    assert_eq!(fs::read(&mcp).unwrap(), before);
    assert!(!env.home().join(".claude/settings.json").exists());
    for asked in fs::read_to_string(&log).unwrap().lines() {
        let (dir, rest) = asked.split_once(' ').unwrap();
        assert!(!Path::new(dir).starts_with(env.home()), "{dir}");
        assert_eq!(rest, "700 yes mcp get calyx-ipc");
        assert!(!Path::new(dir).exists(), "the copy is removed");
    }

    let out = setup_with_fake(&env, &path, "CLAUDE", &log, "claude-code", true);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout)
            .contains("(2.1.197 (Claude Code)) loaded .claude.json and its calyx-ipc entry"),
        "{}",
        text(&out.stdout)
    );
    assert!(json(&mcp)["mcpServers"]["calyx-ipc"].is_object());
    assert!(env.home().join(".claude/settings.json").exists());
}

#[test]
fn the_real_claude_loads_what_setup_writes_and_doctor_reports_an_entry_it_drops() {
    let env = Env::new(true);
    let Some(bin) = real_cli("claude", env.dir.path()) else {
        return;
    };
    let path = std::ffi::OsString::from(format!("{}:/usr/bin:/bin", bin.display()));
    // Real CLIs start slowly on a loaded test machine: their checks get four times the time.
    let extra = [
        ("PATH", path.as_os_str()),
        ("CALYX_SETUP_TIMEOUT_SCALE", std::ffi::OsStr::new("4")),
    ];
    let out = env.calyx_with(&["setup", "--yes", "--agent", "claude-code"], &extra);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("(Claude Code)) loaded .claude.json"),
        "{}",
        text(&out.stdout)
    );
    // calyx's entry mistyped (by hand, say): the real Claude drops it, doctor says so, and the
    // user's file is not touched by the check (Claude rewrites a file it cannot load).
    let mcp = env.home().join(".claude.json");
    let mut doc = json(&mcp);
    doc["mcpServers"]["calyx-ipc"]["url"] = Value::from(5);
    let broken = serde_json::to_string_pretty(&doc).unwrap();
    fs::write(&mcp, &broken).unwrap();
    let out = env.calyx_with(&["doctor"], &extra);
    let stdout = text(&out.stdout);
    assert!(!out.status.success());
    assert!(
        stdout.contains(&format!("rejects {}", mcp.display()))
            && stdout.contains("drops calyx's entry mcpServers.calyx-ipc"),
        "{stdout}"
    );
    assert_eq!(fs::read_to_string(&mcp).unwrap(), broken);
}

/// A fake `gemini` on PATH: `--version` prints 0.61.0; `mcp list` logs its HOME,
/// GEMINI_CLI_HOME, working directory and Gemini key to `$FAKE_GEMINI_LOG`, then, unless
/// `FAKE_GEMINI_ACCEPT_ALL` is set, answers as gemini 0.61.0 does for settings of the wrong
/// shape (its `Invalid configuration in FILE:` paragraph, on stderr, and exit 0), here for an
/// older Gemini whose `hooks` knows no `PreCompress`.
fn fake_gemini(dir: &Path) -> PathBuf {
    let bin = dir.join("fake-gemini/bin");
    fs::create_dir_all(&bin).unwrap();
    let gemini = bin.join("gemini");
    fs::write(
        &gemini,
        r#"#!/bin/sh
echo "$HOME|${GEMINI_CLI_HOME:-unset}|$(pwd)|${GEMINI_API_KEY:-no key}|$*" >> "$FAKE_GEMINI_LOG"
if [ "$1" = --version ]; then echo '0.61.0'; exit 0; fi
[ "$1 $2" = "mcp list" ] || { echo "Unknown arguments: $*" >&2; exit 1; }
f="$HOME/.gemini/settings.json"
if [ -z "$FAKE_GEMINI_ACCEPT_ALL" ] && grep -q '"PreCompress"' "$f"; then
  printf 'Invalid configuration in %s:\n\nError in: hooks.PreCompress\n    Unrecognized key\n\nPlease fix the configuration.\nSee: https://geminicli.com/docs/reference/configuration/\n' "$f" >&2
fi
printf 'Configured MCP servers:\n\n\342\227\213 calyx-ipc: http://127.0.0.1:45111/mcp (http) - Disabled\n' >&2
"#,
    )
    .unwrap();
    chmod(&gemini, 0o755);
    bin
}

#[test]
fn setup_refuses_a_gemini_config_the_installed_gemini_rejects_and_leaves_it_alone() {
    let env = Env::new(true);
    let bin = fake_gemini(env.dir.path());
    let log = env.dir.path().join("fake-gemini.log");
    let path = std::ffi::OsString::from(format!("{}:/usr/bin:/bin", bin.display()));
    let settings = env.home().join(".gemini/settings.json");
    fs::create_dir_all(settings.parent().unwrap()).unwrap();
    fs::write(&settings, "{\"theme\": \"x\"}\n").unwrap();
    let key = std::ffi::OsString::from("gemini-user-key");
    // The user's own GEMINI_CLI_HOME (Gemini's home, `.gemini` under it: the same file here),
    // which the check must point at its private copy like HOME.
    let gemini_home = env.home();
    let extra = [
        ("PATH", path.as_os_str()),
        ("FAKE_GEMINI_LOG", log.as_os_str()),
        ("GEMINI_API_KEY", key.as_os_str()),
        ("GEMINI_CLI_HOME", gemini_home.as_os_str()),
    ];
    let out = run_bounded(
        &env,
        &["setup", "--yes", "--agent", "gemini"],
        &extra,
        DEADLINE,
    );
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("{}: ", settings.display()))
            && err.contains("(0.61.0) rejects the config calyx would write")
            && err.contains(&format!("Invalid configuration in {}:", settings.display()))
            && err.contains("Error in: hooks.PreCompress"),
        "{err}"
    );
    assert_eq!(
        fs::read_to_string(&settings).unwrap(),
        "{\"theme\": \"x\"}\n"
    );
    let runs = fs::read_to_string(&log).unwrap();
    for run in runs.lines() {
        let f: Vec<&str> = run.split('|').collect();
        assert_eq!(f.len(), 5, "{run}");
        assert!(!Path::new(f[0]).starts_with(env.home()), "{run}");
        assert_eq!(&f[1..4], [f[0], f[0], "no key"], "{run}");
        assert!(!Path::new(f[0]).exists(), "the copy is removed: {run}");
    }

    let out = setup_with_fake(&env, &path, "GEMINI", &log, "gemini", true);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("(0.61.0) loaded settings.json"),
        "{}",
        text(&out.stdout)
    );
    assert!(json(&settings)["mcpServers"]["calyx-ipc"].is_object());
}

#[test]
fn the_real_gemini_loads_what_setup_writes_and_doctor_reports_an_entry_it_rejects() {
    let env = Env::new(true);
    let Some(bin) = real_cli("gemini", env.dir.path()) else {
        return;
    };
    let path = std::ffi::OsString::from(format!("{}:/usr/bin:/bin", bin.display()));
    // Real CLIs start slowly on a loaded test machine: their checks get four times the time.
    let extra = [
        ("PATH", path.as_os_str()),
        ("CALYX_SETUP_TIMEOUT_SCALE", std::ffi::OsStr::new("4")),
    ];
    let out = env.calyx_with(&["setup", "--yes", "--agent", "gemini"], &extra);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("loaded settings.json (`gemini mcp list`)"),
        "{}",
        text(&out.stdout)
    );
    // The check ran Gemini (and its --version) elsewhere: ~/.gemini holds only what setup wrote.
    let gemini_dir = env.home().join(".gemini");
    let only_settings = || {
        let names: Vec<String> = fs::read_dir(&gemini_dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            names.iter().all(|n| n.starts_with("settings.json")),
            "{names:?}"
        );
    };
    only_settings();
    let settings = gemini_dir.join("settings.json");
    let mut doc = json(&settings);
    doc["mcpServers"]["calyx-ipc"]["httpUrl"] = Value::from(5);
    fs::write(&settings, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let out = env.calyx_with(&["doctor"], &extra);
    let stdout = text(&out.stdout);
    assert!(!out.status.success());
    assert!(
        stdout.contains(&format!("Invalid configuration in {}:", settings.display()))
            && stdout.contains("Error in: mcpServers.calyx-ipc.httpUrl"),
        "{stdout}"
    );
    // doctor's `binary:` line asked the version isolated too.
    assert!(stdout.contains("(0."), "a version was read: {stdout}");
    only_settings();
}

/// A fake `hermes` on PATH: `--version` prints hermes-agent 0.19.0's line; `hooks list` prints
/// the hooks of `$HERMES_HOME/config.yaml` as 0.19.0 does (`[event]`, then the commands), but,
/// unless `FAKE_HERMES_ACCEPT_ALL` is set, silently drops the subagent_* events, as Hermes
/// drops an event it does not know (an older Hermes); `mcp list` lists calyx-ipc and calyx-mcp
/// when there.
fn fake_hermes(dir: &Path) -> PathBuf {
    let bin = dir.join("fake-hermes/bin");
    fs::create_dir_all(&bin).unwrap();
    let hermes = bin.join("hermes");
    fs::write(
        &hermes,
        r#"#!/bin/sh
if [ "$1" = --version ]; then echo 'Hermes Agent v0.19.0 (2026.7.20)'; exit 0; fi
f="$HERMES_HOME/config.yaml"
case "$1 $2" in
"hooks list")
  echo 'Configured shell hooks:'
  awk -v all="$FAKE_HERMES_ACCEPT_ALL" '
    /^hooks:/ { h = 1; next }
    /^[^ ]/ { h = 0 }
    h && /^  [a-z_]+:$/ { ev = $1; sub(":", "", ev); shown = ""; next }
    h && /command:/ {
      if (ev ~ /^subagent_/ && all == "") next
      if (shown != ev) { print ""; print "  [" ev "]"; shown = ev }
      c = $0; sub(/.*command: /, "", c); gsub("\047", "", c)
      print "    - " c " (timeout=5s, not allowlisted)"
    }' "$f" ;;
"mcp list")
  grep -q 'calyx-ipc:' "$f" && echo '  calyx-ipc        http://127.0.0.1:45111/mcp     all          enabled'
  if grep -q 'calyx-mcp:' "$f"; then echo '  calyx-mcp        http://127.0.0.1:45111/mcp-hosted all        enabled'; fi ;;
*) echo "hermes: error: argument command: invalid choice: '$1'" >&2; exit 2 ;;
esac
"#,
    )
    .unwrap();
    chmod(&hermes, 0o755);
    bin
}

#[test]
fn setup_refuses_a_hermes_config_the_installed_hermes_would_drop_hooks_from() {
    let env = Env::new(true);
    let bin = fake_hermes(env.dir.path());
    let path = std::ffi::OsString::from(format!("{}:/usr/bin:/bin", bin.display()));
    let config = env.home().join(".hermes/config.yaml");
    fs::create_dir_all(config.parent().unwrap()).unwrap();
    fs::write(&config, "model:\n  default: x\n").unwrap();
    // Real CLIs start slowly on a loaded test machine: their checks get four times the time.
    let extra = [
        ("PATH", path.as_os_str()),
        ("CALYX_SETUP_TIMEOUT_SCALE", std::ffi::OsStr::new("4")),
    ];
    let out = run_bounded(
        &env,
        &["setup", "--yes", "--agent", "hermes"],
        &extra,
        DEADLINE,
    );
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("{}: ", config.display()))
            && err.contains(
                "(Hermes Agent v0.19.0 (2026.7.20)) rejects the config calyx would write"
            )
            && err.contains("does not list calyx's hooks on subagent_start, subagent_stop"),
        "{err}"
    );
    assert_eq!(
        fs::read_to_string(&config).unwrap(),
        "model:\n  default: x\n"
    );

    let accept = std::ffi::OsString::from("1");
    let extra = [
        ("PATH", path.as_os_str()),
        ("FAKE_HERMES_ACCEPT_ALL", accept.as_os_str()),
    ];
    let out = run_bounded(
        &env,
        &["setup", "--yes", "--agent", "hermes"],
        &extra,
        DEADLINE,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("loaded config.yaml and lists calyx's hooks and MCP entry"),
        "{}",
        text(&out.stdout)
    );
    assert!(fs::read_to_string(&config)
        .unwrap()
        .contains("subagent_stop:"));
}

#[test]
fn the_real_hermes_lists_what_setup_writes() {
    let env = Env::new(true);
    let Some(bin) = real_cli("hermes", env.dir.path()) else {
        return;
    };
    let path = std::ffi::OsString::from(format!("{}:/usr/bin:/bin", bin.display()));
    // Real CLIs start slowly on a loaded test machine: their checks get four times the time.
    let extra = [
        ("PATH", path.as_os_str()),
        ("CALYX_SETUP_TIMEOUT_SCALE", std::ffi::OsStr::new("4")),
    ];
    let out = env.calyx_with(&["setup", "--yes", "--agent", "hermes"], &extra);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("loaded config.yaml and lists calyx's hooks and MCP entry"),
        "{}",
        text(&out.stdout)
    );
    let hermes_dir = env.home().join(".hermes");
    let names: Vec<String> = fs::read_dir(&hermes_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().all(|n| n.starts_with("config.yaml")),
        "{names:?}"
    );
}

/// A fake `opencode` on PATH: `--version` prints 1.18.33; `debug config --pure` logs its
/// XDG_CONFIG_HOME to `$FAKE_OPENCODE_LOG` and, unless `FAKE_OPENCODE_ACCEPT_ALL` is set,
/// refuses a config holding calyx-ipc as opencode 1.18.33 refuses a file that is not JSON(C)
/// (an older OpenCode without JSONC trailing-comma support, say): coloured `Error:`, the
/// whole file under `--- JSONC Input ---`, then the errors, exit 1.
fn fake_opencode(dir: &Path) -> PathBuf {
    let bin = dir.join("fake-opencode/bin");
    fs::create_dir_all(&bin).unwrap();
    let opencode = bin.join("opencode");
    fs::write(
        &opencode,
        r#"#!/bin/sh
if [ "$1" = --version ]; then echo '1.18.33'; exit 0; fi
[ "$*" = "debug config --pure" ] || { echo "unknown command: $*" >&2; exit 1; }
echo "$XDG_CONFIG_HOME" >> "$FAKE_OPENCODE_LOG"
f="$XDG_CONFIG_HOME/opencode/opencode.json"
if [ -z "$FAKE_OPENCODE_ACCEPT_ALL" ] && grep -q '"calyx-ipc"' "$f"; then
  printf '\033[91m\033[1mError: \033[0mConfig file at %s is not valid JSON(C): \n--- JSONC Input ---\n' "$f" >&2
  cat "$f" >&2
  printf '\n--- Errors ---\nPropertyNameExpected at line 3, column 5\n--- End ---\n' >&2
  exit 1
fi
echo '{"mcp": {}}'
"#,
    )
    .unwrap();
    chmod(&opencode, 0o755);
    bin
}

#[test]
fn setup_refuses_an_opencode_config_the_installed_opencode_rejects_and_never_echoes_it() {
    let env = Env::new(true);
    let bin = fake_opencode(env.dir.path());
    let log = env.dir.path().join("fake-opencode.log");
    let path = std::ffi::OsString::from(format!("{}:/usr/bin:/bin", bin.display()));
    let config = env.home().join(".config/opencode/opencode.json");
    fs::create_dir_all(config.parent().unwrap()).unwrap();
    fs::write(&config, "{\"theme\": \"x\"}\n").unwrap();
    let out = setup_with_fake(&env, &path, "OPENCODE", &log, "opencode", false);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("{}: ", config.display()))
            && err.contains("(1.18.33) rejects the config calyx would write")
            && err.contains(&format!(
                "Config file at {} is not valid JSON(C)",
                config.display()
            ))
            && err.contains("PropertyNameExpected at line 3, column 5")
            && !err.contains(TOKEN)
            && !err.contains("JSONC Input")
            && !err.contains('\u{1b}'),
        "{err}"
    );
    assert_eq!(fs::read_to_string(&config).unwrap(), "{\"theme\": \"x\"}\n");
    assert!(!env
        .home()
        .join(".config/opencode/plugins/calyx.js")
        .exists());
    for home in fs::read_to_string(&log).unwrap().lines() {
        assert!(!Path::new(home).starts_with(env.home()), "{home}");
        assert!(!Path::new(home).exists(), "the copy is removed: {home}");
    }

    let out = setup_with_fake(&env, &path, "OPENCODE", &log, "opencode", true);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("(1.18.33) loaded opencode.json"),
        "{}",
        text(&out.stdout)
    );
    assert!(json(&config)["mcp"]["calyx-ipc"].is_object());
}

#[test]
fn the_real_opencode_loads_what_setup_writes() {
    let env = Env::new(true);
    let Some(bin) = real_cli("opencode", env.dir.path()) else {
        return;
    };
    let path = std::ffi::OsString::from(format!("{}:/usr/bin:/bin", bin.display()));
    // Real CLIs start slowly on a loaded test machine: their checks get four times the time.
    let extra = [
        ("PATH", path.as_os_str()),
        ("CALYX_SETUP_TIMEOUT_SCALE", std::ffi::OsStr::new("4")),
    ];
    let out = env.calyx_with(&["setup", "--yes", "--agent", "opencode"], &extra);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("loaded opencode.json (`opencode debug config --pure`)"),
        "{}",
        text(&out.stdout)
    );
}

/// A fake `copilot` on PATH: `--version` prints 1.0.102's line; `mcp get calyx-ipc` logs its
/// COPILOT_HOME to `$FAKE_COPILOT_LOG` and, unless `FAKE_COPILOT_ACCEPT_ALL` is set, answers as
/// 1.0.102 does when it drops an entry of the wrong shape (an older Copilot that does not take
/// calyx's `type: http`): `Error: Server "calyx-ipc" not found.`, exit 1.
fn fake_copilot(dir: &Path) -> PathBuf {
    let bin = dir.join("fake-copilot/bin");
    fs::create_dir_all(&bin).unwrap();
    let copilot = bin.join("copilot");
    fs::write(
        &copilot,
        r#"#!/bin/sh
if [ "$1" = --version ]; then printf 'GitHub Copilot CLI 1.0.102.\nRun copilot update to check for updates.\n'; exit 0; fi
[ "$*" = "mcp get calyx-ipc" ] || { echo "error: unknown command '$1'" >&2; exit 1; }
echo "$COPILOT_HOME" >> "$FAKE_COPILOT_LOG"
if [ -z "$FAKE_COPILOT_ACCEPT_ALL" ] || ! grep -q '"calyx-ipc"' "$COPILOT_HOME/mcp-config.json" 2>/dev/null; then
  printf 'Error: Server "calyx-ipc" not found.\n\nAvailable servers:\n  (none)\n'
  exit 1
fi
printf 'calyx-ipc\n  Status: Enabled\n  Type: http\n'
"#,
    )
    .unwrap();
    chmod(&copilot, 0o755);
    bin
}

#[test]
fn setup_refuses_a_copilot_config_the_installed_copilot_drops_and_leaves_it_alone() {
    let env = Env::new(true);
    let bin = fake_copilot(env.dir.path());
    let log = env.dir.path().join("fake-copilot.log");
    let path = std::ffi::OsString::from(format!("{}:/usr/bin:/bin", bin.display()));
    let config = env.home().join(".copilot/mcp-config.json");
    fs::create_dir_all(config.parent().unwrap()).unwrap();
    fs::write(&config, "{\"mcpServers\": {}}\n").unwrap();
    let out = setup_with_fake(&env, &path, "COPILOT", &log, "copilot", false);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("{}: ", config.display()))
            && err.contains("(GitHub Copilot CLI 1.0.102.) rejects the config calyx would write")
            && err.contains("drops calyx's entry mcpServers.calyx-ipc")
            && err.contains("Error: Server \"calyx-ipc\" not found."),
        "{err}"
    );
    assert_eq!(
        fs::read_to_string(&config).unwrap(),
        "{\"mcpServers\": {}}\n"
    );
    assert!(!env.home().join(".copilot/hooks/calyx.json").exists());
    for home in fs::read_to_string(&log).unwrap().lines() {
        assert!(!Path::new(home).starts_with(env.home()), "{home}");
        assert!(!Path::new(home).exists(), "the copy is removed: {home}");
    }

    let out = setup_with_fake(&env, &path, "COPILOT", &log, "copilot", true);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("(GitHub Copilot CLI 1.0.102.) loaded mcp-config.json"),
        "{}",
        text(&out.stdout)
    );
    assert!(json(&config)["mcpServers"]["calyx-ipc"].is_object());
}

#[test]
fn a_codex_that_hangs_is_killed_and_setup_goes_on_with_a_warning() {
    let env = Env::new(true);
    let bin = fake_codex(env.dir.path());
    let log = env.dir.path().join("fake-codex.log");
    let path = std::ffi::OsString::from(format!("{}:/usr/bin:/bin", bin.display()));
    let hang = std::ffi::OsString::from("1");
    let extra = [
        ("PATH", path.as_os_str()),
        ("FAKE_CODEX_LOG", log.as_os_str()),
        ("FAKE_CODEX_HANG", hang.as_os_str()),
    ];
    let started = Instant::now();
    let out = run_bounded(
        &env,
        &["setup", "--yes", "--agent", "codex"],
        &extra,
        DEADLINE,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("Codex: warning: could not check the new config with the CLI")
            && stdout.contains("`codex mcp list` did not finish within 8 s and was killed"),
        "{stdout}"
    );
    assert!(fs::read_to_string(env.home().join(".codex/config.toml"))
        .unwrap()
        .contains("[mcp_servers.calyx-ipc]"));
}

/// Issue 16: `calyx-mcp` (the hosted servers' tools, `/mcp-hosted`) is written beside
/// `calyx-ipc` with the same headers and shown in the dry run; doctor names both; with
/// `[mcp] host_servers = false` a dry run shows it going, doctor says setup would remove it,
/// uninstall still takes both out (the user's bytes come back), and a new install writes
/// `calyx-ipc` alone.
#[test]
fn calyx_mcp_beside_calyx_ipc_and_host_servers_false_takes_it_out() {
    let env = Env::new(true);
    let before = env.files();
    let out = env.calyx(&["setup", "--dry-run", "--agent", "claude-code,codex"]);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("\"calyx-mcp\": {") && stdout.contains("[mcp_servers.calyx-mcp]"),
        "{stdout}"
    );
    let out = env.calyx(&["setup", "--yes", "--agent", "claude-code,codex"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let servers = &json(&env.home().join(".claude.json"))["mcpServers"];
    assert_eq!(
        servers["calyx-mcp"]["url"],
        "http://127.0.0.1:45111/mcp-hosted"
    );
    assert_eq!(servers["calyx-mcp"]["type"], "http");
    assert_eq!(
        servers["calyx-mcp"]["headers"],
        servers["calyx-ipc"]["headers"]
    );
    let codex = fs::read_to_string(env.home().join(".codex/config.toml")).unwrap();
    assert!(
        codex.contains("[mcp_servers.calyx-mcp]\nurl = \"http://127.0.0.1:45111/mcp-hosted\"\n"),
        "{codex}"
    );
    let doctor = env.calyx(&["doctor", "--agent", "claude-code"]);
    let report = text(&doctor.stdout);
    assert!(
        report.contains("  MCP entries: calyx-ipc present; calyx-mcp present\n"),
        "{report}"
    );

    let config = env.home().join(".config/calyx/config.toml");
    fs::create_dir_all(config.parent().unwrap()).unwrap();
    fs::write(&config, "[mcp]\nhost_servers = false\n").unwrap();
    let installed = env.files();
    let out = env.calyx(&["setup", "--dry-run", "--agent", "claude-code,codex"]);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("-    \"calyx-mcp\": {") && stdout.contains("-[mcp_servers.calyx-mcp]"),
        "{stdout}"
    );
    assert!(!stdout.contains("-    \"calyx-ipc\": {"), "{stdout}");
    assert_eq!(env.files(), installed, "a dry run writes nothing");
    let doctor = env.calyx(&["doctor", "--agent", "claude-code"]);
    let report = text(&doctor.stdout);
    assert!(
        report.contains("calyx-mcp present, but [mcp] host_servers = false: setup removes it")
            && report.contains("installed but stale"),
        "{report}"
    );

    let out = env.calyx(&["setup", "--uninstall", "--yes"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    fs::remove_file(&config).unwrap();
    fs::remove_dir(config.parent().unwrap()).unwrap();
    fs::remove_dir(config.parent().unwrap().parent().unwrap()).unwrap();
    assert_eq!(env.files(), before, "uninstall removes both entries");

    fs::create_dir_all(config.parent().unwrap()).unwrap();
    fs::write(&config, "[mcp]\nhost_servers = false\n").unwrap();
    let out = env.calyx(&["setup", "--yes", "--agent", "claude-code"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let servers = &json(&env.home().join(".claude.json"))["mcpServers"];
    assert!(servers["calyx-ipc"].is_object() && servers.get("calyx-mcp").is_none());
    let doctor = env.calyx(&["doctor", "--agent", "claude-code"]);
    let report = text(&doctor.stdout);
    assert!(
        report.contains("calyx-ipc present; calyx-mcp not written ([mcp] host_servers = false)")
            && report.contains("installed and current"),
        "{report}"
    );
}
