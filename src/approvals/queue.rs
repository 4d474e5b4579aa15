//! Pending approval requests, the always-allow rules the human set, and the record of every
//! request and decision (`approvals.jsonl`).
//!
//! A [`Pending`] holds the only way to answer its HTTP request. Dropping it answers "no
//! decision" (the CLI's own fallback, or an explicit deny where the CLI has none), so a request
//! can never hang and nothing but [`ApprovalQueue::decide`] with a human's [`Decision`] (or a
//! rule the human set) ever produces an allow.

use std::collections::VecDeque;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use calyx_integrations::AgentKind;
use serde_json::{json, Value};
use tokio::sync::oneshot;
use tokio::time::Instant;

use super::answer::{Decision, Outcome, Silence};
use super::app::{AppKind, AppTarget, APP_EXPIRY};
use super::asker::Asker;
use super::gate::Schema;
use super::redact::redact;
use super::rules::{covers_for, subject_of, Always, Breadth, Rule, Scope, Subject};
use super::summary::Summary;
use crate::layout::PaneId;

/// The server gives up on a request after this long (`calyx hook` waits 585 s, the CLI's hook
/// entry 600 s: the innermost timer fires first, so calyx always answers before being cut off).
pub const EXPIRY: Duration = Duration::from_secs(570);

/// Who ended a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecidedBy {
    Human,
    Rule,
    Expiry,
    Withdrawn,
}

impl DecidedBy {
    fn as_str(self) -> &'static str {
        match self {
            DecidedBy::Human => "human",
            DecidedBy::Rule => "rule",
            DecidedBy::Expiry => "expiry",
            DecidedBy::Withdrawn => "withdrawn",
        }
    }
}

/// One request waiting for the human.
pub struct Pending {
    pub id: u64,
    pub pane: PaneId,
    pub asker: Asker,
    pub schema: Schema,
    pub tool: String,
    pub summary: Summary,
    /// What the call asks, as far as an "always" rule can cover it.
    pub subject: Subject,
    /// Claude Code's `permission_suggestions`, offered as numbered "always" choices.
    pub suggestions: Vec<Value>,
    /// The tool input of a request a CLI's hook made (None for calyx's own MCP requests), to
    /// recognise the call when the CLI reports it finished ([`super::elsewhere`]).
    pub input: Option<Value>,
    /// The subagent whose hook asked (None: the main agent, or calyx's own MCP requests).
    pub agent_id: Option<String>,
    pub created: Instant,
    pub created_wall: SystemTime,
    /// How long this request may wait, when shorter than its schema's: calyx's own MCP tools
    /// pass their `timeout_ms`, so the queue (not the caller) decides between a late allow and
    /// the timeout, and an allow can never type after the tool has answered "timeout".
    pub wait: Option<Duration>,
    /// What an MCP App view asks (None: an agent's gate or calyx's own tool).
    pub app: Option<AppTarget>,
    answer: Option<oneshot::Sender<Outcome>>,
}

impl Pending {
    fn answer(&mut self, outcome: Outcome) {
        if let Some(tx) = self.answer.take() {
            let _ = tx.send(outcome);
        }
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        // No decision (the CLI's own fallback, or an explicit deny for CLIs that have none).
        // Never an allow.
        self.answer(Outcome::NoDecision(Silence::ShuttingDown));
    }
}

/// How an allow is recorded: for the deny-only hooks (Gemini, Hermes) it only steps aside.
fn allow_outcome(schema: Schema) -> &'static str {
    if schema.can_allow() {
        "allow"
    } else {
        STEP_ASIDE
    }
}

/// The record of a human's (or a rule's) allow where the CLI's hook cannot allow.
pub const STEP_ASIDE: &str = "step aside (the CLI decides)";

/// A decided or ended request, for `calyx approvals`.
#[derive(Debug, Clone)]
pub struct Record {
    pub id: u64,
    pub pane: PaneId,
    pub asker: Asker,
    pub tool: String,
    pub headline: String,
    pub outcome: String,
    pub by: DecidedBy,
    pub at: SystemTime,
}

