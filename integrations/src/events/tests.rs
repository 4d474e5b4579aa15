//! Every captured real payload (and the hand-made ones for CLIs with no capture) normalizes to
//! the expected event. The table must name every file in `fixtures/payloads/`, so a new capture
//! cannot slip in untested.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::Value;

use super::{normalize, EventKind, NormalizeError, NormalizedEvent};
use crate::kind::AgentKind;
use EventKind::*;

/// `(file, expected kind)`; `None` means "known but ignored".
const REAL: &[(&str, Option<EventKind>)] = &[
    ("claude-2.1.197-FileChanged.json", None),
    ("claude-2.1.197-MessageDisplay.json", None),
    ("claude-2.1.197-Notification.json", Some(PermissionRequest)),
    (
        "claude-2.1.197-PermissionRequest.json",
        Some(PermissionRequest),
    ),
    ("claude-2.1.197-PostCompact.json", Some(Compaction)),
    ("claude-2.1.197-PostToolBatch.json", None),
    ("claude-2.1.197-PostToolUse.json", Some(PostToolUse)),
    ("claude-2.1.197-PostToolUseFailure.json", Some(PostToolUse)),
    ("claude-2.1.197-PreCompact.json", Some(Compaction)),
    ("claude-2.1.197-PreToolUse.json", Some(PreToolUse)),
    ("claude-2.1.197-SessionEnd.json", Some(SessionEnd)),
    ("claude-2.1.197-SessionStart.json", Some(SessionStart)),
    ("claude-2.1.197-Stop.json", Some(Stop)),
    ("claude-2.1.197-SubagentStart.json", Some(SubagentStart)),
    ("claude-2.1.197-SubagentStop.json", Some(SubagentStop)),
    (
        "claude-2.1.197-UserPromptSubmit.json",
        Some(UserPromptSubmit),
    ),
    ("codex-0.171.0-Interrupt.json", Some(Interrupt)),
    (
        "codex-0.171.0-PermissionRequest.json",
        Some(PermissionRequest),
    ),
    ("codex-0.171.0-PostCompact.json", Some(Compaction)),
    ("codex-0.171.0-PostToolUse.json", Some(PostToolUse)),
    ("codex-0.171.0-PreCompact.json", Some(Compaction)),
    ("codex-0.171.0-PreToolUse.json", Some(PreToolUse)),
    ("codex-0.171.0-SessionEnd.json", Some(SessionEnd)),
    ("codex-0.171.0-SessionStart.json", Some(SessionStart)),
    ("codex-0.171.0-Stop.json", Some(Stop)),
    ("codex-0.171.0-SubagentStart.json", Some(SubagentStart)),
    ("codex-0.171.0-SubagentStop.json", Some(SubagentStop)),
    (
        "codex-0.171.0-UserPromptSubmit.json",
        Some(UserPromptSubmit),
    ),
    ("copilot-1.0.102-agentStop.json", Some(Stop)),
    ("copilot-1.0.102-notification.json", Some(PermissionRequest)),
    (
        "copilot-1.0.102-permissionRequest.json",
        Some(PermissionRequest),
    ),
    ("copilot-1.0.102-postToolUse.json", Some(PostToolUse)),
    ("copilot-1.0.102-postToolUseFailure.json", Some(PostToolUse)),
    ("copilot-1.0.102-preToolUse.json", Some(PreToolUse)),
    ("copilot-1.0.102-sessionEnd.json", Some(SessionEnd)),
    ("copilot-1.0.102-sessionStart.json", Some(SessionStart)),
    ("copilot-1.0.102-subagentStart.json", Some(SubagentStart)),
    ("copilot-1.0.102-subagentStop.json", Some(SubagentStop)),
    (
        "copilot-1.0.102-userPromptSubmitted.json",
        Some(UserPromptSubmit),
    ),
    ("gemini-0.61.0-AfterAgent.json", Some(Stop)),
    ("gemini-0.61.0-AfterModel.json", None),
    ("gemini-0.61.0-AfterTool.json", Some(PostToolUse)),
    ("gemini-0.61.0-BeforeAgent.json", Some(UserPromptSubmit)),
    ("gemini-0.61.0-BeforeModel.json", None),
    ("gemini-0.61.0-BeforeTool.json", Some(PreToolUse)),
    ("gemini-0.61.0-BeforeToolSelection.json", None),
    ("gemini-0.61.0-Notification.json", Some(PermissionRequest)),
    ("gemini-0.61.0-PreCompress.json", Some(Compaction)),
    ("gemini-0.61.0-SessionEnd.json", Some(SessionEnd)),
    ("gemini-0.61.0-SessionStart.json", Some(SessionStart)),
    ("hermes-0.19.0-on_session_end.json", Some(Stop)),
    ("hermes-0.19.0-on_session_finalize.json", Some(SessionEnd)),
    ("hermes-0.19.0-on_session_start.json", Some(SessionStart)),
    ("hermes-0.19.0-post_api_request.json", None),
    (
        "hermes-0.19.0-post_approval_response.json",
        Some(PostToolUse),
    ),
    ("hermes-0.19.0-post_llm_call.json", None),
    ("hermes-0.19.0-post_tool_call.json", Some(PostToolUse)),
    ("hermes-0.19.0-pre_api_request.json", None),
    (
        "hermes-0.19.0-pre_approval_request.json",
        Some(PermissionRequest),
    ),
    ("hermes-0.19.0-pre_llm_call.json", Some(UserPromptSubmit)),
    ("hermes-0.19.0-pre_tool_call.json", Some(PreToolUse)),
    ("hermes-0.19.0-subagent_start.json", Some(SubagentStart)),
    ("hermes-0.19.0-subagent_stop.json", Some(SubagentStop)),
    ("hermes-0.19.0-transform_llm_output.json", None),
    ("hermes-0.19.0-transform_terminal_output.json", None),
    ("hermes-0.19.0-transform_tool_result.json", None),
    ("opencode-1.18.33-chat.headers.json", None),
    ("opencode-1.18.33-chat.message.json", Some(UserPromptSubmit)),
    ("opencode-1.18.33-chat.params.json", None),
    ("opencode-1.18.33-event_catalog.updated.json", None),
    ("opencode-1.18.33-event_integration.updated.json", None),
    ("opencode-1.18.33-event_message.part.delta.json", None),
    ("opencode-1.18.33-event_message.part.updated.json", None),
    ("opencode-1.18.33-event_message.updated.json", None),
    (
        "opencode-1.18.33-event_permission.asked.json",
        Some(PermissionRequest),
    ),
    (
        "opencode-1.18.33-event_permission.replied.json",
        Some(PostToolUse),
    ),
    ("opencode-1.18.33-event_plugin.added.json", None),
    ("opencode-1.18.33-event_reference.updated.json", None),
    (
        "opencode-1.18.33-event_session.created.json",
        Some(SessionStart),
    ),
    ("opencode-1.18.33-event_session.diff.json", None),
    ("opencode-1.18.33-event_session.idle.json", Some(Stop)),
    ("opencode-1.18.33-event_session.status.json", Some(Activity)),
    ("opencode-1.18.33-event_session.updated.json", None),
    ("opencode-1.18.33-plugin.init.json", None),
    ("opencode-1.18.33-respond_permission.json", None),
    ("opencode-1.18.33-shell.env.json", None),
    (
        "opencode-1.18.33-tool.execute.after.json",
        Some(PostToolUse),
    ),
    (
        "opencode-1.18.33-tool.execute.before.json",
        Some(PreToolUse),
    ),
    ("pi-0.73.1-after_provider_response.json", None),
    ("pi-0.73.1-agent_end.json", Some(Stop)),
    ("pi-0.73.1-agent_start.json", Some(Activity)),
    ("pi-0.73.1-before_agent_start.json", None),
    ("pi-0.73.1-before_provider_request.json", None),
    ("pi-0.73.1-context.json", None),
    ("pi-0.73.1-input.json", Some(UserPromptSubmit)),
    ("pi-0.73.1-message_end.json", None),
    ("pi-0.73.1-message_start.json", None),
    ("pi-0.73.1-message_update.json", None),
    ("pi-0.73.1-resources_discover.json", None),
    ("pi-0.73.1-session_shutdown.json", Some(SessionEnd)),
    ("pi-0.73.1-session_start.json", Some(SessionStart)),
    ("pi-0.73.1-tool_call.json", Some(PreToolUse)),
    ("pi-0.73.1-tool_execution_end.json", Some(PostToolUse)),
    ("pi-0.73.1-tool_execution_start.json", None),
    ("pi-0.73.1-tool_execution_update.json", None),
    ("pi-0.73.1-tool_result.json", None),
    ("pi-0.73.1-turn_end.json", None),
    ("pi-0.73.1-turn_start.json", Some(Activity)),
];

