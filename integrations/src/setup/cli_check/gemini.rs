//! Gemini CLI (0.61.0). `gemini mcp list` loads `~/.gemini/settings.json` and validates it
//! against Gemini's settings schema (MCP entries and hooks included) before it lists the
//! servers. A file that is not JSON: `Error in FILE: …`, exit 52. A file with keys of the
//! wrong shape: `Invalid configuration in FILE:` and one `Error in: KEY` paragraph per key, on
//! stderr, but exit 0 (Gemini warns and starts without those settings); calyx reads that text
//! as a rejection too, since the CLI would then run without calyx's entries. In a folder Gemini
//! does not trust (the copy) it starts no MCP server. About 1.5 s idle and 4–6.5 s on a loaded
//! 2-core machine (Node's start), no network (verified in a network namespace). So calyx runs
//! it with `HOME` and `GEMINI_CLI_HOME` (which 0.61 honours over HOME) and the working
//! directory at the private copy.

use std::path::Path;
use std::time::Duration;

use crate::setup::{self as plans, Ctx, Plan};
use crate::AgentKind;

use super::{isolated, Load, Scratch};
use crate::setup::probe;

/// Gemini's start is slow (Node, a large bundle): 1.5 s idle, 6.5 s seen under load.
const CHECK_TIMEOUT: Duration = Duration::from_secs(15);

/// Pointed at the private copy: HOME (`~/.gemini`) and `GEMINI_CLI_HOME`, which Gemini 0.61
/// reads instead of HOME when set.
pub(super) const VARS: &[&str] = &["HOME", "GEMINI_CLI_HOME"];

/// What an accepting Gemini loaded (the verdict's text).
pub(super) const LOADED: &str = "loaded settings.json (`gemini mcp list`)";

pub(super) fn load(bin: &Path, ctx: &Ctx, plan: Option<&Plan>) -> Load {
    let dir = plans::config_dir(AgentKind::Gemini, ctx);
    let file = dir.join("settings.json");
    let scratch = Scratch::new().map_err(|e| format!("no temporary directory: {e}"))?;
    scratch.copy_file_after(&file, ".gemini/settings.json", plan)?;
    let mut cmd = isolated(bin, &scratch.0, VARS);
    cmd.args(["mcp", "list"]);
    let ran = probe::run(cmd, CHECK_TIMEOUT).map_err(|e| format!("`gemini mcp list` {e}"))?;
    // The copy is HOME/.gemini/settings.json: its messages name the user's file once the
    // scratch path is replaced by the user's home.
    let stderr = scratch.shown(&ran.stderr, dir.parent().unwrap_or(&dir));
    if let Some(complaint) = complaint(&stderr) {
        return Ok(Some((file, complaint)));
    }
    if ran.code == Some(0) {
        return Ok(None);
    }
    Err(format!(
        "`gemini mcp list` exited {} ({})",
        ran.code.map_or("on a signal".into(), |c| c.to_string()),
        probe::first_line(&stderr).unwrap_or_default()
    ))
}

/// Gemini's complaint about its settings: from `Error in FILE:` (not JSON) or `Invalid
/// configuration in FILE:` (wrong shapes) up to its `Please fix the configuration` line.
fn complaint(stderr: &str) -> Option<String> {
    let start = stderr
        .lines()
        .position(|l| l.starts_with("Invalid configuration in ") || l.starts_with("Error in /"))?;
    let lines: Vec<&str> = stderr
        .lines()
        .skip(start)
        .take_while(|l| !l.starts_with("Please fix the configuration"))
        .map(str::trim_end)
        .filter(|l| !l.is_empty())
        .collect();
    Some(lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::complaint;

    /// What gemini 0.61.0 printed for `"httpUrl": 5` and for a file cut short.
    #[test]
    fn complaint_is_gemini_paragraph_up_to_its_advice() {
        let shape = "Invalid configuration in /h/.gemini/settings.json:\n\nError in: mcpServers.calyx-ipc.httpUrl\n    Expected string, received number\nExpected: string, but received: number\n\nPlease fix the configuration.\nSee: https://geminicli.com/docs/reference/configuration/\nConfigured MCP servers:\n";
        assert_eq!(
            complaint(shape).as_deref(),
            Some("Invalid configuration in /h/.gemini/settings.json:\nError in: mcpServers.calyx-ipc.httpUrl\n    Expected string, received number\nExpected: string, but received: number")
        );
        let json = "Error in /h/.gemini/settings.json: Expected property name or '}' in JSON at position 16\nPlease fix the configuration file(s) and try again.\n";
        assert_eq!(
            complaint(json).as_deref(),
            Some("Error in /h/.gemini/settings.json: Expected property name or '}' in JSON at position 16")
        );
        assert_eq!(complaint("Configured MCP servers:\n"), None);
    }
}