/// Everything about approvals the server owns.
pub struct ApprovalQueue {
    pending: Vec<Pending>,
    /// How long a request waits ([`EXPIRY`]; shorter only in tests).
    expiry: Duration,
    next_id: u64,
    /// The "always" rules the human set, for this server's life, each as narrow as the request
    /// it was made from (see [`super::rules`]); one CLI's tool each, so allowing Claude's
    /// `Bash` command does not allow Codex's.
    rules: Vec<Rule>,
    next_rule: u64,
    recent: VecDeque<Record>,
    log: Option<PathBuf>,
    /// The machine the human is answering from, while an answer that came over a saved
    /// machine's link is applied (see [`ApprovalQueue::set_answered_from`]).
    answered_from: Option<String>,
}

/// The request as it arrived, before it is queued.
pub struct NewRequest {
    pub pane: PaneId,
    pub asker: Asker,
    pub schema: Schema,
    pub tool: String,
    pub summary: Summary,
    pub suggestions: Vec<Value>,
    /// The CLI's tool input (None: not a CLI's hook, never answered elsewhere).
    pub input: Option<Value>,
    /// The subagent whose hook asked, if one did.
    pub agent_id: Option<String>,
    /// A shorter wait than the schema's (see [`Pending::wait`]).
    pub wait: Option<Duration>,
    /// An MCP App view's request (see [`super::app`]); None otherwise.
    pub app: Option<AppTarget>,
    pub answer: oneshot::Sender<Outcome>,
}

fn unix_seconds(t: SystemTime) -> f64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

impl ApprovalQueue {
    /// A queue recording to `log` (None: no record, for tests).
    pub fn new(log: Option<PathBuf>) -> Self {
        Self {
            pending: Vec::new(),
            expiry: EXPIRY,
            next_id: 1,
            rules: Vec::new(),
            next_rule: 1,
            recent: VecDeque::new(),
            log,
            answered_from: None,
        }
    }

    /// The machine the next answers come from (`calyx approve` on another machine, over its
    /// link), recorded in the log beside `by`; None again once they are applied.
    pub fn set_answered_from(&mut self, from: Option<String>) {
        self.answered_from = from;
    }

    /// Changes how long requests wait (end-to-end tests cannot wait 570 s; capped at EXPIRY).
    pub fn with_expiry(mut self, expiry: Duration) -> Self {
        self.expiry = expiry.min(EXPIRY);
        self
    }

    /// Queues a request, or answers it at once when a rule the human set allows it. Returns the
    /// id and whether it waits for the human.
    pub fn add(&mut self, request: NewRequest, now: Instant) -> (u64, bool) {
        let id = self.next_id;
        self.next_id += 1;
        let subject = subject_of(request.input.as_ref(), &request.summary);
        let mut pending = Pending {
            id,
            pane: request.pane,
            asker: request.asker,
            schema: request.schema,
            tool: request.tool,
            summary: request.summary,
            subject,
            suggestions: request.suggestions,
            input: request.input,
            agent_id: request.agent_id,
            created: now,
            created_wall: SystemTime::now(),
            wait: request.wait,
            app: request.app,
            answer: Some(request.answer),
        };
        self.write_log(&pending, "requested", None);
        // No rule ever answers an app request: its only "always" is the view's own.
        let by_rule = pending.app.is_none()
            && self.rule_covers(
                pending.pane,
                pending.asker.as_str(),
                &pending.tool,
                &pending.subject,
            );
        if by_rule {
            pending.answer(Outcome::Decided(Decision::Allow));
            let outcome = allow_outcome(pending.schema);
            self.finish(pending, outcome, DecidedBy::Rule);
            return (id, false);
        }
        self.pending.push(pending);
        (id, true)
    }

    /// Whether any rule the human set is about `cli`'s `tool` in `pane`, whatever it covers
    /// (a rule for one command of it counts). `cli` is the asker's name ([`Asker::as_str`]).
    pub fn rule_allows(&self, pane: PaneId, cli: &str, tool: &str) -> bool {
        self.rules
            .iter()
            .any(|r| r.cli == cli && r.tool == tool && r.pane.is_none_or(|p| p == pane))
    }

    /// Whether a rule the human set allows this call (so its request is answered at once):
    /// `cli`'s `tool` in `pane` with tool input `input` (a hook's call without one reads as
    /// null, as [`ApprovalQueue::add`] gets it).
    pub fn rule_allows_call(
        &self,
        pane: PaneId,
        cli: &str,
        tool: &str,
        input: Option<&Value>,
    ) -> bool {
        let input = input.unwrap_or(&Value::Null);
        let subject = subject_of(Some(input), &Summary::default());
        self.rule_covers(pane, cli, tool, &subject)
    }

