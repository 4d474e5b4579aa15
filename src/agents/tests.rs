//! One test per state-machine rule. Instants are constructed from a base, so no clock runs.

use std::time::Duration;

use calyx_integrations::{AgentKind, EventKind, NormalizedEvent};
use tokio::time::Instant;

use super::*;

pub(super) const P: u64 = 7;
pub(super) const CLAUDE: AgentKind = AgentKind::ClaudeCode;

pub(super) fn ev(kind: EventKind, session: &str) -> NormalizedEvent {
    let mut e = NormalizedEvent::new(kind, format!("{kind:?}"));
    e.session_id = Some(session.to_string());
    e
}

pub(super) fn tool(kind: EventKind, session: &str, name: &str, command: &str) -> NormalizedEvent {
    let mut e = ev(kind, session);
    e.tool_name = Some(name.to_string());
    e.tool_input = Some(serde_json::json!({ "command": command }));
    e
}

pub(super) fn sub(kind: EventKind, session: &str, agent_id: &str) -> NormalizedEvent {
    let mut e = ev(kind, session);
    e.agent_id = Some(agent_id.to_string());
    e.agent_type = Some("general-purpose".to_string());
    e
}

pub(super) fn secs(t0: Instant, s: u64) -> Instant {
    t0 + Duration::from_secs(s)
}

pub(super) fn state(book: &AgentBook) -> AgentState {
    book.row(P).map(|r| r.state).unwrap_or(AgentState::Unknown)
}

pub(super) fn working(book: &mut AgentBook, t0: Instant) {
    book.apply(P, CLAUDE, &ev(EventKind::SessionStart, "s1"), t0);
    book.apply(P, CLAUDE, &ev(EventKind::UserPromptSubmit, "s1"), t0);
}

#[test]
fn basic_lifecycle_maps_events_to_states() {
    let t0 = Instant::now();
    let mut book = AgentBook::default();
    let tr = book.apply(P, CLAUDE, &ev(EventKind::SessionStart, "s1"), t0);
    assert_eq!(state(&book), AgentState::Idle);
    assert_eq!(tr.len(), 1);
    assert_eq!(
        book.row(P).and_then(|r| r.session_id.clone()).as_deref(),
        Some("s1")
    );
    book.apply(
        P,
        CLAUDE,
        &ev(EventKind::UserPromptSubmit, "s1"),
        secs(t0, 1),
    );
    assert_eq!(state(&book), AgentState::Working);
    book.apply(
        P,
        CLAUDE,
        &tool(EventKind::PreToolUse, "s1", "Bash", "ls"),
        secs(t0, 2),
    );
    assert_eq!(
        book.row(P).and_then(|r| r.last_tool.clone()).as_deref(),
        Some("Bash")
    );
    book.apply(
        P,
        CLAUDE,
        &tool(EventKind::PermissionRequest, "s1", "Bash", "rm x"),
        secs(t0, 3),
    );
    assert_eq!(state(&book), AgentState::Blocked);
    assert_eq!(book.counts(), (1, 0));
    book.apply(
        P,
        CLAUDE,
        &tool(EventKind::PostToolUse, "s1", "Bash", "rm x"),
        secs(t0, 9),
    );
    assert_eq!(state(&book), AgentState::Working);
    let tr = book.apply(P, CLAUDE, &ev(EventKind::Stop, "s1"), secs(t0, 10));
    assert_eq!(state(&book), AgentState::Idle);
    assert_eq!(
        (tr[0].from, tr[0].to),
        (AgentState::Working, AgentState::Idle)
    );
    book.apply(P, CLAUDE, &ev(EventKind::SessionEnd, "s1"), secs(t0, 11));
    assert_eq!(state(&book), AgentState::Done);
}

#[test]
fn permission_notification_blocks() {
    let t0 = Instant::now();
    let mut book = AgentBook::default();
    working(&mut book, t0);
    let mut note = ev(EventKind::PermissionRequest, "s1");
    note.notification_type = Some("permission_prompt".into());
    book.apply(P, CLAUDE, &note, secs(t0, 6));
    assert_eq!(state(&book), AgentState::Blocked);
    book.apply(P, CLAUDE, &ev(EventKind::Notification, "s1"), secs(t0, 7));
    assert_eq!(
        state(&book),
        AgentState::Blocked,
        "plain notifications change nothing"
    );
}

