// What tests/views/lifecycle.mjs saw of two lifecycle views (tests/views/fixture_life.html)
// whose CSP declares `declared` and whose call had the arguments `input` (as JSON), checked
// alike by the view server's own browser test (src/views/server/browser_tests.rs) and the one
// through a real calyx server (tests/e2e_mcp_view_fixture.rs), which both `include!` it.

fn assert_lifecycle_seen(seen: &serde_json::Value, declared: &str, input: &str) {
    assert_eq!(seen["firstStored"], "nothing", "{seen}");
    assert_eq!(seen["downloadText"], "The app offers report.txt (5 B)", "{seen}");
    assert_eq!(seen["downloadName"], "report.txt", "{seen}");
    assert_eq!(seen["downloadBody"], "hello", "{seen}");
    assert_eq!(seen["downloaded"], "{}", "{seen}");
    assert_eq!(seen["linked"], "{}", "the approved link answered: {seen}");
    let link = format!("{declared}/opened");
    let popups: Vec<&str> = seen["popupUrls"]
        .as_array()
        .map(|a| a.iter().filter_map(serde_json::Value::as_str).collect())
        .unwrap_or_default();
    assert!(
        popups == [link.as_str()] || seen["linkBar"] == link.as_str(),
        "the approved link opened nowhere: {seen}"
    );
    assert_eq!(seen["fullscreen"], "fullscreen", "declared: {seen}");
    assert_eq!(
        seen["afterPip"], "after pip: fullscreen",
        "pip was not declared: {seen}"
    );
    assert_eq!(seen["pipBox"], 0, "{seen}");
    assert_eq!(seen["takenOver"], "This view was opened in another tab");
    assert_eq!(seen["firstFrames"], 0, "{seen}");
    assert_eq!(seen["navigated"], "The view tried to navigate away");
    assert_eq!(seen["reloadShown"], true, "{seen}");
    assert_eq!(seen["inputAfterReload"], input, "{seen}");
    assert_eq!(
        seen["sharedStored"], "left by a view",
        "the views share the sandbox origin: {seen}"
    );
    assert_eq!(seen["closed"], "This view was closed", "{seen}");
    assert_eq!(
        seen["afterTeardown"], "nothing",
        "storage outlived its view: {seen}"
    );
}