    fn rule_covers(&self, pane: PaneId, cli: &str, tool: &str, subject: &Subject) -> bool {
        self.rules
            .iter()
            .any(|r| r.allows(pane, cli, tool, subject))
    }

    /// The rules the human set, oldest first.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Sets again a rule the human made before the server stopped (read from the state file;
    /// recorded as restored). Returns false when the same rule is already set.
    pub fn restore_rule(
        &mut self,
        pane: Option<PaneId>,
        cli: &'static str,
        tool: String,
        covers: super::rules::Covers,
        scope: Scope,
    ) -> bool {
        let same = |r: &Rule| {
            r.pane == pane
                && r.cli == cli
                && r.tool == tool
                && r.covers == covers
                && r.scope == scope
        };
        if self.rules.iter().any(same) {
            return false;
        }
        let rule = Rule {
            id: self.next_rule,
            pane,
            cli,
            tool,
            covers,
            scope,
        };
        self.next_rule += 1;
        self.write_rule_log(&rule, "rule restored");
        self.rules.push(rule);
        true
    }

    /// Puts a rule in force as it is (one carried across an upgrade); later rules are
    /// numbered after it.
    pub(super) fn insert_rule(&mut self, rule: Rule) {
        self.next_rule = self.next_rule.max(rule.id + 1);
        self.rules.push(rule);
    }

    /// Takes rule `id` back (recorded); returns whether there was one.
    pub fn revoke(&mut self, id: u64) -> bool {
        let Some(at) = self.rules.iter().position(|r| r.id == id) else {
            return false;
        };
        let rule = self.rules.remove(at);
        self.write_rule_log(&rule, "rule revoked");
        true
    }

    /// Whether calyx gave the CLI a decision (a human's or a rule's allow or deny) for a
    /// request of `pane` for `tool` within `within`. Not stepping aside, expiry or withdrawal:
    /// after those the CLI asks in its own dialog, and its agent is blocked again.
    pub fn answered_recently(&self, pane: PaneId, tool: &str, within: Duration) -> bool {
        let now = SystemTime::now();
        self.recent
            .iter()
            .rev()
            .take_while(|r| now.duration_since(r.at).map_or(true, |age| age <= within))
            .any(|r| {
                r.pane == pane
                    && r.tool == tool
                    && matches!(r.by, DecidedBy::Human | DecidedBy::Rule)
                    && r.outcome != STEP_ASIDE
            })
    }

    /// The requests waiting, oldest first.
    pub fn pending(&self) -> &[Pending] {
        &self.pending
    }

    /// Recently ended requests, newest last.
    pub fn recent(&self) -> impl Iterator<Item = &Record> {
        self.recent.iter()
    }

    /// Answers a request with the human's decision. `always` adds the exact rule for what it
    /// asks in this pane (`Some(false)`) or in every pane (`Some(true)`). Returns the pane, or
    /// None if the request is no longer pending.
    pub fn decide(&mut self, id: u64, decision: Decision, always: Option<bool>) -> Option<PaneId> {
        let always = always.map(|every_pane| Always {
            breadth: Breadth::Exact,
            every_pane,
            anywhere: false,
        });
        self.decide_always(id, decision, always)
    }

