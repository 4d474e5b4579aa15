//! Asking the installed agent CLI itself whether it accepts the config calyx is about to write
//! (setup) or has written (doctor). Parsing a file with calyx's own editors proves it is valid
//! TOML or JSON, not that the CLI takes it: Kimi validates its whole config.toml with pydantic
//! and refuses to start over one unknown hook event, which is how `calyx setup --agent kimi`
//! once left Kimi unable to start. So where the CLI offers a way, the files as they would be
//! are put in a private temporary directory and the CLI's own loader is run on them, bounded in
//! time; a rejection stops setup for that CLI with the CLI's complaint, and nothing is written.
//!
//! What can be checked this way, per CLI (docs/setup.md, "Checked by the CLI itself"):
//! - Kimi (kimi-cli 1.52.0): yes. `kimi --version` loads no config, and every command that does
//!   either starts a session (which calls the model) or takes the config as a command-line
//!   argument (which other local users can read in /proc); so calyx runs `load_config` from the
//!   installed `kimi_cli` package, with the Python interpreter that runs the `kimi` on PATH and
//!   `KIMI_SHARE_DIR` pointed at the temporary copy, and validates mcp.json with the
//!   `fastmcp.mcp_config.MCPConfig` model that `kimi mcp list` uses. That is Kimi's own
//!   validation, not a reimplementation of it.
//! - The others: not yet (see docs/setup.md for what each offers).

use std::fs;
use std::io::Read;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use calyx_integrations::config_edit::{fsio, regular};
use calyx_integrations::setup::{self as plans, Ctx, Plan};
use calyx_integrations::AgentKind;

use super::probe;

/// How long the CLI's loader may take (Python's start plus pydantic's import: 1–4 s here on a
/// loaded 2-core machine); it is killed after.
const CHECK_TIMEOUT: Duration = Duration::from_secs(15);

/// What the CLI said about the config.
#[derive(Debug)]
pub enum Verdict {
    /// It loaded every file. The text says what ran (the CLI's version).
    Accepted(String),
    /// It refused `file` (the real path) with `complaint`, its own words.
    Rejected {
        file: PathBuf,
        cli: String,
        complaint: String,
    },
    /// It could not be asked; the text says why.
    Unchecked(String),
}

/// Checks the config of `kind` as `plan` would leave it (`None`: as it is on disk), when the
/// CLI is installed (on PATH) and calyx knows how to ask it. `None`: nothing to check.
pub fn check(kind: AgentKind, ctx: &Ctx, plan: Option<&Plan>) -> Option<Verdict> {
    match kind {
        AgentKind::Kimi => {
            let bin = super::find_binary(kind)?;
            Some(kimi(&bin, ctx, plan))
        }
        _ => None,
    }
}

/// The Python program that loads Kimi's files with Kimi's own code. Exit 3: rejected (stderr:
/// the file's name, then Kimi's message); 4: kimi_cli is not importable from this interpreter.
const KIMI_LOADER: &str = r#"
import json, sys
from pathlib import Path
share = Path(sys.argv[1])
try:
    from kimi_cli.config import load_config
    from kimi_cli.exception import ConfigError
except Exception as e:
    print("kimi_cli cannot be imported by %s: %s" % (sys.executable, e), file=sys.stderr)
    sys.exit(4)
if (share / "config.toml").exists():
    try:
        load_config(share / "config.toml")
    except ConfigError as e:
        print("config.toml", file=sys.stderr)
        print(e, file=sys.stderr)
        sys.exit(3)
mcp = share / "mcp.json"
if mcp.exists():
    try:
        from fastmcp.mcp_config import MCPConfig
    except Exception as e:
        print("fastmcp cannot be imported: %s" % e, file=sys.stderr)
        sys.exit(4)
    try:
        MCPConfig.model_validate(json.loads(mcp.read_text(encoding="utf-8")))
    except Exception as e:
        print("mcp.json", file=sys.stderr)
        print("Invalid MCP config in '%s': %s" % (mcp, e), file=sys.stderr)
        sys.exit(3)
print("calyx-check: ok")
"#;

