//! Copilot CLI (1.0.102). `copilot mcp get calyx-ipc` loads `$COPILOT_HOME/mcp-config.json`
//! and validates it: a file it cannot use fails with `Error: mcpServers: Required` (or the
//! like), exit 1; an entry of the wrong shape is dropped silently, so `get` answers `Error:
//! Server "calyx-ipc" not found.`, exit 1. It starts no MCP server (`mcp list` does not either)
//! and calls no model, in 0.6–1 s, no network (verified in a network namespace). calyx runs
//! it with `COPILOT_HOME` and the working directory (no workspace `.mcp.json`) at the private
//! copy. Not HOME: Copilot unpacks ~235 MB into `~/.cache/copilot/pkg` on its first run in a
//! new HOME, and that cache is Copilot's own. Its hook file (hooks/calyx.json) is not checked:
//! no command reads hooks without a session.

use std::path::Path;
use std::time::Duration;

use crate::setup::{self as plans, Ctx, Plan};
use crate::AgentKind;

use super::claude::holds_calyx_entry;
use super::{isolated, text_after, Load, Scratch};
use crate::setup::probe;

/// `copilot mcp get` took 0.6–1 s here.
const CHECK_TIMEOUT: Duration = Duration::from_secs(10);

/// Pointed at the private copy.
pub(super) const VARS: &[&str] = &["COPILOT_HOME"];

/// What an accepting Copilot loaded (the verdict's text).
pub(super) const LOADED: &str =
    "loaded mcp-config.json and its calyx-ipc entry, if any (`copilot mcp get calyx-ipc`; hooks are not checked)";

pub(super) fn load(bin: &Path, ctx: &Ctx, plan: Option<&Plan>) -> Load {
    let dir = plans::config_dir(AgentKind::Copilot, ctx);
    let file = dir.join("mcp-config.json");
    let has_entry = text_after(&file, plan)?
        .as_deref()
        .is_some_and(holds_calyx_entry);
    let scratch = Scratch::new().map_err(|e| format!("no temporary directory: {e}"))?;
    scratch.copy_after(&dir, &["mcp-config.json"], plan)?;
    let mut cmd = isolated(bin, &scratch.0, VARS);
    cmd.args(["mcp", "get", "calyx-ipc"]);
    let ran = probe::run(cmd, CHECK_TIMEOUT).map_err(|e| format!("`copilot mcp get` {e}"))?;
    let stderr = scratch.shown(&format!("{}\n{}", ran.stderr, ran.stdout), &dir);
    if ran.code == Some(0) && ran.stdout.contains("calyx-ipc") {
        return Ok(None);
    }
    let Some(error) = stderr.lines().find(|l| l.starts_with("Error: ")) else {
        return Err(format!(
            "`copilot mcp get` exited {} ({})",
            ran.code.map_or("on a signal".into(), |c| c.to_string()),
            probe::first_line(&stderr).unwrap_or_default()
        ));
    };
    if error.contains("\"calyx-ipc\" not found") {
        if !has_entry {
            // Nothing of calyx's to take (doctor before an install): the file itself loaded.
            return Ok(None);
        }
        return Ok(Some((
            file,
            format!("it drops calyx's entry mcpServers.calyx-ipc as invalid: {error}"),
        )));
    }
    if error.contains("unknown command") || error.contains("too many arguments") {
        return Err("this Copilot has no `copilot mcp get`, so it was not asked (skipped)".into());
    }
    Ok(Some((file, error.trim().to_string())))
}
