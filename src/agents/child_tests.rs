//! Subagent rules: child rows under their parent, and what retires them.

use calyx_integrations::{AgentKind, EventKind};
use std::time::Duration;
use tokio::time::Instant;

use super::tests::{ev, secs, state, sub, working, CLAUDE, P};
use super::*;

#[test]
fn parent_stop_keeps_children_session_end_retires_them() {
    let t0 = Instant::now();
    let mut book = AgentBook::default();
    working(&mut book, t0);
    let tr = book.apply(
        P,
        CLAUDE,
        &sub(EventKind::SubagentStart, "s1", "a1"),
        secs(t0, 1),
    );
    assert_eq!(tr.len(), 1);
    assert_eq!(tr[0].subagent.as_deref(), Some("a1"));
    let mut pre = sub(EventKind::PreToolUse, "s1", "a1");
    pre.tool_name = Some("Read".into());
    book.apply(P, CLAUDE, &pre, secs(t0, 2));
    let child = book.row(P).and_then(|r| r.subagents.first().cloned());
    assert_eq!(
        child.as_ref().and_then(|c| c.last_tool.clone()).as_deref(),
        Some("Read")
    );
    assert_eq!(
        child.as_ref().and_then(|c| c.agent_type.clone()).as_deref(),
        Some("general-purpose")
    );
    assert_eq!(
        book.row(P).and_then(|r| r.last_tool.clone()),
        None,
        "child tools stay on the child"
    );
    book.apply(P, CLAUDE, &ev(EventKind::Stop, "s1"), secs(t0, 3));
    assert_eq!(state(&book), AgentState::Idle);
    assert_eq!(book.row(P).map(|r| r.subagents.len()), Some(1));
    let views = book.rows(secs(t0, 31));
    assert_eq!(views[0].subagents[0].elapsed, Duration::from_secs(30));
    let tr = book.apply(P, CLAUDE, &ev(EventKind::SessionEnd, "s1"), secs(t0, 40));
    assert!(tr
        .iter()
        .any(|t| t.subagent.as_deref() == Some("a1") && t.to == AgentState::Done));
    assert_eq!(book.row(P).map(|r| r.subagents.len()), Some(0));
    assert_eq!(state(&book), AgentState::Done);
}

#[test]
fn subagent_stop_retires_only_that_child() {
    let t0 = Instant::now();
    let mut book = AgentBook::default();
    working(&mut book, t0);
    book.apply(P, CLAUDE, &sub(EventKind::SubagentStart, "s1", "a1"), t0);
    book.apply(P, CLAUDE, &sub(EventKind::SubagentStart, "s1", "a2"), t0);
    book.apply(
        P,
        CLAUDE,
        &sub(EventKind::SubagentStop, "s1", "a1"),
        secs(t0, 5),
    );
    let ids: Vec<String> = book
        .row(P)
        .map(|r| r.subagents.iter().map(|c| c.agent_id.clone()).collect())
        .unwrap_or_default();
    assert_eq!(ids, vec!["a2".to_string()]);
    assert_eq!(state(&book), AgentState::Working);
}

#[test]
fn agent_type_without_agent_id_is_the_main_thread() {
    let t0 = Instant::now();
    let mut book = AgentBook::default();
    working(&mut book, t0);
    let mut e = ev(EventKind::Stop, "s1");
    e.agent_type = Some("reviewer".into());
    book.apply(P, CLAUDE, &e, secs(t0, 1));
    assert_eq!(state(&book), AgentState::Idle);
    assert_eq!(book.row(P).map(|r| r.subagents.len()), Some(0));
}

#[test]
fn child_teardown_as_session_end_retires_the_child_not_the_parent() {
    // Grok: subagent_start carries the parent's sessionId and the child's id; the child's
    // teardown arrives as SessionEnd with the child's id as session.
    let t0 = Instant::now();
    let mut book = AgentBook::default();
    let grok = AgentKind::Grok;
    book.apply(P, grok, &ev(EventKind::UserPromptSubmit, "parent"), t0);
    book.apply(
        P,
        grok,
        &sub(EventKind::SubagentStart, "parent", "child"),
        t0,
    );
    book.apply(P, grok, &ev(EventKind::SessionEnd, "child"), secs(t0, 5));
    assert_eq!(state(&book), AgentState::Working);
    assert_eq!(book.row(P).map(|r| r.subagents.len()), Some(0));
    assert_eq!(
        book.row(P).and_then(|r| r.session_id.clone()).as_deref(),
        Some("parent")
    );
}

#[test]
fn an_opencode_task_session_going_idle_retires_its_child_row() {
    // OpenCode runs a task as a child session (session.created with parentID) and never
    // deletes it: the child's own session.idle (Stop) is the task's end. The parent works on.
    let t0 = Instant::now();
    let mut book = AgentBook::default();
    let oc = AgentKind::OpenCode;
    book.apply(P, oc, &ev(EventKind::UserPromptSubmit, "parent"), t0);
    book.apply(P, oc, &sub(EventKind::SubagentStart, "parent", "child"), t0);
    assert_eq!(book.row(P).map(|r| r.subagents.len()), Some(1));
    book.apply(P, oc, &ev(EventKind::PreToolUse, "child"), secs(t0, 1));
    assert_eq!(book.row(P).map(|r| r.subagents.len()), Some(1));
    book.apply(P, oc, &ev(EventKind::Stop, "child"), secs(t0, 2));
    assert_eq!(book.row(P).map(|r| r.subagents.len()), Some(0));
    assert_eq!(state(&book), AgentState::Working);
}

