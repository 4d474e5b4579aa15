//! Rules that hold "anywhere" across saved machines (issue 20 §3), the server's side; the
//! rules themselves are in `approvals::anywhere`.
//!
//! On the human's server: its anywhere rules (`e`/`E`) are pushed, as a whole set, over each
//! live link: when the link comes up (a machine that restarted gets them again), and to every
//! live link when the set changes (a rule made or revoked here). An `e`/`E` on another
//! machine's request is answered there; that machine sends back the rule it made, which is set
//! here only when it is the rule the panel showed the human for that request.
//!
//! On a linked machine: a connection's `AnywhereRules` replaces the rules it pushed before, and
//! they are revoked when that connection closes. Rules move only from the server that holds
//! them to the machines it links to: nothing in what a linked machine sends over the link
//! (its snapshots, its answers) sets a rule here but the answer to the human's own `e`/`E`,
//! checked against what the human saw.

use std::collections::HashMap;

use crate::approvals::anywhere::SharedRule;
use crate::approvals::rules::{covers_words, Covers};
use crate::protocol::{Request, Response, SnapshotApproval};
use crate::server::model::ids::ClientId;
use crate::server::owner::Server;

/// What the server keeps about anywhere rules on the links.
#[derive(Default)]
pub struct AnywhereLinks {
    /// Connections that pushed rules here, with the host they pushed for.
    pushed_by: HashMap<ClientId, String>,
    /// The set last pushed to every live link (a change is pushed again).
    last_pushed: Vec<SharedRule>,
}

/// Whether `rule`, sent back by a machine for the human's `key` (`e` or `E`) on its request
/// `shown`, is the rule the panel named for that key: same CLI and tool, the breadth the key
/// asks for, and the very words the choices line showed. Anything else is the other
/// machine's invention and sets nothing here.
pub fn is_the_rule_shown(rule: &SharedRule, shown: &SnapshotApproval, key: char) -> bool {
    let wide = matches!(rule.covers, Covers::Prefix { .. } | Covers::Directory(_));
    let keys = match key {
        'e' if !wide => "a/A always ",
        'E' if wide => "p/P always ",
        _ => return false,
    };
    let words = calyx_tui::escape::shorten_middle(&covers_words(&rule.covers), 70);
    rule.cli == shown.cli
        && rule.tool == shown.tool
        && shown.choices.contains(&format!("{keys}{words}"))
}

impl Server {
    /// `AnywhereRules` from connection `client`: the rules of the human's server on `from`.
    pub(crate) fn anywhere_pushed(
        &mut self,
        client: ClientId,
        from: &str,
        rules: &[SharedRule],
    ) -> Response {
        let host = crate::remote::handshake::printable(from);
        self.anywhere.pushed_by.insert(client, host.clone());
        self.with_rows_moving(|queue| queue.replace_from(&host, rules));
        Response::Ok
    }

    /// Connection `client` speaks for the human's server on `host` (it answered an `e`/`E`).
    pub(crate) fn anywhere_connection(&mut self, client: ClientId, host: &str) {
        let host = crate::remote::handshake::printable(host);
        self.anywhere.pushed_by.insert(client, host);
    }

    /// Connection `client` closed: the rules it pushed go, unless another connection from the
    /// same host holds them.
    pub(crate) fn anywhere_link_closed(&mut self, client: ClientId) {
        let Some(host) = self.anywhere.pushed_by.remove(&client) else {
            return;
        };
        if self.anywhere.pushed_by.values().any(|h| *h == host) {
            return;
        }
        self.with_rows_moving(|queue| queue.drop_from(&host));
    }

    /// Runs `change` on the approval queue; requests it answered move their agents on, and
    /// the screens redraw when it changed something.
    fn with_rows_moving(
        &mut self,
        change: impl FnOnce(&mut crate::approvals::ApprovalQueue) -> bool,
    ) {
        let before: Vec<(
            u64,
            crate::layout::PaneId,
            calyx_integrations::AgentKind,
            String,
        )> = self
            .approvals
            .pending()
            .iter()
            .filter_map(|p| Some((p.id, p.pane, p.asker.hook()?, p.tool.clone())))
            .collect();
        if !change(&mut self.approvals) {
            return;
        }
        let still: std::collections::HashSet<u64> =
            self.approvals.pending().iter().map(|p| p.id).collect();
        for (_, pane, kind, tool) in before.into_iter().filter(|b| !still.contains(&b.0)) {
            self.agent_decided(pane, kind, Some(tool));
        }
        for c in self.state.clients.values_mut() {
            c.dirty = true;
        }
    }

