//! "Always" rules carried across an in-place upgrade (`calyx server-upgrade`): the new server
//! holds the same rules, with their ids, scope and exact coverage, so nothing the human allowed
//! asks again and nothing new is allowed.

use serde::{Deserialize, Serialize};

use super::queue::ApprovalQueue;
use super::rules::{Covers, Rule};
use crate::layout::PaneId;

/// One rule as handed over.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CarriedRule {
    pub id: u64,
    pub pane: Option<PaneId>,
    /// The CLI (`Asker::as_str`: a CLI's name, or `mcp`).
    pub cli: String,
    pub tool: String,
    pub covers: Covers,
    /// An anywhere rule (`e`/`E`): pushed to the linked machines (see `super::anywhere`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub anywhere: bool,
}

use super::anywhere::cli_named;
use super::rules::Scope;

impl ApprovalQueue {
    /// The rules to hand over. Rules another machine pushed are not: its link drops with the
    /// upgrade (clients reconnect) and pushes them again when it comes back.
    pub fn carry_out_rules(&self) -> Vec<CarriedRule> {
        self.rules()
            .iter()
            .filter(|r| !matches!(r.scope, Scope::From(_)))
            .map(|r| CarriedRule {
                id: r.id,
                pane: r.pane,
                cli: r.cli.to_string(),
                tool: r.tool.clone(),
                covers: r.covers.clone(),
                anywhere: r.scope == Scope::Anywhere,
            })
            .collect()
    }

    /// Puts handed-over rules in force (a rule of a CLI this binary does not know is left out:
    /// it could never match).
    pub fn carry_in_rules(&mut self, rules: &[CarriedRule]) {
        for carried in rules {
            let Some(cli) = cli_named(&carried.cli) else {
                continue;
            };
            self.insert_rule(Rule {
                id: carried.id,
                pane: carried.pane,
                cli,
                tool: carried.tool.clone(),
                covers: carried.covers.clone(),
                scope: if carried.anywhere {
                    Scope::Anywhere
                } else {
                    Scope::Here
                },
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_carried_out_come_back_in_force_with_their_ids() {
        let rules = vec![
            CarriedRule {
                id: 4,
                pane: Some(2),
                cli: "claude-code".into(),
                tool: "Bash".into(),
                covers: Covers::Prefix {
                    prefix: "npm test".into(),
                    rest: serde_json::json!({}),
                },
                anywhere: false,
            },
            CarriedRule {
                id: 5,
                pane: None,
                cli: "no-such-cli".into(),
                tool: "Bash".into(),
                covers: Covers::Tool,
                anywhere: false,
            },
            CarriedRule {
                id: 6,
                pane: None,
                cli: "codex".into(),
                tool: "Bash".into(),
                covers: Covers::Tool,
                anywhere: true,
            },
        ];
        let text = serde_json::to_string(&rules).expect("json");
        let read: Vec<CarriedRule> = serde_json::from_str(&text).expect("parse");
        let mut queue = ApprovalQueue::new(None);
        queue.carry_in_rules(&read);
        assert_eq!(
            queue.carry_out_rules(),
            vec![rules[0].clone(), rules[2].clone()]
        );
        assert_eq!(queue.rules()[1].scope, Scope::Anywhere);
        queue.replace_from("laptop", &[]);
        assert!(queue.replace_from(
            "laptop",
            &[crate::approvals::anywhere::SharedRule {
                cli: "codex".into(),
                tool: "Read".into(),
                covers: Covers::Tool,
            }]
        ));
        assert_eq!(
            queue.carry_out_rules().len(),
            2,
            "a pushed rule is not handed over"
        );
        assert_eq!(queue.rules()[0].cli, "claude-code");
    }
}