#[test]
fn subagent_permission_request_blocks_the_pane() {
    let t0 = Instant::now();
    let mut book = AgentBook::default();
    working(&mut book, t0);
    let mut perm = sub(EventKind::PermissionRequest, "s1", "a1");
    perm.tool_name = Some("Bash".into());
    let tr = book.apply(P, CLAUDE, &perm, secs(t0, 1));
    assert!(tr
        .iter()
        .any(|t| t.subagent.is_none() && t.to == AgentState::Blocked));
    let mut post = sub(EventKind::PostToolUse, "s1", "a1");
    post.tool_name = Some("Bash".into());
    book.apply(P, CLAUDE, &post, secs(t0, 9));
    assert_eq!(state(&book), AgentState::Working);
}

/// A subagent event carrying a tool.
fn sub_tool(kind: EventKind, agent: &str, tool: &str) -> calyx_integrations::NormalizedEvent {
    let mut e = sub(kind, "s1", agent);
    e.tool_name = Some(tool.into());
    e.tool_input = Some(serde_json::json!({"command": format!("{tool} by {agent}")}));
    e
}

#[test]
fn only_the_subagent_that_asked_answers_its_request() {
    let t0 = Instant::now();
    let mut book = AgentBook::default();
    working(&mut book, t0);
    book.apply(
        P,
        CLAUDE,
        &sub_tool(EventKind::PermissionRequest, "a1", "Bash"),
        secs(t0, 1),
    );
    assert_eq!(state(&book), AgentState::Blocked);
    // Another subagent's tools, past the grace, and the main agent's: a1 still waits.
    book.apply(
        P,
        CLAUDE,
        &sub_tool(EventKind::PreToolUse, "a2", "Read"),
        secs(t0, 5),
    );
    book.apply(
        P,
        CLAUDE,
        &sub_tool(EventKind::PostToolUse, "a2", "Read"),
        secs(t0, 6),
    );
    let mut main_tool = ev(EventKind::PreToolUse, "s1");
    main_tool.tool_name = Some("Grep".into());
    book.apply(P, CLAUDE, &main_tool, secs(t0, 7));
    assert_eq!(state(&book), AgentState::Blocked);
    // a1's own tool running answers it.
    book.apply(
        P,
        CLAUDE,
        &sub_tool(EventKind::PreToolUse, "a1", "Bash"),
        secs(t0, 8),
    );
    assert_eq!(state(&book), AgentState::Working);
}

#[test]
fn the_main_turn_ending_leaves_a_subagents_request_waiting_and_its_end_settles_it() {
    let t0 = Instant::now();
    let mut book = AgentBook::default();
    working(&mut book, t0);
    book.apply(
        P,
        CLAUDE,
        &sub_tool(EventKind::PermissionRequest, "bg", "Bash"),
        secs(t0, 1),
    );
    // Claude runs subagents in the background: the main turn's Stop does not answer bg.
    book.apply(P, CLAUDE, &ev(EventKind::Stop, "s1"), secs(t0, 2));
    assert_eq!(state(&book), AgentState::Blocked);
    // bg is denied in Claude's own dialog (no tool event) and stops: the row goes back to what
    // the main agent is doing, idle, instead of staying blocked for ever.
    book.apply(
        P,
        CLAUDE,
        &sub(EventKind::SubagentStop, "s1", "bg"),
        secs(t0, 3),
    );
    assert_eq!(state(&book), AgentState::Idle);
    assert!(book.row(P).is_some_and(|r| r.subagents.is_empty()));
}

#[test]
fn late_events_of_an_ended_subagent_or_session_bring_nothing_back() {
    let t0 = Instant::now();
    let mut book = AgentBook::default();
    working(&mut book, t0);
    book.apply(
        P,
        CLAUDE,
        &sub(EventKind::SubagentStart, "s1", "a1"),
        secs(t0, 1),
    );
    book.apply(
        P,
        CLAUDE,
        &sub(EventKind::SubagentStop, "s1", "a1"),
        secs(t0, 2),
    );
    // a1's PostToolUse arrives after its SubagentStop (async hooks).
    book.apply(
        P,
        CLAUDE,
        &sub_tool(EventKind::PostToolUse, "a1", "Read"),
        secs(t0, 3),
    );
    assert!(
        book.row(P).is_some_and(|r| r.subagents.is_empty()),
        "no orphan child"
    );

    // Session s1 ends, s2 starts; a trailing PostToolUse of s1 does not take the row back.
    book.apply(P, CLAUDE, &ev(EventKind::SessionEnd, "s1"), secs(t0, 4));
    book.apply(P, CLAUDE, &ev(EventKind::SessionStart, "s2"), secs(t0, 5));
    book.apply(P, CLAUDE, &ev(EventKind::PostToolUse, "s1"), secs(t0, 6));
    let row = book.row(P).expect("row");
    assert_eq!(
        (row.state, row.session_id.as_deref()),
        (AgentState::Idle, Some("s2"))
    );
    // Nor does a subagent event after the session is over.
    book.apply(P, CLAUDE, &ev(EventKind::SessionEnd, "s2"), secs(t0, 7));
    book.apply(
        P,
        CLAUDE,
        &sub_tool(EventKind::PreToolUse, "late", "Read"),
        secs(t0, 8),
    );
    assert!(book.row(P).is_some_and(|r| r.subagents.is_empty()));
}