#[test]
fn pre_tool_use_within_grace_does_not_clear_blocked() {
    let t0 = Instant::now();
    let mut book = AgentBook::default();
    working(&mut book, t0);
    book.apply(
        P,
        CLAUDE,
        &tool(EventKind::PermissionRequest, "s1", "Bash", "rm x"),
        secs(t0, 5),
    );
    let late = secs(t0, 5) + Duration::from_millis(800);
    let tr = book.apply(
        P,
        CLAUDE,
        &tool(EventKind::PreToolUse, "s1", "Bash", "rm x"),
        late,
    );
    assert!(tr.is_empty());
    assert_eq!(state(&book), AgentState::Blocked);
    assert_eq!(book.row(P).map(|r| r.rule), Some(Rule::BlockedGrace));
    // After the grace a PreToolUse means the dialog was answered and the next call runs.
    book.apply(
        P,
        CLAUDE,
        &tool(EventKind::PreToolUse, "s1", "Read", "-"),
        secs(t0, 8),
    );
    assert_eq!(state(&book), AgentState::Working);
}

#[test]
fn post_tool_use_of_another_tool_keeps_blocked() {
    let t0 = Instant::now();
    let mut book = AgentBook::default();
    working(&mut book, t0);
    book.apply(
        P,
        CLAUDE,
        &tool(EventKind::PermissionRequest, "s1", "Bash", "rm x"),
        secs(t0, 5),
    );
    book.apply(
        P,
        CLAUDE,
        &tool(EventKind::PostToolUse, "s1", "Read", "cat"),
        secs(t0, 9),
    );
    assert_eq!(state(&book), AgentState::Blocked);
    book.apply(
        P,
        CLAUDE,
        &tool(EventKind::PostToolUse, "s1", "Bash", "ls"),
        secs(t0, 10),
    );
    assert_eq!(
        state(&book),
        AgentState::Blocked,
        "same tool, other command"
    );
    // An answer without tool details (OpenCode permission.replied) clears it.
    book.apply(P, CLAUDE, &ev(EventKind::PostToolUse, "s1"), secs(t0, 11));
    assert_eq!(state(&book), AgentState::Working);
}

#[test]
fn new_session_replaces_row_only_on_forward_moving_events() {
    let t0 = Instant::now();
    let mut book = AgentBook::default();
    working(&mut book, t0);
    book.apply(
        P,
        CLAUDE,
        &sub(EventKind::SubagentStart, "s1", "a1"),
        secs(t0, 1),
    );
    book.apply(P, CLAUDE, &ev(EventKind::SessionStart, "s2"), secs(t0, 2));
    let row = book.row(P).cloned();
    assert_eq!(
        row.as_ref().and_then(|r| r.session_id.clone()).as_deref(),
        Some("s2")
    );
    assert_eq!(
        row.as_ref().map(|r| r.subagents.len()),
        Some(0),
        "new session retires children"
    );
    assert_eq!(state(&book), AgentState::Idle);
    // Stale trailing events of the old session change nothing.
    for stale in [EventKind::Stop, EventKind::SessionEnd, EventKind::Interrupt] {
        let tr = book.apply(P, CLAUDE, &ev(stale, "s1"), secs(t0, 3));
        assert!(tr.is_empty(), "{stale:?}");
        assert_eq!(state(&book), AgentState::Idle);
        assert_eq!(
            book.row(P).and_then(|r| r.session_id.clone()).as_deref(),
            Some("s2")
        );
    }
    book.apply(
        P,
        CLAUDE,
        &ev(EventKind::UserPromptSubmit, "s3"),
        secs(t0, 4),
    );
    assert_eq!(
        book.row(P).and_then(|r| r.session_id.clone()).as_deref(),
        Some("s3")
    );
    assert_eq!(state(&book), AgentState::Working);
}