    /// [`ApprovalQueue::decide`] with the rule the human chose: exact, or the prefix or
    /// directory the panel named. A breadth the request has no rule for (no prefix to offer)
    /// answers nothing: the request stays pending. Returns the pane, or None if nothing was
    /// decided.
    pub fn decide_always(
        &mut self,
        id: u64,
        decision: Decision,
        always: Option<Always>,
    ) -> Option<PaneId> {
        let at = self.pending.iter().position(|p| p.id == id)?;
        // An app request's "always" is the view's (kept by `views::app_requests`), never a rule.
        let app = self.pending[at].app.is_some();
        let rule = match always {
            Some(a) if !app => {
                let p = &self.pending[at];
                let covers = covers_for(&p.subject, a.breadth)?;
                // An "anywhere" answer that came over a link is the answering machine's rule:
                // it pushes it (and revokes it) from there.
                let scope = match (a.anywhere, &self.answered_from) {
                    (false, _) => Scope::Here,
                    (true, None) => Scope::Anywhere,
                    (true, Some(host)) => Scope::From(host.clone()),
                };
                let rule = Rule {
                    id: self.next_rule,
                    pane: (!a.every_pane && !a.anywhere).then_some(p.pane),
                    cli: p.asker.as_str(),
                    tool: p.tool.clone(),
                    covers,
                    scope,
                };
                self.next_rule += 1;
                Some(rule)
            }
            _ => None,
        };
        let mut pending = self.pending.remove(at);
        if let Some(rule) = &rule {
            self.write_rule_log(rule, "rule added");
            self.rules.push(rule.clone());
        }
        // A rule the human just set is an "always" for CLIs that can remember one too.
        let decision = match decision {
            Decision::Allow if always.is_some() => Decision::AllowAlways,
            other => other,
        };
        let outcome = match &decision {
            Decision::Allow if !pending.schema.can_allow() => {
                "step aside (the CLI decides)".to_string()
            }
            Decision::Allow => "allow".to_string(),
            Decision::AllowAlways => "allow (always)".to_string(),
            Decision::AllowRemember { .. } => "allow (remembered by the CLI)".to_string(),
            Decision::Deny { message: Some(m) } => format!("deny: {}", redact(m)),
            Decision::Deny { message: None } => "deny".to_string(),
            Decision::DenyAndStop { message: Some(m) } => format!("deny and stop: {}", redact(m)),
            Decision::DenyAndStop { message: None } => "deny and stop".to_string(),
        };
        pending.answer(Outcome::Decided(decision));
        let pane = pending.pane;
        self.finish(pending, &outcome, DecidedBy::Human);
        // A rule just set also answers the other requests it covers.
        if let Some(rule) = rule {
            self.answer_covered(&rule);
        }
        Some(pane)
    }

    /// Allows the pending requests `rule` (just set) covers, as a rule's answer.
    pub(super) fn answer_covered(&mut self, rule: &Rule) {
        let covered: Vec<u64> = self
            .pending
            .iter()
            .filter(|p| p.app.is_none())
            .filter(|p| rule.allows(p.pane, p.asker.as_str(), &p.tool, &p.subject))
            .map(|p| p.id)
            .collect();
        for other in covered {
            if let Some(i) = self.pending.iter().position(|p| p.id == other) {
                let mut p = self.pending.remove(i);
                p.answer(Outcome::Decided(Decision::Allow));
                let outcome = allow_outcome(p.schema);
                self.finish(p, outcome, DecidedBy::Rule);
            }
        }
    }

    /// Adds `rule` (numbered here) as it is and records it; for [`super::anywhere`].
    pub(super) fn push_rule(&mut self, mut rule: Rule, event: &str) -> u64 {
        rule.id = self.next_rule;
        self.next_rule += 1;
        self.write_rule_log(&rule, event);
        self.rules.push(rule);
        self.next_rule - 1
    }

    /// Takes back every rule `which` picks, each recorded as `event`; returns how many.
    pub(super) fn revoke_where(&mut self, which: impl Fn(&Rule) -> bool, event: &str) -> usize {
        let (gone, kept): (Vec<Rule>, Vec<Rule>) =
            std::mem::take(&mut self.rules).into_iter().partition(which);
        self.rules = kept;
        for rule in &gone {
            self.write_rule_log(rule, event);
        }
        gone.len()
    }

    /// The hook process went away (agent interrupted, pane closed): forget the request.
    pub fn withdraw(&mut self, id: u64) -> Option<PaneId> {
        self.withdraw_as(id, "withdrawn")
    }

    /// Withdraws the app requests `which` picks (a newer one of the same view and kind replaces
    /// them, their page went away, their view was removed): each view gets the refusal.
    /// `outcome` says why, for the record. Returns whether any went.
    pub fn withdraw_apps(&mut self, which: impl Fn(&AppTarget) -> bool, outcome: &str) -> bool {
        let ids: Vec<u64> = self
            .pending
            .iter()
            .filter(|p| p.app.as_ref().is_some_and(&which))
            .map(|p| p.id)
            .collect();
        for id in &ids {
            self.withdraw_as(*id, outcome);
        }
        !ids.is_empty()
    }

    /// The app request `id` is, if it is one still pending.
    pub fn app_of(&self, id: u64) -> Option<&AppTarget> {
        self.pending.iter().find(|p| p.id == id)?.app.as_ref()
    }

