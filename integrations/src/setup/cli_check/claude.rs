//! Claude Code (2.1.197). `claude mcp get calyx-ipc` loads `.claude.json` (from
//! `CLAUDE_CONFIG_DIR` when set) and validates each MCP entry against its schema: a file that
//! is not JSON fails with `Configuration error in FILE: …` and exit 1, and an entry it does
//! not take is dropped with a warning that only `mcp list` shows, so `get` answers `No MCP
//! server named "calyx-ipc"` and exit 1. It calls no model, in about a second. `claude mcp
//! list` is not used: it starts every stdio MCP server in the file to check its health (the
//! user's other servers, with a 30 s wait each). `get` connects only to calyx's own entry,
//! the local endpoint. So calyx runs `get` with `CLAUDE_CONFIG_DIR` and `HOME` (and the
//! working directory: no project `.mcp.json` or `.claude/`) pointed at the private copy, with
//! `.claude.json` copied to where Claude then reads it. settings.json is copied too, but not
//! checked: neither command reads its hooks (a settings.json that is not JSON passes).

use std::path::Path;
use std::time::Duration;

use crate::setup::{self as plans, Ctx, Plan};
use crate::AgentKind;

use super::{isolated, text_after, Load, Scratch};
use crate::setup::probe;

/// `claude mcp get` took 0.7–1.5 s here; a Claude slower than this is reported as unchecked.
const CHECK_TIMEOUT: Duration = Duration::from_secs(8);

/// Pointed at the private copy: Claude's config directory (and so its `.claude.json`) and
/// HOME (no `~/.claude.json` of the user's is read or rewritten).
pub(super) const VARS: &[&str] = &["CLAUDE_CONFIG_DIR", "HOME"];

/// What an accepting Claude Code loaded (the verdict's text).
pub(super) const LOADED: &str =
    "loaded .claude.json and its calyx-ipc entry, if any (`claude mcp get calyx-ipc`; it does not check settings.json)";

pub(super) fn load(bin: &Path, ctx: &Ctx, plan: Option<&Plan>) -> Load {
    let dir = plans::config_dir(AgentKind::ClaudeCode, ctx);
    let mcp = plans::claude_mcp_file(ctx);
    let after = text_after(&mcp, plan)?;
    let scratch = Scratch::new().map_err(|e| format!("no temporary directory: {e}"))?;
    scratch.copy_file_after(&mcp, ".claude.json", plan)?;
    scratch.copy_after(&dir, &["settings.json"], plan)?;
    let mut cmd = isolated(bin, &scratch.0, VARS);
    cmd.args(["mcp", "get", "calyx-ipc"]);
    let ran = probe::run(cmd, CHECK_TIMEOUT).map_err(|e| format!("`claude mcp get` {e}"))?;
    // Its messages name the copy of .claude.json first (it is not in the config directory).
    let copy = scratch.0.join(".claude.json").display().to_string();
    let stderr = scratch.shown(&ran.stderr.replace(&copy, &mcp.display().to_string()), &dir);
    let has_entry = after.as_deref().is_some_and(holds_calyx_entry);
    if ran.code == Some(0) && ran.stdout.contains("calyx-ipc:") {
        return Ok(None);
    }
    if let Some(line) = stderr
        .lines()
        .find(|l| l.starts_with("Configuration error in"))
    {
        let file = if line.contains("settings.json") {
            dir.join("settings.json")
        } else {
            mcp
        };
        return Ok(Some((file, line.trim().to_string())));
    }
    if stderr.contains("No MCP server named \"calyx-ipc\"") {
        if has_entry {
            return Ok(Some((
                mcp,
                format!(
                    "it drops calyx's entry mcpServers.calyx-ipc as invalid (`claude mcp list` says why): {}",
                    probe::first_line(&stderr).unwrap_or_default()
                ),
            )));
        }
        // Nothing of calyx's to take (doctor before an install): the file itself loaded.
        return Ok(None);
    }
    if stderr.contains("unknown command") || stderr.contains("unknown option") {
        return Err(
            "this Claude Code has no `claude mcp get`, so it was not asked (skipped)".into(),
        );
    }
    Err(format!(
        "`claude mcp get` exited {} ({})",
        ran.code.map_or("on a signal".into(), |c| c.to_string()),
        probe::first_line(&stderr).unwrap_or_default()
    ))
}

/// Whether `text` (a .claude.json, or Copilot's mcp-config.json) holds an
/// `mcpServers.calyx-ipc` entry.
pub(super) fn holds_calyx_entry(text: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| v.get("mcpServers")?.get("calyx-ipc").cloned())
        .is_some()
}

#[cfg(test)]
mod tests {
    use super::holds_calyx_entry;

    #[test]
    fn calyx_entry_is_found_only_under_mcp_servers() {
        assert!(holds_calyx_entry(
            r#"{"mcpServers":{"calyx-ipc":{"type":"http"}}}"#
        ));
        assert!(!holds_calyx_entry(r#"{"projects":{"calyx-ipc":{}}}"#));
        assert!(!holds_calyx_entry("{"));
    }
}