/// Hand-made payloads for CLIs that could not be captured (see each file's `source`).
const SYNTHETIC: &[(&str, Option<EventKind>)] = &[
    ("synthetic-grok-session_start.json", Some(SessionStart)),
    (
        "synthetic-grok-user_prompt_submit.json",
        Some(UserPromptSubmit),
    ),
    ("synthetic-grok-pre_tool_use.json", Some(PreToolUse)),
    ("synthetic-grok-post_tool_use.json", Some(PostToolUse)),
    (
        "synthetic-grok-post_tool_use_failure.json",
        Some(PostToolUse),
    ),
    (
        "synthetic-grok-notification_permission.json",
        Some(PermissionRequest),
    ),
    ("synthetic-grok-notification_other.json", None),
    ("synthetic-grok-stop_end_turn.json", Some(Stop)),
    ("synthetic-grok-stop_channel_closed.json", None),
    ("synthetic-grok-stop_failure.json", Some(Stop)),
    ("synthetic-grok-stop_cancelled.json", Some(Stop)),
    ("synthetic-grok-subagent_start.json", Some(SubagentStart)),
    ("synthetic-grok-subagent_end.json", Some(SubagentStop)),
    ("synthetic-grok-session_end_child.json", Some(SessionEnd)),
    ("synthetic-grok-session_end.json", Some(SessionEnd)),
    ("synthetic-kimi-SessionStart.json", Some(SessionStart)),
    ("synthetic-kimi-TurnStarted.json", Some(UserPromptSubmit)),
    ("synthetic-kimi-PreToolUse.json", Some(PreToolUse)),
    (
        "synthetic-kimi-PermissionRequest.json",
        Some(PermissionRequest),
    ),
    ("synthetic-kimi-Stop.json", Some(Stop)),
    (
        "synthetic-antigravity-PreInvocation.json",
        Some(UserPromptSubmit),
    ),
    ("synthetic-antigravity-Stop_fullyIdle.json", Some(Stop)),
    ("synthetic-antigravity-Stop_background.json", None),
    (
        "synthetic-cursor-beforeSubmitPrompt.json",
        Some(UserPromptSubmit),
    ),
    (
        "synthetic-cursor-beforeShellExecution.json",
        Some(PreToolUse),
    ),
    ("synthetic-cursor-afterFileEdit.json", Some(PostToolUse)),
    ("synthetic-cursor-stop.json", Some(Stop)),
    ("synthetic-cursor-stop_aborted.json", Some(Interrupt)),
    ("synthetic-cursor-stop_no_event_name.json", Some(Stop)),
];

fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/payloads")
}

fn kind_of(file: &str) -> AgentKind {
    let cli = file.trim_start_matches("synthetic-");
    let cli = cli.split('-').next().unwrap_or_default();
    match cli {
        "claude" => AgentKind::ClaudeCode,
        other => other.parse().unwrap_or_else(|e| panic!("{file}: {e}")),
    }
}

fn load(rel: &str) -> Value {
    let path = fixtures_dir().join(rel);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let wrapper: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{rel}: {e}"));
    wrapper["payload"].clone()
}

fn norm(rel: &str) -> Result<Option<NormalizedEvent>, NormalizeError> {
    let file = rel.rsplit('/').next().unwrap_or(rel);
    normalize(kind_of(file), &load(rel))
}

fn event(rel: &str) -> NormalizedEvent {
    match norm(rel) {
        Ok(Some(ev)) => ev,
        other => panic!("{rel}: expected an event, got {other:?}"),
    }
}

fn check_table(table: &[(&str, Option<EventKind>)], prefix: &str) {
    let mut failures = Vec::new();
    for (file, want) in table {
        let rel = format!("{prefix}{file}");
        match norm(&rel) {
            Ok(got) if got.as_ref().map(|e| e.kind) == *want => {}
            other => failures.push(format!("{file}: want {want:?}, got {other:?}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn listed(dir: &std::path::Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{dir:?}: {e}"))
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect()
}

#[test]
fn every_real_capture_normalizes_to_the_expected_event() {
    check_table(REAL, "");
}

#[test]
fn every_synthetic_payload_normalizes_to_the_expected_event() {
    check_table(SYNTHETIC, "synthetic/");
}

#[test]
fn the_tables_cover_every_fixture_file() {
    let real: BTreeSet<String> = REAL.iter().map(|(f, _)| f.to_string()).collect();
    assert_eq!(listed(&fixtures_dir()), real);
    let synth: BTreeSet<String> = SYNTHETIC.iter().map(|(f, _)| f.to_string()).collect();
    assert_eq!(listed(&fixtures_dir().join("synthetic")), synth);
}

#[test]
fn claude_fields_are_extracted() {
    let ev = event("claude-2.1.197-PreToolUse.json");
    assert_eq!(ev.tool_name.as_deref(), Some("Bash"));
    assert_eq!(
        ev.tool_input.as_ref().and_then(|v| v["command"].as_str()),
        Some("echo hi > marker.txt")
    );
    assert_eq!(
        ev.session_id.as_deref(),
        Some("8d61acb0-61ba-4288-aa53-52fe522c2041")
    );
    assert_eq!(ev.cwd.as_deref(), Some("/home/dev/src/app"));
    assert_eq!(ev.permission_mode.as_deref(), Some("default"));
    assert!(ev.transcript_path.is_some());
    assert!(!ev.is_subagent());

    let sub = event("claude-2.1.197-SubagentStart.json");
    assert_eq!(sub.agent_id.as_deref(), Some("aa3c05cbad3944056"));
    assert_eq!(sub.agent_type.as_deref(), Some("general-purpose"));
    assert!(sub.is_subagent());

    let note = event("claude-2.1.197-Notification.json");
    assert_eq!(note.notification_type.as_deref(), Some("permission_prompt"));
    assert_eq!(note.raw_event_name, "Notification");
}

#[test]
fn claude_agent_type_alone_is_the_main_thread() {
    let p = serde_json::json!({"hook_event_name": "PreToolUse", "session_id": "s",
        "agent_type": "reviewer", "tool_name": "Bash"});
    let ev = normalize(AgentKind::ClaudeCode, &p);
    assert!(matches!(ev, Ok(Some(ref e)) if !e.is_subagent()), "{ev:?}");
}

#[test]
fn claude_session_start_after_compaction_is_compaction() {
    let p = serde_json::json!({"hook_event_name": "SessionStart", "session_id": "s", "source": "compact"});
    let ev = normalize(AgentKind::ClaudeCode, &p);
    assert!(
        matches!(ev, Ok(Some(ref e)) if e.kind == Compaction),
        "{ev:?}"
    );
}

#[test]
fn codex_fields_are_extracted() {
    let ev = event("codex-0.171.0-SubagentStop.json");
    assert_eq!(
        ev.agent_id.as_deref(),
        Some("01a22893-603e-7f73-96d9-7bf4b9f92cfc")
    );
    assert_eq!(ev.agent_type.as_deref(), Some("default"));
    let perm = event("codex-0.171.0-PermissionRequest.json");
    assert_eq!(perm.tool_name.as_deref(), Some("Bash"));
}

#[test]
fn copilot_fields_are_extracted_without_an_event_name() {
    let ev = event("copilot-1.0.102-preToolUse.json");
    assert_eq!(ev.raw_event_name, "preToolUse");
    assert_eq!(ev.tool_name.as_deref(), Some("bash"));
    assert_eq!(
        ev.session_id.as_deref(),
        Some("b0761017-b2be-4afb-82c1-c10072ebf198")
    );
    assert!(ev.tool_input.is_some());
    let sub = event("copilot-1.0.102-subagentStop.json");
    assert_eq!(
        sub.agent_id.as_deref(),
        Some("fd1a8b3e-f808-454d-99c1-d34aec58824b")
    );
    assert_eq!(sub.agent_type.as_deref(), Some("general-purpose"));
    let idle = serde_json::json!({"sessionId": "s", "hook_event_name": "Notification",
        "notification_type": "agent_idle"});
    assert!(matches!(normalize(AgentKind::Copilot, &idle), Ok(Some(ref e)) if e.kind == Stop));
}

#[test]
fn gemini_fields_are_extracted() {
    let ev = event("gemini-0.61.0-BeforeTool.json");
    assert_eq!(ev.tool_name.as_deref(), Some("run_shell_command"));
    assert_eq!(
        ev.session_id.as_deref(),
        Some("45dd52e4-af20-4ade-95af-1681c2b83c9e")
    );
    let perm = event("gemini-0.61.0-Notification.json");
    assert_eq!(perm.notification_type.as_deref(), Some("ToolPermission"));
    assert_eq!(perm.tool_name.as_deref(), Some("Confirm Shell Command"));
}

#[test]
fn hermes_fields_are_extracted() {
    let ev = event("hermes-0.19.0-pre_tool_call.json");
    assert_eq!(ev.tool_name.as_deref(), Some("terminal"));
    assert_eq!(ev.session_id.as_deref(), Some("20261129_183431_88cdf5"));
    // Approval events send an empty session_id and name the session in extra.session_key.
    let perm = event("hermes-0.19.0-pre_approval_request.json");
    assert_eq!(perm.session_id.as_deref(), Some("20261129_183458_b65783"));
    assert_eq!(perm.tool_name.as_deref(), Some("terminal"));
    let sub = event("hermes-0.19.0-subagent_stop.json");
    assert_eq!(sub.agent_id.as_deref(), Some("20261129_183455_051921"));
    assert_eq!(sub.agent_type.as_deref(), Some("leaf"));
    assert_eq!(
        event("hermes-0.19.0-subagent_start.json").agent_id,
        sub.agent_id
    );
}

#[test]
fn opencode_fields_are_extracted() {
    let sid = Some("ses_dd76bd31bffeen2CT75xFfmiRg");
    let before = event("opencode-1.18.33-tool.execute.before.json");
    assert_eq!(before.tool_name.as_deref(), Some("bash"));
    assert_eq!(before.session_id.as_deref(), sid);
    assert_eq!(
        before
            .tool_input
            .as_ref()
            .and_then(|v| v["command"].as_str()),
        Some("echo hi > marker.txt")
    );
    let created = event("opencode-1.18.33-event_session.created.json");
    assert_eq!(created.session_id.as_deref(), sid);
    assert_eq!(created.cwd.as_deref(), Some("/home/dev/src/app"));
    let asked = event("opencode-1.18.33-event_permission.asked.json");
    assert_eq!(asked.tool_name.as_deref(), Some("bash"));
}

#[test]
fn opencode_session_under_info_id_and_unresolvable_sessions() {
    let info = serde_json::json!({"type": "session.created",
        "properties": {"info": {"id": "ses_1", "projectID": "p", "directory": "/d"}}});
    let ev = normalize(AgentKind::OpenCode, &info);
    assert!(
        matches!(ev, Ok(Some(ref e)) if e.session_id.as_deref() == Some("ses_1")),
        "{ev:?}"
    );
    let none = serde_json::json!({"type": "session.idle", "properties": {}});
    assert!(matches!(
        normalize(AgentKind::OpenCode, &none),
        Err(NormalizeError::NoSession { .. })
    ));
    let child = serde_json::json!({"type": "session.created", "properties": {"sessionID": "ses_c",
        "info": {"id": "ses_c", "parentID": "ses_p", "projectID": "p", "title": "explore"}}});
    let ev = normalize(AgentKind::OpenCode, &child);
    assert!(
        matches!(ev, Ok(Some(ref e)) if e.kind == SubagentStart
        && e.session_id.as_deref() == Some("ses_p") && e.agent_id.as_deref() == Some("ses_c")),
        "{ev:?}"
    );
}

#[test]
fn pi_fields_are_extracted() {
    let ev = event("pi-0.73.1-tool_call.json");
    assert_eq!(ev.tool_name.as_deref(), Some("bash"));
    assert_eq!(ev.cwd.as_deref(), Some("/home/dev/src/app"));
    assert_eq!(ev.session_id, None);
    let with_sid = serde_json::json!({"event": {"type": "agent_end"}, "ctx": {"cwd": "/x", "sessionId": "pi-1"}});
    let ev = normalize(AgentKind::Pi, &with_sid);
    assert!(
        matches!(ev, Ok(Some(ref e)) if e.session_id.as_deref() == Some("pi-1")),
        "{ev:?}"
    );
}

#[test]
fn grok_subagent_start_carries_parent_session_and_child_id() {
    let ev = event("synthetic/synthetic-grok-subagent_start.json");
    assert_eq!(ev.session_id.as_deref(), Some("grok-sess-1"));
    assert_eq!(ev.agent_id.as_deref(), Some("grok-child-7"));
    let pre = event("synthetic/synthetic-grok-pre_tool_use.json");
    assert_eq!(pre.tool_name.as_deref(), Some("bash"));
    assert_eq!(pre.permission_mode.as_deref(), Some("default"));
}

#[test]
fn unknown_shapes_are_errors_not_panics() {
    for kind in AgentKind::ALL {
        assert!(normalize(kind, &serde_json::json!([1, 2])).is_err());
        assert!(normalize(kind, &serde_json::json!({})).is_err(), "{kind}");
        let weird = serde_json::json!({"hook_event_name": "Bogus", "hookEventName": "bogus",
            "type": "bogus.event", "event": {"type": "bogus"}, "hookName": "bogus"});
        assert!(normalize(kind, &weird).is_err(), "{kind}");
    }
}

/// Events a payload saved into `fixtures/payloads/new/` may carry and that calyx reads as known
/// but saying nothing about the agent's state (`Ok(None)`): `(cli, event, why)`. Any other saved
/// payload that normalizes to nothing fails the test below.
const NEW_IGNORED: &[(&str, &str, &str)] = &[];

/// Payloads the real-CLI suite saved because their shape (event and key paths) was new
/// (tests/realcli/save_payloads.py) and nobody has sorted them into the tables yet: each must
/// normalize to an event (or be listed in [`NEW_IGNORED`] with the reason), never to an error or
/// to nothing, so a release that changes a payload fails here first.
#[test]
fn every_newly_captured_payload_normalizes_to_an_event() {
    let dir = fixtures_dir().join("new");
    if !dir.is_dir() {
        return;
    }
    let failures: Vec<String> = listed(&dir)
        .into_iter()
        .filter_map(|file| new_payload_problem(&file))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// What is wrong with `new/FILE`, if anything.
fn new_payload_problem(file: &str) -> Option<String> {
    let path = fixtures_dir().join("new").join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    match serde_json::from_str::<Value>(&text) {
        Ok(wrapper) => saved_payload_problem(file, &wrapper),
        Err(e) => Some(format!("{file}: not JSON: {e}")),
    }
}

/// What is wrong with a saved payload (the fixtures' wrapper: `cli`, `event`, `payload`).
fn saved_payload_problem(file: &str, wrapper: &Value) -> Option<String> {
    let cli = wrapper["cli"].as_str().unwrap_or_default();
    let event = wrapper["event"].as_str().unwrap_or_default();
    match normalize(kind_of(file), &wrapper["payload"]) {
        Ok(Some(_)) => None,
        Ok(None) if NEW_IGNORED.iter().any(|(c, e, _)| *c == cli && *e == event) => None,
        Ok(None) => Some(format!(
            "{file}: calyx reads no event from it ({cli} {event:?}); fix the normalizer, or list \
             it in NEW_IGNORED with the reason"
        )),
        Err(e) => Some(format!("{file}: {e}")),
    }
}

#[test]
fn a_saved_payload_that_normalizes_to_nothing_or_fails_is_a_problem() {
    // Claude's PostToolBatch is known but ignored: saved as new, calyx reads no event from it.
    let ignored = serde_json::json!({"cli": "claude", "event": "PostToolBatch",
        "payload": {"hook_event_name": "PostToolBatch", "session_id": "s", "tool_calls": []}});
    let problem = saved_payload_problem("claude-9.9.9-PostToolBatch.json", &ignored);
    assert!(
        problem.as_deref().is_some_and(|p| p.contains("no event")),
        "{problem:?}"
    );
    let unreadable = serde_json::json!({"cli": "claude", "event": null, "payload": {"what": 1}});
    assert!(saved_payload_problem("claude-9.9.9-unnamed-0.json", &unreadable).is_some());
    let stop = serde_json::json!({"cli": "claude", "event": "Stop",
        "payload": {"hook_event_name": "Stop", "session_id": "s"}});
    assert_eq!(saved_payload_problem("claude-9.9.9-Stop.json", &stop), None);
}
