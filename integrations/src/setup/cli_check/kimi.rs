//! Kimi (kimi-cli 1.52.0). `kimi --version` loads no config, and every command that does
//! either starts a session (which calls the model) or takes the config as a command-line
//! argument (which other local users can read in /proc); so calyx runs `load_config` from the
//! installed `kimi_cli` package, with the Python interpreter that runs the `kimi` on PATH and
//! `KIMI_SHARE_DIR` pointed at the temporary copy, and validates mcp.json with the
//! `fastmcp.mcp_config.MCPConfig` model that `kimi mcp list` uses. That is Kimi's own
//! validation, not a reimplementation of it.

use std::fs;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::config_edit::regular;
use crate::setup::{self as plans, Ctx, Plan};
use crate::AgentKind;

use super::{isolated, Load, Scratch};
use crate::setup::probe;

/// Pointed at the private copy: Kimi's share directory. Not HOME: a `pip install --user`
/// Kimi imports its package from `~/.local`.
pub(super) const VARS: &[&str] = &["KIMI_SHARE_DIR"];

/// How long the CLI's loader may take (Python's start plus pydantic's import: 1–4 s here on a
/// loaded 2-core machine); it is killed after.
const CHECK_TIMEOUT: Duration = Duration::from_secs(15);

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

/// Runs Kimi's loader on the files as they would be. Ok(None): accepted; Ok(Some): rejected.
pub(super) fn load(bin: &Path, ctx: &Ctx, plan: Option<&Plan>) -> Load {
    let python = interpreter_of(bin)
        .ok_or_else(|| format!("no Python interpreter found for {}", bin.display()))?;
    let dir = plans::config_dir(AgentKind::Kimi, ctx);
    let scratch = Scratch::new().map_err(|e| format!("no temporary directory: {e}"))?;
    scratch.copy_after(&dir, &["config.toml", "mcp.json"], plan)?;
    let mut cmd = isolated(&python, &scratch.0, VARS);
    cmd.arg("-c").arg(KIMI_LOADER).arg(&scratch.0);
    let ran = probe::run(cmd, CHECK_TIMEOUT).map_err(|e| format!("its loader {e}"))?;
    let shown = |text: &str| scratch.shown(text, &dir);
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
