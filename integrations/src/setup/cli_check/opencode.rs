//! OpenCode (1.18.33). `opencode debug config --pure` loads the global config
//! (`$XDG_CONFIG_HOME/opencode/opencode.json` or `.jsonc`), validates it against OpenCode's
//! schema and prints the resolved config; a file that is not JSON(C) fails with `Error: Config
//! file at FILE is not valid JSON(C)` and an `--- Errors ---` list, one of the wrong shape with
//! `Error: Configuration is invalid at FILE` and a `↳ KEY` line per problem, exit 1, in about
//! 1.3 s, no network (verified in a network namespace). `--pure` keeps OpenCode from loading
//! plugins: without it, a plugin directory made it try to install the plugins' dependencies
//! (a 40 s+ stall offline). `opencode mcp list` is not used: it starts every local MCP server
//! for its status (30 s wait each). calyx runs it with HOME and every XDG directory at the
//! private copy. The plugin file itself (plugins/calyx.js) is not checked.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::setup::{self as plans, Ctx, Plan};
use crate::AgentKind;

use super::{isolated, Load, Scratch};
use crate::setup::probe;

/// `debug config` took 1–1.3 s here.
const CHECK_TIMEOUT: Duration = Duration::from_secs(10);

/// Pointed at the private copy (the config is read from `XDG_CONFIG_HOME/opencode`; the others
/// are where OpenCode writes logs, caches and state).
pub(super) const VARS: &[&str] = &[
    "HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    "XDG_STATE_HOME",
];

/// What an accepting OpenCode loaded (the verdict's text).
pub(super) const LOADED: &str = "loaded opencode.json (`opencode debug config --pure`)";

pub(super) fn load(bin: &Path, ctx: &Ctx, plan: Option<&Plan>) -> Load {
    let dir = plans::config_dir(AgentKind::OpenCode, ctx);
    let scratch = Scratch::new().map_err(|e| format!("no temporary directory: {e}"))?;
    // The copy keeps the directory's own name under the private XDG_CONFIG_HOME.
    let subdir = PathBuf::from(dir.file_name().unwrap_or_default());
    for name in ["opencode.json", "opencode.jsonc"] {
        let copy = subdir.join(name).display().to_string();
        scratch.copy_file_after(&dir.join(name), &copy, plan)?;
    }
    let mut cmd = isolated(bin, &scratch.0, VARS);
    cmd.args(["debug", "config", "--pure"]);
    let ran = probe::run(cmd, CHECK_TIMEOUT).map_err(|e| format!("`opencode debug config` {e}"))?;
    // The copy is XDG_CONFIG_HOME/opencode/…: the user's directory once that is replaced.
    let stderr = strip_ansi(&scratch.shown(
        &ran.stderr.replace(
            &scratch.0.join(&subdir).display().to_string(),
            &dir.display().to_string(),
        ),
        &dir,
    ));
    if ran.code == Some(0) {
        return Ok(None);
    }
    if let Some(complaint) = complaint(&stderr) {
        let file = ["opencode.json", "opencode.jsonc"]
            .iter()
            .map(|n| dir.join(n))
            .find(|p| complaint.contains(&p.display().to_string()))
            .unwrap_or_else(|| dir.join("opencode.json"));
        return Ok(Some((file, complaint)));
    }
    Err(format!(
        "`opencode debug config` exited {} ({})",
        ran.code.map_or("on a signal".into(), |c| c.to_string()),
        probe::first_line(&stderr).unwrap_or_default()
    ))
}

/// OpenCode's complaint: its `Error:` line and its `↳` lines or `--- Errors ---` list, never
/// the `--- JSONC Input ---` block it also prints (the whole file: the token).
fn complaint(stderr: &str) -> Option<String> {
    let first = stderr
        .lines()
        .find(|l| l.contains("Configuration is invalid") || l.contains("is not valid JSON"))?;
    let mut out = vec![first.trim().trim_start_matches("Error: ").to_string()];
    let mut in_errors = false;
    for line in stderr.lines().map(str::trim) {
        match line {
            "--- Errors ---" => in_errors = true,
            "--- End ---" => in_errors = false,
            l if l.starts_with('↳') || (in_errors && !l.is_empty()) => out.push(l.to_string()),
            _ => {}
        }
    }
    out.dedup();
    Some(out.join("\n"))
}

/// `text` without terminal colour sequences (OpenCode colours its errors even with NO_COLOR).
fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{complaint, strip_ansi};

    /// What opencode 1.18.33 printed for `"url": 5` and for a file cut short.
    #[test]
    fn complaint_keeps_the_errors_and_never_the_file() {
        let shape = strip_ansi("\u{1b}[91m\u{1b}[1mError: \u{1b}[0mConfiguration is invalid at /h/opencode/opencode.json\n↳ Expected string, got 5 mcp.calyx-ipc.url\n↳ Missing key mcp.calyx-ipc.enabled\n");
        assert_eq!(
            complaint(&shape).as_deref(),
            Some("Configuration is invalid at /h/opencode/opencode.json\n↳ Expected string, got 5 mcp.calyx-ipc.url\n↳ Missing key mcp.calyx-ipc.enabled")
        );
        let json = "Error: Config file at /h/opencode/opencode.json is not valid JSON(C): \n--- JSONC Input ---\n{\"mcp\":{\"t\":\"Bearer secret\"\n\n--- Errors ---\nCloseBraceExpected at line 2, column 1\nCloseBraceExpected at line 2, column 1\n--- End ---\n";
        let got = complaint(json).unwrap_or_default();
        assert!(!got.contains("secret"), "{got}");
        assert_eq!(
            got,
            "Config file at /h/opencode/opencode.json is not valid JSON(C):\nCloseBraceExpected at line 2, column 1"
        );
    }
}