    /// Pushes this server's anywhere rules to every live link when they changed since the
    /// last push.
    pub(crate) fn anywhere_sync(&mut self) {
        let now = self.approvals.anywhere_rules();
        if now == self.anywhere.last_pushed {
            return;
        }
        self.anywhere.last_pushed = now;
        let live: Vec<String> = self
            .machines
            .views()
            .iter()
            .filter(|v| v.live())
            .map(|v| v.machine.name.clone())
            .collect();
        for name in live {
            self.anywhere_push_to(&name);
        }
    }

    /// Link `name` just came up: it gets this server's anywhere rules (none set: nothing is
    /// sent, and a machine holds none from this one once the last link closed).
    pub(crate) fn anywhere_link_up(&mut self, name: &str) {
        if !self.approvals.anywhere_rules().is_empty() {
            self.anywhere_push_to(name);
        }
    }

    fn anywhere_push_to(&mut self, name: &str) {
        let request = Request::AnywhereRules {
            from: super::machines::this_host(),
            rules: self.approvals.anywhere_rules(),
        };
        match self.machines.ask(name, request) {
            Ok(answer) => {
                let name = name.to_string();
                tokio::spawn(async move {
                    match answer.await {
                        Ok(Ok(Response::Ok)) => {}
                        other => tracing::warn!("anywhere rules not taken by {name}: {other:?}"),
                    }
                });
            }
            Err(e) => tracing::info!("anywhere rules not pushed: {e}"),
        }
    }

    /// Machine `machine` made `rule` for the human's `key` on its request `shown` (as the
    /// panel showed it when the key was pressed): set here as an anywhere rule, and pushed to
    /// every live link, when it is the rule the panel named.
    pub(crate) fn anywhere_adopt(
        &mut self,
        machine: &str,
        shown: &SnapshotApproval,
        key: char,
        rule: &SharedRule,
    ) {
        if !is_the_rule_shown(rule, shown, key) {
            tracing::warn!(
                "{machine} answered an anywhere rule that is not the one shown: not set here"
            );
            return;
        }
        self.with_rows_moving(|queue| queue.add_anywhere(rule));
        self.anywhere_sync();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(choices: &str) -> SnapshotApproval {
        SnapshotApproval {
            id: 3,
            pane: "%1".into(),
            cli: "claude-code".into(),
            tool: "Bash".into(),
            summary: "npm test --watch".into(),
            choices: choices.into(),
        }
    }

    fn rule(covers: Covers) -> SharedRule {
        SharedRule {
            cli: "claude-code".into(),
            tool: "Bash".into(),
            covers,
        }
    }

    #[test]
    fn only_the_rule_the_panel_named_is_taken_from_a_linked_machine() {
        let line = "a/A always exactly `npm test --watch` (here/every pane)  ·  p/P always \
                    commands starting with `npm test`  ·  e/E as A/P on every machine";
        let exact = rule(Covers::Command {
            raw: "npm test --watch".into(),
            rest: serde_json::json!({}),
        });
        let prefix = rule(Covers::Prefix {
            prefix: "npm test".into(),
            rest: serde_json::json!({}),
        });
        assert!(is_the_rule_shown(&exact, &shown(line), 'e'));
        assert!(is_the_rule_shown(&prefix, &shown(line), 'E'));
        // The wrong breadth for the key, a rule never shown, another tool: nothing.
        assert!(!is_the_rule_shown(&prefix, &shown(line), 'e'));
        assert!(!is_the_rule_shown(&exact, &shown(line), 'E'));
        assert!(!is_the_rule_shown(&rule(Covers::Tool), &shown(line), 'e'));
        let mut other_tool = exact.clone();
        other_tool.tool = "Write".into();
        assert!(!is_the_rule_shown(&other_tool, &shown(line), 'e'));
        assert!(!is_the_rule_shown(&exact, &shown(line), 'a'));
    }
}
