use std::os::unix::fs::PermissionsExt;

use serde_json::json;

use super::*;

fn tools() -> Vec<Tool> {
    [
        json!({"name": "echo", "description": "Echoes", "inputSchema": {"type": "object"}}),
        json!({"name": "a.b", "inputSchema": {"type": "object"}}),
        json!({"name": "poll", "inputSchema": {"type": "object"},
               "_meta": {"ui": {"visibility": ["app"]}}}),
        json!({"name": "research", "inputSchema": {"type": "object"}}),
    ]
    .into_iter()
    .map(|t| serde_json::from_value(t).expect("a tool"))
    .collect()
}

fn classified() -> Classified {
    classify("ev", tools(), &HashSet::from(["research".to_string()]))
}

#[test]
fn cached_tools_publish_as_the_server_did() {
    let live = classified();
    let cached = CachedTools::of("Everything", Some("Use echo."), &live);
    let again = cached.classified("ev");
    let names = |c: &Classified| {
        c.published
            .iter()
            .map(|(n, t)| (n.clone(), t.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&again), names(&live));
    assert!(names(&again).iter().any(|(n, _)| n.starts_with("ev-a_b_")));
    assert_eq!(again.app_only, live.app_only);
    assert_eq!(again.names.original, live.names.original);
}

#[test]
fn remembered_lists_survive_a_restart_in_a_0600_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state/calyx/mcp-tools-cache.json");
    let cache = ToolsCache::open(path.clone());
    assert!(cache.cached_tools_for("ev").is_none());
    let cached = CachedTools::of("Everything", None, &classified());
    assert!(cache.remember("ev", cached.clone()));
    assert!(
        !cache.remember("ev", cached.clone()),
        "unchanged: not rewritten"
    );
    let mode = std::fs::metadata(&path)
        .expect("written")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);

    let next_run = ToolsCache::open(path.clone());
    let (again, tools) = next_run.cached_tools_for("ev").expect("cached");
    assert_eq!(again, cached);
    assert_eq!(tools.published.len(), 2);
    next_run.forget("ev");
    assert!(ToolsCache::open(path).cached_tools_for("ev").is_none());
}

#[test]
fn a_broken_cache_file_is_an_empty_cache() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("mcp-tools-cache.json");
    std::fs::write(&path, "{not json").expect("write");
    let cache = ToolsCache::open(path.clone());
    assert!(cache.cached_tools_for("ev").is_none());
    // The next change replaces it with a good file.
    assert!(cache.remember("ev", CachedTools::of("Everything", None, &classified())));
    assert!(ToolsCache::open(path).cached_tools_for("ev").is_some());
}

#[test]
fn memory_only_writes_no_file() {
    let cache = ToolsCache::in_memory();
    assert!(cache.remember("ev", CachedTools::of("Everything", None, &classified())));
    assert!(cache.cached_tools_for("ev").is_some());
}