    /// Whether whoever asked for request `id` still waits for its answer (false: its page or
    /// caller went away, or it is not pending). An Open Link whose page has closed stays
    /// pending and is carried out without the page.
    pub fn asker_waits(&self, id: u64) -> bool {
        self.pending
            .iter()
            .find(|p| p.id == id)
            .and_then(|p| p.answer.as_ref())
            .is_some_and(|tx| !tx.is_closed())
    }

    /// Whether a pending app request of `view` asks `kind` (for tests and the panel).
    pub fn app_pending(&self, view: crate::views::registry::ViewId, kind: AppKind) -> bool {
        self.pending.iter().any(|p| {
            p.app
                .as_ref()
                .is_some_and(|a| a.view == view && a.kind == kind)
        })
    }

    /// Ends a request without a decision; `outcome` says why, for the record. If its hook still
    /// listens it gets the CLI's answer to silence (its own prompt), or a deny where silence
    /// would run the call: a withdrawal is never an allow.
    fn withdraw_as(&mut self, id: u64, outcome: &str) -> Option<PaneId> {
        let at = self.pending.iter().position(|p| p.id == id)?;
        let mut pending = self.pending.remove(at);
        pending.answer(Outcome::NoDecision(Silence::Withdrawn));
        let pane = pending.pane;
        self.finish(pending, outcome, DecidedBy::Withdrawn);
        Some(pane)
    }

    /// An agent event from `pane`: withdraws the requests of that pane the CLI answered in its
    /// own dialog (see [`super::elsewhere`]). Returns whether any went.
    pub fn settle_from_event(
        &mut self,
        pane: PaneId,
        kind: AgentKind,
        event: &calyx_integrations::NormalizedEvent,
    ) -> bool {
        let ids: Vec<u64> = self
            .pending
            .iter()
            .filter(|p| p.pane == pane)
            .filter(|p| {
                let (Some(input), Some(asked)) = (p.input.as_ref(), p.asker.hook()) else {
                    return false;
                };
                let request = super::elsewhere::HookRequest {
                    kind: asked,
                    tool: &p.tool,
                    input,
                    agent_id: p.agent_id.as_deref(),
                };
                super::elsewhere::answered_elsewhere(request, kind, event)
            })
            .map(|p| p.id)
            .collect();
        for id in &ids {
            self.withdraw_as(*id, "answered in the CLI's own dialog");
        }
        !ids.is_empty()
    }

    /// Withdraws every request of a pane that closed.
    pub fn withdraw_pane(&mut self, pane: PaneId) -> bool {
        let ids: Vec<u64> = self
            .pending
            .iter()
            .filter(|p| p.pane == pane)
            .map(|p| p.id)
            .collect();
        for id in &ids {
            self.withdraw(*id);
        }
        !ids.is_empty()
    }

    /// Ends requests older than [`EXPIRY`]; returns their panes.
    pub fn expire(&mut self, now: Instant) -> Vec<PaneId> {
        let mut panes = Vec::new();
        while let Some(at) = self
            .pending
            .iter()
            .position(|p| now.duration_since(p.created) >= self.wait_of(p))
        {
            let mut pending = self.pending.remove(at);
            pending.answer(Outcome::NoDecision(Silence::Expired));
            panes.push(pending.pane);
            let outcome = if pending.schema.silence_falls_back() {
                "expired (the CLI asks itself)"
            } else {
                "expired (denied)"
            };
            self.finish(pending, outcome, DecidedBy::Expiry);
        }
        panes
    }

    /// When the oldest pending request expires.
    pub fn next_expiry(&self) -> Option<Instant> {
        self.pending
            .iter()
            .map(|p| p.created + self.wait_of(p))
            .min()
    }

    /// How long a request may wait: the queue's expiry, shorter for a schema whose CLI kills
    /// its hooks sooner (Hermes) or a request that asked for less.
    fn wait_of(&self, p: &Pending) -> Duration {
        // An app request waits an hour (or what it asked): no hook process is cut off meanwhile.
        if p.app.is_some() {
            return p.wait.unwrap_or(APP_EXPIRY);
        }
        [p.schema.max_wait(), p.wait]
            .into_iter()
            .flatten()
            .fold(self.expiry, Duration::min)
    }