fn kimi(bin: &Path, ctx: &Ctx, plan: Option<&Plan>) -> Verdict {
    let version = std::thread::scope(|s| {
        let version = s.spawn(|| super::doctor::version(bin));
        let verdict = kimi_load(bin, ctx, plan);
        let version = version.join().ok().flatten();
        (verdict, version)
    });
    let (verdict, version) = version;
    let cli = match &version {
        Some(v) => format!("{} ({v})", bin.display()),
        None => format!("{} (version unknown)", bin.display()),
    };
    match verdict {
        Ok(None) => Verdict::Accepted(format!("{cli} loaded config.toml and mcp.json")),
        Ok(Some((file, complaint))) => Verdict::Rejected {
            file,
            cli,
            complaint,
        },
        Err(why) => Verdict::Unchecked(format!("{cli}: {why}")),
    }
}

/// Runs Kimi's loader on the files as they would be. Ok(None): accepted; Ok(Some): rejected.
fn kimi_load(
    bin: &Path,
    ctx: &Ctx,
    plan: Option<&Plan>,
) -> Result<Option<(PathBuf, String)>, String> {
    let python = interpreter_of(bin)
        .ok_or_else(|| format!("no Python interpreter found for {}", bin.display()))?;
    let dir = plans::config_dir(AgentKind::Kimi, ctx);
    let scratch = Scratch::new().map_err(|e| format!("no temporary directory: {e}"))?;
    for name in ["config.toml", "mcp.json"] {
        let real = dir.join(name);
        if let Some(text) = text_after(&real, plan)? {
            scratch
                .write(name, &text)
                .map_err(|e| format!("could not copy {name}: {e}"))?;
        }
    }
    let mut cmd = Command::new(&python);
    cmd.arg("-c")
        .arg(KIMI_LOADER)
        .arg(&scratch.0)
        .env("KIMI_SHARE_DIR", &scratch.0);
    let ran = probe::run(cmd, CHECK_TIMEOUT).map_err(|e| format!("its loader {e}"))?;
    let shown = |text: &str| {
        text.replace(&scratch.0.display().to_string(), &dir.display().to_string())
            .trim()
            .to_string()
    };
    match ran.code {
        Some(0) if ran.stdout.contains("calyx-check: ok") => Ok(None),
        Some(3) => {
            let stderr = shown(&ran.stderr);
            let (name, complaint) = stderr.split_once('\n').unwrap_or(("config.toml", &stderr));
            Ok(Some((dir.join(name.trim()), complaint.trim().to_string())))
        }
        code => Err(format!(
            "its loader exited {} ({})",
            code.map_or("on a signal".into(), |c| c.to_string()),
            probe::first_line(&shown(&ran.stderr)).unwrap_or_default()
        )),
    }
}

/// The text `path` will have: the plan's new text when it changes the file (`None` when it
/// deletes it), else what is on disk.
fn text_after(path: &Path, plan: Option<&Plan>) -> Result<Option<String>, String> {
    if let Some(change) = plan.and_then(|p| p.changes.iter().find(|c| c.path == path)) {
        return Ok(change.after.clone());
    }
    fsio::read_text(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// The Python interpreter that runs the `kimi` launcher at `bin`: an absolute `python*` path
/// named in its first 4 KiB (a pip console script's `#!/…/python`, pip's `exec '/…/python'`
/// trampoline for long paths, a wrapper's `exec /…/python -m kimi_cli.cli`), else `python3` or
/// `python` beside the launcher (a venv's `bin/`).
fn interpreter_of(bin: &Path) -> Option<PathBuf> {
    let real = fs::canonicalize(bin).ok()?;
    let mut head = Vec::new();
    if let Ok(Some((file, _))) = regular::open(&real, bin) {
        let _ = file.take(4096).read_to_end(&mut head);
    }
    let head = String::from_utf8_lossy(&head);
    if head.starts_with("#!") {
        let found = head
            .split(|c: char| c.is_whitespace() || c == '\'' || c == '"' || c == '!')
            .map(Path::new)
            .find(|p| p.is_absolute() && is_python(p));
        if let Some(p) = found {
            return Some(p.to_path_buf());
        }
    }
    let dir = real.parent()?;
    ["python3", "python"]
        .iter()
        .map(|n| dir.join(n))
        .find(|p| is_python(p))
}

fn is_python(p: &Path) -> bool {
    p.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("python"))
        && fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// A private temporary directory (0700; its files 0600: mcp.json holds the token), removed
/// when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> std::io::Result<Self> {
        let path = std::env::temp_dir().join(format!("calyx-check-{}", uuid::Uuid::new_v4()));
        fs::DirBuilder::new().mode(0o700).create(&path)?;
        Ok(Self(path))
    }

    fn write(&self, name: &str, text: &str) -> std::io::Result<()> {
        use std::io::Write;
        fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(self.0.join(name))?
            .write_all(text.as_bytes())
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}
