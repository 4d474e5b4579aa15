//! Hermes (hermes-agent 0.19.0). Hermes never refuses to start over its config.yaml: a file it
//! cannot parse is replaced by the defaults with a warning on stderr (`Failed to parse FILE:
//! … Falling back to default config`), a hook on an event it does not know or of the wrong
//! shape is dropped without a word, and so is an MCP entry it cannot use. So "rejects" here
//! means "would run without calyx's entries", and calyx asks Hermes what it sees:
//! `hermes hooks list` (0.5 s) must list every event calyx hooks, with no parse warning, and
//! `hermes mcp list` (1–1.7 s) must list `calyx-ipc` and `calyx-mcp` where written. Both load config.yaml the way a session
//! does, call no model and start no hook or MCP server (verified offline in a network
//! namespace); they run with `HERMES_HOME`, `HOME` and the working directory at the copy
//! (Hermes fills its home with directories on first use: the copy's, removed after).

use std::path::Path;
use std::time::Duration;

use crate::setup::{self as plans, Ctx, Plan};
use crate::AgentKind;

use super::{isolated, text_after, Load, Scratch};
use crate::setup::probe;

/// Per command: Python's start and Hermes' imports took 0.5–1.7 s here.
const CHECK_TIMEOUT: Duration = Duration::from_secs(10);

/// Pointed at the private copy.
pub(super) const VARS: &[&str] = &["HERMES_HOME", "HOME"];

/// What an accepting Hermes loaded (the verdict's text).
pub(super) const LOADED: &str =
    "loaded config.yaml and lists calyx's hooks and MCP entry (`hermes hooks list`, `hermes mcp list`)";

/// What marks one of calyx's hook commands in config.yaml and in `hermes hooks list`.
const CALYX_HOOK: &str = "calyx\" hook hermes";

pub(super) fn load(bin: &Path, ctx: &Ctx, plan: Option<&Plan>) -> Load {
    let dir = plans::config_dir(AgentKind::Hermes, ctx);
    let file = dir.join("config.yaml");
    let after = text_after(&file, plan)?.unwrap_or_default();
    let scratch = Scratch::new().map_err(|e| format!("no temporary directory: {e}"))?;
    scratch.copy_after(&dir, &["config.yaml"], plan)?;
    let run = |args: &[&str]| {
        let mut cmd = isolated(bin, &scratch.0, VARS);
        cmd.args(args);
        let what = format!("`hermes {}`", args.join(" "));
        let ran = probe::run(cmd, CHECK_TIMEOUT).map_err(|e| format!("{what} {e}"))?;
        let stderr = scratch.shown(&ran.stderr, &dir);
        if ran.code != Some(0) {
            if stderr.contains("invalid choice") {
                return Err(format!(
                    "this Hermes has no {what}, so it was not asked (skipped)"
                ));
            }
            return Err(format!(
                "{what} exited {} ({})",
                ran.code.map_or("on a signal".into(), |c| c.to_string()),
                stderr.lines().last().unwrap_or_default()
            ));
        }
        Ok((ran.stdout, stderr))
    };
    let (hooks, stderr) = run(&["hooks", "list"])?;
    if let Some(from) = stderr.find("Failed to parse") {
        return Ok(Some((file, stderr[from..].trim().to_string())));
    }
    let dropped: Vec<String> = calyx_events(&after)
        .into_iter()
        .filter(|e| !listed(&hooks, e))
        .collect();
    if !dropped.is_empty() {
        return Ok(Some((
            file,
            format!(
                "`hermes hooks list` does not list calyx's hooks on {} (Hermes drops a hook on an event it does not know)",
                dropped.join(", ")
            ),
        )));
    }
    let written: Vec<&str> = plans::mcp_entries::ENTRIES
        .into_iter()
        .filter(|name| after.contains(&format!("{name}:")))
        .collect();
    if !written.is_empty() {
        let (servers, _) = run(&["mcp", "list"])?;
        if let Some(name) = written.iter().find(|name| !servers.contains(*name)) {
            return Ok(Some((
                file,
                format!("`hermes mcp list` does not list calyx's MCP entry {name} (Hermes drops an entry it cannot use)"),
            )));
        }
    }
    Ok(None)
}

/// The events under which config.yaml runs calyx: each key line (`name:`) whose entries
/// below, up to the next key line, hold a calyx hook command.
fn calyx_events(yaml: &str) -> Vec<String> {
    let mut events: Vec<String> = Vec::new();
    let mut current: Option<&str> = None;
    for line in yaml.lines() {
        let t = line.trim();
        if let Some(key) = t.strip_suffix(':') {
            if !key.is_empty() && !key.starts_with('-') && !key.contains(' ') {
                current = Some(key);
                continue;
            }
        }
        if let Some(event) = current.filter(|_| t.contains(CALYX_HOOK)) {
            if !events.iter().any(|e| e == event) {
                events.push(event.to_string());
            }
        }
    }
    events
}

/// Whether `hermes hooks list` shows a calyx hook under `[event]`.
fn listed(hooks: &str, event: &str) -> bool {
    let header = format!("[{event}]");
    let mut inside = false;
    for line in hooks.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            inside = t == header;
        } else if inside && t.contains(CALYX_HOOK) {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::{calyx_events, listed};

    #[test]
    fn events_hooked_by_calyx_and_what_hermes_lists() {
        let yaml = "mcp_servers:\n  calyx-ipc:\n    url: 'http://x'\nhooks:\n  on_session_start:\n    - command: '\"/x/calyx\" hook hermes'\n      timeout: 5\n  pre_tool_call:\n    - command: mine\n  subagent_stop:\n    - command: '\"/x/calyx\" hook hermes'\n";
        assert_eq!(calyx_events(yaml), ["on_session_start", "subagent_stop"]);
        // What hermes-agent 0.19.0 printed (it dropped the event it does not know).
        let out = "Configured shell hooks (1 total):\n\n  [on_session_start]\n    - \"/x/calyx\" hook hermes (timeout=5s, \u{2717} not allowlisted)\n";
        assert!(listed(out, "on_session_start"));
        assert!(!listed(out, "subagent_stop"));
    }
}