    fn finish(&mut self, pending: Pending, outcome: &str, by: DecidedBy) {
        self.write_log(&pending, outcome, Some(by));
        self.recent.push_back(Record {
            id: pending.id,
            pane: pending.pane,
            asker: pending.asker,
            tool: pending.tool.clone(),
            headline: redact(&pending.summary.headline),
            outcome: outcome.to_string(),
            by,
            at: SystemTime::now(),
        });
        while self.recent.len() > 200 {
            self.recent.pop_front();
        }
    }

    /// Records a rule added or revoked, with what it covers in words.
    fn write_rule_log(&self, rule: &Rule, event: &str) {
        let Some(path) = &self.log else { return };
        let mut line = json!({
            "time": unix_seconds(SystemTime::now()),
            "event": event,
            "rule": rule.id,
            "pane": rule.pane.map(|p| format!("%{p}")),
            "cli": rule.cli,
            "tool": rule.tool,
            "covers": redact(&super::rules::covers_words(&rule.covers)),
        });
        if let (Some(from), Some(fields)) = (&self.answered_from, line.as_object_mut()) {
            fields.insert("from".into(), json!(from));
        }
        if let Some(fields) = line.as_object_mut() {
            match &rule.scope {
                Scope::Here => {}
                Scope::Anywhere => {
                    fields.insert("anywhere".into(), json!(true));
                }
                Scope::From(host) => {
                    fields.insert("anywhere".into(), json!(true));
                    fields.insert("from".into(), json!(host));
                }
            }
        }
        if let Err(e) = append_private(path, &format!("{line}\n")) {
            tracing::warn!("approvals record {}: {e}", path.display());
        }
    }

    fn write_log(&self, pending: &Pending, outcome: &str, by: Option<DecidedBy>) {
        let Some(path) = &self.log else { return };
        // Redacted as one text, so a private key block over several lines goes whole.
        let first: Vec<&str> = pending
            .summary
            .lines
            .iter()
            .take(20)
            .map(String::as_str)
            .collect();
        let summary: Vec<String> = redact(&first.join("\n"))
            .split('\n')
            .map(str::to_string)
            .collect();
        let mut line = json!({
            "time": unix_seconds(SystemTime::now()),
            "id": pending.id,
            "pane": format!("%{}", pending.pane),
            "cli": pending.asker.as_str(),
            "tool": pending.tool,
            "summary": redact(&pending.summary.headline),
            "detail": summary,
            "event": outcome,
            "by": by.map(DecidedBy::as_str),
        });
        if let (Some(from), Some(fields)) = (&self.answered_from, line.as_object_mut()) {
            fields.insert("from".into(), json!(from));
        }
        if let Err(e) = append_private(path, &format!("{line}\n")) {
            // The record is lost, but the decision stands: say so where the user can look.
            tracing::warn!("approvals record {}: {e}", path.display());
        }
    }
}

/// The record rotates to `approvals.jsonl.1` past this size, so it cannot fill the disk.
const LOG_ROTATE_BYTES: u64 = 16 << 20;

/// Appends to a file created 0600 (it may name commands with secrets the redaction missed),
/// first moving a file over [`LOG_ROTATE_BYTES`] aside (one old file is kept).
fn append_private(path: &PathBuf, text: &str) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    if std::fs::metadata(path).is_ok_and(|m| m.len() > LOG_ROTATE_BYTES) {
        let mut old = path.clone().into_os_string();
        old.push(".1");
        std::fs::rename(path, old)?;
    }
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)?;
    f.write_all(text.as_bytes())
}

#[cfg(test)]
mod record_tests {
    use super::*;

    #[test]
    fn the_record_rotates_past_its_size_and_stays_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("approvals.jsonl");
        let full = std::fs::File::create(&path).expect("create");
        full.set_len(LOG_ROTATE_BYTES + 1).expect("grow");
        append_private(&path, "{\"event\":\"requested\"}\n").expect("append");
        let rotated = dir.path().join("approvals.jsonl.1");
        assert_eq!(
            std::fs::metadata(&rotated).map(|m| m.len()).ok(),
            Some(LOG_ROTATE_BYTES + 1)
        );
        assert_eq!(
            std::fs::read_to_string(&path).expect("new record"),
            "{\"event\":\"requested\"}\n"
        );
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
