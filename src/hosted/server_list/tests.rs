use std::os::unix::fs::PermissionsExt;

use super::*;
use crate::hosted::entry::{ClientAuth, HttpTarget, OAuthSettings, StdioTarget, Transport};

fn ev() -> ServerEntry {
    ServerEntry {
        alias: "ev".into(),
        name: "Everything".into(),
        enabled: true,
        transport: Transport::Stdio(StdioTarget {
            command: "node".into(),
            args: vec!["/opt/ev/dist/index.js".into(), "stdio".into()],
            cwd: None,
            env: vec!["API_KEY".into()],
        }),
        note: None,
    }
}

/// The example of the issue, byte for byte in meaning.
const ISSUE_EXAMPLE: &str = r#"{"version": 1, "servers": [
  {"alias": "ev", "name": "Everything", "enabled": true, "transport": "stdio",
   "command": "node", "args": ["/opt/ev/dist/index.js", "stdio"], "cwd": null, "env": ["API_KEY"]},
  {"alias": "linear", "name": "Linear", "enabled": true, "transport": "http",
   "url": "https://mcp.linear.app/mcp", "legacy_sse": false, "headers": ["X-Team"],
   "oauth": {"client_id": null, "client_auth": "none", "fixed_redirect_port": false}}]}"#;

#[test]
fn reads_the_documented_schema() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("mcp-servers.json");
    std::fs::write(&path, ISSUE_EXAMPLE).expect("write");
    let list = load(&path).expect("loads");
    assert_eq!(list.servers.len(), 2);
    assert_eq!(list.servers[0], ev());
    assert_eq!(
        list.servers[1].transport,
        Transport::Http(HttpTarget {
            url: "https://mcp.linear.app/mcp".into(),
            legacy_sse: false,
            headers: vec!["X-Team".into()],
            oauth: OAuthSettings {
                client_id: None,
                client_auth: ClientAuth::None,
                fixed_redirect_port: false
            }
        })
    );
    // And writes it back in the same shape.
    let written = serde_json::to_value(&list).expect("json");
    let original: serde_json::Value = serde_json::from_str(ISSUE_EXAMPLE).expect("json");
    assert_eq!(written, original);
}

#[test]
fn a_missing_file_is_an_empty_list_and_the_first_change_creates_it_0600() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("calyx/mcp-servers.json");
    assert_eq!(load(&path).expect("empty"), ServerList::default());
    update(&path, |list| list.add(ev())).expect("added");
    let mode = std::fs::metadata(&path).expect("meta").permissions().mode() & 0o7777;
    assert_eq!(mode, 0o600);
    assert_eq!(load(&path).expect("loads").servers, vec![ev()]);
}

#[test]
fn add_edit_remove_enable() {
    let mut list = ServerList::default();
    list.add(ev()).expect("added");
    assert_eq!(
        list.add(ev()).expect_err("taken").to_string(),
        "the alias `ev` is taken by another server: choose another alias"
    );
    let mut renamed = ev();
    renamed.alias = "ev2".into();
    assert_eq!(
        list.edit("ev", renamed).expect_err("alias change").to_string(),
        "the alias of `ev` cannot change to `ev2`: remove the server and add it again under the new alias"
    );
    let mut edited = ev();
    edited.name = "Everything server".into();
    list.edit("ev", edited.clone()).expect("edited");
    assert_eq!(list.get("ev"), Some(&edited));
    list.servers[0].note = Some("imported disabled".into());
    list.set_enabled("ev", false).expect("disabled");
    assert!(!list.servers[0].enabled);
    assert!(list.servers[0].note.is_some(), "disabling keeps the note");
    list.set_enabled("ev", true).expect("enabled");
    assert_eq!(list.servers[0].note, None);
    assert_eq!(list.remove("ev").expect("removed").alias, "ev");
    assert_eq!(
        list.remove("ev").expect_err("gone").to_string(),
        "no hosted server has the alias `ev`: `calyx mcp list` shows them"
    );
}

#[test]
fn at_most_50_servers() {
    let mut list = ServerList::default();
    for i in 0..MAX_SERVERS {
        let mut entry = ev();
        entry.alias = format!("s{i}");
        list.add(entry).expect("added");
    }
    let mut entry = ev();
    entry.alias = "one".into();
    assert!(matches!(list.add(entry), Err(ListError::Full)));
}

#[test]
fn bad_files_name_what_is_wrong() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("mcp-servers.json");
    std::fs::write(&path, "{\"version\": 1,\n \"servers\": [}").expect("write");
    let err = load(&path).expect_err("parse error").to_string();
    assert!(err.contains("does not parse at line 2, column 14"), "{err}");
    std::fs::write(&path, r#"{"version": 2, "servers": []}"#).expect("write");
    let err = load(&path).expect_err("version").to_string();
    assert!(
        err.contains("has version 2, and this calyx reads version 1"),
        "{err}"
    );
    let dup = r#"{"version":1,"servers":[
        {"alias":"ev","name":"a","enabled":true,"transport":"stdio","command":"x"},
        {"alias":"ev","name":"b","enabled":true,"transport":"stdio","command":"y"}]}"#;
    std::fs::write(&path, dup).expect("write");
    let err = load(&path).expect_err("duplicate").to_string();
    assert!(err.contains("lists the alias `ev` twice"), "{err}");
    // A failed change writes nothing.
    std::fs::write(&path, r#"{"version":1,"servers":[]}"#).expect("write");
    let before = std::fs::read(&path).expect("read");
    let err = update(&path, |list| list.remove("nope")).expect_err("unknown");
    assert!(matches!(err, ListError::Unknown(_)));
    assert_eq!(std::fs::read(&path).expect("read"), before);
}

#[test]
fn concurrent_updates_lose_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("mcp-servers.json");
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let path = path.clone();
            std::thread::spawn(move || {
                for i in 0..5 {
                    let mut entry = ev();
                    entry.alias = format!("t{t}x{i}");
                    update(&path, |list| list.add(entry)).expect("added");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("thread");
    }
    let list = load(&path).expect("loads");
    assert_eq!(list.servers.len(), 40);
}
