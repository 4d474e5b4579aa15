//! Rules that hold "anywhere", on a server with fake panes: what a linked machine sends over
//! its link (snapshots, an answer naming a rule the human was not shown) sets no rule here;
//! rules another machine's server pushes hold only while its connection lasts and are never
//! pushed on from here.

use super::messages::Msg;
use super::on_fakes::{connect, server_on_fakes};
use super::owner::Server;
use crate::approvals::anywhere::SharedRule;
use crate::approvals::rules::{Covers, Scope};
use crate::config::Config;
use crate::machines::link::{LinkEvent, LinkState};
use crate::protocol::{ClientMessage, MachineSnapshot, Request, SnapshotApproval};

const LINK: u64 = 9;

fn server(dir: &tempfile::TempDir) -> Server {
    server_on_fakes(dir, Config::default()).0
}

/// build's pending `npm test --watch`, with the rule choices build names for it.
fn shown() -> SnapshotApproval {
    SnapshotApproval {
        id: 4,
        pane: "%3".into(),
        cli: "claude-code".into(),
        tool: "Bash".into(),
        summary: "npm test --watch".into(),
        choices: "a/A always exactly `npm test --watch` (here/every pane)  ·  p/P always \
                  commands starting with `npm test`  ·  e/E as A/P on every machine"
            .into(),
    }
}

fn snapshot() -> MachineSnapshot {
    MachineSnapshot {
        version: "0.0.0".into(),
        sessions: Vec::new(),
        agents: Vec::new(),
        approvals: vec![shown()],
    }
}

fn exact() -> SharedRule {
    SharedRule {
        cli: "claude-code".into(),
        tool: "Bash".into(),
        covers: Covers::Command {
            raw: "npm test --watch".into(),
            rest: serde_json::json!({}),
        },
    }
}

#[tokio::test]
async fn a_linked_machine_sets_no_rule_here_but_the_one_the_human_chose() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut server = server(&dir);
    server.machines.insert_for_test(
        crate::machines::Machine {
            name: "build".into(),
            target: "me@build".into(),
            enabled: true,
        },
        LinkState::Live,
        snapshot(),
    );
    // Its snapshots, whatever they hold, set nothing.
    server.handle(Msg::Machine(LinkEvent::Snapshot {
        name: "build".into(),
        snapshot: snapshot(),
    }));
    assert!(server.approvals.rules().is_empty());
    // An answer to the human's `e` naming a rule other than the one shown: nothing either.
    for (key, rule) in [
        (
            'e',
            SharedRule {
                covers: Covers::Tool,
                ..exact()
            },
        ),
        ('E', exact()),
        ('a', exact()),
        (
            'e',
            SharedRule {
                tool: "Write".into(),
                ..exact()
            },
        ),
    ] {
        server.handle(Msg::AnywhereMade {
            machine: "build".into(),
            shown: shown(),
            key,
            rule,
        });
        assert!(server.approvals.rules().is_empty(), "{key}");
    }
    // The rule the panel named for `e`: set here, for every pane, on every machine.
    server.handle(Msg::AnywhereMade {
        machine: "build".into(),
        shown: shown(),
        key: 'e',
        rule: exact(),
    });
    let rules = server.approvals.rules();
    assert_eq!(rules.len(), 1);
    assert_eq!(
        (rules[0].scope.clone(), rules[0].pane),
        (Scope::Anywhere, None)
    );
}

#[tokio::test]
async fn pushed_rules_hold_while_their_connection_lasts_and_go_no_further() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut server = server(&dir);
    let _link_rx = connect(&mut server, LINK, 64);
    server.handle(Msg::Message {
        id: LINK,
        msg: ClientMessage::Request(Request::AnywhereRules {
            from: "laptop".into(),
            rules: vec![exact()],
        }),
    });
    let rules = server.approvals.rules();
    assert_eq!(rules.len(), 1);
    assert_eq!(rules[0].scope, Scope::From("laptop".into()));
    assert!(server.approvals.anywhere_rules().is_empty(), "pushed on");
    assert!(server.saved_rules().is_empty(), "saved");
    // Not from a `:` prompt or a one-shot request without its connection.
    assert!(matches!(
        server.request(Request::AnywhereRules {
            from: "laptop".into(),
            rules: Vec::new(),
        }),
        crate::protocol::Response::Error(_)
    ));
    assert_eq!(server.approvals.rules().len(), 1);
    server.handle(Msg::Disconnected { id: LINK });
    assert!(
        server.approvals.rules().is_empty(),
        "kept after its link closed"
    );
}
