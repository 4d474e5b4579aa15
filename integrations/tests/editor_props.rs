//! Property tests for every config editor over generated files: installing twice equals
//! installing once; uninstall(install(x)) == x byte for byte; what is written parses; a shape
//! calyx does not recognise is never overwritten.

use proptest::prelude::*;
use serde_json::Value;

use calyx_integrations::config_edit::json::EntriesOutcome;
use calyx_integrations::config_edit::toml_block::{self, Header};
use calyx_integrations::config_edit::{is_calyx_command, yaml, JsonDoc, J};

// ---------- JSON ----------

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{1,6}".prop_map(String::from),
        Just("mcpServers".to_string()),
        Just("hooks".to_string()),
        Just("Stop".to_string()),
        Just("a b\"c".to_string()),
    ]
}

fn json_value() -> impl Strategy<Value = J> {
    let leaf = prop_oneof![
        any::<i32>().prop_map(|n| J::Int(n.into())),
        any::<bool>().prop_map(J::Bool),
        "[ -~]{0,8}".prop_map(J::Str),
        Just(J::s("\"/usr/bin/calyx\" hook codex")),
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(J::Arr),
            prop::collection::vec((key(), inner), 0..4).prop_map(|pairs| {
                let mut seen = std::collections::HashSet::new();
                J::Obj(
                    pairs
                        .into_iter()
                        .filter(|(k, _)| seen.insert(k.clone()))
                        .collect(),
                )
            }),
        ]
    })
}

/// A generated JSON file: a top-level object, in one of several styles.
fn json_file() -> impl Strategy<Value = String> {
    (
        prop::collection::vec((key(), json_value()), 0..5),
        prop_oneof![Just(""), Just("  "), Just("    "), Just("\t")],
        prop_oneof![Just("\n"), Just("\r\n")],
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(pairs, unit, nl, bom, trailing)| {
            let mut seen = std::collections::HashSet::new();
            let obj = J::Obj(
                pairs
                    .into_iter()
                    .filter(|(k, _)| seen.insert(k.clone()))
                    .collect(),
            );
            let mut text = obj.render(unit, "", nl);
            if trailing {
                text.push_str(nl);
            }
            if bom {
                text.insert(0, '\u{feff}');
            }
            text
        })
}

fn ours(v: &Value) -> bool {
    v.get("command")
        .and_then(Value::as_str)
        .is_some_and(is_calyx_command)
}

fn entry(cmd: &str) -> J {
    J::obj([("type", J::s("command")), ("command", J::s(cmd))])
}

fn json_install(text: &str) -> Result<String, String> {
    let mut doc = JsonDoc::parse(text).map_err(|e| e.to_string())?;
    let mcp = J::obj([("url", J::s("http://127.0.0.1:1/mcp")), ("n", J::Int(1))]);
    doc.set(&["mcpServers", "calyx-ipc"], &mcp)
        .map_err(|e| e.to_string())?;
    for event in ["Stop", "SessionStart"] {
        let want = [
            entry("\"/c/calyx\" hook x"),
            entry("\"/c/calyx\" hook x --approval"),
        ];
        doc.set_entries(&["hooks", event], &want, &ours)
            .map_err(|e| e.to_string())?;
    }
    Ok(doc.text())
}

fn json_uninstall(text: &str) -> String {
    let mut doc = JsonDoc::parse(text).unwrap();
    doc.remove(&["mcpServers", "calyx-ipc"], 1).unwrap();
    for event in ["Stop", "SessionStart"] {
        doc.remove_entries(&["hooks", event], &ours, 2).unwrap();
    }
    doc.text()
}

fn strict(text: &str) -> Value {
    serde_json::from_str(text.trim_start_matches('\u{feff}')).unwrap()
}