#[test]
fn working_ages_to_unknown_but_blocked_never_does() {
    let t0 = Instant::now();
    let mut book = AgentBook::default();
    working(&mut book, t0);
    book.apply(2, CLAUDE, &ev(EventKind::PermissionRequest, "b"), t0);
    assert_eq!(book.next_deadline(), Some(t0 + WORKING_STALE_AFTER));
    assert!(book
        .tick(t0 + WORKING_STALE_AFTER - Duration::from_secs(1))
        .is_empty());
    let tr = book.tick(t0 + WORKING_STALE_AFTER);
    assert_eq!(tr.len(), 1);
    assert_eq!(state(&book), AgentState::Unknown);
    assert_eq!(book.row(2).map(|r| r.state), Some(AgentState::Blocked));
    assert!(book.tick(t0 + Duration::from_secs(24 * 3600)).is_empty());
    assert_eq!(
        book.next_deadline(),
        None,
        "nothing left that time can change"
    );
}

#[test]
fn events_push_the_aging_deadline() {
    let t0 = Instant::now();
    let mut book = AgentBook::default();
    working(&mut book, t0);
    book.apply(
        P,
        CLAUDE,
        &sub(EventKind::PreToolUse, "s1", "a1"),
        secs(t0, 600),
    );
    assert_eq!(
        book.next_deadline(),
        Some(secs(t0, 600) + WORKING_STALE_AFTER)
    );
}

#[test]
fn pane_exit_never_leaves_a_live_looking_row() {
    let t0 = Instant::now();
    let mut book = AgentBook::default();
    working(&mut book, t0);
    book.apply(P, CLAUDE, &sub(EventKind::SubagentStart, "s1", "a1"), t0);
    let tr = book.pane_exited(P, secs(t0, 1));
    assert!(tr
        .iter()
        .any(|t| t.subagent.is_none() && t.to == AgentState::Done));
    assert_eq!(state(&book), AgentState::Done);
    assert_eq!(book.row(P).map(|r| r.subagents.len()), Some(0));
    assert_eq!(book.next_deadline(), None);
    // A trailing Stop after the exit does not revive it.
    book.apply(P, CLAUDE, &ev(EventKind::Stop, "s1"), secs(t0, 2));
    assert_eq!(state(&book), AgentState::Done);
    assert!(book.remove(P).is_some());
}

#[test]
fn pane_quiet_evidence_ends_a_hookless_interrupt() {
    let t0 = Instant::now();
    let mut book = AgentBook::default();
    working(&mut book, t0);
    assert!(
        book.pane_evidence_idle(P, secs(t0, 1)).is_empty(),
        "too soon after a hook"
    );
    let tr = book.pane_evidence_idle(P, secs(t0, 5));
    assert_eq!(tr.len(), 1);
    assert_eq!(state(&book), AgentState::Idle);
    book.apply(
        P,
        CLAUDE,
        &ev(EventKind::PermissionRequest, "s1"),
        secs(t0, 6),
    );
    assert!(
        book.pane_evidence_idle(P, secs(t0, 60)).is_empty(),
        "a dialog is quiet too"
    );
    assert_eq!(state(&book), AgentState::Blocked);
}

#[test]
fn compaction_does_not_stamp_idle_and_interrupt_does() {
    let t0 = Instant::now();
    let mut book = AgentBook::default();
    working(&mut book, t0);
    assert!(book
        .apply(P, CLAUDE, &ev(EventKind::Compaction, "s1"), secs(t0, 1))
        .is_empty());
    assert_eq!(state(&book), AgentState::Working);
    book.apply(
        P,
        AgentKind::ClaudeCode,
        &ev(EventKind::Compaction, "s1"),
        secs(t0, 2),
    );
    assert_eq!(state(&book), AgentState::Working);
    let mut book = AgentBook::default();
    let codex = AgentKind::Codex;
    book.apply(P, codex, &ev(EventKind::UserPromptSubmit, "c1"), t0);
    book.apply(P, codex, &ev(EventKind::Interrupt, "c1"), secs(t0, 1));
    assert_eq!(state(&book), AgentState::Idle);
}

#[test]
fn activity_moves_idle_to_working_but_never_clears_blocked() {
    let t0 = Instant::now();
    let mut book = AgentBook::default();
    let oc = AgentKind::OpenCode;
    book.apply(P, oc, &ev(EventKind::SessionStart, "o"), t0);
    book.apply(P, oc, &ev(EventKind::Activity, "o"), t0);
    assert_eq!(state(&book), AgentState::Working);
    book.apply(P, oc, &ev(EventKind::PermissionRequest, "o"), secs(t0, 1));
    book.apply(P, oc, &ev(EventKind::Activity, "o"), secs(t0, 5));
    assert_eq!(state(&book), AgentState::Blocked);
}

