use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::hosted::entry::{StdioTarget, Transport};
use crate::hosted::secrets::{Chosen, FileStore};

fn entry(alias: &str, enabled: bool) -> ServerEntry {
    ServerEntry {
        alias: alias.into(),
        name: alias.to_uppercase(),
        enabled,
        transport: Transport::Stdio(StdioTarget {
            command: "calyx-no-such-test-server".into(),
            args: Vec::new(),
            cwd: None,
            env: vec!["TOKEN".into()],
        }),
        note: None,
    }
}

struct World {
    _dir: tempfile::TempDir,
    list: PathBuf,
    store: Arc<FileStore>,
    hosting: Hosting,
}

fn world() -> World {
    let dir = tempfile::tempdir().expect("tempdir");
    let list = dir.path().join("mcp-servers.json");
    let store = Arc::new(FileStore::new(dir.path().join("secrets.json")));
    let chosen = Chosen {
        store: store.clone(),
        summary: "secrets: file (test)".into(),
    };
    let hosting = Hosting::new(HostedRoute::new(true), chosen, list.clone());
    World {
        _dir: dir,
        list,
        store,
        hosting,
    }
}

fn write(path: &std::path::Path, entries: Vec<ServerEntry>) {
    server_list::update(path, |list| {
        list.servers = entries;
        Ok(())
    })
    .expect("write list");
}

/// Polls the state of `alias` until `wanted` accepts it (deadline 10 s).
async fn state_when(
    hosting: &Hosting,
    alias: &str,
    wanted: impl Fn(&Option<ServerState>) -> bool,
) -> Option<ServerState> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let state = hosting.supervisor().state(alias);
        if wanted(&state) {
            return state;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "`{alias}` stayed {state:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn reload_starts_stops_and_restarts_what_changed() {
    let w = world();
    write(&w.list, vec![entry("a", false), entry("b", true)]);
    w.hosting.reload().expect("reload");
    state_when(&w.hosting, "a", |s| *s == Some(ServerState::Disabled)).await;
    // b has no stored TOKEN: it fails with the sentence that says how to set it.
    let failed = state_when(&w.hosting, "b", |s| {
        matches!(s, Some(ServerState::Failed { .. }))
    })
    .await;
    assert!(
        failed.is_some_and(|s| s.status_line().contains("calyx mcp edit b")),
        "the missing variable is named"
    );
    write(&w.list, vec![entry("b", false)]);
    w.hosting.reload().expect("reload");
    state_when(&w.hosting, "a", Option::is_none).await;
    state_when(&w.hosting, "b", |s| *s == Some(ServerState::Disabled)).await;
}

#[tokio::test]
async fn turning_hosting_off_stops_everything_and_rows_say_why() {
    let w = world();
    write(&w.list, vec![entry("a", false)]);
    w.hosting.reload().expect("reload");
    state_when(&w.hosting, "a", Option::is_some).await;
    w.hosting.set_enabled(false).expect("off");
    state_when(&w.hosting, "a", Option::is_none).await;
    let answer = w.hosting.handle(McpRequest::List);
    assert_eq!(answer.exit, 0);
    let rows = answer.json.expect("rows");
    assert!(
        rows[0]["status"]
            .as_str()
            .is_some_and(|s| s.contains("host_servers = false")),
        "{rows}"
    );
    w.hosting.set_enabled(true).expect("on");
    state_when(&w.hosting, "a", |s| *s == Some(ServerState::Disabled)).await;
}

