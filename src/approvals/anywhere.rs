//! Rules that hold "anywhere" (issue 20 §3): the human's server keeps the rules made with
//! `e`/`E` ([`Scope::Anywhere`]) and pushes the whole set over each live link to a saved
//! machine (`Request::AnywhereRules`); the machine there holds them as [`Scope::From`] that
//! host, replaced by each push and dropped when the link that pushed them closes (so a rule
//! revoked while the link was down is not kept there: the link that comes back pushes the set
//! again). A rule travels only that way: what this server pushes is its own anywhere rules,
//! never ones it was pushed, and nothing a linked machine sends back sets a rule here.

use serde::{Deserialize, Serialize};

use super::queue::ApprovalQueue;
use super::rules::{covers_words, Covers, Rule, Scope};

/// One anywhere rule as it travels: always for every pane (pane ids are each machine's own).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SharedRule {
    /// The CLI ([`super::Asker::as_str`]).
    pub cli: String,
    pub tool: String,
    pub covers: Covers,
}

impl SharedRule {
    /// The rule in words, escaped (it may have come from another machine).
    pub fn describe(&self) -> String {
        let v = calyx_tui::escape::visible;
        format!(
            "{} {}: {}",
            v(&self.cli),
            v(&self.tool),
            covers_words(&self.covers)
        )
    }
}

/// The `&'static str` a rule names its CLI with, for a name read from elsewhere (None: a CLI
/// this calyx does not know, whose rule could never match).
pub fn cli_named(name: &str) -> Option<&'static str> {
    if name == "mcp" {
        return Some("mcp");
    }
    name.parse::<calyx_integrations::AgentKind>()
        .ok()
        .map(|kind| kind.as_str())
}

fn shared(rule: &Rule) -> SharedRule {
    SharedRule {
        cli: rule.cli.to_string(),
        tool: rule.tool.clone(),
        covers: rule.covers.clone(),
    }
}

impl ApprovalQueue {
    /// This server's anywhere rules, as they are pushed to the linked machines. Rules pushed
    /// here from another machine ([`Scope::From`]) are not among them: they go no further.
    pub fn anywhere_rules(&self) -> Vec<SharedRule> {
        self.rules()
            .iter()
            .filter(|r| r.scope == Scope::Anywhere)
            .map(shared)
            .collect()
    }

    /// Sets an anywhere rule here (the human's `e`/`E` on another machine's request, whose
    /// rule that machine worked out); false when it is set already or names an unknown CLI.
    /// It answers the pending requests here that it covers.
    pub fn add_anywhere(&mut self, rule: &SharedRule) -> bool {
        let Some(cli) = cli_named(&rule.cli) else {
            return false;
        };
        if self.anywhere_rules().contains(rule) {
            return false;
        }
        let rule = Rule {
            id: 0,
            pane: None,
            cli,
            tool: rule.tool.clone(),
            covers: rule.covers.clone(),
            scope: Scope::Anywhere,
        };
        self.push_rule(rule.clone(), "rule added");
        self.answer_covered(&rule);
        true
    }

    /// Machine `host` pushed its anywhere rules: they replace what it pushed before (rules
    /// gone are revoked, new ones added and recorded with `"from": HOST, "anywhere": true`,
    /// and answer the pending requests they cover). Returns whether anything changed.
    pub fn replace_from(&mut self, host: &str, rules: &[SharedRule]) -> bool {
        let scope = Scope::From(host.to_string());
        let wanted: Vec<(&'static str, &SharedRule)> = rules
            .iter()
            .filter_map(|r| Some((cli_named(&r.cli)?, r)))
            .collect();
        let held = |r: &Rule| {
            wanted
                .iter()
                .any(|(cli, w)| r.cli == *cli && r.tool == w.tool && r.covers == w.covers)
        };
        let revoked = self.revoke_where(|r| r.scope == scope && !held(r), "rule revoked");
        let mut added = 0;
        for (cli, w) in wanted {
            let there = self.rules().iter().any(|r| {
                r.scope == scope && r.cli == cli && r.tool == w.tool && r.covers == w.covers
            });
            if there {
                continue;
            }
            let rule = Rule {
                id: 0,
                pane: None,
                cli,
                tool: w.tool.clone(),
                covers: w.covers.clone(),
                scope: scope.clone(),
            };
            self.push_rule(rule.clone(), "rule added");
            self.answer_covered(&rule);
            added += 1;
        }
        revoked + added > 0
    }

    /// The link from `host` closed: the rules it pushed are revoked (it pushes them again when
    /// it comes back). Returns whether there were any.
    pub fn drop_from(&mut self, host: &str) -> bool {
        let scope = Scope::From(host.to_string());
        self.revoke_where(|r| r.scope == scope, "rule revoked (link closed)") > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn npm_test() -> SharedRule {
        SharedRule {
            cli: "claude-code".into(),
            tool: "Bash".into(),
            covers: Covers::Prefix {
                prefix: "npm test".into(),
                rest: serde_json::json!({}),
            },
        }
    }

    #[test]
    fn pushed_rules_replace_the_last_push_and_are_never_pushed_on() {
        let mut queue = ApprovalQueue::new(None);
        assert!(queue.replace_from("laptop", &[npm_test()]));
        assert!(!queue.replace_from("laptop", &[npm_test()]), "no change");
        assert_eq!(queue.rules().len(), 1);
        assert_eq!(queue.rules()[0].scope, Scope::From("laptop".into()));
        assert_eq!(queue.rules()[0].pane, None);
        // What this server would push holds only its own anywhere rules.
        assert!(queue.anywhere_rules().is_empty());
        assert!(queue.replace_from("laptop", &[]));
        assert!(queue.rules().is_empty(), "revoked by the next push");
    }

    #[test]
    fn one_hosts_push_leaves_anothers_and_this_machines_rules() {
        let mut queue = ApprovalQueue::new(None);
        assert!(queue.add_anywhere(&npm_test()));
        assert!(!queue.add_anywhere(&npm_test()), "set already");
        queue.replace_from("laptop", &[npm_test()]);
        queue.replace_from("desk", &[npm_test()]);
        assert!(queue.drop_from("laptop"));
        let scopes: Vec<Scope> = queue.rules().iter().map(|r| r.scope.clone()).collect();
        assert_eq!(scopes, vec![Scope::Anywhere, Scope::From("desk".into())]);
        assert_eq!(queue.anywhere_rules(), vec![npm_test()]);
        assert!(!queue.drop_from("laptop"));
    }

    #[test]
    fn a_rule_of_an_unknown_cli_is_not_set() {
        let mut queue = ApprovalQueue::new(None);
        let mut rule = npm_test();
        rule.cli = "no-such-cli".into();
        assert!(!queue.add_anywhere(&rule));
        assert!(!queue.replace_from("laptop", &[rule]));
        assert!(queue.rules().is_empty());
    }
}
