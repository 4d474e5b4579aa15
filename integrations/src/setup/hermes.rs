//! Hermes (verified on 0.19.0): `$HERMES_HOME/config.yaml` (default `~/.hermes`), edited by
//! text splice: `calyx-ipc:` and `calyx-mcp:` children under `mcp_servers:` with `${VAR}`
//! headers, and calyx's items under `hooks: <event>:`. Hermes runs hooks through shlex without a shell, which
//! handles the quoted binary path. Hermes asks the user before running shell hooks
//! (`hooks_auto_accept`); calyx does not flip that switch for the user.
//!
//! Hermes' only blocking hook is `pre_tool_call`, which fires for every tool call; its approval
//! events are observe-only and calyx shows them as state. `pre_tool_call` goes to calyx's
//! approval route with the longest timeout Hermes allows (300 s): the server answers at once
//! with nothing unless the user opted in to a deny gate (`[approvals] deny_gates` in calyx's
//! config.toml), so one entry carries both the state and the optional gate.

use super::{edit_file, mcp_entries, Ctx, Op, Plan, SetupError};
use crate::config_edit::{is_calyx_command, yaml};
use crate::kind::AgentKind;

const KIND: AgentKind = AgentKind::Hermes;

const EVENTS: [&str; 10] = [
    "on_session_start",
    "pre_llm_call",
    "pre_tool_call",
    "post_tool_call",
    "pre_approval_request",
    "post_approval_response",
    "on_session_end",
    "on_session_finalize",
    "subagent_start",
    "subagent_stop",
];

/// Whether a sequence item's first line (`command: '...'`) runs calyx's hook verb.
fn is_ours(first: &str) -> bool {
    let Some(value) = first.strip_prefix("command:") else {
        return false;
    };
    let v = value.trim();
    let unquoted = if let Some(s) = v.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')) {
        s.replace("''", "'")
    } else if v.starts_with('"') {
        serde_json::from_str::<String>(v).unwrap_or_default()
    } else {
        v.to_string()
    };
    is_calyx_command(&unquoted)
}

fn mcp_child(ctx: &Ctx, name: &str, url: &str) -> Vec<yaml::Line> {
    let q = |s: &str| yaml::quote(s);
    vec![
        (0, format!("{name}:")),
        (1, format!("url: {}", q(url))),
        (1, "headers:".into()),
        (2, format!("Authorization: {}", q(&ctx.bearer()))),
        (
            2,
            format!("X-Calyx-Surface-ID: {}", q("${CALYX_SURFACE_ID}")),
        ),
        (
            2,
            format!("X-Calyx-Session-ID: {}", q("${CALYX_SESSION_ID}")),
        ),
        (2, format!("X-Calyx-Agent-Kind: {}", q("hermes"))),
    ]
}

pub(super) fn plan(ctx: &Ctx, op: Op, plan: &mut Plan) -> Result<(), SetupError> {
    let path = super::config_dir(KIND, ctx).join("config.yaml");
    let events: Vec<(String, Vec<Vec<yaml::Line>>)> = EVENTS
        .iter()
        .map(|e| {
            let gate = *e == "pre_tool_call";
            let item = vec![
                (
                    0,
                    format!("command: {}", yaml::quote(&ctx.hook_command(KIND, gate))),
                ),
                (0, format!("timeout: {}", if gate { 300 } else { 5 })),
            ];
            (e.to_string(), vec![item])
        })
        .collect();
    let mut notes = Vec::new();
    edit_file(plan, &path, 0o600, op, |text| match op {
        Op::Install => {
            // Take out what is there first, so that a re-install lands exactly where a first
            // install would (and changes nothing when it is current).
            let mut text = uninstall(text)?;
            // set_child puts a child first under mcp_servers: the last one set ends up first.
            for (name, url) in mcp_entries::wanted(ctx, op).into_iter().rev() {
                if let Some(url) = url {
                    let child = mcp_child(ctx, name, &url);
                    text = yaml::set_child(&text, "mcp_servers", name, &child)?;
                }
            }
            let (text, skipped) = yaml::set_items(&text, "hooks", &events, &is_ours)?;
            for e in skipped {
                notes.push(format!(
                    "hooks.{e} is not a list: calyx's hook for it was not added"
                ));
            }
            Ok(text)
        }
        Op::Uninstall => uninstall(text),
    })?;
    plan.notes.extend(notes);
    Ok(())
}

fn uninstall(text: &str) -> Result<String, crate::config_edit::EditError> {
    let mut text = yaml::remove_items(text, "hooks", &is_ours)?;
    for name in mcp_entries::ENTRIES {
        text = yaml::remove_child(&text, "mcp_servers", name)?;
    }
    Ok(text)
}