/// Containers calyx may create and therefore prunes when it empties them; a file that already
/// has them empty cannot round-trip byte for byte (documented in docs/setup.md).
fn has_empty_calyx_container(v: &Value) -> bool {
    let empty = |x: Option<&Value>| match x {
        Some(Value::Object(m)) => m.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        _ => false,
    };
    empty(v.get("mcpServers"))
        || empty(v.get("hooks"))
        || empty(v.pointer("/hooks/Stop"))
        || empty(v.pointer("/hooks/SessionStart"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn json_editor_properties(text in json_file()) {
        let original = strict(&text);
        let shapes_ok = original.get("mcpServers").is_none_or(Value::is_object)
            && original.get("hooks").is_none_or(Value::is_object);
        match json_install(&text) {
            Err(e) => prop_assert!(!shapes_ok, "refused a file it should edit: {e}"),
            Ok(once) => {
                let parsed = strict(&once);
                prop_assert_eq!(json_install(&once).unwrap(), once.clone());
                // A hooks.<event> that is not an array is never overwritten.
                for event in ["Stop", "SessionStart"] {
                    let path = format!("/hooks/{event}");
                    if let Some(v) = original.pointer(&path).filter(|v| !v.is_array()) {
                        prop_assert_eq!(parsed.pointer(&path), Some(v));
                    }
                }
                if !has_empty_calyx_container(&original) {
                    prop_assert_eq!(json_uninstall(&once), text);
                }
            }
        }
    }

    #[test]
    fn json_entries_keep_foreign_elements(foreign in prop::collection::vec("[a-z]{1,5}", 0..4)) {
        let items: Vec<J> = foreign.iter().map(|c| entry(c)).collect();
        let text = J::obj([("hooks", J::obj([("Stop", J::Arr(items))]))]).render("  ", "", "\n");
        let mut doc = JsonDoc::parse(&text).unwrap();
        let outcome = doc.set_entries(&["hooks", "Stop"], &[entry("\"/c/calyx\" hook x")], &ours).unwrap();
        prop_assert_eq!(outcome, EntriesOutcome::Changed);
        let after = strict(&doc.text());
        let cmds: Vec<&str> = after["hooks"]["Stop"].as_array().unwrap().iter().filter_map(|v| v["command"].as_str()).collect();
        prop_assert_eq!(&cmds[..foreign.len()], &foreign.iter().map(String::as_str).collect::<Vec<_>>()[..]);
    }
}

// ---------- TOML ----------

fn toml_value() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i32>().prop_map(|n| n.to_string()),
        "[a-z ]{0,6}".prop_map(|s| format!("\"{s}\"")),
        Just("[1, 2]".to_string()),
        Just("{ a = 1 }".to_string()),
        Just("'''\n[not.a.header]\n'''".to_string()),
    ]
}

fn toml_file() -> impl Strategy<Value = String> {
    let table = (
        prop_oneof![
            "[a-z]{1,5}".prop_map(|n| format!("[{n}]")),
            "[a-z]{1,5}".prop_map(|n| format!("[mcp_servers.{n}]")),
            Just("[[hooks]]".to_string()),
            Just("[hooks.state.\"x\"]".to_string()),
        ],
        prop::collection::vec(("[a-z]{1,5}", toml_value(), any::<bool>()), 0..3),
    );
    (
        prop::collection::vec(("[a-z]{1,5}", toml_value()), 0..3),
        prop::collection::vec(table, 0..4),
        prop_oneof![Just("\n"), Just("\r\n")],
        any::<bool>(),
    )
        .prop_map(|(root, tables, nl, trailing)| {
            let mut lines = Vec::new();
            let mut seen = std::collections::HashSet::new();
            for (k, v) in root {
                if seen.insert(k.clone()) {
                    lines.push(format!("{k} = {v}"));
                }
            }
            let mut headers = std::collections::HashSet::new();
            for (h, keys) in tables {
                if !h.starts_with("[[") && !headers.insert(h.clone()) {
                    continue;
                }
                lines.push(String::new());
                lines.push(h);
                let mut seen = std::collections::HashSet::new();
                for (k, v, comment) in keys {
                    if seen.insert(k.clone()) {
                        lines.push(format!("{k} = {v}{}", if comment { " # note" } else { "" }));
                    }
                }
            }
            let mut text = lines.join(nl).replace('\n', nl).replace("\r\r\n", "\r\n");
            if trailing && !text.is_empty() {
                text.push_str(nl);
            }
            text
        })
        .prop_filter("valid TOML", |t| toml_block::validate(t).is_ok())
}

fn toml_ours(h: &Header, text: &str) -> bool {
    h.starts_with(&["mcp_servers", "calyx-ipc"])
        || (h.path == ["hooks"] && text.contains("calyx\\\" hook"))
}

const TOML_BODY: &str = "[mcp_servers.calyx-ipc]\nurl = \"http://127.0.0.1:1/mcp\"\n\n[[hooks]]\nevent = \"Stop\"\ncommand = \"\\\"/c/calyx\\\" hook kimi\"\n";

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn toml_block_properties(text in toml_file()) {
        let adopt = |h: &Header| h.starts_with(&["mcp_servers", "calyx-ipc"]);
        let once = match toml_block::install(&text, TOML_BODY, &toml_ours, &adopt) {
            Ok(once) => once,
            Err(_) => {
                // Refused only when calyx's tables really cannot coexist with the file's.
                let naive = format!("{text}\n{TOML_BODY}");
                prop_assert!(toml_block::validate(&naive).is_err(), "refused {text:?}");
                return Ok(());
            }
        };
        prop_assert!(toml_block::validate(&once).is_ok());
        prop_assert_eq!(toml_block::install(&once, TOML_BODY, &toml_ours, &adopt).unwrap(), once.clone());
        prop_assert_eq!(toml_block::uninstall(&once, &toml_ours).unwrap(), text.clone());
        // Foreign tables that end up inside the block (Codex writes there) survive removal.
        let end = toml_block::END;
        let invaded = once.replacen(end, &format!("[hooks.state.\"zz\"]\ntrusted = true\n{end}"), 1);
        let removed = toml_block::uninstall(&invaded, &toml_ours).unwrap();
        prop_assert!(removed.contains("[hooks.state.\"zz\"]\ntrusted = true\n"));
        prop_assert!(!removed.contains("calyx"));
    }
}

