//! Codex (codex-cli 0.171.0). `codex mcp list` loads and validates `$CODEX_HOME/config.toml`
//! (TOML syntax and every typed key, `[hooks]` tables included) before it lists anything, and
//! refuses a bad file with `Error: failed to load bootstrap configuration` and exit 1, in about
//! half a second; it calls no model, opens no network connection and starts no MCP server
//! (it only lists them). So calyx runs it with `CODEX_HOME` (and `HOME`, and the working
//! directory: no project `.codex/` is read) pointed at the private copy. Codex's `hooks.json`
//! is copied too but `mcp list` does not read it (a broken one passes); `codex doctor` would,
//! but it probes the network for ~10 s.

use std::path::Path;
use std::time::Duration;

use crate::setup::{self as plans, Ctx, Plan};
use crate::AgentKind;

use super::{isolated, Load, Scratch};
use crate::setup::probe;

/// `codex mcp list` took 0.3–0.7 s here; a Codex slower than this is reported as unchecked.
const CHECK_TIMEOUT: Duration = Duration::from_secs(8);

/// Pointed at the private copy: Codex's home and the HOME it would find `~/.codex` in.
pub(super) const VARS: &[&str] = &["CODEX_HOME", "HOME"];

/// What an accepting Codex loaded (the verdict's text).
pub(super) const LOADED: &str =
    "loaded config.toml (`codex mcp list`; it does not read hooks.json)";

pub(super) fn load(bin: &Path, ctx: &Ctx, plan: Option<&Plan>) -> Load {
    let dir = plans::config_dir(AgentKind::Codex, ctx);
    let scratch = Scratch::new().map_err(|e| format!("no temporary directory: {e}"))?;
    scratch.copy_after(&dir, &["config.toml", "hooks.json"], plan)?;
    let mut cmd = isolated(bin, &scratch.0, VARS);
    cmd.args(["mcp", "list"]).env("RUST_BACKTRACE", "0");
    let ran = probe::run(cmd, CHECK_TIMEOUT).map_err(|e| format!("`codex mcp list` {e}"))?;
    let stderr = scratch.shown(&ran.stderr, &dir);
    if ran.code == Some(0) {
        return Ok(None);
    }
    if stderr.contains("unrecognized subcommand") || stderr.contains("unexpected argument") {
        return Err("this Codex has no `codex mcp list`, so it was not asked (skipped)".into());
    }
    if stderr.contains("failed to load") || stderr.contains("config.toml") {
        return Ok(Some((dir.join("config.toml"), complaint(&stderr))));
    }
    Err(format!(
        "`codex mcp list` exited {} ({})",
        ran.code.map_or("on a signal".into(), |c| c.to_string()),
        probe::first_line(&stderr).unwrap_or_default()
    ))
}

/// Codex's error from its `Error:` line on, without its own warnings (it warns that it makes
/// no helper links under /tmp) or a backtrace.
fn complaint(stderr: &str) -> String {
    let from = stderr.find("Error:").unwrap_or(0);
    let text = &stderr[from..];
    let text = text.split("Stack backtrace:").next().unwrap_or(text);
    text.lines()
        .filter(|l| !l.starts_with("WARNING:"))
        .map(str::trim_end)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::complaint;

    /// The text codex-cli 0.171.0 printed for a config.toml with `url = 5`.
    #[test]
    fn complaint_keeps_codex_error_and_drops_warning_and_backtrace() {
        let stderr = "WARNING: proceeding, even though we could not create PATH aliases: Refusing to create helper binaries under temporary dir \"/tmp\"\nError: failed to load bootstrap configuration\n\nCaused by:\n    invalid type: integer `5`, expected a string\n    in `mcp_servers.calyx-ipc.url`\n    \n\nStack backtrace:\n   0: <unknown>\n";
        assert_eq!(
            complaint(stderr),
            "Error: failed to load bootstrap configuration\nCaused by:\n    invalid type: integer `5`, expected a string\n    in `mcp_servers.calyx-ipc.url`"
        );
    }
}