#[test]
fn another_cli_in_the_pane_replaces_the_row() {
    let t0 = Instant::now();
    let mut book = AgentBook::default();
    working(&mut book, t0);
    book.apply(P, CLAUDE, &ev(EventKind::SessionEnd, "s1"), secs(t0, 1));
    book.apply(
        P,
        AgentKind::Codex,
        &ev(EventKind::SessionStart, "c1"),
        secs(t0, 2),
    );
    assert_eq!(book.row(P).map(|r| r.kind), Some(AgentKind::Codex));
    assert_eq!(state(&book), AgentState::Idle);
}

#[test]
fn rows_sort_by_urgency_then_oldest_event() {
    let t0 = Instant::now();
    let mut book = AgentBook::default();
    book.apply(1, CLAUDE, &ev(EventKind::SessionEnd, "x"), t0); // ignored: nothing to end
    book.apply(1, CLAUDE, &ev(EventKind::Stop, "a"), secs(t0, 1));
    book.apply(
        2,
        CLAUDE,
        &ev(EventKind::UserPromptSubmit, "b"),
        secs(t0, 2),
    );
    book.apply(
        3,
        CLAUDE,
        &ev(EventKind::PermissionRequest, "c"),
        secs(t0, 3),
    );
    book.apply(
        4,
        CLAUDE,
        &ev(EventKind::UserPromptSubmit, "d"),
        secs(t0, 1),
    );
    book.apply(5, CLAUDE, &ev(EventKind::Compaction, "e"), secs(t0, 1));
    book.apply(6, CLAUDE, &ev(EventKind::UserPromptSubmit, "f"), t0);
    book.pane_exited(6, secs(t0, 4));
    let order: Vec<u64> = book.rows(secs(t0, 10)).iter().map(|r| r.pane).collect();
    assert_eq!(order, vec![3, 4, 2, 1, 5, 6]);
    assert_eq!(book.counts(), (1, 2));
}

#[test]
fn explain_lists_events_and_rules() {
    let t0 = Instant::now();
    let mut book = AgentBook::default();
    working(&mut book, t0);
    book.apply(
        P,
        CLAUDE,
        &tool(EventKind::PermissionRequest, "s1", "Bash", "rm"),
        secs(t0, 5),
    );
    book.apply(
        P,
        CLAUDE,
        &tool(EventKind::PreToolUse, "s1", "Bash", "rm"),
        secs(t0, 5),
    );
    let text = book.explain(P, secs(t0, 65));
    assert!(text.contains("Claude Code is blocked for 1m"), "{text}");
    assert!(text.contains("still blocked"), "{text}");
    assert!(text.contains("SessionStart"), "{text}");
    for i in 0..30 {
        book.apply(
            P,
            CLAUDE,
            &ev(EventKind::Notification, "s1"),
            secs(t0, 70 + i),
        );
    }
    let text = book.explain(P, secs(t0, 200));
    assert_eq!(text.lines().filter(|l| l.starts_with("  -")).count(), 20);
    assert!(book.explain(99, t0).contains("no agent events"));
}

#[test]
fn short_durations() {
    assert_eq!(short_duration(Duration::from_secs(12)), "12s");
    assert_eq!(short_duration(Duration::from_secs(180)), "3m");
    assert_eq!(short_duration(Duration::from_secs(7200)), "2h");
    assert_eq!(short_duration(Duration::from_secs(90_000)), "1d");
}