// ---------- YAML ----------

fn yaml_file() -> impl Strategy<Value = String> {
    let child = (
        "[a-z]{1,5}",
        prop_oneof![
            "[a-z0-9]{1,6}".prop_map(|v| format!(" {v}")),
            Just(String::new()),
        ],
    );
    let top = (
        prop_oneof![
            "[a-z]{1,5}".prop_map(String::from),
            Just("mcp_servers".to_string()),
            Just("hooks".to_string())
        ],
        prop::collection::vec(child, 1..3),
        any::<bool>(),
    );
    (prop::collection::vec(top, 0..4), prop_oneof![Just(2usize), Just(4usize)], prop_oneof![Just("\n"), Just("\r\n")], any::<bool>())
        .prop_map(|(tops, unit, nl, comment)| {
            let mut out = String::new();
            if comment {
                out.push_str(&format!("# config{nl}"));
            }
            let mut seen = std::collections::HashSet::new();
            for (key, children, blank) in tops {
                if !seen.insert(key.clone()) {
                    continue;
                }
                out.push_str(&format!("{key}:{nl}"));
                let mut kids = std::collections::HashSet::new();
                for (name, value) in children {
                    if !kids.insert(name.clone()) {
                        continue;
                    }
                    let pad = " ".repeat(unit);
                    if value.is_empty() {
                        // a child holding a list, as Hermes hooks do
                        out.push_str(&format!("{pad}{name}:{nl}{pad}{pad}- command: mine{nl}{pad}{pad}  timeout: 3{nl}"));
                    } else {
                        out.push_str(&format!("{pad}{name}:{value}{nl}"));
                    }
                }
                if blank {
                    out.push_str(nl);
                }
            }
            out
        })
}

fn yaml_ours(first: &str) -> bool {
    first.contains("calyx")
}

fn yaml_install(text: &str) -> String {
    let child = vec![
        (0, "calyx-ipc:".to_string()),
        (1, "url: 'http://x'".to_string()),
        (1, "headers:".to_string()),
        (2, "A: 'b'".to_string()),
    ];
    let text = yaml::set_child(text, "mcp_servers", "calyx-ipc", &child).unwrap();
    let item = vec![
        (0, "command: '\"/c/calyx\" hook hermes'".to_string()),
        (0, "timeout: 5".to_string()),
    ];
    let events = vec![
        ("on_session_start".to_string(), vec![item.clone()]),
        ("stop".to_string(), vec![item]),
    ];
    yaml::set_items(&text, "hooks", &events, &yaml_ours)
        .unwrap()
        .0
}

fn yaml_uninstall(text: &str) -> String {
    let text = yaml::remove_items(text, "hooks", &yaml_ours).unwrap();
    yaml::remove_child(&text, "mcp_servers", "calyx-ipc").unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn yaml_splice_properties(text in yaml_file()) {
        let once = yaml_install(&yaml_uninstall(&text));
        prop_assert_eq!(yaml_install(&yaml_uninstall(&once)), once.clone());
        prop_assert_eq!(yaml_uninstall(&once), text.clone());
        // The user's lines all survive, in order.
        let mut rest = once.as_str();
        for line in text.lines() {
            match rest.find(line) {
                Some(i) => rest = &rest[i + line.len()..],
                None => prop_assert!(false, "lost line {line:?}"),
            }
        }
    }

    #[test]
    fn yaml_refuses_flow_style_parents(inline in prop_oneof![Just("{}"), Just("[]"), Just("{a: 1}")]) {
        let text = format!("a: 1\nmcp_servers: {inline}\n");
        prop_assert!(yaml::set_child(&text, "mcp_servers", "calyx-ipc", &[(0, "calyx-ipc:".into())]).is_err());
    }
}

/// The YAML calyx writes parses (with PyYAML when it is available; skipped otherwise).
#[test]
fn yaml_output_parses_with_a_real_parser() {
    let sample =
        "a: 1\nmcp_servers:\n    x:\n        url: y\nhooks:\n    stop:\n        - command: mine\n";
    let out = yaml_install(sample);
    let script = "import sys, yaml; d = yaml.safe_load(sys.stdin); assert d['mcp_servers']['calyx-ipc']['headers']['A'] == 'b'; assert d['hooks']['stop'][0]['command'].endswith('hook hermes'); assert d['hooks']['stop'][1]['command'] == 'mine'";
    let child = std::process::Command::new("python3")
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .spawn();
    let Ok(mut child) = child else {
        eprintln!("python3 not available: skipped");
        return;
    };
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(out.as_bytes())
        .unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "PyYAML rejected:\n{out}");
}