#[tokio::test]
async fn add_stores_secrets_and_remove_deletes_them() {
    let w = world();
    let answer = w.hosting.handle(McpRequest::Add {
        entry: entry("ev", false),
        secrets: vec![("env/TOKEN".into(), "s3cret".into())],
    });
    assert_eq!(answer.exit, 0, "{}", answer.text);
    assert_eq!(
        w.store.get("ev/env/TOKEN").expect("store"),
        Some("s3cret".into())
    );
    let list = std::fs::read_to_string(&w.list).expect("list");
    assert!(list.contains("TOKEN") && !list.contains("s3cret"), "{list}");

    let again = w.hosting.handle(McpRequest::Add {
        entry: entry("ev", false),
        secrets: Vec::new(),
    });
    assert_eq!(again.exit, 2);
    assert!(
        again.text.contains("the alias `ev` is taken"),
        "{}",
        again.text
    );

    let removed = w.hosting.handle(McpRequest::Remove { alias: "ev".into() });
    assert_eq!(removed.exit, 0, "{}", removed.text);
    assert_eq!(w.store.get("ev/env/TOKEN").expect("store"), None);
    let unknown = w.hosting.handle(McpRequest::Remove { alias: "ev".into() });
    assert_eq!(unknown.exit, 2);
    assert!(unknown.text.contains("no hosted server has the alias `ev`"));
}

#[tokio::test]
async fn edit_drops_the_secrets_of_unset_variables() {
    let w = world();
    let added = w.hosting.handle(McpRequest::Add {
        entry: entry("ev", false),
        secrets: vec![("env/TOKEN".into(), "old".into())],
    });
    assert_eq!(added.exit, 0, "{}", added.text);
    let edit = crate::hosted::edit::EntryEdit {
        env: vec!["OTHER".into()],
        unset_env: vec!["TOKEN".into()],
        ..Default::default()
    };
    let answer = w.hosting.handle(McpRequest::Edit {
        alias: "ev".into(),
        edit,
        secrets: vec![("env/OTHER".into(), "new".into())],
    });
    assert_eq!(answer.exit, 0, "{}", answer.text);
    assert_eq!(w.store.get("ev/env/TOKEN").expect("store"), None);
    assert_eq!(
        w.store.get("ev/env/OTHER").expect("store"),
        Some("new".into())
    );
    let details = w.hosting.handle(McpRequest::Details { alias: "ev".into() });
    assert_eq!(details.exit, 0);
    assert!(
        details.text.contains("status: Disabled"),
        "{}",
        details.text
    );
}

#[tokio::test]
async fn cached_tools_outlive_hosting_off_but_not_a_removal() {
    use crate::hosted::connection::filter::classify;
    use crate::hosted::tools_cache::{CachedTools, ToolsCache};
    let dir = tempfile::tempdir().expect("tempdir");
    let list = dir.path().join("mcp-servers.json");
    let cache_file = dir.path().join("mcp-tools-cache.json");
    let tool: rmcp::model::Tool = serde_json::from_value(
        serde_json::json!({"name": "echo", "inputSchema": {"type": "object"}}),
    )
    .expect("a tool");
    let tools = classify("a", vec![tool], &Default::default());
    // A list the last run cached.
    ToolsCache::open(cache_file.clone()).remember("a", CachedTools::of("A", None, &tools));
    let chosen = Chosen {
        store: Arc::new(FileStore::new(dir.path().join("secrets.json"))),
        summary: "secrets: file (test)".into(),
    };
    let hosting = Hosting::new(HostedRoute::new(true), chosen, list.clone())
        .with_tools_cache(ToolsCache::open(cache_file.clone()));
    write(&list, vec![entry("a", false)]);
    hosting.reload().expect("reload");
    assert!(hosting.supervisor().cached_tools_for("a").is_some());
    hosting.set_enabled(false).expect("off");
    assert!(
        hosting.supervisor().cached_tools_for("a").is_some(),
        "hosting off keeps the cache"
    );
    hosting.set_enabled(true).expect("on");
    write(&list, vec![]);
    hosting.reload().expect("reload");
    assert!(hosting.supervisor().cached_tools_for("a").is_none());
    assert!(
        ToolsCache::open(cache_file).cached_tools_for("a").is_none(),
        "and the file forgets it"
    );
}