/// The time-based rules with tokio's paused clock, as the owner loop runs them: `Instant::now()`
/// moves only when the test advances it.
#[tokio::test(start_paused = true)]
async fn aging_and_blocked_grace_on_the_paused_clock() {
    use calyx_integrations::{AgentKind, EventKind, NormalizedEvent};
    use tokio::time::{advance, Instant};

    let ev = |kind: EventKind, name: &str| {
        let mut e = NormalizedEvent::new(kind, name);
        e.session_id = Some("paused-1".into());
        e.tool_name = Some("Bash".into());
        e
    };
    let mut book = AgentBook::default();
    book.apply(
        7,
        AgentKind::ClaudeCode,
        &ev(EventKind::UserPromptSubmit, "UserPromptSubmit"),
        Instant::now(),
    );
    assert_eq!(book.row(7).map(|r| r.state), Some(AgentState::Working));
    // Working with no event for 15 minutes becomes unknown, exactly at the deadline.
    advance(WORKING_STALE_AFTER - std::time::Duration::from_secs(1)).await;
    assert!(book.tick(Instant::now()).is_empty());
    assert_eq!(
        book.next_deadline(),
        Some(Instant::now() + std::time::Duration::from_secs(1))
    );
    advance(std::time::Duration::from_secs(1)).await;
    book.tick(Instant::now());
    assert_eq!(book.row(7).map(|r| r.state), Some(AgentState::Unknown));
    // Blocked: a PreToolUse within 1.5 s keeps it; after that it moves on; blocked never ages.
    book.apply(
        7,
        AgentKind::ClaudeCode,
        &ev(EventKind::PermissionRequest, "PermissionRequest"),
        Instant::now(),
    );
    advance(BLOCKED_GRACE / 2).await;
    book.apply(
        7,
        AgentKind::ClaudeCode,
        &ev(EventKind::PreToolUse, "PreToolUse"),
        Instant::now(),
    );
    assert_eq!(book.row(7).map(|r| r.state), Some(AgentState::Blocked));
    advance(WORKING_STALE_AFTER * 2).await;
    book.tick(Instant::now());
    assert_eq!(
        book.row(7).map(|r| r.state),
        Some(AgentState::Blocked),
        "blocked never ages"
    );
    book.apply(
        7,
        AgentKind::ClaudeCode,
        &ev(EventKind::PreToolUse, "PreToolUse"),
        Instant::now(),
    );
    assert_eq!(book.row(7).map(|r| r.state), Some(AgentState::Working));
}

#[test]
fn an_mcp_connect_makes_a_row_only_where_hooks_do_not_report() {
    let t0 = Instant::now();
    let mut book = AgentBook::default();
    let codex = AgentKind::Codex;

    // No hooks: the connect alone gives the pane an idle row.
    assert_eq!(book.mcp_connected(P, codex, t0).len(), 1);
    assert_eq!(state(&book), AgentState::Idle);
    // A row that ended without hooks comes back when a CLI connects again.
    book.pane_exited(P, secs(t0, 1));
    assert_eq!(state(&book), AgentState::Done);
    book.mcp_connected(P, codex, secs(t0, 2));
    assert_eq!(state(&book), AgentState::Idle);

    // Once hooks report the row, they alone end it: Codex's MCP client connecting again on
    // its way out, after SessionEnd, leaves the row done.
    book.apply(
        P,
        codex,
        &ev(EventKind::UserPromptSubmit, "c1"),
        secs(t0, 3),
    );
    book.apply(P, codex, &ev(EventKind::SessionEnd, "c1"), secs(t0, 4));
    assert_eq!(state(&book), AgentState::Done);
    assert!(book.mcp_connected(P, codex, secs(t0, 5)).is_empty());
    assert_eq!(state(&book), AgentState::Done);
    // ... until the hooks start the next session.
    book.apply(P, codex, &ev(EventKind::SessionStart, "c2"), secs(t0, 6));
    assert_eq!(state(&book), AgentState::Idle);

    // Another CLI connecting takes the pane over, hooks or not, and its row starts unhooked.
    book.mcp_connected(P, CLAUDE, secs(t0, 7));
    let row = book.row(P).expect("row");
    assert_eq!(
        (row.kind, row.state, row.hooked),
        (CLAUDE, AgentState::Idle, false)
    );
}

#[test]
fn explain_escapes_what_payloads_supplied() {
    let t0 = Instant::now();
    let mut book = AgentBook::default();
    let mut e = ev(EventKind::SessionStart, "s\u{1b}]52;c;aGk=\u{7}");
    e.cwd = Some("/tmp/\u{1b}[2J".into());
    e.raw_event_name = "Session\u{1b}[31mStart".into();
    book.apply(P, CLAUDE, &e, t0);
    let text = book.explain(P, t0);
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{text:?}"
    );
    assert!(text.contains("\\x1b]52;c;aGk=\\x07"), "{text}");
}
