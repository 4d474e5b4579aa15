//! The "always" approval rules the human made, saved with their scope and set again after a
//! restart: a rule for every pane as soon as the server starts; a rule for one pane when that
//! pane's session is restored, on the pane's new id (found by its record id, CALYX_SESSION_ID,
//! which a restored pane keeps). Until then it waits here and is saved again unchanged;
//! forgetting its session forgets it.

use std::collections::HashSet;

use calyx_integrations::AgentKind;

use crate::approvals::rules::Scope;
use crate::layout::PaneId;
use crate::persist::record::SavedRule;
use crate::persist::SavedSession;
use crate::server::model::state::SessionId;
use crate::server::owner::Server;

/// The asker name a saved rule's `cli` stands for ([`crate::approvals::Asker::as_str`]).
fn asker_name(cli: &str) -> Option<&'static str> {
    if cli == "mcp" {
        return Some("mcp");
    }
    cli.parse::<AgentKind>().ok().map(AgentKind::as_str)
}

/// The record ids of a saved session's panes.
fn record_ids(session: &SavedSession) -> impl Iterator<Item = &str> {
    session
        .windows
        .iter()
        .flat_map(|w| &w.panes)
        .map(|p| p.record_id.as_str())
}

impl Server {
    /// The rules as they are saved: the ones set now, each with its pane's record id (a rule
    /// whose pane is gone is not saved: it could never apply again), then those still waiting
    /// for their session's restore.
    pub(crate) fn saved_rules(&self) -> Vec<SavedRule> {
        // Rules another machine pushed are its own: it pushes them again over its link.
        let mine = self
            .approvals
            .rules()
            .iter()
            .filter(|r| !matches!(r.scope, Scope::From(_)));
        let live = mine.filter_map(|r| {
            let pane = match r.pane {
                Some(id) => Some(self.state.panes.get(&id)?.record_id.clone()),
                None => None,
            };
            Some(SavedRule {
                cli: r.cli.to_string(),
                tool: r.tool.clone(),
                covers: crate::approvals::rules::covers_words(&r.covers),
                pane,
                matches: Some(r.covers.clone()),
                anywhere: r.scope == Scope::Anywhere,
            })
        });
        live.chain(self.persisted.waiting_rules.iter().cloned())
            .collect()
    }

    /// At start, with the state file read: every pane's rules are set now; a pane's rule waits
    /// for its session's restore (and is dropped when no saved session has its pane).
    pub(crate) fn apply_saved_rules_at_start(&mut self) {
        let rules = std::mem::take(&mut self.persisted.waiting_rules);
        let saved_panes: HashSet<String> = self
            .persisted
            .dormant
            .iter()
            .flat_map(record_ids)
            .map(str::to_string)
            .collect();
        for rule in rules {
            match &rule.pane {
                None => self.set_saved_rule(&rule, None),
                Some(record) if saved_panes.contains(record) => {
                    self.persisted.waiting_rules.push(rule)
                }
                Some(_) => {}
            }
        }
    }

    /// After `session` was restored: the rules waiting for its panes, set on their new ids.
    pub(crate) fn apply_saved_rules_for(&mut self, session: SessionId) {
        let panes: Vec<(String, PaneId)> = self
            .state
            .panes
            .values()
            .filter(|p| p.session == session)
            .map(|p| (p.record_id.clone(), p.id))
            .collect();
        let pane_of = |record: &str| panes.iter().find(|(r, _)| r == record).map(|(_, id)| *id);
        let (now, later): (Vec<_>, Vec<_>) = std::mem::take(&mut self.persisted.waiting_rules)
            .into_iter()
            .partition(|r| r.pane.as_deref().and_then(pane_of).is_some());
        self.persisted.waiting_rules = later;
        for rule in now {
            let pane = rule.pane.as_deref().and_then(pane_of);
            self.set_saved_rule(&rule, pane);
        }
    }

    /// `calyx kill -t NAME` forgot `session`: so are the rules waiting for its panes.
    pub(crate) fn forget_rules_of(&mut self, session: &SavedSession) {
        let records: HashSet<&str> = record_ids(session).collect();
        self.persisted
            .waiting_rules
            .retain(|r| !r.pane.as_deref().is_some_and(|p| records.contains(p)));
    }

    /// Sets one saved rule for `pane` (None: every pane). A rule from an older file (no
    /// `matches`) or for a CLI this calyx does not know is not set.
    fn set_saved_rule(&mut self, rule: &SavedRule, pane: Option<PaneId>) {
        let (Some(covers), Some(cli)) = (rule.matches.clone(), asker_name(&rule.cli)) else {
            tracing::info!(
                "saved approval rule not set again: {} {}: {}",
                rule.cli,
                rule.tool,
                rule.covers
            );
            return;
        };
        let scope = if rule.anywhere {
            Scope::Anywhere
        } else {
            Scope::Here
        };
        self.approvals
            .restore_rule(pane, cli, rule.tool.clone(), covers, scope);
    }
}
