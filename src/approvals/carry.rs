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
}

/// The `&'static str` a rule names its CLI with, for a name read back (None: unknown here).
fn cli_named(name: &str) -> Option<&'static str> {
    if name == "mcp" {
        return Some("mcp");
    }
    name.parse::<calyx_integrations::AgentKind>()
        .ok()
        .map(|kind| kind.as_str())
}

impl ApprovalQueue {
    /// The rules to hand over.
    pub fn carry_out_rules(&self) -> Vec<CarriedRule> {
        self.rules()
            .iter()
            .map(|r| CarriedRule {
                id: r.id,
                pane: r.pane,
                cli: r.cli.to_string(),
                tool: r.tool.clone(),
                covers: r.covers.clone(),
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
            },
            CarriedRule {
                id: 5,
                pane: None,
                cli: "no-such-cli".into(),
                tool: "Bash".into(),
                covers: Covers::Tool,
            },
        ];
        let text = serde_json::to_string(&rules).expect("json");
        let read: Vec<CarriedRule> = serde_json::from_str(&text).expect("parse");
        let mut queue = ApprovalQueue::new(None);
        queue.carry_in_rules(&read);
        assert_eq!(queue.carry_out_rules(), rules[..1].to_vec());
        assert_eq!(queue.rules()[0].cli, "claude-code");
    }
}
